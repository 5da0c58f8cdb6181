// IndexLister: which index files a refresh reads. The lister only lists; these tests create the
// index files (their content does not matter to it) and play the trial's part: marking files
// read, remembering failed reads, moving the cursor.
#include "impl/trial/index_lister.h"

#include <unistd.h>

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "impl/format/layout.h"
#include "impl/storage/storage.h"
#include "tests/impl/storage/recording_storage.h"
#include "tests/impl/trial/trial_builder.h"

namespace smd::trial {
namespace {

using testing::TempDir;
using testing::WriteFile;

std::string Idx(int64_t step, const std::string& worker = "worker_0") {
  return io::IndexFileRelPath(step, worker);
}

// A local storage that records its calls and fails the listings of chosen folders with a chosen
// status (until cleared).
class ListFaultStorage : public io::testing::RecordingStorage {
 public:
  ListFaultStorage(const std::string& dir, std::shared_ptr<io::testing::CallLog> log)
      : RecordingStorage(io::MakeLocalStorage(dir), std::move(log)) {}
  void FailList(const std::string& rel, Status st) { fail_[rel] = std::move(st); }
  void Clear() { fail_.clear(); }
  Result<std::vector<std::string>> List(const std::string& rel, std::string_view from) override {
    auto it = fail_.find(rel);
    if (it != fail_.end()) return it->second;
    return RecordingStorage::List(rel, from);
  }

 private:
  std::map<std::string, Status> fail_;
};

// Records the folders it is asked to watch.
class FakeWatch : public io::ChangeWatch {
 public:
  bool Watch(const std::string& rel_dir) override {
    watched.insert(rel_dir);
    return true;
  }
  bool ConsumeChanges() override { return false; }
  bool WaitForEvent(int) override { return false; }
  std::set<std::string> watched;
};

class IndexListerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = TempDir("t");
    log_ = std::make_shared<io::testing::CallLog>();
    storage_ = std::make_unique<ListFaultStorage>(dir_, log_);
  }

  void Touch(const std::string& rel) { WriteFile(dir_ + "/" + rel, "{}"); }

  struct Listed {
    std::vector<std::string> rels;
    std::vector<IndexFileName> files;
    bool any = false;
    std::vector<std::string> warnings;
  };
  // ListNew, which must succeed.
  Listed List(IndexLister& l) {
    Listed out;
    out.any = true;  // ListNew must set it either way
    auto r = l.ListNew(&out.any, [&](const std::string& w) { out.warnings.push_back(w); });
    EXPECT_TRUE(r.ok()) << r.status().message();
    if (!r.ok()) return out;
    out.files = r.value();
    for (const IndexFileName& f : out.files) out.rels.push_back(f.rel);
    return out;
  }
  // Marks every listed file read, as a refresh that read them all does.
  static void MarkAll(IndexLister& l, const Listed& listed) {
    for (const std::string& r : listed.rels) l.MarkRead(r);
  }
  std::string Path(const std::string& rel) const { return dir_ + "/" + rel; }

  std::string dir_;
  std::shared_ptr<io::testing::CallLog> log_;
  std::unique_ptr<ListFaultStorage> storage_;
};

TEST_F(IndexListerTest, ListsEveryIndexFileInPathOrderWithItsStepAndWorker) {
  // Created out of order, across two step folders.
  Touch(Idx(1001, "worker_1"));
  Touch(Idx(5, "worker_1"));
  Touch(Idx(1000));
  Touch(Idx(5));
  Touch(Idx(999));
  Touch(Idx(1001));
  Touch("index/000000000/000000000007_worker_0.json.tmp");  // a writer's temporary file
  IndexLister l(storage_.get(), nullptr, -1, -1);
  Listed got = List(l);
  EXPECT_EQ(got.rels, (std::vector<std::string>{Idx(5), Idx(5, "worker_1"), Idx(999), Idx(1000),
                                                Idx(1001), Idx(1001, "worker_1")}));
  ASSERT_EQ(got.files.size(), 6u);
  EXPECT_EQ(got.files[1].step, 5);
  EXPECT_EQ(got.files[1].worker, "worker_1");
  EXPECT_EQ(got.files[3].step, 1000);
  EXPECT_EQ(got.files[3].worker, "worker_0");
  EXPECT_TRUE(got.any);
  EXPECT_TRUE(got.warnings.empty());
  EXPECT_EQ(l.cursor(), "");
}

