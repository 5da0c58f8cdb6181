// A storage for tests that fails one chosen operation: the Nth create, append, sync (fsync of a
// file), commit (the rename to the final name) or folder sync, with an errno (ENOSPC, EIO, ...) or
// as a short write (part of the bytes reach the file, then ENOSPC). Every other operation goes to
// the wrapped storage. It also counts operations, so that a clean run tells a test how many N
// there are to try.
#pragma once

#include <sys/uio.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "impl/core/status.h"
#include "impl/format/layout.h"
#include "impl/storage/storage.h"

namespace smd::testing {

enum class FaultOp { kCreate = 0, kAppend, kSync, kCommit, kSyncDir };
constexpr int kNumFaultOps = 5;
inline const char* FaultOpName(FaultOp op) {
  static const char* const names[] = {"create", "append", "fsync", "commit/rename", "fsync folder"};
  return names[static_cast<int>(op)];
}

struct FaultPlan {
  FaultOp op = FaultOp::kCreate;
  int nth = 0;          // 1-based; 0: never fail
  int err = ENOSPC;
  bool short_write = false;  // appends only: half the bytes are written, then err
  // Whether syncs that do not fail reach the wrapped storage (real fsyncs are slow; a sweep
  // that only needs their order and count can leave them out).
  bool forward_syncs = true;
};

class FaultStorage : public io::Storage {
 public:
  FaultStorage(std::unique_ptr<io::Storage> inner, FaultPlan plan)
      : inner_(std::move(inner)), plan_(plan) {}

  int count(FaultOp op) const { return counts_[static_cast<int>(op)].load(); }
  bool fired() const { return fired_.load(); }
  // The file or folder the injected error named.
  std::string fired_path() const {
    std::lock_guard<std::mutex> l(mu_);
    return fired_path_;
  }

  // Counts an operation; true if it is the one to fail (and records the path it names).
  bool Hit(FaultOp op, const std::string& path) {
    const int n = ++counts_[static_cast<int>(op)];
    if (op != plan_.op || n != plan_.nth) return false;
    std::lock_guard<std::mutex> l(mu_);
    fired_path_ = path;
    fired_.store(true);
    return true;
  }
  const FaultPlan& plan() const { return plan_; }

  const std::string& root() const override { return inner_->root(); }
  std::string Describe(std::string_view rel) const override { return inner_->Describe(rel); }
  Status PrepareForWriting() override { return inner_->PrepareForWriting(); }

  Result<std::unique_ptr<io::FileSink>> Create(const std::string& rel) override {
    const std::string tmp = Describe(rel) + io::kTmpSuffix;
    if (Hit(FaultOp::kCreate, tmp)) return ErrnoStatus("cannot create", tmp, plan_.err);
    SMD_ASSIGN_OR_RETURN(std::unique_ptr<io::FileSink> sink, inner_->Create(rel));
    return std::unique_ptr<io::FileSink>(new Sink(this, std::move(sink), Describe(rel), tmp));
  }
  Status WriteAtomic(const std::string& rel, std::string_view content) override {
    SMD_ASSIGN_OR_RETURN(std::unique_ptr<io::FileSink> sink, Create(rel));
    Status st = sink->Append(content);
    if (st.ok()) st = sink->Commit();
    if (!st.ok()) sink->Abort();
    return st;
  }
  Status CreateExclusive(const std::string& rel) override {
    const std::string path = Describe(rel);
    if (Hit(FaultOp::kCreate, path)) return ErrnoStatus("cannot create", path, plan_.err);
    return inner_->CreateExclusive(rel);
  }
  Status Remove(const std::string& rel) override { return inner_->Remove(rel); }
  Result<bool> Exists(const std::string& rel) override { return inner_->Exists(rel); }
  Result<uint64_t> FileSize(const std::string& rel) override { return inner_->FileSize(rel); }
  Result<std::string> ReadAll(const std::string& rel) override { return inner_->ReadAll(rel); }
  Status ReadRange(const std::string& rel, uint64_t o, uint64_t n, char* out) override {
    return inner_->ReadRange(rel, o, n, out);
  }
  Result<std::vector<std::string>> ListDir(const std::string& rel) override { return inner_->ListDir(rel); }
  Result<std::vector<std::string>> List(const std::string& rel, std::string_view from) override {
    return inner_->List(rel, from);
  }
  // Appended files (TensorBoard logs, the rules' message file) are not part of the fault plan.
  Result<std::unique_ptr<io::AppendFile>> OpenForAppend(const std::string& rel) override {
    return inner_->OpenForAppend(rel);
  }
  std::unique_ptr<io::ChangeWatch> WatchChanges() override { return inner_->WatchChanges(); }
  bool RootAppearsWithFirstFile() const override { return inner_->RootAppearsWithFirstFile(); }
  Status SyncDir(const std::string& rel) override {
    const std::string path = Describe(rel);
    if (Hit(FaultOp::kSyncDir, path)) return ErrnoStatus("cannot fsync folder", path, plan_.err);
    return plan_.forward_syncs ? inner_->SyncDir(rel) : Status::Ok();
  }

 private:
  class Sink : public io::FileSink {
   public:
    Sink(FaultStorage* s, std::unique_ptr<io::FileSink> inner, std::string final_path, std::string tmp)
        : s_(s), inner_(std::move(inner)), final_(std::move(final_path)), tmp_(std::move(tmp)) {}
    Status Append(const struct iovec* pieces, int count) override {
      if (!s_->Hit(FaultOp::kAppend, tmp_)) return inner_->Append(pieces, count);
      if (s_->plan().short_write) {  // the first half of the bytes reach the file
        size_t total = 0;
        for (int i = 0; i < count; ++i) total += pieces[i].iov_len;
        size_t left = total / 2;
        std::vector<struct iovec> part;
        for (int i = 0; i < count && left > 0; ++i) {
          const size_t n = pieces[i].iov_len < left ? pieces[i].iov_len : left;
          part.push_back({pieces[i].iov_base, n});
          left -= n;
        }
        if (!part.empty()) (void)inner_->Append(part.data(), static_cast<int>(part.size()));
        (void)inner_->Sync();  // push the half out of any buffer, as a real short write would
      }
      return ErrnoStatus("cannot write", tmp_, s_->plan().err);
    }
    uint64_t size() const override { return inner_->size(); }
    Status Sync() override {
      if (s_->Hit(FaultOp::kSync, tmp_)) return ErrnoStatus("cannot fsync", tmp_, s_->plan().err);
      return s_->plan().forward_syncs ? inner_->Sync() : Status::Ok();
    }
    Status Commit() override {
      if (s_->Hit(FaultOp::kCommit, tmp_)) {
        inner_->Abort();
        return ErrnoStatus("cannot rename to '" + final_ + "'", tmp_, s_->plan().err);
      }
      return inner_->Commit();
    }
    void Abort() override { inner_->Abort(); }

   private:
    FaultStorage* s_;
    std::unique_ptr<io::FileSink> inner_;
    std::string final_, tmp_;
  };

  std::unique_ptr<io::Storage> inner_;
  const FaultPlan plan_;
  std::atomic<int> counts_[kNumFaultOps] = {};
  std::atomic<bool> fired_{false};
  mutable std::mutex mu_;
  std::string fired_path_;
};

}  // namespace smd::testing
