#include "impl/trial/trial.h"

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <thread>

#include "gtest/gtest.h"
#include "impl/core/text.h"
#include "tests/impl/trial/trial_builder.h"

namespace smd::trial {
namespace {

using testing::TempDir;
using testing::TrialBuilder;
using testing::WriteFile;

std::shared_ptr<Trial> MustOpen(const std::string& dir, TrialOptions o = TrialOptions()) {
  auto t = Trial::Open(dir, o);
  EXPECT_TRUE(t.ok()) << t.status().message();
  return t.ok() ? t.value() : nullptr;
}

std::vector<int64_t> Steps(Trial& t, Mode m = Mode::kGlobal, bool incomplete = false) {
  auto s = t.Steps(m, incomplete);
  EXPECT_TRUE(s.ok()) << s.status().message();
  return s.ok() ? s.value() : std::vector<int64_t>{};
}

uint32_t Id(Trial& t, const std::string& name) {
  auto id = t.TensorId(name);
  EXPECT_TRUE(id.ok()) << id.status().message();
  return id.ok() ? id.value() : 0;
}

float FloatAt(const ValuePtr& v, size_t i = 0) { return static_cast<const float*>(v->data())[i]; }

// TRAIN 0-2 (mode steps 0-2), EVAL 3-4 (0-1), TRAIN 5-6 (3-4), one worker, ended.
std::string ModesTrial(const std::string& name = "t") {
  TrialBuilder b(TempDir(name));
  b.WriteCollections({"worker_0"}, 1);
  int64_t train = 0, eval = 0;
  for (int64_t g = 0; g < 7; ++g) {
    const bool is_eval = g == 3 || g == 4;
    const int64_t ms = is_eval ? eval++ : train++;
    const Mode m = is_eval ? Mode::kEval : Mode::kTrain;
    b.AddFloats(g, "worker_0", m, ms, "fc.weight", {float(g), float(g) + 0.5f}, {1, 2});
    b.AddFloats(g, "worker_0", m, ms, "loss", {float(g) / 10});
    b.AddFloats(g, "worker_0", m, ms, "smdebug/reductions/max/fc.weight", {float(g) + 0.5f}, {1});
    b.AddFloats(g, "worker_0", m, ms, "smdebug/reductions/abs_l2/fc.weight", {1.0f}, {1});
    b.FinishStep(g);
  }
  b.End();
  return b.dir();
}

// ------------------------------------------------------------------------------------ basics

TEST(Trial, StepsModesAndMaps) {
  auto t = MustOpen(ModesTrial());
  ASSERT_TRUE(t);
  EXPECT_EQ(Steps(*t), (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(Steps(*t, Mode::kTrain), (std::vector<int64_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(Steps(*t, Mode::kEval), (std::vector<int64_t>{0, 1}));
  EXPECT_TRUE(Steps(*t, Mode::kPredict).empty());
  EXPECT_EQ(t->Modes(), (std::vector<Mode>{Mode::kTrain, Mode::kEval}));
  auto m = t->ModeOf(4);
  ASSERT_TRUE(m.ok() && m.value());
  EXPECT_EQ(m.value()->first, Mode::kEval);
  EXPECT_EQ(m.value()->second, 1);
  EXPECT_FALSE(t->ModeOf(99).value());
  EXPECT_EQ(*t->GlobalStep(Mode::kTrain, 3).value(), 5);
  EXPECT_EQ(*t->GlobalStep(Mode::kGlobal, 123).value(), 123);  // smdebug: GLOBAL is returned as is
  EXPECT_FALSE(t->GlobalStep(Mode::kEval, 7).value());
  EXPECT_EQ(t->Workers().value(), (std::vector<std::string>{"worker_0"}));
  EXPECT_EQ(t->num_workers(), 1);
  EXPECT_TRUE(t->loaded_all_steps());
  EXPECT_TRUE(t->HasEnded().value());
  EXPECT_EQ(t->CollectionNames(), (std::vector<std::string>{"losses", "weights"}));
  const CollectionInfo* c = t->Collection("weights");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->reductions, "min,l2_norm");
  EXPECT_TRUE(c->save_raw_tensor);
  EXPECT_FALSE(c->save_histogram);
  EXPECT_EQ(t->Collection("nope"), nullptr);
}

TEST(Trial, TensorNamesFilters) {
  auto t = MustOpen(ModesTrial());
  ASSERT_TRUE(t);
  auto names = [&](TensorFilter f) {
    auto r = t->TensorNames(f);
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r.ok() ? r.value() : std::vector<std::string>{};
  };
  const std::vector<std::string> both = {"fc.weight", "loss"};
  EXPECT_EQ(names({}), both);  // reductions attach to their tensor: no extra names
  TensorFilter f;
  f.mode = Mode::kEval;
  EXPECT_EQ(names(f), both);
  f.mode = Mode::kPredict;  // a mode never seen: empty (smdebug raises KeyError)
  EXPECT_TRUE(names(f).empty());
  f = {};
  f.step = 1;
  f.mode = Mode::kEval;  // EVAL step 1 = global 4
  EXPECT_EQ(names(f), both);
  f.step = 9;
  EXPECT_TRUE(names(f).empty());
  f = {};
  f.regexes = {"^l", "nomatch"};
  EXPECT_EQ(names(f), std::vector<std::string>{"loss"});
  f = {};
  f.collection = "weights";  // tensor_names + include_regex "^(?!gradient).*weight"
  EXPECT_EQ(names(f), std::vector<std::string>{"fc.weight"});
  f.collection = "losses";
  EXPECT_EQ(names(f), std::vector<std::string>{"loss"});
  f.collection = "unknown";
  EXPECT_TRUE(names(f).empty());
  f.regexes = {"x"};
  EXPECT_EQ(t->TensorNames(f).status().code(), Code::kInvalidArgument);
  f = {};
  f.regexes = {"(unclosed"};
  EXPECT_EQ(t->TensorNames(f).status().code(), Code::kInvalidArgument);
  EXPECT_TRUE(t->HasTensor("loss").value());
  EXPECT_FALSE(t->HasTensor("nope").value());
  EXPECT_EQ(t->TensorId("nope").status().code(), Code::kTensorUnavailable);
  EXPECT_EQ(t->TensorId("nope").status().message(), "Tensor nope was not saved.");
}

TEST(Trial, ValuesReductionsShapes) {
  auto t = MustOpen(ModesTrial());
  ASSERT_TRUE(t);
  const uint32_t w = Id(*t, "fc.weight");
  auto v = t->TensorValue(w, 4, Mode::kGlobal, nullptr);  // global 4 = EVAL 1
  ASSERT_TRUE(v.ok()) << v.status().message();
  EXPECT_EQ(FloatAt(v.value(), 1), 4.5f);
  EXPECT_EQ(v.value()->shape(), (std::vector<int64_t>{1, 2}));
  auto ve = t->TensorValue(w, 1, Mode::kEval, nullptr);
  ASSERT_TRUE(ve.ok());
  EXPECT_EQ(ve.value().get(), v.value().get());  // the cached value
  EXPECT_EQ(t->TensorSteps(w, Mode::kEval, false).value(), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(t->TensorSteps(w, Mode::kGlobal, false).value(),
            (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(t->TensorReductionNames(w, 2, Mode::kGlobal, nullptr).value(),
            (std::vector<std::string>{"abs_l2", "max"}));
  auto mx = t->TensorReductionValue(w, 2, "max", Mode::kGlobal, nullptr);
  ASSERT_TRUE(mx.ok()) << mx.status().message();
  EXPECT_EQ(FloatAt(mx.value()), 2.5f);
  auto l2 = t->TensorReductionValue(w, 2, "abs_l2_norm", Mode::kGlobal, nullptr);  // both spellings
  ASSERT_TRUE(l2.ok());
  EXPECT_EQ(FloatAt(l2.value()), 1.0f);
  // Not saved: computed from the raw value.
  auto mn = t->TensorReductionValue(w, 2, "min", Mode::kGlobal, nullptr);
  ASSERT_TRUE(mn.ok()) << mn.status().message();
  EXPECT_EQ(mn.value()->shape(), (std::vector<int64_t>{1}));
  EXPECT_EQ(LoadAsDouble(mn.value()->dtype(), mn.value()->data(), 0), 2.0);
  EXPECT_EQ(t->TensorReductionValue(w, 2, "bogus", Mode::kGlobal, nullptr).status().code(),
            Code::kInvalidArgument);
  auto shape = t->TensorShape(w, 0, Mode::kTrain, nullptr);
  ASSERT_TRUE(shape.ok());
  EXPECT_EQ(shape.value(), (std::vector<int64_t>{1, 2}));
  auto values = t->TensorValues(w, Mode::kEval, nullptr);
  ASSERT_TRUE(values.ok());
  ASSERT_EQ(values.value().size(), 2u);
  EXPECT_EQ(values.value()[1].first, 1);
  auto shapes = t->TensorShapes(w, Mode::kTrain, nullptr);
  ASSERT_TRUE(shapes.ok());
  EXPECT_EQ(shapes.value().size(), 5u);
  EXPECT_EQ(t->TensorWorkers(w, 3, Mode::kGlobal).value(), std::vector<std::string>{"worker_0"});
  EXPECT_EQ(t->TensorPrevSteps(w, 3, 2, Mode::kTrain).value(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(t->TensorPrevSteps(w, 3, 0, Mode::kTrain).value(), (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(t->GetStats().entries, 14u);
}

TEST(Trial, StepErrorsFollowSmdebug) {
  auto t = MustOpen(ModesTrial());
  ASSERT_TRUE(t);
  const uint32_t w = Id(*t, "fc.weight");
  auto past = t->TensorValue(w, 50, Mode::kGlobal, nullptr);  // beyond the end of an ended job
  EXPECT_EQ(past.status().code(), Code::kStepUnavailable);
  EXPECT_EQ(t->TensorValue(w, 2, Mode::kEval, nullptr).status().code(), Code::kStepUnavailable);
  const std::string w9 = "worker_9";
  auto bad_worker = t->TensorValue(w, 1, Mode::kGlobal, &w9);
  EXPECT_EQ(bad_worker.status().code(), Code::kInvalidWorker);
  EXPECT_EQ(bad_worker.status().message(), "Invalid Worker: worker_9");
  EXPECT_EQ(t->WaitForSteps({100}, Mode::kGlobal, 1000).code(), Code::kNoMoreData);
  EXPECT_EQ(t->WaitForSteps({100}, Mode::kGlobal, 1000).message(),
            "Looking for step 100 of mode GLOBAL and reached end of training. Max step available is 6");
  EXPECT_TRUE(t->WaitForSteps({0, 3, 6}, Mode::kGlobal, 0).ok());
  EXPECT_EQ(t->HasPassedStep(7, Mode::kGlobal).value(), StepState::kUnavailable);
}

// smd_tensor_values reads on several threads (from 32 steps on): values in step order, the cache
// used and filled, the first failing step's error.
TEST(Trial, ValuesInBulk) {
  TrialBuilder b(TempDir("t"));
  b.WriteCollections({"worker_0"}, 1);
  for (int s = 0; s < 80; ++s) b.SimpleStep(s, {"a", "b"});
  b.End();
  auto t = MustOpen(b.dir());
  ASSERT_TRUE(t);
  const uint32_t a = Id(*t, "a");
  ASSERT_TRUE(t->TensorValue(a, 5, Mode::kGlobal, nullptr).ok());  // cached now
  const uint64_t before = t->GetStats().records_read;
  auto all = t->TensorValues(a, Mode::kGlobal, nullptr);
  ASSERT_TRUE(all.ok()) << all.status().message();
  ASSERT_EQ(all->size(), 80u);
  for (int s = 0; s < 80; ++s) {
    EXPECT_EQ(all.value()[s].first, s);
    EXPECT_EQ(FloatAt(all.value()[s].second), float(s));
  }
  EXPECT_EQ(t->GetStats().records_read - before, 79u);  // step 5 came from the cache
  auto again = t->TensorValues(a, Mode::kGlobal, nullptr);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again.value()[7].second, all.value()[7].second);  // the same cached value
  EXPECT_EQ(t->GetStats().records_read - before, 79u);
  ASSERT_EQ(0, std::remove((b.dir() + "/events/000000000040/000000000040_worker_0.tfevents").c_str()));
  ASSERT_EQ(0, std::remove((b.dir() + "/events/000000000060/000000000060_worker_0.tfevents").c_str()));
  auto broken = t->TensorValues(Id(*t, "b"), Mode::kGlobal, nullptr);
  EXPECT_EQ(broken.status().code(), Code::kTensorUnavailableForStep);
  EXPECT_NE(broken.status().message().find("000000000040_worker_0.tfevents' is missing"),
            std::string::npos)
      << broken.status().message();
}

TEST(Trial, ValuesOutliveTheTrial) {
  ValuePtr v;
  {
    auto t = MustOpen(ModesTrial());
    ASSERT_TRUE(t);
    v = t->TensorValue(Id(*t, "loss"), 3, Mode::kGlobal, nullptr).value();
  }
  EXPECT_EQ(FloatAt(v), 0.3f);
}

// --------------------------------------------------------------------- divergences from smdebug

TEST(TrialFixes, RawValueAndShapeBothKept) {
  TrialBuilder b(TempDir("t"));
  b.WriteCollections({"worker_0"}, 1);
  b.AddFloats(0, "worker_0", Mode::kTrain, 0, "x", {1, 2, 3, 4}, {2, 2});
  b.AddShape(0, "worker_0", Mode::kTrain, 0, "x", {2, 2});
  b.FinishStep(0);
  b.End();
  auto t = MustOpen(b.dir());
  ASSERT_TRUE(t);
  const uint32_t x = Id(*t, "x");
  auto v = t->TensorValue(x, 0, Mode::kGlobal, nullptr);  // smdebug: TensorUnavailableForStep
  ASSERT_TRUE(v.ok()) << v.status().message();
  EXPECT_EQ(FloatAt(v.value(), 3), 4.0f);
  EXPECT_EQ(t->TensorShape(x, 0, Mode::kGlobal, nullptr).value(), (std::vector<int64_t>{2, 2}));
}

TEST(TrialFixes, WorkerNamesOnlyDeserializedWhenTheyStartWithUnderscore) {
  // A folder whose path holds "__": smdebug would turn worker_0 into worker/0.
  TrialBuilder b(TempDir("run__1"));
  const std::string dev = "_job-worker_replica-0_task-0_device-GPU-0";
  b.WriteCollections({"worker_0", dev}, 2);
  b.SimpleStep(0, {"a"}, "worker_0");
  b.SimpleStep(0, {"a"}, dev);
  b.End();
  auto t = MustOpen(b.dir());
  ASSERT_TRUE(t);
  EXPECT_EQ(t->Workers().value(),
            (std::vector<std::string>{"/job:worker/replica:0/task:0/device:GPU:0", "worker_0"}));
  EXPECT_EQ(t->TensorWorkers(Id(*t, "a"), 0, Mode::kGlobal).value(),
            (std::vector<std::string>{"/job:worker/replica:0/task:0/device:GPU:0", "worker_0"}));
}

TEST(TrialFixes, NameContainingTheReductionPrefixIsATensor) {
  TrialBuilder b(TempDir("t"));
  b.WriteCollections({"worker_0"}, 1);
  b.AddFloats(0, "worker_0", Mode::kTrain, 0, "a/smdebug/reductions/min/y", {1, 1});
  b.AddFloats(0, "worker_0", Mode::kTrain, 0, "smdebug/reductions/max/dense/kernel", {3});
  b.AddFloats(0, "worker_0", Mode::kTrain, 0, "dense/kernel:0", {1, 2, 3});
  b.FinishStep(0);
  b.End();
  auto t = MustOpen(b.dir());
  ASSERT_TRUE(t);
  // Reductions attach to the tag's name (":0" dropped by the writer), as in smdebug; the raw
  // "dense/kernel:0" stays readable.
  EXPECT_EQ(t->TensorNames({}).value(),
            (std::vector<std::string>{"a/smdebug/reductions/min/y", "dense/kernel", "dense/kernel:0"}));
  EXPECT_TRUE(t->TensorValue(Id(*t, "a/smdebug/reductions/min/y"), 0, Mode::kGlobal, nullptr).ok());
  EXPECT_TRUE(t->TensorValue(Id(*t, "dense/kernel:0"), 0, Mode::kGlobal, nullptr).ok());
  auto k = t->TensorValue(Id(*t, "dense/kernel"), 0, Mode::kGlobal, nullptr);
  EXPECT_EQ(k.status().code(), Code::kTensorUnavailableForStep);
  EXPECT_NE(k.status().message().find("has reductions saved"), std::string::npos);
}

TEST(TrialFixes, ReductionOfUnsavedTensorNamesTheTensor) {
  TrialBuilder b(TempDir("t"));
  b.WriteCollections({"worker_0"}, 1);
  b.AddShape(0, "worker_0", Mode::kTrain, 0, "x", {3});
  b.FinishStep(0);
  b.End();
  auto t = MustOpen(b.dir());
  ASSERT_TRUE(t);
  auto r = t->TensorReductionValue(Id(*t, "x"), 0, "max", Mode::kGlobal, nullptr);
  EXPECT_EQ(r.status().code(), Code::kTensorUnavailableForStep);
  EXPECT_EQ(r.status().message(),
            "Value for tensor x is not available for step 0 with mode GLOBAL as it was not saved.");
}

TEST(TrialFixes, ComputedNormsAreVectorNorms) {
  TrialBuilder b(TempDir("t"));
  b.WriteCollections({"worker_0"}, 1);
  b.AddFloats(0, "worker_0", Mode::kTrain, 0, "m", {1, -2, 3, 4}, {2, 2});
  b.FinishStep(0);
  b.End();
  auto t = MustOpen(b.dir());
  ASSERT_TRUE(t);
  auto l1 = t->TensorReductionValue(Id(*t, "m"), 0, "l1", Mode::kGlobal, nullptr);
  ASSERT_TRUE(l1.ok());
  EXPECT_EQ(LoadAsDouble(l1.value()->dtype(), l1.value()->data(), 0), 10.0);  // numpy: 6 (matrix)
  auto var = t->TensorReductionValue(Id(*t, "m"), 0, "variance", Mode::kGlobal, nullptr);
  ASSERT_TRUE(var.ok());
  EXPECT_NEAR(LoadAsDouble(var.value()->dtype(), var.value()->data(), 0), 5.25, 1e-6);  // population
}

TEST(TrialFixes, MissingEventFileFailsAtOnce) {
  TrialBuilder b(TempDir("t"));
  b.WriteCollections({"worker_0"}, 1);
  b.SimpleStep(0, {"a"});
  b.SimpleStep(1, {"a"});
  b.End();
  ASSERT_EQ(0, std::remove((b.dir() + "/events/000000000000/000000000000_worker_0.tfevents").c_str()));
  auto t = MustOpen(b.dir());
  ASSERT_TRUE(t);
  auto start = std::chrono::steady_clock::now();
  auto v = t->TensorValue(Id(*t, "a"), 0, Mode::kGlobal, nullptr);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
  EXPECT_EQ(v.status().code(), Code::kTensorUnavailableForStep);
  EXPECT_NE(v.status().message().find("000000000000_worker_0.tfevents' is missing"), std::string::npos);
  EXPECT_EQ(t->TensorValueInfo(Id(*t, "a"), 0, Mode::kGlobal, nullptr).status().code(),
            Code::kTensorUnavailableForStep);
  EXPECT_EQ(FloatAt(t->TensorValue(Id(*t, "a"), 1, Mode::kGlobal, nullptr).value()), 1.0f);
}

TEST(TrialFixes, WaitForStepsRestoresAutoRefresh) {
  auto t = MustOpen(ModesTrial());
  ASSERT_TRUE(t);
  {
    Trial::RefreshOverride off(t.get(), false);
    EXPECT_TRUE(t->WaitForSteps({1}, Mode::kGlobal, 0).ok());
    EXPECT_FALSE(t->auto_refresh());
  }
  EXPECT_TRUE(t->auto_refresh());
}

TEST(TrialFixes, RefreshOverridesNestAndEndOutOfOrder) {
  auto t = MustOpen(ModesTrial());
  auto u = MustOpen(ModesTrial());
  ASSERT_TRUE(t && u);
  auto a = std::make_unique<Trial::RefreshOverride>(t.get(), false);
  auto b = std::make_unique<Trial::RefreshOverride>(t.get(), true);
  EXPECT_TRUE(t->auto_refresh());
  EXPECT_TRUE(u->auto_refresh());  // another trial is not affected
  a.reset();                        // ended out of order: the inner one still holds
  EXPECT_TRUE(t->auto_refresh());
  auto c = std::make_unique<Trial::RefreshOverride>(t.get(), false);
  EXPECT_FALSE(t->auto_refresh());
  c.reset();
  b.reset();
  EXPECT_TRUE(t->auto_refresh());
  // ended on another thread: nothing there to end, this thread's scope stays until it ends here
  auto d = std::make_unique<Trial::RefreshOverride>(t.get(), false);
  std::thread([&] { Trial::RefreshOverride elsewhere(t.get(), true); }).join();
  EXPECT_FALSE(t->auto_refresh());
  d.reset();
  EXPECT_TRUE(t->auto_refresh());
}

TEST(TrialFixes, EndSeenWithoutAutomaticRefresh) {
  TrialOptions o;
  o.auto_refresh = false;
  auto t = MustOpen(ModesTrial(), o);
  ASSERT_TRUE(t);
  EXPECT_TRUE(t->loaded_all_steps());
  EXPECT_EQ(t->HasPassedStep(99, Mode::kGlobal).value(), StepState::kUnavailable);
}

TEST(TrialFixes, GlobalStepsListedOnce) {
  // x has data at TRAIN step 0 (global 0) and at GLOBAL-mode step 0 (in global step 1's file):
  // both map to global step 0, which smdebug lists twice.
  TrialBuilder b(TempDir("t"));
  b.WriteCollections({"worker_0"}, 1);
  b.AddFloats(0, "worker_0", Mode::kTrain, 0, "x", {1});
  b.FinishStep(0);
  b.AddFloats(1, "worker_0", Mode::kGlobal, 0, "x", {2});
  b.FinishStep(1);
  b.End();
  auto t = MustOpen(b.dir());
  ASSERT_TRUE(t);
  EXPECT_EQ(t->TensorSteps(Id(*t, "x"), Mode::kGlobal, true).value(), std::vector<int64_t>{0});
}

// ---------------------------------------------------------------------------- bad input

TEST(TrialBadInput, CorruptIndexFileIsSkippedAndReported) {
  TrialBuilder b(TempDir("t"));
  b.WriteCollections({"worker_0"}, 1);
  for (int s = 0; s < 4; ++s) b.SimpleStep(s, {"a"});
  b.End();
  const std::string bad = b.dir() + "/index/000000000/000000000002_worker_0.json";
  WriteFile(bad, "{\"meta\": {\"mode\": \"TRAIN\", \"mode_step\": 2}, \"tensor_pay");
  const std::string evil = b.dir() + "/index/000000000/000000000003_worker_0.json";
  WriteFile(evil, "{\"meta\": {\"mode\": \"TRAIN\", \"mode_step\": 3, \"event_file_name\": "
                  "\"../../etc/passwd\"}, \"tensor_payload\": [{\"tensorname\": \"a\", "
                  "\"start_idx\": 0, \"length\": 100}]}");
  auto t = MustOpen(b.dir());
  ASSERT_TRUE(t);
  EXPECT_EQ(Steps(*t), (std::vector<int64_t>{0, 1}));
  auto w = t->Warnings();
  ASSERT_EQ(w.size(), 2u);
  EXPECT_NE(w[0].find("000000000002_worker_0.json"), std::string::npos);
  EXPECT_NE(w[1].find("not a path inside the trial"), std::string::npos);
  EXPECT_TRUE(t->TensorValue(Id(*t, "a"), 1, Mode::kGlobal, nullptr).ok());
}

TEST(TrialBadInput, ExplicitRefreshReturnsTheFirstProblem) {
  TrialBuilder b(TempDir("t"));
  b.WriteCollections({"worker_0"}, 1);
  b.SimpleStep(0, {"a"});
  auto t = MustOpen(b.dir());
  ASSERT_TRUE(t);
  WriteFile(b.dir() + "/index/000000000/000000000001_worker_0.json", "not json");
  b.SimpleStep(2, {"a"});
  Status st = t->Refresh();
  EXPECT_EQ(st.code(), Code::kCorrupt);
  EXPECT_NE(st.message().find("000000000001_worker_0.json"), std::string::npos);
  EXPECT_EQ(Steps(*t, Mode::kGlobal, true), (std::vector<int64_t>{0, 2}));
  EXPECT_TRUE(t->Refresh().ok());  // reported once
}

TEST(TrialBadInput, DamagedEventFiles) {
  TrialBuilder b(TempDir("t"));
  b.WriteCollections({"worker_0"}, 1);
  b.AddFloats(0, "worker_0", Mode::kTrain, 0, "a", {1, 2});
  b.AddFloats(0, "worker_0", Mode::kTrain, 0, "b", {3, 4});
  b.FinishStep(0);
  b.SimpleStep(1, {"a", "b"});
  b.End();
  const std::string ev0 = b.dir() + "/events/000000000000/000000000000_worker_0.tfevents";
  std::string data = testing::ReadFile(ev0);
  data[3] ^= 0x40;  // record a's length field: length CRC mismatch
  WriteFile(ev0, data);
  const std::string ev1 = b.dir() + "/events/000000000001/000000000001_worker_0.tfevents";
  std::string d1 = testing::ReadFile(ev1);
  WriteFile(ev1, d1.substr(0, d1.size() - 5));  // truncated
  auto t = MustOpen(b.dir());
  ASSERT_TRUE(t);
  auto a0 = t->TensorValue(Id(*t, "a"), 0, Mode::kGlobal, nullptr);
  EXPECT_EQ(a0.status().code(), Code::kCorrupt);
  EXPECT_NE(a0.status().message().find("000000000000_worker_0.tfevents"), std::string::npos);
  EXPECT_TRUE(t->TensorValue(Id(*t, "b"), 0, Mode::kGlobal, nullptr).ok());
  EXPECT_TRUE(t->TensorValue(Id(*t, "a"), 1, Mode::kGlobal, nullptr).ok());
  auto b1 = t->TensorValue(Id(*t, "b"), 1, Mode::kGlobal, nullptr);
  EXPECT_EQ(b1.status().code(), Code::kCorrupt);
  EXPECT_NE(b1.status().message().find("000000000001_worker_0.tfevents"), std::string::npos)
      << b1.status().message();
  // What was wrong, said once: the file (named once), its real size, the record's bytes.
  const std::string m = b1.status().message();
  EXPECT_EQ(m.find("000000000001_worker_0.tfevents"), m.rfind("000000000001_worker_0.tfevents")) << m;
  EXPECT_NE(m.find("is truncated: it has " + std::to_string(d1.size() - 5) + " bytes"), std::string::npos) << m;
  EXPECT_NE(m.find("tensor 'b' at step 1"), std::string::npos) << m;
  EXPECT_NE(m.find(" to " + std::to_string(d1.size()) + " "), std::string::npos) << m;  // its end
}

// A record the index places wholly beyond the end of a (small) file: the message gives the
// file's real size, not the record's offset as its end.
TEST(TrialBadInput, RecordBeyondTheEndOfATruncatedFile) {
  TrialBuilder b(TempDir("t"));
  b.WriteCollections({"worker_0"}, 1);
  b.AddFloats(0, "worker_0", Mode::kTrain, 0, "a", {1, 2});
  b.AddFloats(0, "worker_0", Mode::kTrain, 0, "b", std::vector<float>(64, 3.0f));
  b.FinishStep(0);
  b.End();
  const std::string ev0 = b.dir() + "/events/000000000000/000000000000_worker_0.tfevents";
  std::string data = testing::ReadFile(ev0);
  const size_t kept = 40;  // inside record a: b starts beyond it
  WriteFile(ev0, data.substr(0, kept));
  auto t = MustOpen(b.dir());
  ASSERT_TRUE(t);
  auto v = t->TensorValue(Id(*t, "b"), 0, Mode::kGlobal, nullptr);
  ASSERT_EQ(v.status().code(), Code::kCorrupt);
  const std::string m = v.status().message();
  EXPECT_EQ(m.find("000000000000_worker_0.tfevents"), m.rfind("000000000000_worker_0.tfevents")) << m;
  EXPECT_NE(m.find("it has " + std::to_string(kept) + " bytes"), std::string::npos) << m;
  EXPECT_EQ(m.find("ends at byte"), std::string::npos) << m;
  EXPECT_NE(m.find("tensor 'b' at step 0"), std::string::npos) << m;
}

TEST(TrialBadInput, PayloadCrcConstantOrReal) {
  TrialBuilder b(TempDir("t"));
  b.UseRealCrc(true);
  b.WriteCollections({"worker_0"}, 1);
  b.AddFloats(0, "worker_0", Mode::kTrain, 0, "a", {1, 2});
  b.AddFloats(0, "worker_0", Mode::kTrain, 0, "b", {3, 4});
  b.FinishStep(0);
  b.End();
  const std::string ev = b.dir() + "/events/000000000000/000000000000_worker_0.tfevents";
  std::string data = testing::ReadFile(ev);
  // Flip a content byte of the second record (the last bytes before its footer are its
  // metadata; the float content sits earlier): the real CRC no longer matches.
  data[data.size() - 40] ^= 1;
  WriteFile(ev, data);
  auto t = MustOpen(b.dir());
  ASSERT_TRUE(t);
  EXPECT_TRUE(t->TensorValue(Id(*t, "a"), 0, Mode::kGlobal, nullptr).ok());  // real CRC, valid
  EXPECT_EQ(t->TensorValue(Id(*t, "b"), 0, Mode::kGlobal, nullptr).status().code(), Code::kCorrupt);
}

TEST(TrialBadInput, HostileOffsetsAndLengths) {
  TrialBuilder b(TempDir("t"));
  b.WriteCollections({"worker_0"}, 1);
  b.SimpleStep(0, {"a"});
  b.End();
  WriteFile(b.dir() + "/index/000000000/000000000001_worker_0.json",
            "{\"meta\": {\"mode\": \"TRAIN\", \"mode_step\": 1, \"event_file_name\": "
            "\"events/000000000000/000000000000_worker_0.tfevents\"}, \"tensor_payload\": ["
            "{\"tensorname\": \"huge\", \"start_idx\": 0, \"length\": 9000000000000000000},"
            "{\"tensorname\": \"far\", \"start_idx\": 9223372036854775807, \"length\": 20},"
            "{\"tensorname\": \"tiny\", \"start_idx\": 0, \"length\": 3},"
            "{\"tensorname\": \"wrong\", \"start_idx\": 0, \"length\": 20}]}");
  auto t = MustOpen(b.dir());
  ASSERT_TRUE(t);
  for (const char* n : {"huge", "far", "tiny", "wrong"}) {
    auto v = t->TensorValue(Id(*t, n), 1, Mode::kGlobal, nullptr);
    EXPECT_EQ(v.status().code(), Code::kCorrupt) << n << ": " << v.status().message();
  }
}

// Every single-bit flip anywhere in a step's event file: with real payload CRCs each one is
// SMD_E_CORRUPT naming the file; with smdebug's constant "CRC" a flip in the tensor's bytes
// cannot be seen (as in smdebug), but none crashes, and every error is a format error naming the
// file. The other step stays readable throughout.
TEST(TrialBadInput, EveryFlippedBitOfAnEventFile) {
  for (bool real_crc : {true, false}) {
    TrialBuilder b(TempDir(real_crc ? "real" : "const"));
    b.UseRealCrc(real_crc);
    b.WriteCollections({"worker_0"}, 1);
    b.AddFloats(0, "worker_0", Mode::kTrain, 0, "a", {1, 2, 3, 4, 5, 6}, {2, 3});
    b.AddStrings(0, "worker_0", Mode::kTrain, 0, "s", {"x", "yz"});
    b.AddFloats(0, "worker_0", Mode::kTrain, 0, "smdebug/reductions/max/a", {6}, {1});
    b.FinishStep(0);
    b.SimpleStep(1, {"a"});
    b.End();
    const std::string ev = b.dir() + "/events/000000000000/000000000000_worker_0.tfevents";
    const std::string good = testing::ReadFile(ev);
    int undetected = 0;
    TrialOptions o;
    o.watch = false;
    for (size_t i = 0; i < good.size(); ++i) {
      for (int bit : {0, 5}) {
        std::string bad = good;
        bad[i] = static_cast<char>(bad[i] ^ (1 << bit));
        WriteFile(ev, bad);
        auto t = MustOpen(b.dir(), o);
        ASSERT_TRUE(t);
        int failed = 0;
        for (const char* n : {"a", "s"}) {
          auto v = t->TensorValue(Id(*t, n), 0, Mode::kGlobal, nullptr);
          if (!v.ok()) {
            ++failed;
            EXPECT_TRUE(v.status().code() == Code::kCorrupt || v.status().code() == Code::kUnsupported)
                << i << ": " << v.status().message();
            EXPECT_NE(v.status().message().find("000000000000_worker_0.tfevents"), std::string::npos)
                << v.status().message();
          }
        }
        auto r = t->TensorReductionValue(Id(*t, "a"), 0, "max", Mode::kGlobal, nullptr);
        if (!r.ok()) {
          ++failed;
          EXPECT_TRUE(r.status().code() == Code::kCorrupt || r.status().code() == Code::kUnsupported)
              << i << ": " << r.status().message();
        }
        if (real_crc) EXPECT_EQ(failed, 1) << "byte " << i << " bit " << bit;
        if (failed == 0) ++undetected;
        EXPECT_EQ(FloatAt(t->TensorValue(Id(*t, "a"), 1, Mode::kGlobal, nullptr).value()), 1.0f);
      }
    }
    if (!real_crc) EXPECT_GT(undetected, 0);  // the tensor's own bytes: nothing to check them with
  }
}

// Index files that are not what smdebug writes: each is skipped with a warning naming it, the
// explicit refresh that meets it fails with SMD_E_CORRUPT, and every other step stays readable.
TEST(TrialBadInput, MalformedIndexFilesAreSkipped) {
  const std::string ev = "events/000000000001/000000000001_worker_0.tfevents";
  const std::string meta = "{\"meta\": {\"mode\": \"TRAIN\", \"mode_step\": 1, \"event_file_name\": \"" + ev + "\"}";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"not JSON", "not json"},
      {"truncated", meta + ", \"tensor_payload\": [{\"tensorname\": \"a\", \"start_"},
      {"empty", ""},
      {"no meta", "{\"tensor_payload\": []}"},
      {"empty meta", "{\"meta\": {}, \"tensor_payload\": []}"},
      {"no payload", meta + "}"},
      {"start_idx a string", meta + ", \"tensor_payload\": [{\"tensorname\": \"a\", \"start_idx\": \"0\", \"length\": 20}]}"},
      {"negative length", meta + ", \"tensor_payload\": [{\"tensorname\": \"a\", \"start_idx\": 0, \"length\": -20}]}"},
      {"fractional length", meta + ", \"tensor_payload\": [{\"tensorname\": \"a\", \"start_idx\": 0, \"length\": 20.5}]}"},
      {"no length", meta + ", \"tensor_payload\": [{\"tensorname\": \"a\", \"start_idx\": 0}]}"},
      {"tensorname a number", meta + ", \"tensor_payload\": [{\"tensorname\": 7, \"start_idx\": 0, \"length\": 20}]}"},
      {"payload an object", meta + ", \"tensor_payload\": {\"tensorname\": \"a\"}}"},
      {"unknown mode", "{\"meta\": {\"mode\": \"TEST\", \"mode_step\": 1}, \"shape_payload\": []}"},
      {"mode_step a string", "{\"meta\": {\"mode\": \"TRAIN\", \"mode_step\": \"1\"}, \"shape_payload\": []}"},
      {"negative mode_step", "{\"meta\": {\"mode\": \"TRAIN\", \"mode_step\": -1}, \"shape_payload\": []}"},
      {"shape of strings", "{\"meta\": {\"mode\": \"TRAIN\", \"mode_step\": 1}, \"shape_payload\": [{\"tensorname\": \"a\", \"shape\": [\"2\"]}]}"},
      {"event file outside", "{\"meta\": {\"mode\": \"TRAIN\", \"mode_step\": 1, \"event_file_name\": \"/etc/passwd\"}, \"tensor_payload\": [{\"tensorname\": \"a\", \"start_idx\": 0, \"length\": 20}]}"},
      {"binary", std::string("{\"meta\": {\"mode\": \"TR\0AIN\"", 26)},
  };
  for (const auto& c : cases) {
    TrialBuilder b(TempDir("t"));
    b.WriteCollections({"worker_0"}, 1);
    for (int s = 0; s < 3; ++s) b.SimpleStep(s, {"a"});
    b.End();
    WriteFile(b.dir() + "/index/000000000/000000000001_worker_0.json", c.second);
    TrialOptions o;
    auto t = MustOpen(b.dir(), o);
    ASSERT_TRUE(t) << c.first;
    EXPECT_EQ(Steps(*t), (std::vector<int64_t>{0, 2})) << c.first;
    auto w = t->Warnings();
    ASSERT_EQ(w.size(), 1u) << c.first;
    EXPECT_NE(w[0].find("000000000001_worker_0.json"), std::string::npos) << c.first << ": " << w[0];
    EXPECT_EQ(FloatAt(t->TensorValue(Id(*t, "a"), 2, Mode::kGlobal, nullptr).value()), 2.0f);
    // A trial opened before the file appeared gets SMD_E_CORRUPT from the refresh that meets it.
    TrialBuilder b2(TempDir("t2"));
    b2.WriteCollections({"worker_0"}, 1);
    b2.SimpleStep(0, {"a"});
    auto t2 = MustOpen(b2.dir());
    ASSERT_TRUE(t2);
    WriteFile(b2.dir() + "/index/000000000/000000000001_worker_0.json", c.second);
    Status st = t2->Refresh();
    EXPECT_EQ(st.code(), Code::kCorrupt) << c.first;
    EXPECT_NE(st.message().find("000000000001_worker_0.json"), std::string::npos) << st.message();
  }
}

// Many index files, some malformed, some vanished: opened with helper threads reading ahead, in
// chunks; the result is the same as reading them one by one, and warnings come in path order.
TEST(TrialBadInput, ManyFilesSomeBroken) {
  TrialBuilder b(TempDir("t"));
  b.WriteCollections({"worker_0"}, 1);
  std::vector<int64_t> good;
  for (int s = 0; s < 300; ++s) {
    b.SimpleStep(s, {"a", "b", "smdebug/reductions/max/a"});
    if (s % 37 == 5) {
      WriteFile(b.dir() + "/" + io::IndexFileRelPath(s, "worker_0"),
                "{\"meta\": {\"mode\": \"TRAIN\"");
    } else {
      good.push_back(s);
    }
  }
  b.End();
  auto t = MustOpen(b.dir());
  ASSERT_TRUE(t);
  EXPECT_EQ(Steps(*t), good);
  auto w = t->Warnings();
  ASSERT_EQ(w.size(), 300 - good.size());
  for (size_t i = 0; i < w.size(); ++i) {
    EXPECT_NE(w[i].find(ZeroPad(int64_t(5 + 37 * i), 12) + "_worker_0.json"), std::string::npos) << w[i];
  }
  for (int64_t s : {int64_t(0), int64_t(299)}) {
    EXPECT_EQ(FloatAt(t->TensorValue(Id(*t, "b"), s, Mode::kGlobal, nullptr).value()), float(s));
    EXPECT_TRUE(t->TensorReductionValue(Id(*t, "a"), s, "max", Mode::kGlobal, nullptr).ok());
  }
  EXPECT_EQ(t->GetStats().entries, 2 * good.size());
}

// An index that points past the end of its event file, or that names a missing one: the value is
// SMD_E_CORRUPT (or TensorUnavailableForStep for the missing file) naming the file, at once.
TEST(TrialBadInput, IndexPointsPastItsEventFile) {
  TrialBuilder b(TempDir("t"));
  b.WriteCollections({"worker_0"}, 1);
  b.SimpleStep(0, {"a"});
  b.End();
  const std::string ev = "events/000000000000/000000000000_worker_0.tfevents";
  const uint64_t size = testing::ReadFile(b.dir() + "/" + ev).size();
  auto entry = [](const std::string& name, uint64_t start, uint64_t length) {
    return "{\"tensorname\": \"" + name + "\", \"start_idx\": " + std::to_string(start) +
           ", \"length\": " + std::to_string(length) + "}";
  };
  WriteFile(b.dir() + "/index/000000000/000000000001_worker_0.json",
            "{\"meta\": {\"mode\": \"TRAIN\", \"mode_step\": 1, \"event_file_name\": \"" + ev +
                "\"}, \"tensor_payload\": [" + entry("at_end", size, 20) + ", " +
                entry("across_end", size - 4, 20) + ", " + entry("longer", 0, size + 1) + ", " +
                entry("terabyte", 0, uint64_t(1) << 40) + ", " + entry("petabyte_offset", uint64_t(1) << 50, 20) +
                "]}");
  WriteFile(b.dir() + "/index/000000000/000000000002_worker_0.json",
            "{\"meta\": {\"mode\": \"TRAIN\", \"mode_step\": 2, \"event_file_name\": "
            "\"events/000000000002/000000000002_worker_0.tfevents\"}, \"tensor_payload\": [" +
                entry("a", 0, 20) + "]}");
  auto t = MustOpen(b.dir());
  ASSERT_TRUE(t);
  auto start = std::chrono::steady_clock::now();
  for (const char* n : {"at_end", "across_end", "longer", "terabyte", "petabyte_offset"}) {
    auto v = t->TensorValue(Id(*t, n), 1, Mode::kGlobal, nullptr);
    EXPECT_EQ(v.status().code(), Code::kCorrupt) << n << ": " << v.status().message();
    EXPECT_NE(v.status().message().find("000000000000_worker_0.tfevents"), std::string::npos)
        << v.status().message();
    auto info = t->TensorValueInfo(Id(*t, n), 1, Mode::kGlobal, nullptr);
    EXPECT_EQ(info.status().code(), Code::kCorrupt) << n << ": " << info.status().message();
  }
  auto missing = t->TensorValue(Id(*t, "a"), 2, Mode::kGlobal, nullptr);
  EXPECT_EQ(missing.status().code(), Code::kTensorUnavailableForStep);
  EXPECT_NE(missing.status().message().find("000000000002_worker_0.tfevents' is missing"),
            std::string::npos);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
  EXPECT_EQ(FloatAt(t->TensorValue(Id(*t, "a"), 0, Mode::kGlobal, nullptr).value()), 0.0f);
}

// A record whose length field (with a valid CRC) declares a terabyte, one whose shape declares
// a terabyte of elements, one whose length CRC is wrong, one with an unknown dtype: errors naming
// the file, no huge allocation (ASan would abort on one), and the other tensors are readable.
TEST(TrialBadInput, LyingRecords) {
  TrialBuilder b(TempDir("t"));
  b.WriteCollections({"worker_0"}, 1);
  b.AddFloats(0, "worker_0", Mode::kTrain, 0, "len_tb", {1, 2});
  b.AddFloats(0, "worker_0", Mode::kTrain, 0, "len_crc", {1, 2});
  b.Add(0, "worker_0", Mode::kTrain, 0, "shape_tb", DType::kFloat32, {int64_t(1) << 40},
        std::string(8, '\0'));
  b.Add(0, "worker_0", Mode::kTrain, 0, "dtype99", static_cast<DType>(99), {2}, std::string(8, '\0'));
  b.AddFloats(0, "worker_0", Mode::kTrain, 0, "fine", {7});
  b.FinishStep(0);
  b.End();
  const std::string ev = b.dir() + "/events/000000000000/000000000000_worker_0.tfevents";
  std::string data = testing::ReadFile(ev);
  // Record 0 (len_tb): a length field of 2^40 with its CRC recomputed, so only the length lies.
  unsigned char header[io::kRecordHeaderSize];
  io::EncodeRecordHeader(uint64_t(1) << 40, header);
  data.replace(0, io::kRecordHeaderSize, reinterpret_cast<const char*>(header), io::kRecordHeaderSize);
  // Record 1 (len_crc): the length's CRC is wrong.
  const uint64_t rec0 = io::kRecordOverhead + io::DecodeFixed64(
      reinterpret_cast<const unsigned char*>(testing::ReadFile(ev).data()));
  data[rec0 + 9] ^= 0x01;
  WriteFile(ev, data);
  auto t = MustOpen(b.dir());
  ASSERT_TRUE(t);
  auto start = std::chrono::steady_clock::now();
  const std::pair<const char*, Code> expect[] = {{"len_tb", Code::kCorrupt},
                                                 {"len_crc", Code::kCorrupt},
                                                 {"shape_tb", Code::kCorrupt},
                                                 {"dtype99", Code::kUnsupported}};
  for (const auto& e : expect) {
    auto v = t->TensorValue(Id(*t, e.first), 0, Mode::kGlobal, nullptr);
    EXPECT_EQ(v.status().code(), e.second) << e.first << ": " << v.status().message();
    EXPECT_NE(v.status().message().find("000000000000_worker_0.tfevents"), std::string::npos)
        << v.status().message();
    EXPECT_FALSE(t->TensorValueInfo(Id(*t, e.first), 0, Mode::kGlobal, nullptr).ok()) << e.first;
  }
  EXPECT_NE(t->TensorValue(Id(*t, "len_crc"), 0, Mode::kGlobal, nullptr).status().message().find(
                "length CRC mismatch"),
            std::string::npos);
  EXPECT_NE(t->TensorValue(Id(*t, "dtype99"), 0, Mode::kGlobal, nullptr).status().message().find(
                "data type 99"),
            std::string::npos);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
  EXPECT_EQ(FloatAt(t->TensorValue(Id(*t, "fine"), 0, Mode::kGlobal, nullptr).value()), 7.0f);
}

// FIFOs and devices where files should be: errors naming them, never a blocked open or an
// endless read.
TEST(TrialBadInput, SpecialFilesDoNotHang) {
  TrialBuilder b(TempDir("t"));
  b.WriteCollections({"worker_0"}, 1);
  b.SimpleStep(0, {"a"});
  b.SimpleStep(1, {"a"});
  b.SimpleStep(2, {"a"});
  b.End();
  const std::string ev1 = b.dir() + "/events/000000000001/000000000001_worker_0.tfevents";
  const std::string idx2 = b.dir() + "/index/000000000/000000000002_worker_0.json";
  ASSERT_EQ(0, std::remove(ev1.c_str()));
  ASSERT_EQ(0, ::mkfifo(ev1.c_str(), 0644));
  ASSERT_EQ(0, std::remove(idx2.c_str()));
  ASSERT_EQ(0, ::symlink("/dev/zero", idx2.c_str()));
  auto start = std::chrono::steady_clock::now();
  auto t = MustOpen(b.dir());
  ASSERT_TRUE(t);
  EXPECT_EQ(Steps(*t), (std::vector<int64_t>{0, 1}));
  ASSERT_EQ(t->Warnings().size(), 1u);
  EXPECT_NE(t->Warnings()[0].find("000000000002_worker_0.json"), std::string::npos) << t->Warnings()[0];
  auto v = t->TensorValue(Id(*t, "a"), 1, Mode::kGlobal, nullptr);
  EXPECT_FALSE(v.ok());
  EXPECT_NE(v.status().message().find("000000000001_worker_0.tfevents"), std::string::npos)
      << v.status().message();
  EXPECT_EQ(FloatAt(t->TensorValue(Id(*t, "a"), 0, Mode::kGlobal, nullptr).value()), 0.0f);
  // A collections file that is a FIFO.
  TrialBuilder c(TempDir("c"));
  testing::MakeDirs(c.dir() + "/collections/000000000");
  ASSERT_EQ(0, ::mkfifo((c.dir() + "/collections/000000000/worker_0_collections.json").c_str(), 0644));
  c.End();
  auto tc = Trial::Open(c.dir(), TrialOptions());
  EXPECT_FALSE(tc.ok());
  EXPECT_NE(tc.status().message().find("worker_0_collections.json"), std::string::npos)
      << tc.status().message();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
}

TEST(TrialBadInput, CollectionsFiles) {
  {
    TrialBuilder b(TempDir("none_ended"));
    b.End();
    auto t = Trial::Open(b.dir(), TrialOptions());
    EXPECT_EQ(t.status().code(), Code::kMissingCollectionFiles);
    EXPECT_NE(t.status().message().find("Training job has ended"), std::string::npos);
    EXPECT_NE(t.status().message().find(b.dir() + "/collections/000000000"), std::string::npos)
        << t.status().message();
  }
  {
    TrialBuilder b(TempDir("none_running"));
    TrialOptions o;
    o.collection_wait_ms = 150;
    auto start = std::chrono::steady_clock::now();
    auto t = Trial::Open(b.dir(), o);
    auto took = std::chrono::steady_clock::now() - start;
    EXPECT_EQ(t.status().code(), Code::kMissingCollectionFiles);
    EXPECT_GE(took, std::chrono::milliseconds(140));
    EXPECT_LT(took, std::chrono::seconds(2));
  }
  {
    TrialBuilder b(TempDir("appears"));
    TrialOptions o;
    o.collection_wait_ms = 10000;
    std::thread writer([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      b.WriteCollections({"worker_0"}, 1);
    });
    auto start = std::chrono::steady_clock::now();
    auto t = Trial::Open(b.dir(), o);
    writer.join();
    EXPECT_TRUE(t.ok()) << t.status().message();
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  }
  {
    TrialBuilder b(TempDir("too_few"));
    b.WriteCollections({"worker_0"}, 2);
    b.End();
    EXPECT_EQ(Trial::Open(b.dir(), TrialOptions()).status().code(), Code::kMissingCollectionFiles);
  }
  {
    TrialBuilder b(TempDir("malformed"));
    WriteFile(b.dir() + "/collections/000000000/worker_0_collections.json", "{\"collections\": [");
    auto t = Trial::Open(b.dir(), TrialOptions());
    EXPECT_EQ(t.status().code(), Code::kCorrupt);
    EXPECT_NE(t.status().message().find("worker_0_collections.json"), std::string::npos);
  }
  {
    // A running job with fewer collection files than _meta.num_workers: smdebug waits forever;
    // smd opens after the bounded wait and picks the other workers up as their files appear.
    TrialBuilder b(TempDir("partial"));
    b.WriteCollections({"worker_0"}, 2);
    TrialOptions o;
    o.collection_wait_ms = 20;
    auto t = Trial::Open(b.dir(), o);
    ASSERT_TRUE(t.ok()) << t.status().message();
    EXPECT_EQ(t.value()->Workers().value(), std::vector<std::string>{"worker_0"});
    b.WriteCollections({"worker_1"}, 2);
    EXPECT_EQ(t.value()->Workers().value(), (std::vector<std::string>{"worker_0", "worker_1"}));
  }
  {
    // No _meta: smdebug fails with KeyError; smd assumes one worker and says so.
    TrialBuilder b(TempDir("nometa"));
    WriteFile(b.dir() + "/collections/000000000/worker_0_collections.json",
              "{\"collections\": {}, \"extra\": 1}");
    b.End();
    auto t = Trial::Open(b.dir(), TrialOptions());
    ASSERT_TRUE(t.ok()) << t.status().message();
    EXPECT_EQ(t.value()->num_workers(), 1);
    ASSERT_EQ(t.value()->Warnings().size(), 1u);
    EXPECT_NE(t.value()->Warnings()[0].find("num_workers"), std::string::npos);
  }
  EXPECT_EQ(Trial::Open(TempDir("x") + "/missing", TrialOptions()).status().code(), Code::kNotFound);
  TrialOptions bad;
  bad.range_begin = 5;
  bad.range_end = 5;
  EXPECT_EQ(Trial::Open(TempDir("y"), bad).status().code(), Code::kInvalidArgument);
}

// ------------------------------------------------------------------------- several workers

TEST(TrialWorkers, HasPassedStepExactly) {
  TrialBuilder b(TempDir("t"));
  b.WriteCollections({"worker_0", "worker_1"}, 2);
  for (const char* w : {"worker_0", "worker_1"}) b.SimpleStep(0, {"a"}, w);
  b.SimpleStep(2, {"a"}, "worker_0");  // step 1 skipped; step 2 incomplete
  auto t = MustOpen(b.dir());
  ASSERT_TRUE(t);
  auto state = [&](int64_t s) { return t->HasPassedStep(s, Mode::kGlobal).value(); };
  EXPECT_EQ(state(0), StepState::kAvailable);
  EXPECT_EQ(state(1), StepState::kNotYetAvailable);  // absent, no later complete step
  EXPECT_EQ(state(2), StepState::kNotYetAvailable);  // incomplete
  EXPECT_EQ(state(3), StepState::kNotYetAvailable);  // beyond, running
  EXPECT_EQ(Steps(*t), (std::vector<int64_t>{0}));
  EXPECT_EQ(Steps(*t, Mode::kGlobal, true), (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(t->TensorSteps(Id(*t, "a"), Mode::kTrain, false).value(), std::vector<int64_t>{0});
  // What one worker wrote of an incomplete step is readable (as in smdebug); the step itself is
  // not yet available, and an absent one that may still come is not yet available either.
  EXPECT_TRUE(t->TensorValue(Id(*t, "a"), 2, Mode::kGlobal, nullptr).ok());
  const std::string w1 = "worker_1";
  EXPECT_EQ(t->TensorValue(Id(*t, "a"), 2, Mode::kGlobal, &w1).status().code(), Code::kInvalidWorker);
  EXPECT_EQ(t->TensorValue(Id(*t, "a"), 1, Mode::kGlobal, nullptr).status().code(),
            Code::kStepNotYetAvailable);
  b.SimpleStep(2, {"a"}, "worker_1");
  EXPECT_EQ(state(2), StepState::kAvailable);
  EXPECT_EQ(state(1), StepState::kUnavailable);  // a later step is complete
  EXPECT_EQ(t->last_complete_step(), 2);
  EXPECT_EQ(t->TensorValue(Id(*t, "a"), 1, Mode::kGlobal, nullptr).status().code(),
            Code::kStepUnavailable);
  b.SimpleStep(3, {"a"}, "worker_0");
  b.End();
  EXPECT_EQ(state(3), StepState::kAvailable);  // the job ended: every known step counts
  EXPECT_EQ(state(4), StepState::kUnavailable);
  EXPECT_EQ(t->TensorValue(Id(*t, "a"), 9, Mode::kGlobal, nullptr).status().code(),
            Code::kStepUnavailable);
}

TEST(TrialWorkers, IncompleteStepWindowGivesUp) {
  TrialBuilder b(TempDir("t"));
  b.WriteCollections({"worker_0", "worker_1"}, 2);
  for (int s = 0; s < 10; ++s) b.SimpleStep(s, {"a"}, "worker_0");  // worker_1 never writes
  TrialOptions o;
  o.incomplete_step_window = 4;
  auto t = MustOpen(b.dir(), o);
  ASSERT_TRUE(t);
  // 10 incomplete steps > window 4: the oldest window/2 are declared complete, repeatedly.
  EXPECT_GE(t->last_complete_step(), 1);
  EXPECT_FALSE(Steps(*t).empty());
}

TEST(TrialWorkers, NoMoreDataFromTensorWhenEndedMidStep) {
  TrialBuilder b(TempDir("t"));
  b.WriteCollections({"worker_0", "worker_1"}, 2);
  for (const char* w : {"worker_0", "worker_1"}) b.SimpleStep(0, {"a"}, w);
  b.End();
  auto t = MustOpen(b.dir());
  ASSERT_TRUE(t);
  EXPECT_EQ(t->WaitForSteps({5}, Mode::kTrain, 100).code(), Code::kNoMoreData);
}

// ------------------------------------------------------------------ refresh, cursor, range

class CountingStorage : public io::Storage {
 public:
  explicit CountingStorage(std::unique_ptr<io::Storage> s) : s_(std::move(s)) {}
  const std::string& root() const override { return s_->root(); }
  std::string Describe(std::string_view rel) const override { return s_->Describe(rel); }
  Status PrepareForWriting() override { return s_->PrepareForWriting(); }
  Result<std::unique_ptr<io::FileSink>> Create(const std::string& rel) override { return s_->Create(rel); }
  Status WriteAtomic(const std::string& rel, std::string_view c) override { return s_->WriteAtomic(rel, c); }
  Status CreateExclusive(const std::string& rel) override { return s_->CreateExclusive(rel); }
  Status Remove(const std::string& rel) override { return s_->Remove(rel); }
  Result<bool> Exists(const std::string& rel) override { return s_->Exists(rel); }
  Result<uint64_t> FileSize(const std::string& rel) override { return s_->FileSize(rel); }
  Result<std::string> ReadAll(const std::string& rel) override {
    std::lock_guard<std::mutex> l(mu);
    if (rel.rfind("index/", 0) == 0) ++index_reads;
    return s_->ReadAll(rel);
  }
  Status ReadRange(const std::string& rel, uint64_t o, uint64_t n, char* out) override {
    {
      std::lock_guard<std::mutex> l(mu);
      range_bytes += n;
      ++range_reads;
    }
    return s_->ReadRange(rel, o, n, out);
  }
  Result<std::unique_ptr<io::AppendFile>> OpenForAppend(const std::string& rel) override {
    return s_->OpenForAppend(rel);
  }
  Result<std::vector<std::string>> ListDir(const std::string& rel) override {
    std::lock_guard<std::mutex> l(mu);
    listed.push_back(rel);
    return s_->ListDir(rel);
  }
  std::mutex mu;
  int index_reads = 0;
  uint64_t range_bytes = 0;
  int range_reads = 0;
  std::vector<std::string> listed;

 private:
  std::unique_ptr<io::Storage> s_;
};

TEST(TrialValueInfo, ReadsOnlyTheStartOfLargeRecords) {
  TrialBuilder b(TempDir("t"));
  b.UseRealCrc(true);
  b.WriteCollections({"worker_0"}, 1);
  std::vector<float> big(100000);
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<float>(i);
  b.AddFloats(0, "worker_0", Mode::kTrain, 0, "big", big, {100, 1000});
  b.AddFloats(0, "worker_0", Mode::kTrain, 0, "small", {1, 2, 3});
  b.AddStrings(0, "worker_0", Mode::kTrain, 0, "s", {"a", "b"});
  b.AddShape(0, "worker_0", Mode::kTrain, 0, "shape_only", {4, 5});
  b.FinishStep(0);
  b.End();
  // Damage the middle of big's content: its real payload CRC no longer matches.
  const std::string ev = b.dir() + "/events/000000000000/000000000000_worker_0.tfevents";
  std::string data = testing::ReadFile(ev);
  data[200000] ^= 1;
  WriteFile(ev, data);

  auto storage = std::make_unique<CountingStorage>(io::MakeLocalStorage(b.dir()));
  CountingStorage* cs = storage.get();
  auto opened = Trial::Open(std::move(storage), TrialOptions());
  ASSERT_TRUE(opened.ok()) << opened.status().message();
  Trial& t = *opened.value();
  auto info = t.TensorValueInfo(Id(t, "big"), 0, Mode::kGlobal, nullptr);
  ASSERT_TRUE(info.ok()) << info.status().message();
  EXPECT_EQ(info->dtype, DType::kFloat32);
  EXPECT_EQ(info->shape, (std::vector<int64_t>{100, 1000}));
  EXPECT_EQ(cs->range_reads, 1);
  EXPECT_EQ(cs->range_bytes, 4096u);  // not the 400 KB record
  EXPECT_EQ(t.TensorValue(Id(t, "big"), 0, Mode::kGlobal, nullptr).status().code(), Code::kCorrupt);

  auto small = t.TensorValueInfo(Id(t, "small"), 0, Mode::kGlobal, nullptr);
  ASSERT_TRUE(small.ok()) << small.status().message();
  EXPECT_EQ(small->shape, std::vector<int64_t>{3});
  auto str = t.TensorValueInfo(Id(t, "s"), 0, Mode::kGlobal, nullptr);
  ASSERT_TRUE(str.ok()) << str.status().message();
  EXPECT_EQ(str->dtype, DType::kString);
  EXPECT_EQ(str->shape, std::vector<int64_t>{2});
  EXPECT_EQ(t.TensorValueInfo(Id(t, "shape_only"), 0, Mode::kGlobal, nullptr).status().code(),
            Code::kTensorUnavailableForStep);
}

TEST(TrialValueInfo, LargeRecordsWithAWrongIndexAreCorrupt) {
  TrialBuilder b(TempDir("t"));
  b.WriteCollections({"worker_0"}, 1);
  b.AddFloats(0, "worker_0", Mode::kTrain, 0, "big", std::vector<float>(50000, 1.0f));
  b.AddFloats(0, "worker_0", Mode::kTrain, 0, "big2", std::vector<float>(50000, 2.0f));
  b.FinishStep(0);
  b.End();
  const std::string ev = "events/000000000000/000000000000_worker_0.tfevents";
  const uint64_t size = testing::ReadFile(b.dir() + "/" + ev).size();
  const uint64_t rec = size / 2;  // both records have the same size
  // "len+8": the index's length disagrees with the record's length field; "other": the offset
  // of big2's record under another name; "past": a record beyond the end of the file.
  WriteFile(b.dir() + "/index/000000000/000000000001_worker_0.json",
            "{\"meta\": {\"mode\": \"TRAIN\", \"mode_step\": 1, \"event_file_name\": \"" + ev +
                "\"}, \"tensor_payload\": [{\"tensorname\": \"len8\", \"start_idx\": 0, \"length\": " +
                std::to_string(rec + 8) + "}, {\"tensorname\": \"other\", \"start_idx\": " +
                std::to_string(rec) + ", \"length\": " + std::to_string(rec) +
                "}, {\"tensorname\": \"past\", \"start_idx\": " + std::to_string(size) +
                ", \"length\": " + std::to_string(rec) + "}]}");
  auto t = MustOpen(b.dir());
  ASSERT_TRUE(t);
  for (const char* n : {"len8", "other", "past"}) {
    auto info = t->TensorValueInfo(Id(*t, n), 1, Mode::kGlobal, nullptr);
    EXPECT_EQ(info.status().code(), Code::kCorrupt) << n;
    EXPECT_NE(info.status().message().find("000000000000_worker_0.tfevents"), std::string::npos)
        << info.status().message();
  }
  EXPECT_TRUE(t->TensorValueInfo(Id(*t, "big2"), 0, Mode::kGlobal, nullptr).ok());
}

TEST(TrialRefresh, CostFollowsNewData) {
  TrialBuilder b(TempDir("t"));
  b.WriteCollections({"worker_0"}, 1);
  for (int s = 0; s < 2500; s += 5) b.SimpleStep(s, {"a", "b"});  // index/000000000..2
  auto storage = std::make_unique<CountingStorage>(io::MakeLocalStorage(b.dir()));
  CountingStorage* cs = storage.get();
  TrialOptions o;
  o.watch = false;  // every refresh lists
  auto t = Trial::Open(std::move(storage), o);
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(cs->index_reads, 500);
  EXPECT_EQ(Steps(*t.value()).size(), 500u);
  cs->listed.clear();
  cs->index_reads = 0;
  b.SimpleStep(2500, {"a", "b"});
  b.SimpleStep(3001, {"a", "b"});
  EXPECT_TRUE(t.value()->Refresh().ok());
  EXPECT_EQ(cs->index_reads, 2);
  // Only the index root and the folders at or after the cursor's (step 2495) are listed.
  for (const std::string& d : cs->listed) {
    EXPECT_TRUE(d == "index" || d == "index/000000002" || d == "index/000000003" ||
                d.rfind("collections", 0) == 0)
        << d;
  }
  EXPECT_EQ(Steps(*t.value()).back(), 3001);
  EXPECT_EQ(t.value()->TensorSteps(Id(*t.value(), "a"), Mode::kGlobal, false).value().size(), 502u);
}

TEST(TrialRefresh, RangeBeginSkipsEarlierFolders) {
  TrialBuilder b(TempDir("t"));
  b.WriteCollections({"worker_0"}, 1);
  for (int s = 0; s < 2500; s += 100) b.SimpleStep(s, {"a"});
  auto storage = std::make_unique<CountingStorage>(io::MakeLocalStorage(b.dir()));
  CountingStorage* cs = storage.get();
  TrialOptions o;
  o.watch = false;
  o.range_begin = 2000;
  auto t = Trial::Open(std::move(storage), o);
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(Steps(*t.value()), (std::vector<int64_t>{2000, 2100, 2200, 2300, 2400}));
  EXPECT_EQ(cs->index_reads, 5);
  for (const std::string& d : cs->listed) {
    EXPECT_TRUE(d == "index" || d == "index/000000002" || d.rfind("collections", 0) == 0) << d;
  }
}

TEST(TrialRefresh, AutomaticAndManualRefresh) {
  for (bool watch : {true, false}) {
    TrialBuilder b(TempDir(watch ? "w" : "nw"));
    b.WriteCollections({"worker_0"}, 1);
    b.SimpleStep(0, {"a"});
    TrialOptions o;
    o.watch = watch;
    auto t = MustOpen(b.dir(), o);
    ASSERT_TRUE(t);
    b.SimpleStep(1, {"a", "new"});
    EXPECT_EQ(Steps(*t), (std::vector<int64_t>{0, 1})) << watch;
    EXPECT_TRUE(t->HasTensor("new").value());
    {
      Trial::RefreshOverride off(t.get(), false);
      b.SimpleStep(2, {"a"});
      EXPECT_EQ(Steps(*t), (std::vector<int64_t>{0, 1}));
      EXPECT_EQ(t->HasPassedStep(2, Mode::kGlobal).value(), StepState::kNotYetAvailable);
      EXPECT_TRUE(t->Refresh().ok());
      EXPECT_EQ(Steps(*t), (std::vector<int64_t>{0, 1, 2}));
    }
    // wait_for_steps wakes up when the step appears.
    std::thread writer([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      b.SimpleStep(3, {"a"});
    });
    auto start = std::chrono::steady_clock::now();
    Status st = t->WaitForSteps({3}, Mode::kGlobal, 10000);
    writer.join();
    EXPECT_TRUE(st.ok()) << st.message();
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
    EXPECT_EQ(t->WaitForSteps({9}, Mode::kGlobal, 30).code(), Code::kStepNotYetAvailable);
    b.End();
    EXPECT_EQ(t->WaitForSteps({9}, Mode::kGlobal, 5000).code(), Code::kNoMoreData);
  }
}

TEST(TrialRefresh, RangeStepsEndIsExclusive) {
  TrialBuilder b(TempDir("t"));
  b.WriteCollections({"worker_0"}, 1);
  for (int s = 0; s < 10; ++s) b.SimpleStep(s, {"a"});
  b.End();
  TrialOptions o;
  o.range_begin = 3;
  o.range_end = 6;
  auto t = MustOpen(b.dir(), o);
  ASSERT_TRUE(t);
  EXPECT_EQ(Steps(*t), (std::vector<int64_t>{3, 4, 5}));
  o.range_begin = -1;
  o.range_end = 2;
  EXPECT_EQ(Steps(*MustOpen(b.dir(), o)), (std::vector<int64_t>{0, 1}));
  o.range_begin = 8;
  o.range_end = -1;
  EXPECT_EQ(Steps(*MustOpen(b.dir(), o)), (std::vector<int64_t>{8, 9}));
}

TEST(TrialRefresh, IndexFolderChangeAtStep1000) {
  TrialBuilder b(TempDir("t"));
  b.WriteCollections({"worker_0"}, 1);
  for (int s : {998, 999, 1000, 1001, 1999, 2000}) b.SimpleStep(s, {"a"});
  b.End();
  auto t = MustOpen(b.dir());
  ASSERT_TRUE(t);
  EXPECT_EQ(Steps(*t), (std::vector<int64_t>{998, 999, 1000, 1001, 1999, 2000}));
  EXPECT_EQ(FloatAt(t->TensorValue(Id(*t, "a"), 1000, Mode::kGlobal, nullptr).value()), 1000.0f);
}

TEST(TrialRefresh, DuplicateEntriesLastWins) {
  TrialBuilder b(TempDir("t"));
  b.WriteCollections({"worker_0"}, 1);
  b.AddFloats(0, "worker_0", Mode::kTrain, 0, "scalar/x", {1});
  b.AddFloats(0, "worker_0", Mode::kTrain, 0, "scalar/x", {2});
  b.FinishStep(0);
  b.End();
  auto t = MustOpen(b.dir());
  ASSERT_TRUE(t);
  EXPECT_EQ(FloatAt(t->TensorValue(Id(*t, "scalar/x"), 0, Mode::kGlobal, nullptr).value()), 2.0f);
}

// --------------------------------------------------------------- concurrency and memory

TEST(TrialConcurrency, ReadersWhileRefreshing) {
  TrialBuilder b(TempDir("t"));
  b.WriteCollections({"worker_0"}, 1);
  b.SimpleStep(0, {"a", "b"});
  auto t = MustOpen(b.dir());
  ASSERT_TRUE(t);
  std::atomic<bool> stop{false};
  std::atomic<int> reads{0};
  std::vector<std::thread> readers;
  for (int k = 0; k < 4; ++k) {
    readers.emplace_back([&] {
      while (!stop) {
        auto steps = t->Steps(Mode::kGlobal, false);
        ASSERT_TRUE(steps.ok());
        auto id = t->TensorId("a");
        ASSERT_TRUE(id.ok());
        for (int64_t s : steps.value()) {
          auto v = t->TensorValue(id.value(), s, Mode::kGlobal, nullptr);
          ASSERT_TRUE(v.ok()) << v.status().message();
          ASSERT_EQ(FloatAt(v.value()), float(s));
          ++reads;
        }
        ASSERT_TRUE(t->TensorNames({}).ok());
      }
    });
  }
  for (int s = 1; s < 60; ++s) {
    b.SimpleStep(s, {"a", "b"});
    if (s % 7 == 0) ASSERT_TRUE(t->Refresh().ok());
  }
  b.End();
  ASSERT_TRUE(t->WaitForSteps({59}, Mode::kGlobal, 10000).ok());
  stop = true;
  for (auto& r : readers) r.join();
  EXPECT_GT(reads.load(), 0);
  EXPECT_EQ(Steps(*t).size(), 60u);
}

TEST(TrialMemory, UnderTwoHundredBytesPerEntry) {
  TrialBuilder b(TempDir("t"));
  b.WriteCollections({"worker_0"}, 1);
  std::vector<std::string> names;
  for (int i = 0; i < 100; ++i) names.push_back("layer" + std::to_string(i) + "/weight");
  for (int s = 0; s < 300; ++s) b.SimpleStep(s, names);
  b.End();
  auto t = MustOpen(b.dir());
  ASSERT_TRUE(t);
  Trial::Stats st = t->GetStats();
  EXPECT_EQ(st.entries, 30000u);
  EXPECT_LT(st.table_bytes / st.entries, 200u) << st.table_bytes;
}

}  // namespace
}  // namespace smd::trial
