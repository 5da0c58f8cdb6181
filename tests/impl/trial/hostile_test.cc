// The reader in a hostile folder: event files replaced (shortened, removed, put back) while values
// are read, index entries that point past the end of a file that shrank after the trial was
// opened, step folders and index files deleted while the trial refreshes. Every call either
// returns the exact value that was written or a clear error naming the file; none crashes or
// hangs.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "impl/format/layout.h"
#include "impl/trial/trial.h"
#include "impl/trial/value.h"
#include "tests/impl/trial/trial_builder.h"

namespace smd::trial {
namespace {

using testing::ReadFile;
using testing::TempDir;
using testing::TrialBuilder;
using testing::WriteFile;
namespace fs = std::filesystem;

constexpr size_t kElems = 2000;  // 8 KB per tensor

std::vector<float> Expected(int64_t step, int t) {
  std::vector<float> v(kElems);
  for (size_t i = 0; i < kElems; ++i) v[i] = static_cast<float>(step * 1000 + t * 100 + static_cast<int64_t>(i % 97));
  return v;
}

void AddStep(TrialBuilder& b, int64_t step) {
  for (int t = 0; t < 3; ++t) b.AddFloats(step, "worker_0", Mode::kTrain, step, "t" + std::to_string(t), Expected(step, t));
  b.FinishStep(step);
}

std::string EventPath(const std::string& dir, int64_t step) {
  return dir + "/" + io::EventFileRelPath(step, "worker_0");
}

// A value read is either exactly what was written or an error of an expected kind whose message
// names a file of the trial. Returns whether it was a value.
bool ExactOrClearError(Result<ValuePtr> v, int64_t step, int t, const std::string& dir) {
  if (v.ok()) {
    const std::vector<float> want = Expected(step, t);
    EXPECT_EQ((*v)->nbytes(), want.size() * sizeof(float)) << "step " << step;
    if ((*v)->nbytes() == want.size() * sizeof(float)) {
      EXPECT_EQ(0, std::memcmp((*v)->data(), want.data(), (*v)->nbytes())) << "step " << step << " t" << t;
    }
    return true;
  }
  const Code c = v.status().code();
  EXPECT_TRUE(c == Code::kCorrupt || c == Code::kNotFound || c == Code::kIO ||
              c == Code::kTensorUnavailableForStep)
      << static_cast<int>(c) << ": " << v.status().message();
  EXPECT_NE(v.status().message().find(dir), std::string::npos) << v.status().message();
  return false;
}

TEST(HostileFolder, EventFileShrinksAfterOpen) {
  TrialBuilder b(TempDir("t"));
  b.WriteCollections({"worker_0"}, 1);
  for (int64_t s = 0; s < 3; ++s) AddStep(b, s);
  b.End();
  TrialOptions o;
  o.cache_bytes = 0;  // every read goes to the file
  auto t = Trial::Open(b.dir(), o);
  ASSERT_TRUE(t.ok()) << t.status().message();
  auto id2 = (*t)->TensorId("t2");
  ASSERT_TRUE(id2.ok());
  ASSERT_TRUE(ExactOrClearError((*t)->TensorValue(*id2, 1, Mode::kGlobal, nullptr), 1, 2, b.dir()));
  // The index (loaded) now points past the end of the file, which lost its last record.
  const std::string ev = EventPath(b.dir(), 1);
  const std::string data = ReadFile(ev);
  WriteFile(ev, data.substr(0, data.size() * 2 / 3));
  auto v = (*t)->TensorValue(*id2, 1, Mode::kGlobal, nullptr);
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().code(), Code::kCorrupt) << v.status().message();
  EXPECT_NE(v.status().message().find(ev), std::string::npos) << v.status().message();
  // The first record is still whole; the other steps are untouched.
  auto id0 = (*t)->TensorId("t0");
  ASSERT_TRUE(id0.ok());
  EXPECT_TRUE(ExactOrClearError((*t)->TensorValue(*id0, 1, Mode::kGlobal, nullptr), 1, 0, b.dir()));
  EXPECT_TRUE(ExactOrClearError((*t)->TensorValue(*id2, 2, Mode::kGlobal, nullptr), 2, 2, b.dir()));
  // Removed altogether: an error naming the file, not a crash.
  ASSERT_EQ(0, std::remove(ev.c_str()));
  auto gone = (*t)->TensorValue(*id0, 1, Mode::kGlobal, nullptr);
  ASSERT_FALSE(gone.ok());
  EXPECT_NE(gone.status().message().find(ev), std::string::npos) << gone.status().message();
  // Put back: readable again.
  WriteFile(ev, data);
  EXPECT_TRUE(ExactOrClearError((*t)->TensorValue(*id2, 1, Mode::kGlobal, nullptr), 1, 2, b.dir()));
}

// Another thread keeps replacing the event files (by rename, as a writer would: whole, shortened,
// or removed) while two readers read every value, with and without the cache.
TEST(HostileFolder, EventFilesReplacedWhileRead) {
  constexpr int64_t kStepsN = 8;
  TrialBuilder b(TempDir("t"));
  b.WriteCollections({"worker_0"}, 1);
  for (int64_t s = 0; s < kStepsN; ++s) AddStep(b, s);
  b.End();
  std::vector<std::string> originals;
  for (int64_t s = 0; s < kStepsN; ++s) originals.push_back(ReadFile(EventPath(b.dir(), s)));

  std::atomic<bool> stop{false};
  std::thread vandal([&] {
    unsigned r = 12345;
    while (!stop.load()) {
      r = r * 1103515245u + 12345u;
      const int64_t s = (r >> 8) % kStepsN;
      const std::string ev = EventPath(b.dir(), s);
      switch ((r >> 16) % 4) {
        case 0: WriteFile(ev, originals[s]); break;
        case 1: WriteFile(ev, originals[s].substr(0, (r >> 4) % originals[s].size())); break;
        case 2: std::remove(ev.c_str()); break;
        default: WriteFile(ev, ""); break;
      }
    }
  });
  std::atomic<int> values{0}, errors{0};
  auto reader = [&](size_t cache) {
    TrialOptions o;
    o.cache_bytes = cache;
    auto t = Trial::Open(b.dir(), o);
    ASSERT_TRUE(t.ok()) << t.status().message();
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(1500);
    while (std::chrono::steady_clock::now() < until) {
      for (int64_t s = 0; s < kStepsN; ++s) {
        for (int k = 0; k < 3; ++k) {
          auto id = (*t)->TensorId("t" + std::to_string(k));
          ASSERT_TRUE(id.ok());
          if (ExactOrClearError((*t)->TensorValue(*id, s, Mode::kGlobal, nullptr), s, k, b.dir())) {
            ++values;
          } else {
            ++errors;
          }
        }
      }
    }
  };
  std::thread r1(reader, size_t(0));
  std::thread r2(reader, size_t(1) << 20);
  r1.join();
  r2.join();
  stop = true;
  vandal.join();
  EXPECT_GT(values.load(), 0);
  EXPECT_GT(errors.load(), 0);  // the vandal did get in the way
  // Once the files are whole again, everything reads back.
  for (int64_t s = 0; s < kStepsN; ++s) WriteFile(EventPath(b.dir(), s), originals[s]);
  TrialOptions o;
  o.cache_bytes = 0;
  auto t = Trial::Open(b.dir(), o);
  ASSERT_TRUE(t.ok());
  for (int64_t s = 0; s < kStepsN; ++s) {
    auto id = (*t)->TensorId("t1");
    ASSERT_TRUE(id.ok());
    EXPECT_TRUE((*t)->TensorValue(*id, s, Mode::kGlobal, nullptr).ok());
  }
}

// A job writes steps while something deletes older step folders and index files (and, once, the
// whole index folder) as the trial refreshes and reads.
TEST(HostileFolder, StepFoldersDeletedDuringRefresh) {
  constexpr int64_t kStepsN = 120;
  TrialBuilder b(TempDir("t"));
  b.WriteCollections({"worker_0"}, 1);
  AddStep(b, 0);
  TrialOptions o;
  o.watch = false;
  auto opened = Trial::Open(b.dir(), o);
  ASSERT_TRUE(opened.ok()) << opened.status().message();
  std::shared_ptr<Trial> t = *opened;
  std::atomic<bool> done{false};
  std::thread job([&] {
    for (int64_t s = 1; s < kStepsN; ++s) {
      AddStep(b, s);
      if (s >= 4) {
        std::error_code ec;
        fs::remove_all(b.dir() + "/events/" + io::EventFileRelPath(s - 3, "worker_0").substr(7, 12), ec);
        if (s % 3 == 0) fs::remove(b.dir() + "/" + io::IndexFileRelPath(s - 2, "worker_0"), ec);
        if (s == kStepsN / 2) fs::remove_all(b.dir() + "/index", ec);
      }
    }
    b.End();
    done = true;
  });
  int refreshes = 0, refresh_errors = 0, values = 0;
  while (!done.load() || refreshes < 3) {
    Status st = t->Refresh();
    ++refreshes;
    if (!st.ok()) {
      ++refresh_errors;
      EXPECT_TRUE(st.code() == Code::kIO || st.code() == Code::kNotFound || st.code() == Code::kCorrupt)
          << st.message();
    }
    auto steps = t->Steps(Mode::kGlobal, true);
    ASSERT_TRUE(steps.ok()) << steps.status().message();
    auto id = t->TensorId("t1");
    if (!id.ok() || steps->empty()) continue;
    for (size_t i = steps->size() > 3 ? steps->size() - 3 : 0; i < steps->size(); ++i) {
      if (ExactOrClearError(t->TensorValue(*id, (*steps)[i], Mode::kGlobal, nullptr), (*steps)[i], 1, b.dir())) ++values;
    }
  }
  job.join();
  ASSERT_TRUE(t->Refresh().ok());
  auto steps = t->Steps(Mode::kGlobal, false);
  ASSERT_TRUE(steps.ok());
  EXPECT_FALSE(steps->empty());
  EXPECT_GT(values, 0);
  // The last steps' files were never deleted: they read back.
  auto id = t->TensorId("t1");
  ASSERT_TRUE(id.ok());
  EXPECT_TRUE(ExactOrClearError(t->TensorValue(*id, kStepsN - 1, Mode::kGlobal, nullptr), kStepsN - 1, 1, b.dir()));
  EXPECT_TRUE(t->TensorValue(*id, kStepsN - 1, Mode::kGlobal, nullptr).ok());
}

}  // namespace
}  // namespace smd::trial
