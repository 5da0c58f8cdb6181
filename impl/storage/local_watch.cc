#include "impl/storage/local_watch.h"

#include <cerrno>

#ifdef __linux__
#include <fcntl.h>
#include <linux/magic.h>
#include <poll.h>
#include <sys/inotify.h>
#include <sys/vfs.h>
#include <unistd.h>
#endif

namespace smd::io {

#ifdef __linux__
namespace {

// File systems whose inotify events cover every change (all writers go through this kernel).
bool IsLocalFileSystem(const std::string& path) {
  struct statfs st;
  if (::statfs(path.c_str(), &st) != 0) return false;
  switch (static_cast<unsigned long>(st.f_type)) {
    case EXT4_SUPER_MAGIC:  // also ext2/ext3
    case XFS_SUPER_MAGIC:
    case BTRFS_SUPER_MAGIC:
    case TMPFS_MAGIC:
    case OVERLAYFS_SUPER_MAGIC:
    case 0x2fc12fc1:  // zfs
    case 0xf2f52010:  // f2fs
    case REISERFS_SUPER_MAGIC:
    case 0x5346544e:  // ntfs
    case MSDOS_SUPER_MAGIC:
      return true;
    default:
      return false;
  }
}

}  // namespace

std::unique_ptr<LocalChangeWatch> LocalChangeWatch::Create(const std::string& root) {
  if (!IsLocalFileSystem(root)) return nullptr;
  int fd = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (fd < 0) return nullptr;
  return std::unique_ptr<LocalChangeWatch>(new LocalChangeWatch(fd, root));
}

LocalChangeWatch::~LocalChangeWatch() { ::close(fd_); }

bool LocalChangeWatch::Watch(const std::string& rel_dir) {
  const std::string dir = rel_dir.empty() ? root_ : root_ + "/" + rel_dir;
  std::lock_guard<std::mutex> lock(mu_);
  if (watched_.count(dir)) return true;
  int wd = ::inotify_add_watch(fd_, dir.c_str(),
                               IN_CREATE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE |
                                   IN_CLOSE_WRITE | IN_ONLYDIR | IN_DELETE_SELF | IN_MOVE_SELF);
  if (wd < 0) return false;
  watched_.insert(dir);
  return true;
}

bool LocalChangeWatch::ConsumeChanges() {
  alignas(struct inotify_event) char buf[8192];
  bool any = false;
  bool forget = false;
  for (;;) {
    ssize_t n = ::read(fd_, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    any = true;
    for (char* p = buf; p < buf + n;) {
      auto* ev = reinterpret_cast<struct inotify_event*>(p);
      // A watched folder went away (or was replaced): watch it again when it is seen next.
      if (ev->mask & (IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF | IN_Q_OVERFLOW)) forget = true;
      p += sizeof(struct inotify_event) + ev->len;
    }
  }
  if (forget) {
    std::lock_guard<std::mutex> lock(mu_);
    watched_.clear();
  }
  return any;
}

bool LocalChangeWatch::WaitForEvent(int timeout_ms) {
  struct pollfd p = {fd_, POLLIN, 0};
  for (;;) {
    int rc = ::poll(&p, 1, timeout_ms < 0 ? -1 : timeout_ms);
    if (rc < 0 && errno == EINTR) continue;
    return rc > 0;
  }
}

#else  // no inotify: the trial lists on every refresh and short-polls while waiting

std::unique_ptr<LocalChangeWatch> LocalChangeWatch::Create(const std::string&) { return nullptr; }
LocalChangeWatch::~LocalChangeWatch() {}
bool LocalChangeWatch::Watch(const std::string&) { return false; }
bool LocalChangeWatch::ConsumeChanges() { return true; }
bool LocalChangeWatch::WaitForEvent(int) { return false; }

#endif

}  // namespace smd::io
