// Where a trial lives. One interface for a local folder (and, later, an S3 prefix). Paths given to
// these methods are relative to the trial root and use '/'.
#pragma once

#include <sys/uio.h>

#include <cstdint>
#include <memory>
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
};

class Storage {
 public:
  virtual ~Storage() = default;

  // Opens a trial root: a local path (created lazily by writers) or, later, s3://bucket/prefix.
  static Result<std::unique_ptr<Storage>> Open(const std::string& uri);

  // A readable description of the root, for messages.
  virtual const std::string& root() const = 0;
  // Full path or URI of a relative path, for messages.
  virtual std::string Describe(std::string_view rel) const = 0;

  // Creates the root if needed and checks that it can be written.
  virtual Status PrepareForWriting() = 0;
  // Starts writing `rel` (parents created as needed).
  virtual Result<std::unique_ptr<FileSink>> Create(const std::string& rel) = 0;
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

  // Makes the names in a folder durable (local: fsync of the folder; "" is the root).
  virtual Status SyncDir(const std::string& rel_dir) {
    (void)rel_dir;
    return Status::Ok();
  }

  // Durable commit: syncs the file, commits it (rename), then syncs its folder and that folder's
  // parent (the folder may be new). After it returns OK the file survives a power loss.
  Status CommitDurably(FileSink* sink, const std::string& rel);
  // WriteAtomic, durably (CommitDurably).
  Status WriteDurably(const std::string& rel, std::string_view content);
};

// Creates a local folder and its missing parents (mode 0755); OK if it exists. Errors: kIO
// naming the folder, also when a file of that name is in the way.
Status MakeLocalDirs(const std::string& dir);

// The local implementation, exposed for tests.
std::unique_ptr<Storage> MakeLocalStorage(const std::string& root);

}  // namespace smd::io