TEST_F(IndexListerTest, AnEmptyOrMissingIndexFolderListsNothing) {
  IndexLister l(storage_.get(), nullptr, -1, -1);
  Listed got = List(l);  // no index/ at all: a job that has not written yet
  EXPECT_TRUE(got.rels.empty());
  EXPECT_FALSE(got.any);
  testing::MakeDirs(dir_ + "/index/000000000");
  got = List(l);
  EXPECT_TRUE(got.rels.empty());
  EXPECT_FALSE(got.any);
  EXPECT_TRUE(got.warnings.empty());
}

TEST_F(IndexListerTest, FilesReadAreNotListedAgain) {
  Touch(Idx(0));
  Touch(Idx(1));
  IndexLister l(storage_.get(), nullptr, -1, -1);
  Listed first = List(l);
  ASSERT_EQ(first.rels.size(), 2u);
  l.MarkRead(Idx(0));  // Idx(1) not read (yet): listed again
  Listed second = List(l);
  EXPECT_EQ(second.rels, std::vector<std::string>{Idx(1)});
  l.MarkRead(Idx(1));
  Touch(Idx(2));
  Listed third = List(l);
  EXPECT_EQ(third.rels, std::vector<std::string>{Idx(2)});
  l.MarkRead(Idx(2));
  Listed fourth = List(l);
  EXPECT_TRUE(fourth.rels.empty());
  EXPECT_TRUE(fourth.any);  // index files exist, all read
}

TEST_F(IndexListerTest, TheCursorIsEmptyUntilAStepIsCompleteAndNeverMovesBack) {
  IndexLister l(storage_.get(), nullptr, -1, -1);
  int64_t last = -1;
  l.Advance("worker_1", &last, 3, 1000);
  EXPECT_EQ(l.cursor(), "");
  EXPECT_EQ(last, -1);
  last = 0;
  l.Advance("worker_1", &last, 3, 1000);
  EXPECT_EQ(l.cursor(), Idx(0, "worker_1"));
  last = 1500;
  l.Advance("worker_1", &last, 1600, 1000);
  EXPECT_EQ(l.cursor(), "index/000000001/000000001500_worker_1.json");
  EXPECT_EQ(last, 1500);
  last = 1200;  // an older step than the cursor's
  l.Advance("worker_1", &last, 1600, 1000);
  EXPECT_EQ(l.cursor(), Idx(1500, "worker_1"));
  EXPECT_EQ(last, 1200);
  // The worker named is the one the caller gives (the lexicographically last, serialized).
  last = 1501;
  l.Advance("_job-worker_replica-0", &last, 1600, 1000);
  EXPECT_EQ(l.cursor(), Idx(1501, "_job-worker_replica-0"));
}

TEST_F(IndexListerTest, TooManyIncompleteStepsGiveUpTheOldestHalfOfTheWindow) {
  IndexLister l(storage_.get(), nullptr, -1, -1);
  int64_t last = 3;
  // Steps 0..14 known, 4..14 incomplete: 11, not more than the window of 11.
  l.Advance("worker_0", &last, 15, 11);
  EXPECT_EQ(last, 3);
  EXPECT_EQ(l.cursor(), Idx(3));
  // Steps 0..15 known: 12 incomplete, more than 11: steps up to 3 + 11 / 2 = 8 count as complete.
  l.Advance("worker_0", &last, 16, 11);
  EXPECT_EQ(last, 8);
  EXPECT_EQ(l.cursor(), Idx(8));
  // No step complete yet at all.
  IndexLister fresh(storage_.get(), nullptr, -1, -1);
  last = -1;
  fresh.Advance("worker_0", &last, 20, 10);
  EXPECT_EQ(last, 4);
  EXPECT_EQ(fresh.cursor(), Idx(4));
}

