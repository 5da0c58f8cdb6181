// Transient read faults while a trial opens or refreshes: an index file whose read fails (EIO, or
// an S3 request that failed all its attempts) and a step folder whose listing fails. Nothing is
// ever skipped for good: the refresh (or the open) that meets the fault returns it, the step is
// not complete meanwhile (a wait for it waits), and the next refresh reads the file again.
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "impl/format/layout.h"
#include "impl/storage/open.h"
#include "impl/trial/trial.h"
#include "tests/impl/storage/recording_storage.h"
#include "tests/impl/trial/trial_builder.h"

namespace smd::trial {
namespace {

using testing::TempDir;
using testing::TrialBuilder;

// Fails reads of the chosen index files and listings of the chosen folders with an I/O error,
// `times` times each (-1: until cleared).
class FlakyStorage : public io::testing::RecordingStorage {
 public:
  explicit FlakyStorage(const std::string& dir)
      : RecordingStorage(io::MakeLocalStorage(dir), std::make_shared<io::testing::CallLog>()) {}

  void FailRead(const std::string& rel, int times) {
    std::lock_guard<std::mutex> l(mu_);
    reads_[rel] = times;
  }
  void FailList(const std::string& rel, int times) {
    std::lock_guard<std::mutex> l(mu_);
    lists_[rel] = times;
  }
  int injected() const { return injected_.load(); }

  Status ReadAllInto(const std::string& rel, std::string* out) override {
    if (Take(&reads_, rel)) return Status(Code::kIO, "cannot read '" + Describe(rel) + "': Input/output error");
    return RecordingStorage::ReadAllInto(rel, out);
  }
  Result<std::vector<std::string>> List(const std::string& rel, std::string_view from) override {
    if (Take(&lists_, rel)) return Status(Code::kIO, "cannot list '" + Describe(rel) + "': Input/output error");
    return RecordingStorage::List(rel, from);
  }

