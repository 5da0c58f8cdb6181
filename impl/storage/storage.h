// Where a trial lives. One interface for a local folder (and, later, an S3 prefix). Paths given to
// these methods are relative to the trial root and use '/'.
#pragma once

#include <sys/uio.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "impl/core/status.h"

namespace smd::io {

// A file being written. Nothing is visible under the final name until Commit() succeeds.
class FileSink {
 public:
  virtual ~FileSink() = default;
  // Appends the pieces in order. On error the sink is unusable (Abort it).
  virtual Status Append(const struct iovec* pieces, int count) = 0;
  Status Append(std::string_view bytes) {
    struct iovec v = {const_cast<char*>(bytes.data()), bytes.size()};
    return Append(&v, 1);
  }
  // Bytes appended so far.
  virtual uint64_t size() const = 0;
  // Makes the file visible under its final name (local: flush, close, rename from .tmp).
  virtual Status Commit() = 0;
  // Drops the file (local: removes the .tmp). Safe to call after a failed Commit.
  virtual void Abort() = 0;
  // Makes the bytes appended so far durable before Commit (local: write what is buffered, then
  // fsync). On error the sink is unusable (Abort it).
  virtual Status Sync() { return Status::Ok(); }
  // Whether the appended bytes stay in memory until Commit (an S3 object is uploaded whole),
  // so that writers count them in their memory budget.
  virtual bool HoldsBytesInMemory() const { return false; }
};

// A file appended to in place, visible under its name from the start (TensorBoard event files,
// the rules' message file: their readers tail them, so they are never renamed into place).
class AppendFile {
 public:
  virtual ~AppendFile() = default;
  // Appends bytes at the end. Errors: kIO naming the file; the file is unusable afterwards.
  virtual Status Append(std::string_view bytes) = 0;
  // Size in bytes: what the file held when it was opened plus what was appended since.
  virtual uint64_t size() const = 0;
  // Makes what was appended so far visible to readers (an S3 object, uploaded whole, exists
  // only once written out: this PUTs it). Local files are visible as they are appended.
  virtual Status Flush() { return Status::Ok(); }
  // Writes out and closes. Idempotent.
  virtual Status Close() = 0;
};

// "Can this storage tell a reader that something changed?" A storage that can returns one of
// these from WatchChanges(); one that cannot (an object store) returns nullptr and readers poll.
class ChangeWatch {
 public:
  virtual ~ChangeWatch() = default;
  // Starts watching a folder (relative to the root) for entries created, renamed in, or
  // removed. Watching a folder twice is cheap; one that does not exist is ignored (false).
  virtual bool Watch(const std::string& rel_dir) = 0;
  // True if anything changed since the last call (or changes may have been missed); never
  // blocks. Thread-safe.
  virtual bool ConsumeChanges() = 0;
  // Blocks until a change is pending or timeout_ms passes (0: just check), without consuming it,
  // so that several waiters all wake. Thread-safe.
  virtual bool WaitForEvent(int timeout_ms) = 0;
};

// Where a trial (or a TensorBoard log folder) lives. Open one with io::OpenStorage
// (impl/storage/open.h), the one place that knows which roots are supported.
class Storage {
 public:
  virtual ~Storage() = default;

  // A readable description of the root, for messages.
  virtual const std::string& root() const = 0;
  // Full path or URI of a relative path, for messages.
  virtual std::string Describe(std::string_view rel) const = 0;

  // Creates the root if needed and checks that it can be written.
  virtual Status PrepareForWriting() = 0;
  // Starts writing `rel` (parents created as needed).
  virtual Result<std::unique_ptr<FileSink>> Create(const std::string& rel) = 0;
  // Starts writing a whole small file that other processes may write under the same name at the
  // same time (each worker writes the end-of-job marker): a local storage gives it a temporary
  // name of this process's own, so that one writer's rename cannot take another's file away.
  virtual Result<std::unique_ptr<FileSink>> CreateWhole(const std::string& rel) { return Create(rel); }
  // Writes a whole small file atomically.
  virtual Status WriteAtomic(const std::string& rel, std::string_view content) = 0;
  // Creates an empty file that must not exist yet. Errors: kAlreadyExists if it does.
  virtual Status CreateExclusive(const std::string& rel) = 0;
  virtual Status Remove(const std::string& rel) = 0;

  virtual Result<bool> Exists(const std::string& rel) = 0;
  // Size in bytes of a file. Errors: kNotFound, kIO.
  virtual Result<uint64_t> FileSize(const std::string& rel) = 0;
  // Whole file. Errors: kNotFound, kIO.
  virtual Result<std::string> ReadAll(const std::string& rel) = 0;
  // The same into *out, reusing its capacity (readers that read many files keep one buffer).
  virtual Status ReadAllInto(const std::string& rel, std::string* out) {
    SMD_ASSIGN_OR_RETURN(*out, ReadAll(rel));
    return Status::Ok();
  }
  // Exactly `len` bytes at `offset` into `out`. Errors: kNotFound, kIO, kCorrupt if the file is
  // shorter than offset + len.
  virtual Status ReadRange(const std::string& rel, uint64_t offset, uint64_t len, char* out) = 0;
  // Names (not paths) of the entries of a folder, unsorted; kNotFound if it does not exist.
  virtual Result<std::vector<std::string>> ListDir(const std::string& rel_dir) = 0;
  // The names of a folder's entries that sort at or after `from` (all for ""), sorted: what a
  // refresh has not seen yet. (An object store lists only those: S3's ListObjectsV2 StartAfter.)
  // Errors: as ListDir.
  virtual Result<std::vector<std::string>> List(const std::string& rel_dir, std::string_view from);

  // Opens `rel` for appending (created, with its parents, if missing). Errors: kIO naming it.
  virtual Result<std::unique_ptr<AppendFile>> OpenForAppend(const std::string& rel) = 0;

  // A watch for changes under the root, or nullptr when this storage cannot notify (readers
  // then list on every refresh and poll while waiting).
  virtual std::unique_ptr<ChangeWatch> WatchChanges() { return nullptr; }

  // Whether the root exists only once something is written under it (an S3 prefix), so that a
  // reader of a job that has just started must wait for the root itself, not only for its files.
  virtual bool RootAppearsWithFirstFile() const { return false; }

  // Makes the names in a folder durable (local: fsync of the folder; "" is the root).
  virtual Status SyncDir(const std::string& rel_dir) {
    (void)rel_dir;
    return Status::Ok();
  }

  // Durable commit: syncs the file, commits it (rename), then syncs its folder and that folder's
  // parent (the folder may be new), and, the first time through this storage, each folder above
  // up to the root (which holds the entries of events/, index/, collections/). After it returns
  // OK the file survives a power loss.
  Status CommitDurably(FileSink* sink, const std::string& rel);
  // WriteAtomic, durably (CommitDurably).
  Status WriteDurably(const std::string& rel, std::string_view content);

 private:
  std::mutex durable_mu_;
  std::set<std::string> durable_dirs_;  // folders whose entry CommitDurably made durable
};

// Creates a local folder and its missing parents (mode 0755); OK if it exists. Errors: kIO
// naming the folder, also when a file of that name is in the way.
Status MakeLocalDirs(const std::string& dir);

// The local implementation, exposed for tests; `root` is used as given (no "~" expansion: that is
// OpenStorage's).
std::unique_ptr<Storage> MakeLocalStorage(const std::string& root);

}  // namespace smd::io