TEST_F(IndexListerTest, AdvanceToTheLargestStepDoesNotOverflow) {
  IndexLister l(storage_.get(), nullptr, -1, -1);
  int64_t last = INT64_MAX;
  l.Advance("worker_0", &last, 1, 1000);
  EXPECT_EQ(last, INT64_MAX);
  EXPECT_EQ(l.cursor(), Idx(INT64_MAX));
  l.Advance("worker_0", &last, 1, 1000);
  EXPECT_EQ(l.cursor(), Idx(INT64_MAX));
}

// The refresh's cycle: list, read, advance the cursor to the last complete step, forget what is
// before it. The next listing starts at the cursor's folder and name; files at and after the
// cursor that were read stay read (the cursor's own file included), and a file of an incomplete
// step that appears later is listed.
TEST_F(IndexListerTest, ListingsStartAtTheCursorAndReadFilesStayRead) {
  for (int64_t s : {0, 999, 1000, 1500}) {
    Touch(Idx(s));
    Touch(Idx(s, "worker_1"));
  }
  Touch(Idx(1501));  // step 1501: worker_1's file is not there yet
  IndexLister l(storage_.get(), nullptr, -1, -1);
  Listed first = List(l);
  ASSERT_EQ(first.rels.size(), 9u);
  MarkAll(l, first);
  int64_t last = 1500;
  l.Advance("worker_1", &last, 1502, 1000);
  ASSERT_EQ(l.cursor(), Idx(1500, "worker_1"));
  l.ForgetReadBeforeCursor();

  const size_t calls = log_->calls().size();
  Listed second = List(l);
  EXPECT_TRUE(second.rels.empty()) << ::testing::PrintToString(second.rels);
  EXPECT_TRUE(second.any);  // the cursor's file and step 1501's are there
  std::vector<std::string> lists;
  const auto all = log_->calls();
  for (size_t i = calls; i < all.size(); ++i) {
    if (all[i].op == "List") lists.push_back(all[i].rel);
  }
  EXPECT_EQ(lists, (std::vector<std::string>{"index from 000000001",
                                             "index/000000001 from 000000001500_worker_1.json"}));

  Touch(Idx(1501, "worker_1"));
  Touch(Idx(2000));
  Listed third = List(l);
  EXPECT_EQ(third.rels, (std::vector<std::string>{Idx(1501, "worker_1"), Idx(2000)}));
  EXPECT_TRUE(third.warnings.empty());
}

// A file before the cursor that nothing read is not listed: the cursor says everything before
// it is done.
TEST_F(IndexListerTest, FilesBeforeTheCursorAreNotListed) {
  for (int64_t s = 0; s < 5; ++s) Touch(Idx(s));
  IndexLister l(storage_.get(), nullptr, -1, -1);
  int64_t last = 2;
  l.Advance("worker_0", &last, 5, 1000);
  Listed got = List(l);
  EXPECT_EQ(got.rels, (std::vector<std::string>{Idx(2), Idx(3), Idx(4)}));
}

TEST_F(IndexListerTest, FailedReadsAreListedFirstWhateverTheCursorSays) {
  for (int64_t s = 0; s < 6; ++s) Touch(Idx(s));
  IndexLister l(storage_.get(), nullptr, -1, -1);
  Listed first = List(l);
  ASSERT_EQ(first.files.size(), 6u);
  EXPECT_FALSE(l.HasUnread());
  // Step 1's and step 5's reads failed; the others were read.
  l.RememberUnread(first.files[1]);
  l.RememberUnread(first.files[5]);
  for (int s : {0, 2, 3, 4}) l.MarkRead(first.files[s].rel);
  EXPECT_TRUE(l.HasUnread());
  EXPECT_TRUE(l.StepUnread(1));
  EXPECT_TRUE(l.StepUnread(5));
  EXPECT_FALSE(l.StepUnread(0));
  int64_t last = 4;
  l.Advance("worker_0", &last, 6, 1000);
  l.ForgetReadBeforeCursor();
  ASSERT_EQ(l.cursor(), Idx(4));

  Listed again = List(l);
  // Step 1 is before the cursor, step 5 after it: each listed once, in path order.
  EXPECT_EQ(again.rels, (std::vector<std::string>{Idx(1), Idx(5)}));
  ASSERT_EQ(again.files.size(), 2u);
  EXPECT_EQ(again.files[0].step, 1);
  EXPECT_EQ(again.files[0].worker, "worker_0");

  // Step 1 reads now; step 5 fails again.
  l.ForgetUnread(Idx(1));
  l.MarkRead(Idx(1));
  EXPECT_FALSE(l.StepUnread(1));
  EXPECT_TRUE(l.HasUnread());
  Touch(Idx(6));
  Listed third = List(l);
  EXPECT_EQ(third.rels, (std::vector<std::string>{Idx(5), Idx(6)}));
  l.ForgetUnread(Idx(5));
  l.MarkRead(Idx(5));
  l.MarkRead(Idx(6));
  EXPECT_FALSE(l.HasUnread());
  EXPECT_FALSE(l.StepUnread(5));
  EXPECT_TRUE(List(l).rels.empty());
}