 private:
  bool Take(std::map<std::string, int>* m, const std::string& rel) {
    std::lock_guard<std::mutex> l(mu_);
    auto it = m->find(rel);
    if (it == m->end() || it->second == 0) return false;
    if (it->second > 0) --it->second;
    ++injected_;
    return true;
  }
  std::mutex mu_;
  std::map<std::string, int> reads_, lists_;
  std::atomic<int> injected_{0};
};

std::vector<int64_t> Range(int64_t a, int64_t b) {
  std::vector<int64_t> v;
  for (int64_t i = a; i < b; ++i) v.push_back(i);
  return v;
}

std::vector<int64_t> StepsOf(Trial& t) {
  auto s = t.Steps(Mode::kGlobal, false);
  EXPECT_TRUE(s.ok()) << s.status().message();
  return s.ok() ? *s : std::vector<int64_t>();
}

float ValueAt(Trial& t, int64_t step) {
  auto id = t.TensorId("a");
  EXPECT_TRUE(id.ok());
  auto v = t.TensorValue(*id, step, Mode::kGlobal, nullptr);
  EXPECT_TRUE(v.ok()) << v.status().message();
  return v.ok() ? *static_cast<const float*>((*v)->data()) : -1.0f;
}

// A running job: the index file of step 7 cannot be read while the trial refreshes. The refresh
// says so (naming the file); the step is not complete and not "passed" (a wait waits); the trial
// is not loaded_all_steps although the job has ended; once the file reads again, the next
// refresh has it, value and all.
TEST(TrialReadFaults, UnreadableIndexFileIsReadAgainByTheNextRefresh) {
  TrialBuilder b(TempDir("t"));
  b.WriteCollections({"worker_0"}, 1);
  for (int s = 0; s < 5; ++s) b.SimpleStep(s, {"a"});
  auto raw = std::make_unique<FlakyStorage>(b.dir());
  FlakyStorage* storage = raw.get();
  TrialOptions o;
  o.auto_refresh = false;
  auto opened = Trial::Open(std::move(raw), o);
  ASSERT_TRUE(opened.ok()) << opened.status().message();
  Trial& t = **opened;
  EXPECT_EQ(StepsOf(t), Range(0, 5));

  const std::string idx7 = io::IndexFileRelPath(7, "worker_0");
  storage->FailRead(idx7, -1);
  for (int s = 5; s < 20; ++s) b.SimpleStep(s, {"a"});
  b.End();
  Status st = t.Refresh();
  EXPECT_EQ(st.code(), Code::kIO) << st.message();
  EXPECT_NE(st.message().find("000000000007_worker_0.json"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("read again"), std::string::npos) << st.message();
  std::vector<int64_t> without7 = Range(0, 20);
  without7.erase(without7.begin() + 7);
  EXPECT_EQ(StepsOf(t), without7);
  auto passed = t.HasPassedStep(7, Mode::kGlobal);
  ASSERT_TRUE(passed.ok());
  EXPECT_EQ(*passed, StepState::kNotYetAvailable);
  EXPECT_FALSE(t.loaded_all_steps());
  Status wait = t.WaitForSteps({7}, Mode::kGlobal, 50);
  EXPECT_FALSE(wait.ok());
  EXPECT_NE(wait.code(), Code::kStepUnavailable) << wait.message();
  // Still failing: every refresh tries again and says so.
  EXPECT_EQ(t.Refresh().code(), Code::kIO);
  EXPECT_EQ(StepsOf(t), without7);

  storage->FailRead(idx7, 0);
  st = t.Refresh();
  EXPECT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(StepsOf(t), Range(0, 20));
  EXPECT_EQ(ValueAt(t, 7), 7.0f);
  EXPECT_TRUE(t.loaded_all_steps());
  EXPECT_TRUE(t.Warnings().empty());
  EXPECT_GE(storage->injected(), 4);
}

// Opening an ended trial: a read that fails once is tried again in the same open (which then
// has every step); one that keeps failing makes the open fail with the error, naming the file,
// instead of opening a trial that silently lacks the step.
TEST(TrialReadFaults, OpenReadsAgainOrFailsNeverSkips) {
  TrialBuilder b(TempDir("t"));
  b.WriteCollections({"worker_0"}, 1);
  for (int s = 0; s < 300; ++s) b.SimpleStep(s, {"a"});
  b.End();
  const std::string idx = io::IndexFileRelPath(123, "worker_0");
  {
    auto raw = std::make_unique<FlakyStorage>(b.dir());
    raw->FailRead(idx, 1);
    raw->FailRead(io::IndexFileRelPath(7, "worker_0"), 1);
    auto t = Trial::Open(std::move(raw), TrialOptions());
    ASSERT_TRUE(t.ok()) << t.status().message();
    EXPECT_EQ(StepsOf(**t), Range(0, 300));
    EXPECT_EQ(ValueAt(**t, 123), 123.0f);
    EXPECT_TRUE((*t)->Warnings().empty());
  }
  {
    auto raw = std::make_unique<FlakyStorage>(b.dir());
    raw->FailRead(idx, -1);
    auto t = Trial::Open(std::move(raw), TrialOptions());
    ASSERT_FALSE(t.ok());
    EXPECT_EQ(t.status().code(), Code::kIO);
    EXPECT_NE(t.status().message().find("000000000123_worker_0.json"), std::string::npos)
        << t.status().message();
    // There is no trial to refresh: the message does not promise one.
    EXPECT_NE(t.status().message().find("the trial opens once it can be read"), std::string::npos)
        << t.status().message();
    EXPECT_EQ(t.status().message().find("next refresh"), std::string::npos) << t.status().message();
  }
}

// A step folder whose listing fails is an error for that refresh (not an empty folder): once it
// lists again, its steps are there, although later folders were listed meanwhile.
TEST(TrialReadFaults, FailedFolderListingIsNotAnEmptyFolder) {
  TrialBuilder b(TempDir("t"));
  b.WriteCollections({"worker_0"}, 1);
  const std::vector<int64_t> steps = {0, 1, 1000, 1001, 2000};
  b.SimpleStep(0, {"a"});
  auto raw = std::make_unique<FlakyStorage>(b.dir());
  FlakyStorage* storage = raw.get();
  TrialOptions o;
  o.auto_refresh = false;
  o.watch = false;
  auto opened = Trial::Open(std::move(raw), o);
  ASSERT_TRUE(opened.ok()) << opened.status().message();
  Trial& t = **opened;
  for (int64_t s : steps)
    if (s > 0) b.SimpleStep(s, {"a"});
  b.End();
  storage->FailList("index/000000001", 1);
  Status st = t.Refresh();
  EXPECT_EQ(st.code(), Code::kIO) << st.message();
  EXPECT_NE(st.message().find("index/000000001"), std::string::npos) << st.message();
  EXPECT_FALSE(t.loaded_all_steps());
  st = t.Refresh();
  EXPECT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(StepsOf(t), steps);
  EXPECT_EQ(ValueAt(t, 1001), 1001.0f);
  EXPECT_TRUE(t.loaded_all_steps());
}

}  // namespace
}  // namespace smd::trial
