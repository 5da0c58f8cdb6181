// IndexTables: what a trial knows from the index files it applied, without storage or events.
#include "impl/trial/index_tables.h"

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "gtest/gtest.h"

namespace smd::trial {
namespace {

// One index file's text: mode, mode step, then (tag, start, length) records and (name, dims)
// shapes, written as smdebug writes them.
struct IndexText {
  std::string mode = "TRAIN";
  int64_t mode_step = 0;
  std::string event_file = "events/000000000000/000000000000_worker_0.tfevents";
  std::vector<std::tuple<std::string, uint64_t, uint64_t>> tensors;
  std::vector<std::pair<std::string, std::vector<int64_t>>> shapes;
  std::map<std::string, std::string> original;  // "originalname" when not the name itself

  std::string Json() const {
    std::string s = "{\"meta\": {\"mode\": \"" + mode + "\", \"mode_step\": " +
                    std::to_string(mode_step) + ", \"event_file_name\": \"" + event_file +
                    "\"}, \"tensor_payload\": [";
    for (size_t i = 0; i < tensors.size(); ++i) {
      if (i > 0) s += ", ";
      s += "{\"tensorname\": \"" + std::get<0>(tensors[i]) + "\", \"start_idx\": " +
           std::to_string(std::get<1>(tensors[i])) + ", \"length\": " +
           std::to_string(std::get<2>(tensors[i])) + "}";
    }
    s += "], \"shape_payload\": [";
    for (size_t i = 0; i < shapes.size(); ++i) {
      if (i > 0) s += ", ";
      auto o = original.find(shapes[i].first);
      s += "{\"tensorname\": \"" + shapes[i].first + "\", \"originalname\": \"" +
           (o == original.end() ? shapes[i].first : o->second) + "\", \"shape\": [";
      for (size_t d = 0; d < shapes[i].second.size(); ++d) {
        if (d > 0) s += ", ";
        s += std::to_string(shapes[i].second[d]);
      }
      s += "]}";
    }
    return s + "]}";
  }
};

class IndexTablesTest : public ::testing::Test {
 protected:
  IndexTablesTest() : lister_(nullptr, nullptr, -1, -1), tables_(&lister_) {}

  // Parses and applies one index file of `worker` at `global_step`; returns how its tags resolved.
  std::vector<ResolvedTag> Apply(const IndexText& f, int64_t global_step,
                                 const std::string& worker = "worker_0") {
    texts_.push_back(std::make_unique<std::string>(f.Json()));
    ParsedIndex p;
    Status st = ParseIndexFile(*texts_.back(), &p);
    EXPECT_TRUE(st.ok()) << st.message();
    std::vector<ResolvedTag> resolved;
    tables_.Resolve(p, &resolved);
    std::vector<uint32_t> grown;
    tables_.Reserve({&p}, {resolved}, 0, /*live=*/true, &grown);
    tables_.Apply(p, resolved, global_step, worker);
    tables_.Shrink(grown);
    return resolved;
  }

  uint32_t Id(const std::string& name) {
    std::optional<uint32_t> id = tables_.FindTensor(name);
    EXPECT_TRUE(id.has_value()) << name;
    return id.value_or(0);
  }