// Even with no index folder to list (it vanished, or a listing found nothing), a failed read is
// read again.
TEST_F(IndexListerTest, FailedReadsAreListedWithoutAnIndexFolder) {
  IndexLister l(storage_.get(), nullptr, -1, -1);
  IndexFileName f{Idx(3), 3, "worker_0"};
  l.RememberUnread(f);
  Listed got = List(l);
  EXPECT_EQ(got.rels, std::vector<std::string>{Idx(3)});
  EXPECT_FALSE(got.any);
}

TEST_F(IndexListerTest, AStepIsUnreadWhileAnyOfItsFilesIs) {
  IndexLister l(storage_.get(), nullptr, -1, -1);
  IndexFileName w0{Idx(3), 3, "worker_0"};
  IndexFileName w1{Idx(3, "worker_1"), 3, "worker_1"};
  l.RememberUnread(w0);
  l.RememberUnread(w0);  // remembered twice: still one file
  l.RememberUnread(w1);
  EXPECT_TRUE(l.StepUnread(3));
  EXPECT_FALSE(l.StepUnread(4));
  l.ForgetUnread(Idx(9));  // never remembered: changes nothing
  l.ForgetUnread(w0.rel);
  EXPECT_TRUE(l.StepUnread(3)) << "worker_1's file of step 3 is still unread";
  EXPECT_TRUE(l.HasUnread());
  l.ForgetUnread(w0.rel);  // again: changes nothing
  EXPECT_TRUE(l.StepUnread(3));
  l.ForgetUnread(w1.rel);
  EXPECT_FALSE(l.StepUnread(3));
  EXPECT_FALSE(l.HasUnread());
}

TEST_F(IndexListerTest, RangeStepsLeavesFilesOutsideUnlisted) {
  for (int64_t s = 0; s < 10; ++s) Touch(Idx(s));
  Touch(Idx(1500));
  IndexLister l(storage_.get(), nullptr, 3, 7);
  Listed got = List(l);
  EXPECT_EQ(got.rels, (std::vector<std::string>{Idx(3), Idx(4), Idx(5), Idx(6)}));
  EXPECT_TRUE(got.any);
  MarkAll(l, got);
  // Never read and never remembered: still not listed by the next refresh, which still sees
  // that index files exist.
  got = List(l);
  EXPECT_TRUE(got.rels.empty());
  EXPECT_TRUE(got.any);
  EXPECT_TRUE(got.warnings.empty());
}

TEST_F(IndexListerTest, RangeStepsWithOneBound) {
  for (int64_t s : {0, 5, 999, 1000, 1499, 1500, 2000}) Touch(Idx(s));
  {
    IndexLister from(storage_.get(), nullptr, 1000, -1);
    EXPECT_EQ(List(from).rels, (std::vector<std::string>{Idx(1000), Idx(1499), Idx(1500), Idx(2000)}));
  }
  {
    IndexLister from(storage_.get(), nullptr, 1500, -1);
    EXPECT_EQ(List(from).rels, (std::vector<std::string>{Idx(1500), Idx(2000)}));
  }
  {
    IndexLister to(storage_.get(), nullptr, -1, 1000);
    EXPECT_EQ(List(to).rels, (std::vector<std::string>{Idx(0), Idx(5), Idx(999)}));
  }
  {
    IndexLister zero(storage_.get(), nullptr, 0, 1);  // begin 0 is a bound like any other
    EXPECT_EQ(List(zero).rels, std::vector<std::string>{Idx(0)});
  }
  {
    // Only files before the range: nothing to read, but the trial has index files.
    IndexLister after(storage_.get(), nullptr, 2500, -1);
    Listed got = List(after);
    EXPECT_TRUE(got.rels.empty());
    EXPECT_TRUE(got.any);
  }
}

