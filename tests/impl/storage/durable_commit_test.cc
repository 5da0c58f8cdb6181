// CommitDurably makes a new file's every new folder entry durable: its folder, that folder's
// parent, and (the first time) each folder above up to the trial root, which holds the entries
// of events/, index/ and collections/.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "impl/storage/storage.h"
#include "tests/impl/trial/trial_builder.h"

namespace smd::io {
namespace {

// Local storage whose folder syncs are recorded (then done).
class SyncRecorder : public Storage {
 public:
  explicit SyncRecorder(std::unique_ptr<Storage> s) : s_(std::move(s)) {}
  std::vector<std::string> synced() {
    std::lock_guard<std::mutex> l(mu_);
    return synced_;
  }
  void clear() {
    std::lock_guard<std::mutex> l(mu_);
    synced_.clear();
  }
  Status SyncDir(const std::string& rel) override {
    {
      std::lock_guard<std::mutex> l(mu_);
      synced_.push_back(rel);
    }
    return s_->SyncDir(rel);
  }
  const std::string& root() const override { return s_->root(); }
  std::string Describe(std::string_view rel) const override { return s_->Describe(rel); }
  Status PrepareForWriting() override { return s_->PrepareForWriting(); }
  Result<std::unique_ptr<FileSink>> Create(const std::string& rel) override { return s_->Create(rel); }
  Status WriteAtomic(const std::string& rel, std::string_view c) override { return s_->WriteAtomic(rel, c); }
  Status CreateExclusive(const std::string& rel) override { return s_->CreateExclusive(rel); }
  Status Remove(const std::string& rel) override { return s_->Remove(rel); }
  Result<bool> Exists(const std::string& rel) override { return s_->Exists(rel); }
  Result<uint64_t> FileSize(const std::string& rel) override { return s_->FileSize(rel); }
  Result<std::string> ReadAll(const std::string& rel) override { return s_->ReadAll(rel); }
  Status ReadRange(const std::string& rel, uint64_t o, uint64_t n, char* out) override {
    return s_->ReadRange(rel, o, n, out);
  }
  Result<std::unique_ptr<AppendFile>> OpenForAppend(const std::string& rel) override {
    return s_->OpenForAppend(rel);
  }
  Result<std::vector<std::string>> ListDir(const std::string& rel) override { return s_->ListDir(rel); }

 private:
  std::unique_ptr<Storage> s_;
  std::mutex mu_;
  std::vector<std::string> synced_;
};

bool Has(const std::vector<std::string>& v, const std::string& x) {
  for (const auto& s : v)
    if (s == x) return true;
  return false;
}

TEST(CommitDurably, SyncsTheRootWhenATopLevelFolderIsFirstUsed) {
  SyncRecorder st(MakeLocalStorage(trial::testing::TempDir("durable")));
  ASSERT_TRUE(st.PrepareForWriting().ok());
  ASSERT_TRUE(st.WriteDurably("index/000000000/000000000000_worker_0.json", "{}").ok());
  auto first = st.synced();
  EXPECT_TRUE(Has(first, "index/000000000")) << "the file's folder";
  EXPECT_TRUE(Has(first, "index")) << "the new step folder's entry";
  EXPECT_TRUE(Has(first, "")) << "the root, which holds the new entry 'index'";

  st.clear();
  ASSERT_TRUE(st.WriteDurably("index/000000000/000000000001_worker_0.json", "{}").ok());
  EXPECT_FALSE(Has(st.synced(), "")) << "the root is synced once per folder above";

  st.clear();
  ASSERT_TRUE(st.WriteDurably("events/000000000000/000000000000_worker_0.tfevents", "x").ok());
  EXPECT_TRUE(Has(st.synced(), "")) << "a new top-level folder: the root again";

  st.clear();
  ASSERT_TRUE(st.WriteDurably("training_job_end.ts", "").ok());
  EXPECT_EQ(st.synced(), std::vector<std::string>{""});
}

// Every worker writes the end-of-job marker into the same folder: writers of the same whole file
// at once each commit their own temporary file (with one temporary name, one writer's rename took
// the other's file away: "cannot rename ... No such file or directory").
TEST(WriteAtomic, WritersOfTheSameFileAtOnceAllSucceed) {
  const std::string dir = trial::testing::TempDir("same_file");
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      std::unique_ptr<Storage> st = MakeLocalStorage(dir);  // one storage per worker
      for (int i = 0; i < 300; ++i) {
        Status s = (t % 2 == 0) ? st->WriteAtomic("training_job_end.ts", "")
                                : st->WriteDurably("training_job_end.ts", "");
        if (!s.ok()) ++failures;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
}

}  // namespace
}  // namespace smd::io