  IndexLister lister_;
  IndexTables tables_;
  std::vector<std::unique_ptr<std::string>> texts_;
};

// smdebug's Tensor.original_name: the "originalname" of the last shape entry applied; none for a
// tensor saved without its shape.
TEST_F(IndexTablesTest, TheOriginalNameIsTheLastShapeEntrysOne) {
  IndexText f;
  f.tensors = {{"loss", 0, 100}};
  f.shapes = {{"dense/kernel", {3, 4}}, {"bias", {4}}};
  f.original = {{"dense/kernel", "dense/kernel:0"}};
  Apply(f, 0);
  EXPECT_EQ(tables_.tensor_original_name(Id("dense/kernel")), std::optional<std::string>("dense/kernel:0"));
  EXPECT_EQ(tables_.tensor_original_name(Id("bias")), std::optional<std::string>("bias"));
  EXPECT_EQ(tables_.tensor_original_name(Id("loss")), std::nullopt);
  f.mode_step = 1;
  f.original = {{"dense/kernel", "model/dense/kernel:0"}};
  Apply(f, 1);
  EXPECT_EQ(tables_.tensor_original_name(Id("dense/kernel")),
            std::optional<std::string>("model/dense/kernel:0"));
}

TEST_F(IndexTablesTest, AStepIsCompleteWhenEveryWorkerWroteItsIndexFile) {
  tables_.set_num_workers(2);
  IndexText f;
  f.tensors = {{"w", 0, 100}};
  Apply(f, 0, "worker_0");
  EXPECT_FALSE(tables_.IsComplete(0));
  EXPECT_EQ(tables_.last_complete_step(), -1);
  EXPECT_EQ(tables_.Steps(Mode::kGlobal, false), std::vector<int64_t>{});
  EXPECT_EQ(tables_.Steps(Mode::kGlobal, true), std::vector<int64_t>{0});
  EXPECT_EQ(tables_.HasPassedStep(0, Mode::kGlobal), StepState::kNotYetAvailable);

  Apply(f, 0, "worker_1");
  EXPECT_TRUE(tables_.IsComplete(0));
  EXPECT_EQ(tables_.last_complete_step(), 0);
  EXPECT_EQ(tables_.Steps(Mode::kGlobal, false), std::vector<int64_t>{0});
  EXPECT_EQ(tables_.HasPassedStep(0, Mode::kGlobal), StepState::kAvailable);
}

TEST_F(IndexTablesTest, ModeStepsMapToGlobalSteps) {
  IndexText train;
  train.tensors = {{"w", 0, 10}};
  train.mode_step = 0;
  Apply(train, 5);
  IndexText eval = train;
  eval.mode = "EVAL";
  eval.mode_step = 0;
  Apply(eval, 7);
  train.mode_step = 1;
  Apply(train, 9);

  EXPECT_EQ(tables_.Modes(), (std::vector<Mode>{Mode::kTrain, Mode::kEval}));
  EXPECT_EQ(tables_.Steps(Mode::kTrain, false), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(tables_.Steps(Mode::kEval, false), std::vector<int64_t>{0});
  EXPECT_EQ(tables_.Steps(Mode::kGlobal, false), (std::vector<int64_t>{5, 7, 9}));
  EXPECT_EQ(tables_.GlobalStep(Mode::kTrain, 1), std::optional<int64_t>(9));
  EXPECT_EQ(tables_.GlobalStep(Mode::kEval, 1), std::nullopt);
  EXPECT_EQ(tables_.GlobalStep(Mode::kGlobal, 123), std::optional<int64_t>(123));
  ASSERT_NE(tables_.Step(7), nullptr);
  EXPECT_EQ(tables_.Step(7)->mode, Mode::kEval);
  EXPECT_EQ(tables_.Step(6), nullptr);
  EXPECT_EQ(tables_.LastStep(Mode::kTrain), 1);
  EXPECT_EQ(tables_.LastStep(Mode::kPredict), -1);
  EXPECT_EQ(tables_.TensorSteps(Id("w"), Mode::kGlobal, false), (std::vector<int64_t>{5, 7, 9}));
  EXPECT_EQ(tables_.TensorSteps(Id("w"), Mode::kTrain, false), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(tables_.TensorsOfMode(Mode::kEval), std::vector<uint32_t>{Id("w")});
  EXPECT_TRUE(tables_.TensorsOfMode(Mode::kPredict).empty());

  // A global step is found under the mode step it was saved as.
  FoundEntry f;
  ASSERT_EQ(tables_.Find(Id("w"), 7, Mode::kGlobal, nullptr, &f), IndexTables::FindResult::kFound);
  EXPECT_EQ(f.mode, Mode::kEval);
  EXPECT_EQ(f.mode_step, 0);
  EXPECT_EQ(tables_.Find(Id("w"), 8, Mode::kGlobal, nullptr, &f), IndexTables::FindResult::kNotFound);
  // A skipped step before a complete one is unavailable; one after the last is not yet.
  EXPECT_EQ(tables_.HasPassedStep(6, Mode::kGlobal), StepState::kUnavailable);
  EXPECT_EQ(tables_.HasPassedStep(10, Mode::kGlobal), StepState::kNotYetAvailable);
  tables_.MarkLoadedAll();
  EXPECT_EQ(tables_.HasPassedStep(10, Mode::kGlobal), StepState::kUnavailable);
}

TEST_F(IndexTablesTest, FindChoosesTheGivenWorkerOrTheSmallestName) {
  tables_.set_num_workers(2);
  IndexText f;
  f.tensors = {{"w", 0, 10}};
  Apply(f, 0, "worker_1");
  f.tensors = {{"w", 64, 20}};
  Apply(f, 0, "worker_0");

  FoundEntry found;
  ASSERT_EQ(tables_.Find(Id("w"), 0, Mode::kTrain, nullptr, &found),
            IndexTables::FindResult::kFound);
  EXPECT_EQ(found.entry.offset, 64u);  // worker_0 sorts first
  const std::string w1 = "worker_1";
  ASSERT_EQ(tables_.Find(Id("w"), 0, Mode::kTrain, &w1, &found), IndexTables::FindResult::kFound);
  EXPECT_EQ(found.entry.offset, 0u);
  EXPECT_EQ(found.entry.length, 10u);
  const std::string w9 = "worker_9";
  EXPECT_EQ(tables_.Find(Id("w"), 0, Mode::kTrain, &w9, &found),
            IndexTables::FindResult::kNoSuchWorker);
  std::vector<std::string> workers = tables_.WorkersOf(Id("w"), found);
  std::sort(workers.begin(), workers.end());
  EXPECT_EQ(workers, (std::vector<std::string>{"worker_0", "worker_1"}));
}

TEST_F(IndexTablesTest, ReductionTagsBelongToTheirTensor) {
  IndexText f;
  f.tensors = {{"w", 0, 10},
               {"smdebug/reductions/max/w", 10, 5},
               {"smdebug/reductions/abs_l2/w", 15, 5},
               {"smdebug/reductions/mean/only_reductions", 20, 5}};
  std::vector<ResolvedTag> r = Apply(f, 0);
  ASSERT_EQ(r.size(), 4u);
  EXPECT_EQ(r[0].red, kNone);
  EXPECT_EQ(r[1].tensor, r[0].tensor);
  EXPECT_EQ(tables_.reduction_name(static_cast<uint16_t>(r[1].red)), "max");
  EXPECT_TRUE(r[2].abs);
  EXPECT_EQ(tables_.reduction_name(static_cast<uint16_t>(r[2].red)), "l2");
  EXPECT_EQ(tables_.num_tensors(), 2u);  // w and only_reductions
  EXPECT_FALSE(tables_.FindTensor("smdebug/reductions/max/w").has_value());

  FoundEntry found;
  ASSERT_EQ(tables_.Find(Id("w"), 0, Mode::kTrain, nullptr, &found), IndexTables::FindResult::kFound);
  ASSERT_EQ(found.reds.size(), 2u);
  EXPECT_EQ(found.entry.offset, 0u);
  // A tensor saved only as reductions has a step entry but no raw value.
  ASSERT_EQ(tables_.Find(Id("only_reductions"), 0, Mode::kTrain, nullptr, &found),
            IndexTables::FindResult::kFound);
  EXPECT_EQ(found.entry.file, kNone);
  EXPECT_EQ(found.reds.size(), 1u);
  EXPECT_EQ(tables_.event_file_span(found.reds[0].file), 25u);
  EXPECT_EQ(tables_.event_file(found.reds[0].file), f.event_file);
}

TEST_F(IndexTablesTest, TheNextFileResolvesTheSameTagsInAnotherOrder) {
  // Resolving guesses that a file lists the tags of the previous one in the same order; a file
  // that does not must still resolve every tag to what it names.
  IndexText a;
  a.tensors = {{"x", 0, 1}, {"smdebug/reductions/min/x", 1, 1}, {"y", 2, 1}};
  std::vector<ResolvedTag> first = Apply(a, 0);
  IndexText b;
  b.mode_step = 1;
  b.tensors = {{"y", 0, 1}, {"smdebug/reductions/min/y", 1, 1}, {"x", 2, 1},
               {"smdebug/reductions/abs_min/x", 3, 1}};
  std::vector<ResolvedTag> second = Apply(b, 1);
  ASSERT_EQ(second.size(), 4u);
  EXPECT_EQ(second[0].tensor, Id("y"));
  EXPECT_EQ(second[0].red, kNone);
  EXPECT_EQ(second[1].tensor, Id("y"));
  EXPECT_EQ(second[1].red, first[1].red);
  EXPECT_EQ(second[2].tensor, Id("x"));
  EXPECT_EQ(second[2].red, kNone);
  EXPECT_EQ(second[3].tensor, Id("x"));
  EXPECT_TRUE(second[3].abs);
  // A tensor whose name merely starts like the prefix, without a reduction part, is a tensor.
  IndexText c;
  c.mode_step = 2;
  c.tensors = {{"smdebug/reductions/", 0, 1}};
  std::vector<ResolvedTag> third = Apply(c, 2);
  EXPECT_EQ(third[0].red, kNone);
  EXPECT_EQ(tables_.tensor_name(third[0].tensor), "smdebug/reductions/");
}

TEST_F(IndexTablesTest, ShapesAreKeptPerStepAndShared) {
  IndexText f;
  f.shapes = {{"a", {2, 3}}, {"b", {2, 3}}, {"s", {}}};
  Apply(f, 0);
  FoundEntry fa, fb, fs;
  ASSERT_EQ(tables_.Find(Id("a"), 0, Mode::kTrain, nullptr, &fa), IndexTables::FindResult::kFound);
  ASSERT_EQ(tables_.Find(Id("b"), 0, Mode::kTrain, nullptr, &fb), IndexTables::FindResult::kFound);
  ASSERT_EQ(tables_.Find(Id("s"), 0, Mode::kTrain, nullptr, &fs), IndexTables::FindResult::kFound);
  EXPECT_EQ(fa.entry.shape, fb.entry.shape);  // one interned shape
  EXPECT_EQ(tables_.Shape(fa.entry.shape), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(tables_.Shape(fs.entry.shape), std::vector<int64_t>{});
  EXPECT_EQ(fa.entry.file, kNone);  // a shape only: no value to read
  EXPECT_EQ(tables_.Step(0)->tensors.size(), 3u);
}

TEST_F(IndexTablesTest, AStepWithAnIndexFileToReadAgainIsNotComplete) {
  IndexText f;
  f.tensors = {{"w", 0, 10}};
  Apply(f, 0);
  f.mode_step = 1;
  Apply(f, 1);
  EXPECT_TRUE(tables_.IsComplete(1));
  lister_.RememberUnread(IndexFileName{"index/000000000/000000000001_worker_1.json", 1, "worker_1"});
  tables_.MarkLoadedAll();  // even then
  EXPECT_FALSE(tables_.IsComplete(1));
  EXPECT_EQ(tables_.HasPassedStep(1, Mode::kGlobal), StepState::kNotYetAvailable);
  // A skipped step may be in the unread file: not yet available rather than unavailable.
  EXPECT_EQ(tables_.HasPassedStep(5, Mode::kGlobal), StepState::kNotYetAvailable);
  EXPECT_EQ(tables_.Steps(Mode::kGlobal, false), std::vector<int64_t>{0});
  lister_.ForgetUnread("index/000000000/000000000001_worker_1.json");
  EXPECT_TRUE(tables_.IsComplete(1));
  EXPECT_EQ(tables_.HasPassedStep(5, Mode::kGlobal), StepState::kUnavailable);
}

TEST_F(IndexTablesTest, StatsCountEntries) {
  IndexText f;
  f.tensors = {{"w", 0, 10}, {"smdebug/reductions/max/w", 10, 5}};
  Apply(f, 0);
  f.mode_step = 1;
  Apply(f, 1);
  IndexTables::Stats s = tables_.GetStats();
  EXPECT_EQ(s.entries, 2u);
  EXPECT_EQ(s.reduction_entries, 2u);
  EXPECT_GT(s.table_bytes, 0u);
}

}  // namespace
}  // namespace smd::trial