TEST_F(IndexListerTest, MalformedNamesAreSkippedForGoodWithAWarningNamingThem) {
  const std::string no_step = "index/000000000/notastep_worker_0.json";
  const std::string no_worker = "index/000000000/000000000001_.json";
  const std::string no_underscore = "index/000000000/000000000002.json";
  const std::string negative = "index/000000000/-00000000005_worker_0.json";
  for (const std::string& r : {no_step, no_worker, no_underscore, negative}) Touch(r);
  Touch(Idx(3));
  IndexLister l(storage_.get(), nullptr, -1, -1);
  Listed got = List(l);
  EXPECT_EQ(got.rels, std::vector<std::string>{Idx(3)});
  EXPECT_TRUE(got.any);
  ASSERT_EQ(got.warnings.size(), 4u) << ::testing::PrintToString(got.warnings);
  auto warned = [&](const std::string& rel, const std::string& why) {
    for (const std::string& w : got.warnings) {
      if (w.find("'" + Path(rel) + "'") != std::string::npos && w.find(why) != std::string::npos) {
        return true;
      }
    }
    return false;
  };
  const std::string not_a_name = "its name is not <step>_<worker>.json";
  EXPECT_TRUE(warned(no_step, not_a_name)) << ::testing::PrintToString(got.warnings);
  EXPECT_TRUE(warned(no_worker, not_a_name)) << ::testing::PrintToString(got.warnings);
  EXPECT_TRUE(warned(no_underscore, not_a_name)) << ::testing::PrintToString(got.warnings);
  EXPECT_TRUE(warned(negative, "step -5 is negative")) << ::testing::PrintToString(got.warnings);

  // Skipped for good: neither listed nor warned about again.
  Listed again = List(l);
  EXPECT_EQ(again.rels, std::vector<std::string>{Idx(3)});
  EXPECT_TRUE(again.warnings.empty()) << ::testing::PrintToString(again.warnings);
}

// A file where a writer would put a negative step: its own folder, which sorts first.
TEST_F(IndexListerTest, ANegativeStepInItsOwnFolderIsSkippedWithAWarning) {
  const std::string negative = io::IndexFileRelPath(-5, "worker_0");
  ASSERT_EQ(negative.compare(0, 15, "index/-00000001"), 0) << negative;
  Touch(negative);
  Touch(Idx(0));
  IndexLister l(storage_.get(), nullptr, -1, -1);
  Listed got = List(l);
  EXPECT_EQ(got.rels, std::vector<std::string>{Idx(0)});
  ASSERT_EQ(got.warnings.size(), 1u);
  EXPECT_NE(got.warnings[0].find(Path(negative)), std::string::npos) << got.warnings[0];
  EXPECT_NE(got.warnings[0].find("negative"), std::string::npos) << got.warnings[0];
}

TEST_F(IndexListerTest, TfDeviceWorkerNamesAreReadBack) {
  const std::string rel = Idx(3, "_job-worker_replica-0_task-1_device-GPU-0");
  Touch(rel);
  IndexLister l(storage_.get(), nullptr, -1, -1);
  Listed got = List(l);
  ASSERT_EQ(got.files.size(), 1u);
  EXPECT_EQ(got.files[0].rel, rel);
  EXPECT_EQ(got.files[0].step, 3);
  EXPECT_EQ(got.files[0].worker, "/job:worker/replica:0/task:1/device:GPU:0");
}

TEST_F(IndexListerTest, AFileWhereAStepFolderShouldBeIsSkipped) {
  Touch("index/000000000");  // a file, not a folder
  Touch(Idx(1000));
  IndexLister l(storage_.get(), nullptr, -1, -1);
  Listed got = List(l);
  EXPECT_EQ(got.rels, std::vector<std::string>{Idx(1000)});
  EXPECT_TRUE(got.warnings.empty()) << ::testing::PrintToString(got.warnings);
}

