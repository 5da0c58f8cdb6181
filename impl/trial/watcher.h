// Change notification for a trial folder: tells a reader cheaply whether anything it lists
// (index/, its step folders, collections/, the end-of-job marker) may have changed, and lets it
// sleep until something does. Linux inotify; where that is unavailable, or the file system does
// not deliver events for changes made elsewhere (NFS, FUSE, ...), the watcher says so and the
// trial falls back to listing on every refresh and short polls while waiting.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <unordered_set>

namespace smd::trial {

class DirWatcher {
 public:
  // A watcher for folders under `root`, or nullptr when change events cannot be trusted there.
  static std::unique_ptr<DirWatcher> Create(const std::string& root);
  ~DirWatcher();
  DirWatcher(const DirWatcher&) = delete;
  DirWatcher& operator=(const DirWatcher&) = delete;

  // Starts watching a folder (an absolute path) for entries created, renamed in, or removed.
  // Watching a folder twice is cheap; a folder that does not exist is ignored (returns false).
  bool Watch(const std::string& dir);
  // True if any event arrived since the last call (or the kernel's queue overflowed); drains
  // the queue. Never blocks. Thread-safe.
  bool ConsumeChanges();
  // Blocks until an event is pending or timeout_ms passes (0: just check). Does not drain, so
  // several waiters all wake. Returns true if an event is pending. Thread-safe.
  bool WaitForEvent(int timeout_ms);

 private:
  explicit DirWatcher(int fd) : fd_(fd) {}
  int fd_;
  std::mutex mu_;
  std::unordered_set<std::string> watched_;
};

}  // namespace smd::trial
