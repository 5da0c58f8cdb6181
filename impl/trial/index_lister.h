// Which index files a trial's refresh reads (BEHAVIOR.md's cursor, as smdebug's trials keep it):
// those listed after the cursor that were not read yet, and first those whose read failed before
// (read again by every refresh until one succeeds, whatever the cursor says). The cursor trails
// the last complete step, so a refresh lists only the folders and names from there on.
//
// Not synchronized: the trial calls it with its refresh lock held, and with its table lock held
// exclusively for what its queries read (the cursor, the steps of unread files).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "impl/core/status.h"
#include "impl/storage/storage.h"

namespace smd::trial {

// An index file to read: its path in the trial and what its name says.
struct IndexFileName {
  std::string rel;  // "index/000000000/000000000070_worker_0.json"
  int64_t step = 0;
  std::string worker;
};

class IndexLister {
 public:
  using Warn = std::function<void(const std::string&)>;

  // storage (and watcher, when not null: the folders listed are watched) outlive the lister.
  // range_begin/range_end: smdebug's range_steps (-1: no bound); files outside are not read.
  IndexLister(io::Storage* storage, io::ChangeWatch* watcher, int64_t range_begin,
              int64_t range_end)
      : storage_(storage), watcher_(watcher), range_begin_(range_begin), range_end_(range_end) {}

  // The files to read now, in path order: those whose read failed before, and the new ones
  // after the cursor. .json names that are not <step>_<worker>.json, and negative steps, are
  // skipped for good, each with a warning; other names (a writer's temporary files) silently.
  // *listed_any: some index file at or after the cursor exists in the folders listed (with a
  // range begin, the folders before its step's folder are not listed).
  // Errors: a listing that fails (an I/O or S3 error; a folder that vanished is not one).
  Result<std::vector<IndexFileName>> ListNew(bool* listed_any, const Warn& warn);

  // A file read (or skipped for good as malformed): not listed again.
  void MarkRead(const std::string& rel) { read_files_.insert(rel); }
  // A file whose read failed: read again by every refresh until it succeeds; its step is not
  // complete meanwhile.
  void RememberUnread(const IndexFileName& f);
  void ForgetUnread(const std::string& rel);
  bool HasUnread() const { return !unread_.empty(); }
  // Whether global step `step` has an index file still to be read again.
  bool StepUnread(int64_t step) const { return !unread_steps_.empty() && unread_steps_.count(step) > 0; }

  // Moves the cursor to the last complete step's file of the last worker (BEHAVIOR.md §6.7);
  // when more than `window` known steps are incomplete, it gives up on the oldest half of them,
  // as smdebug does, and *last_complete_step moves with it.
  void Advance(const std::string& last_worker, int64_t* last_complete_step, int64_t known_steps,
               int64_t window);
  // Forgets the read files that sort before the cursor: they are never listed again.
  void ForgetReadBeforeCursor();
  // The index file after which the next refresh lists; empty before any step is complete.
  const std::string& cursor() const { return cursor_; }
  uint64_t listings() const { return listings_.load(); }

 private:
  io::Storage* const storage_;
  io::ChangeWatch* const watcher_;
  const int64_t range_begin_;
  const int64_t range_end_;
  std::string cursor_;                          // relative index path; empty: none yet
  std::unordered_set<std::string> read_files_;  // read index files at or after the cursor
  // rel -> (global step, worker) of the files whose read failed, and how many per step.
  std::map<std::string, std::pair<int64_t, std::string>> unread_;
  std::map<int64_t, int> unread_steps_;
  std::atomic<uint64_t> listings_{0};
};

}  // namespace smd::trial