TEST_F(IndexListerTest, AStepFolderThatVanishedIsSkipped) {
  Touch(Idx(0));
  Touch(Idx(1000));
  storage_->FailList("index/000000000", Status(Code::kNotFound, "gone"));
  IndexLister l(storage_.get(), nullptr, -1, -1);
  Listed got = List(l);
  EXPECT_EQ(got.rels, std::vector<std::string>{Idx(1000)});
  EXPECT_TRUE(got.warnings.empty());
}

TEST_F(IndexListerTest, AStepFolderLinkedOutOfTheTrialIsSkippedWithAWarning) {
  const std::string outside = TempDir("outside");
  WriteFile(outside + "/000000001000_worker_0.json", "{}");
  Touch(Idx(0));
  Touch(Idx(2000));
  ASSERT_EQ(0, ::symlink(outside.c_str(), (dir_ + "/index/000000001").c_str()));
  IndexLister l(storage_.get(), nullptr, -1, -1);
  Listed got = List(l);
  EXPECT_EQ(got.rels, (std::vector<std::string>{Idx(0), Idx(2000)}));
  ASSERT_EQ(got.warnings.size(), 1u) << ::testing::PrintToString(got.warnings);
  EXPECT_NE(got.warnings[0].find("skipped index folder '" + Path("index/000000001") + "'"),
            std::string::npos)
      << got.warnings[0];
  EXPECT_NE(got.warnings[0].find("symbolic link"), std::string::npos) << got.warnings[0];
}

// A step folder that cannot be listed (an I/O error; S3 out of retries) is an error naming it,
// not an empty folder: once it lists again, its files are there to read.
TEST_F(IndexListerTest, AStepFolderListingThatFailsIsAnErrorNamingIt) {
  Touch(Idx(0));
  Touch(Idx(1000));
  Touch(Idx(2000));
  storage_->FailList("index/000000001", Status(Code::kIO, "cannot list: Input/output error"));
  IndexLister l(storage_.get(), nullptr, -1, -1);
  bool any = false;
  auto r = l.ListNew(&any, [](const std::string&) {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kIO);
  EXPECT_NE(r.status().message().find("listing '" + Path("index/000000001") + "'"),
            std::string::npos)
      << r.status().message();
  EXPECT_NE(r.status().message().find("Input/output error"), std::string::npos)
      << r.status().message();

  storage_->Clear();
  Listed got = List(l);
  EXPECT_EQ(got.rels, (std::vector<std::string>{Idx(0), Idx(1000), Idx(2000)}));
}

TEST_F(IndexListerTest, AnIndexListingThatFailsIsAnErrorNamingTheTrial) {
  Touch(Idx(0));
  storage_->FailList("index", Status(Code::kIO, "cannot list: Input/output error"));
  IndexLister l(storage_.get(), nullptr, -1, -1);
  l.RememberUnread(IndexFileName{Idx(7), 7, "worker_0"});
  bool any = false;
  auto r = l.ListNew(&any, [](const std::string&) {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kIO);
  EXPECT_NE(r.status().message().find("listing the index folders of '" + dir_ + "'"),
            std::string::npos)
      << r.status().message();
  storage_->Clear();
  EXPECT_EQ(List(l).rels, (std::vector<std::string>{Idx(0), Idx(7)}));
}

TEST_F(IndexListerTest, TheFoldersListedAreWatched) {
  for (int64_t s : {0, 1000, 2000}) Touch(Idx(s));
  FakeWatch watch;
  IndexLister l(storage_.get(), &watch, -1, -1);
  List(l);
  EXPECT_EQ(watch.watched, (std::set<std::string>{"", "index", "index/000000000",
                                                  "index/000000001", "index/000000002"}));
}

TEST_F(IndexListerTest, ListingsCountsEachListingOfTheIndex) {
  Touch(Idx(0));
  IndexLister l(storage_.get(), nullptr, -1, -1);
  EXPECT_EQ(l.listings(), 0u);
  List(l);
  EXPECT_EQ(l.listings(), 1u);
  List(l);
  EXPECT_EQ(l.listings(), 2u);
}

}  // namespace
}  // namespace smd::trial
