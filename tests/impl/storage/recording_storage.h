// A Storage that records every call made through it (and forwards it to another storage): the
// tests of the storage seam check that what smd reads and writes goes through one Storage.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "impl/storage/storage.h"

namespace smd::io::testing {

// The calls of one or more recording storages, as "<op> <rel>" lines in call order.
class CallLog {
 public:
  void Add(const std::string& root, const std::string& op, std::string_view rel) {
    std::lock_guard<std::mutex> lock(mu_);
    calls_.push_back(Call{root, op, std::string(rel)});
  }
  struct Call {
    std::string root, op, rel;
  };
  std::vector<Call> calls() const {
    std::lock_guard<std::mutex> lock(mu_);
    return calls_;
  }
  // Whether a call `op` was made on a path starting with `rel_prefix` (under a root ending
  // with `root_suffix`, if given).
  bool Has(const std::string& op, const std::string& rel_prefix,
           const std::string& root_suffix = "") const {
    std::lock_guard<std::mutex> lock(mu_);
    for (const Call& c : calls_) {
      if (c.op == op && c.rel.compare(0, rel_prefix.size(), rel_prefix) == 0 &&
          c.root.size() >= root_suffix.size() &&
          c.root.compare(c.root.size() - root_suffix.size(), root_suffix.size(), root_suffix) == 0) {
        return true;
      }
    }
    return false;
  }
  std::string Dump() const {
    std::lock_guard<std::mutex> lock(mu_);
    std::string out;
    for (const Call& c : calls_) out += c.root + " | " + c.op + " " + c.rel + "\n";
    return out;
  }

 private:
  mutable std::mutex mu_;
  std::vector<Call> calls_;
};

class RecordingStorage : public Storage {
 public:
  RecordingStorage(std::unique_ptr<Storage> inner, std::shared_ptr<CallLog> log)
      : s_(std::move(inner)), log_(std::move(log)) {}

  const std::string& root() const override { return s_->root(); }
  std::string Describe(std::string_view rel) const override { return s_->Describe(rel); }
  Status PrepareForWriting() override {
    Log("PrepareForWriting", "");
    return s_->PrepareForWriting();
  }
  Result<std::unique_ptr<FileSink>> Create(const std::string& rel) override {
    Log("Create", rel);
    return s_->Create(rel);
  }
  Status WriteAtomic(const std::string& rel, std::string_view c) override {
    Log("WriteAtomic", rel);
    return s_->WriteAtomic(rel, c);
  }
  Status CreateExclusive(const std::string& rel) override {
    Log("CreateExclusive", rel);
    return s_->CreateExclusive(rel);
  }
  Status Remove(const std::string& rel) override {
    Log("Remove", rel);
    return s_->Remove(rel);
  }
  Result<bool> Exists(const std::string& rel) override {
    Log("Exists", rel);
    return s_->Exists(rel);
  }
  Result<uint64_t> FileSize(const std::string& rel) override {
    Log("FileSize", rel);
    return s_->FileSize(rel);
  }
  Result<std::string> ReadAll(const std::string& rel) override {
    Log("ReadAll", rel);
    return s_->ReadAll(rel);
  }
  Status ReadAllInto(const std::string& rel, std::string* out) override {
    Log("ReadAll", rel);
    return s_->ReadAllInto(rel, out);
  }
  Status ReadRange(const std::string& rel, uint64_t o, uint64_t n, char* out) override {
    Log("ReadRange", rel);
    return s_->ReadRange(rel, o, n, out);
  }
  Result<std::vector<std::string>> ListDir(const std::string& rel) override {
    Log("ListDir", rel);
    return s_->ListDir(rel);
  }
  Result<std::vector<std::string>> List(const std::string& rel, std::string_view from) override {
    Log("List", rel + (from.empty() ? std::string() : " from " + std::string(from)));
    return s_->List(rel, from);
  }
  Result<std::unique_ptr<AppendFile>> OpenForAppend(const std::string& rel) override {
    Log("OpenForAppend", rel);
    return s_->OpenForAppend(rel);
  }
  // Like an object store: cannot notify (readers poll).
  std::unique_ptr<ChangeWatch> WatchChanges() override {
    Log("WatchChanges", "");
    return nullptr;
  }

 private:
  void Log(const char* op, std::string_view rel) { log_->Add(s_->root(), op, rel); }
  std::unique_ptr<Storage> s_;
  std::shared_ptr<CallLog> log_;
};

}  // namespace smd::io::testing
