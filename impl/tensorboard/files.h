// TensorBoard event files on disk (FORMAT.md §11): one folder per mode under the log folder, one
// file per (mode, step) named "<MODE>/<step:012d>_<pid>_<hostname>.tfevents".
//
// Files are written under their final name and only ever appended to, whole records at a time,
// like TensorFlow's own writers: TensorBoard lists every file whose name contains "tfevents"
// (a "<name>.tfevents.tmp" too), reads the files of a folder in name order and tails the last
// one, so renaming a temporary file into place would make it read a file twice or skip one.
// The zero-padded step makes name order the order of writing within a mode.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <memory>

#include "impl/core/mode.h"
#include "impl/core/status.h"
#include "impl/storage/open.h"
#include "impl/storage/storage.h"

namespace smd::tensorboard {

// "<pid>_<hostname>" of this process.
std::string ProcessTag();

// "TRAIN/000000000012_<process_tag>.tfevents" (the step as C's %012d).
std::string EventFileRelPath(Mode mode, int64_t step, std::string_view process_tag);

// The event files of one log folder. Each mode has at most one open file, that of the step it was
// last written at; records are buffered and written out when the buffer is large, when the file is
// closed, and by Flush. One thread at a time.
class EventFileSet {
 public:
  // The log folder `dir` (any root io::OpenStorage takes), created (with its parents) when the
  // first file is. A root OpenStorage refuses makes every Append fail with its error.
  explicit EventFileSet(std::string dir, const io::StorageOptions& options = {},
                        std::string process_tag = ProcessTag());
  // The log folder `prefix` ("" or ending in '/') of a storage (the hook writes
  // <out_dir>/tensorboard through the trial's storage).
  EventFileSet(std::shared_ptr<io::Storage> storage, std::string prefix,
               std::string process_tag = ProcessTag());
  ~EventFileSet();  // Close()s; errors are dropped
  EventFileSet(const EventFileSet&) = delete;
  EventFileSet& operator=(const EventFileSet&) = delete;

  const std::string& dir() const { return dir_; }

  // Appends complete records to the file of (mode, step). If the mode's open file belongs to
  // another step it is closed first. A file starts with a file_version record stamped
  // `wall_time` (unless it already exists and is not empty: then it is appended to).
  // Errors: kIO naming the file. After an error every call returns it.
  Status Append(Mode mode, int64_t step, double wall_time, std::string_view records);
  // Closes the open files of `step` (all modes).
  Status FinishStep(int64_t step);
  // Writes out what is buffered, keeping the files open.
  Status Flush();
  // Closes every open file. Idempotent; returns the first error met.
  Status Close();

 private:
  struct File {
    std::unique_ptr<io::AppendFile> out;  // null: closed
    int64_t step = 0;
    std::string buf;
  };
  Status Open(File* f, Mode mode, int64_t step, double wall_time);
  Status WriteOut(File* f);
  Status CloseFile(File* f);
  Status Fail(Status st);

  std::shared_ptr<io::Storage> storage_;
  std::string prefix_;
  std::string dir_;
  std::string process_tag_;
  File files_[kNumModes];
  Status error_;
};

}  // namespace smd::tensorboard
