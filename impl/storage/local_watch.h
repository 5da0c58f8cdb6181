// Change notification for a local trial folder (the local storage's ChangeWatch): tells a reader
// cheaply whether anything it lists (index/, its step folders, collections/, the end-of-job
// marker) may have changed, and lets it sleep until something does. Linux inotify; where that is
// unavailable, or the file system does not deliver events for changes made elsewhere (NFS, FUSE,
// ...), there is no watch and the trial falls back to listing on every refresh and short polls
// while waiting.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <unordered_set>

#include "impl/storage/storage.h"

namespace smd::io {

class LocalChangeWatch : public ChangeWatch {
 public:
  // A watch for folders under the local folder `root`, or nullptr when change events cannot be
  // trusted there.
  static std::unique_ptr<LocalChangeWatch> Create(const std::string& root);
  ~LocalChangeWatch() override;
  LocalChangeWatch(const LocalChangeWatch&) = delete;
  LocalChangeWatch& operator=(const LocalChangeWatch&) = delete;

  bool Watch(const std::string& rel_dir) override;
  bool ConsumeChanges() override;
  bool WaitForEvent(int timeout_ms) override;

 private:
  LocalChangeWatch(int fd, std::string root) : fd_(fd), root_(std::move(root)) {}
  int fd_;
  const std::string root_;
  std::mutex mu_;
  std::unordered_set<std::string> watched_;
};

}  // namespace smd::io
