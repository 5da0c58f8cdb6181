// I/O faults under the hook: for every operation the writer performs on its storage in a small
// run (create, append, fsync, commit/rename, folder fsync) and every error (ENOSPC, EIO, a short
// write), fail exactly that operation and check that the hook reports it (naming the file and the
// errno) from begin_step or close, never reports success, leaves no temporary file, and that what
// it completed before stays readable, value for value.
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "impl/format/layout.h"
#include "impl/hook/hook.h"
#include "impl/storage/storage.h"
#include "impl/trial/trial.h"
#include "impl/trial/value.h"
#include "tests/impl/hook/fault_storage.h"
#include "tests/impl/trial/trial_builder.h"

namespace smd::hook {
namespace {

using smd::testing::FaultOp;
using smd::testing::FaultPlan;
using smd::testing::FaultStorage;
using smd::trial::testing::TempDir;

constexpr int kSteps = 4;
const int64_t kSmall = 16;     // buffered appends
const int64_t kBig = 30000;    // 120 KB: written directly

float ValueAt(int64_t step, int t, int64_t i) {
  return static_cast<float>((step * 7919 + t * 104729 + i * 31) % 65521) / 256.0f;
}
std::vector<float> Values(int64_t step, int t) {
  std::vector<float> v(t == 0 ? kSmall : kBig);
  for (size_t i = 0; i < v.size(); ++i) v[i] = ValueAt(step, t, static_cast<int64_t>(i));
  return v;
}

struct Outcome {
  std::vector<Status> statuses;  // every begin_step, save and close, in order
  Status close;
  std::vector<int> counts;       // operations the storage saw
  bool fired = false;
  std::string fired_path;
};

Outcome Run(const std::string& dir, FaultPlan plan, bool fsync) {
  Outcome out;
  auto storage = std::make_unique<FaultStorage>(io::MakeLocalStorage(dir), plan);
  FaultStorage* fs = storage.get();
  HookOptions opts;
  opts.worker = "worker_0";
  opts.num_workers = 1;
  opts.fsync = fsync;
  opts.include_regex = {"^t[01]$"};
  for (Mode m : kAllModesInOrder) {
    SaveConfigMode every;
    every.save_interval = 1;
    opts.save_config.mode(m) = every;
  }
  auto created = Hook::Create(std::move(storage), opts);
  if (!created.ok()) {  // creating the hook does no storage operation the plan counts
    ADD_FAILURE() << created.status().message();
    return out;
  }
  std::shared_ptr<Hook> hook = *created;
  for (int64_t step = 0; step < kSteps; ++step) {
    out.statuses.push_back(hook->BeginStep());
    for (int t = 0; t < 2; ++t) {
      std::vector<float> v = Values(step, t);
      const std::string name = "t" + std::to_string(t);
      int64_t shape[1] = {static_cast<int64_t>(v.size())};
      Hook::SaveRequest req;
      req.name = name.c_str();
      req.dtype = DType::kFloat32;
      req.shape = shape;
      req.ndim = 1;
      req.data = v.data();
      req.nbytes = v.size() * sizeof(float);
      out.statuses.push_back(hook->Save(req));
    }
  }
  out.close = hook->Close();
  out.statuses.push_back(out.close);
  for (int i = 0; i < smd::testing::kNumFaultOps; ++i) out.counts.push_back(fs->count(FaultOp(i)));
  out.fired = fs->fired();
  out.fired_path = fs->fired_path();
  return out;
}

// Every step a reader sees is 0..k-1 and reads back exactly; returns k.
int CheckReadable(const std::string& dir, const std::string& what) {
  namespace fs = std::filesystem;
  trial::TrialOptions topts;
  topts.auto_refresh = false;
  topts.watch = false;
  auto opened = trial::Trial::Open(dir, topts);
  if (!opened.ok()) {
    EXPECT_EQ(opened.status().code(), Code::kMissingCollectionFiles) << what << ": " << opened.status().message();
    EXPECT_FALSE(fs::exists(dir + "/" + io::CollectionsFileRelPath("worker_0"))) << what;
    return 0;
  }
  std::shared_ptr<trial::Trial> t = *opened;
  auto steps = t->Steps(Mode::kGlobal, false);
  EXPECT_TRUE(steps.ok()) << what;
  if (!steps.ok()) return 0;
  for (size_t i = 0; i < steps->size(); ++i) {
    EXPECT_EQ((*steps)[i], static_cast<int64_t>(i)) << what;
    for (int k = 0; k < 2; ++k) {
      auto id = t->TensorId("t" + std::to_string(k));
      EXPECT_TRUE(id.ok()) << what;
      if (!id.ok()) continue;
      auto v = t->TensorValue(*id, (*steps)[i], Mode::kGlobal, nullptr);
      EXPECT_TRUE(v.ok()) << what << ": step " << i << ": " << v.status().message();
      if (!v.ok()) continue;
      std::vector<float> want = Values((*steps)[i], k);
      EXPECT_EQ((*v)->nbytes(), want.size() * sizeof(float)) << what;
      if ((*v)->nbytes() == want.size() * sizeof(float)) {
        EXPECT_EQ(0, std::memcmp((*v)->data(), want.data(), (*v)->nbytes())) << what << ": step " << i;
      }
    }
  }
  return static_cast<int>(steps->size());
}

std::vector<std::string> Leftovers(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    const std::string p = e.path().string();
    if (p.size() > 4 && p.compare(p.size() - 4, 4, ".tmp") == 0) out.push_back(p);
  }
  return out;
}

void Sweep(bool fsync) {
  const std::string clean_dir = TempDir(fsync ? "clean_fsync" : "clean");
  Outcome clean = Run(clean_dir, FaultPlan{}, fsync);
  for (const Status& s : clean.statuses) ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_EQ(CheckReadable(clean_dir, "clean run"), kSteps);
  ASSERT_GT(clean.counts[int(FaultOp::kCreate)], 2 * kSteps);
  ASSERT_GT(clean.counts[int(FaultOp::kAppend)], 2 * kSteps);
  ASSERT_GT(clean.counts[int(FaultOp::kCommit)], 2 * kSteps);
  if (fsync) {
    ASSERT_EQ(clean.counts[int(FaultOp::kSync)], clean.counts[int(FaultOp::kCommit)]);
    ASSERT_GT(clean.counts[int(FaultOp::kSyncDir)], clean.counts[int(FaultOp::kCommit)]);
  } else {
    ASSERT_EQ(clean.counts[int(FaultOp::kSync)] + clean.counts[int(FaultOp::kSyncDir)], 0);
  }
  int injected = 0;
  for (int op = 0; op < smd::testing::kNumFaultOps; ++op) {
    for (int n = 1; n <= clean.counts[op]; ++n) {
      for (int kind = 0; kind < 3; ++kind) {
        if (kind == 2 && FaultOp(op) != FaultOp::kAppend) continue;
        FaultPlan plan;
        plan.op = FaultOp(op);
        plan.nth = n;
        plan.err = kind == 1 ? EIO : ENOSPC;
        plan.short_write = kind == 2;
        plan.forward_syncs = false;  // the clean run made the real ones
        const std::string what = std::string(fsync ? "fsync on, " : "") + "failing " +
                                 smd::testing::FaultOpName(plan.op) + " #" + std::to_string(n) +
                                 " with " + (plan.short_write ? "a short write, then " : "") +
                                 std::strerror(plan.err);
        const std::string dir = TempDir("f" + std::to_string(op) + "_" + std::to_string(n) + "_" +
                                        std::to_string(kind));
        Outcome o = Run(dir, plan, fsync);
        ++injected;
        ASSERT_TRUE(o.fired) << what;
        // Never success: close reports it, and so does the first failing call, with the file
        // and the errno.
        EXPECT_FALSE(o.close.ok()) << what;
        const Status* first = nullptr;
        for (const Status& s : o.statuses) {
          if (!s.ok()) {
            if (first == nullptr) first = &s;
          } else if (first != nullptr && &s != &o.statuses.back()) {
            ADD_FAILURE() << what << ": a call succeeded after the error was reported";
          }
        }
        ASSERT_NE(first, nullptr) << what;
        EXPECT_NE(first->message().find(o.fired_path), std::string::npos)
            << what << ": " << first->message() << " does not name " << o.fired_path;
        EXPECT_NE(first->message().find(std::strerror(plan.err)), std::string::npos)
            << what << ": " << first->message();
        EXPECT_EQ(first->code(), Code::kIO) << what;
        EXPECT_TRUE(Leftovers(dir).empty()) << what << ": " << Leftovers(dir)[0];
        CheckReadable(dir, what);
        std::filesystem::remove_all(dir);
        if (::testing::Test::HasFailure()) return;
      }
    }
  }
  std::cout << "faults injected" << (fsync ? " (fsync on)" : "") << ": " << injected << "\n";
  std::filesystem::remove_all(clean_dir);
}

TEST(HookFaults, EveryOperationFailsOnceWithoutFsync) { Sweep(false); }
TEST(HookFaults, EveryOperationFailsOnceWithFsync) { Sweep(true); }

}  // namespace
}  // namespace smd::hook
