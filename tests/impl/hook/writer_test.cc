#include "impl/hook/writer.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>

#include "gtest/gtest.h"
#include "impl/storage/storage.h"
#include "tests/impl/trial/trial_builder.h"

namespace smd::hook {
namespace {

// Local storage whose event files cannot be started until the test opens the gate: the writer's
// committer stands still while the training side goes on saving.
class GatedStorage : public io::Storage {
 public:
  explicit GatedStorage(std::unique_ptr<io::Storage> s) : s_(std::move(s)) {}
  void Open() {
    {
      std::lock_guard<std::mutex> l(mu_);
      open_ = true;
    }
    cv_.notify_all();
  }
  const std::string& root() const override { return s_->root(); }
  std::string Describe(std::string_view rel) const override { return s_->Describe(rel); }
  Status PrepareForWriting() override { return s_->PrepareForWriting(); }
  Result<std::unique_ptr<io::FileSink>> Create(const std::string& rel) override {
    std::unique_lock<std::mutex> l(mu_);
    cv_.wait(l, [&] { return open_; });
    return s_->Create(rel);
  }
  Status WriteAtomic(const std::string& rel, std::string_view c) override { return s_->WriteAtomic(rel, c); }
  Status CreateExclusive(const std::string& rel) override { return s_->CreateExclusive(rel); }
  Status Remove(const std::string& rel) override { return s_->Remove(rel); }
  Result<bool> Exists(const std::string& rel) override { return s_->Exists(rel); }
  Result<uint64_t> FileSize(const std::string& rel) override { return s_->FileSize(rel); }
  Result<std::string> ReadAll(const std::string& rel) override { return s_->ReadAll(rel); }
  Status ReadRange(const std::string& rel, uint64_t o, uint64_t n, char* out) override {
    return s_->ReadRange(rel, o, n, out);
  }
  Result<std::unique_ptr<io::AppendFile>> OpenForAppend(const std::string& rel) override {
    return s_->OpenForAppend(rel);
  }
  Result<std::vector<std::string>> ListDir(const std::string& rel) override { return s_->ListDir(rel); }

 private:
  std::unique_ptr<io::Storage> s_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
};

TensorJob SmallJob(AsyncWriter& w, int64_t step, int i, size_t bytes) {
  TensorJob job;
  job.step = step;
  job.mode = Mode::kTrain;
  job.mode_step = step;
  job.name = "t" + std::to_string(i);
  job.dtype = DType::kFloat32;
  job.num_elements = bytes / 4;
  job.shape.push_back(static_cast<int64_t>(job.num_elements));
  job.data = w.pool().Acquire(bytes);
  std::memset(job.data.data(), i, bytes);
  job.write_raw = true;
  return job;
}

// The budget bounds what the writer holds in memory, encoded or not: small tensors are copied into
// their records when encoded, and those copies count until they are written.
TEST(AsyncWriterBudget, SmallTensorsWaitWhileTheFileSystemStandsStill) {
  const std::string dir = trial::testing::TempDir("budget");
  GatedStorage storage(io::MakeLocalStorage(dir));
  WriterOptions opts;
  opts.worker = "worker_0";
  const size_t kBytes = 1024, kBudget = 64 * 1024;
  opts.memory_budget = kBudget;
  const int kSteps = 100, kPerStep = 10;
  AsyncWriter w(&storage, opts);

  std::atomic<int> accepted{0};
  std::thread producer([&] {
    for (int s = 0; s < kSteps; ++s) {
      for (int i = 0; i < kPerStep; ++i) {
        Status st = w.Enqueue(SmallJob(w, s, i, kBytes));
        ASSERT_TRUE(st.ok()) << st.message();
        accepted.fetch_add(1);
      }
      w.EndStep(s);
    }
  });
  // Wait until the producer is held by the budget (or, wrongly, has saved everything).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!w.pool().waiting() && accepted.load() < kSteps * kPerStep &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::yield();
  }
  const int held = accepted.load();
  EXPECT_TRUE(w.pool().waiting());
  EXPECT_LE(static_cast<size_t>(held), kBudget / kBytes + 1)
      << "tensors accepted while nothing could be written";
  EXPECT_LE(w.pool().peak_in_flight(), kBudget);

  storage.Open();
  producer.join();
  ASSERT_TRUE(w.Close().ok());
  const WriterStats st = w.stats();
  EXPECT_EQ(st.records, static_cast<uint64_t>(kSteps * kPerStep));  // nothing dropped
  EXPECT_EQ(st.steps, static_cast<uint64_t>(kSteps));
  EXPECT_GT(st.budget_waits, 0u);
  EXPECT_EQ(w.pool().in_flight(), 0u);
}

}  // namespace
}  // namespace smd::hook
