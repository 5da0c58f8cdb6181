// Local-folder storage: temporary names and renames, buffered appends, pread for ranges.
#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <unordered_set>
#include <vector>

#include "impl/format/layout.h"
#include "impl/storage/local_watch.h"
#include "impl/storage/storage.h"

namespace smd::io {
namespace {

constexpr size_t kSinkBufferSize = 1 << 20;      // appends below this are batched
constexpr size_t kDirectWriteThreshold = 64 << 10;
constexpr size_t kReadAllScratch = 64 << 10;     // ReadAll's first read (per thread)

Status WriteFully(int fd, struct iovec* iov, int count, const std::string& path) {
  while (count > 0) {
    ssize_t n = ::writev(fd, iov, count > IOV_MAX ? IOV_MAX : count);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus("cannot write", path, errno);
    }
    size_t left = static_cast<size_t>(n);
    while (count > 0 && left >= iov->iov_len) {
      left -= iov->iov_len;
      ++iov;
      --count;
    }
    if (count > 0) {
      iov->iov_base = static_cast<char*>(iov->iov_base) + left;
      iov->iov_len -= left;
    }
  }
  return Status::Ok();
}

class LocalStorage;

// The errno a read reports for a path that leaves the trial folder through a symbolic link (or a
// "..") and is therefore not followed.
constexpr int kLeavesTrial = EXDEV;

Status ReadError(const std::string& what, const std::string& path, int err) {
  if (err == kLeavesTrial) {
    // kCorrupt, not kIO: the trial itself is malformed, and reading again will not help.
    return Status(Code::kCorrupt, what + " '" + path +
                                      "': it is reached through a symbolic link that leads out of "
                                      "the trial folder (not followed)");
  }
  return ErrnoStatus(what, path, err);
}

// Without openat2 (Linux before 5.6, or a sandbox that refuses it): one component at a time,
// refusing every symbolic link and "..".
int OpenNoLinks(int dir, const std::string& rel, int flags) {
  int cur = dir;
  size_t start = 0;
  for (;;) {
    const size_t slash = rel.find('/', start);
    const std::string comp = rel.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    if (comp == "..") {
      if (cur != dir) ::close(cur);
      errno = kLeavesTrial;
      return -1;
    }
    if (slash == std::string::npos) {
      int fd = ::openat(cur, comp.c_str(), flags | O_NOFOLLOW);
      int e = errno;
      if (fd >= 0 && (flags & O_PATH)) {  // O_PATH | O_NOFOLLOW opens a link itself
        struct stat st;
        if (::fstat(fd, &st) == 0 && S_ISLNK(st.st_mode)) {
          ::close(fd);
          fd = -1;
          e = kLeavesTrial;
        }
      } else if (fd < 0 && e == ELOOP) {
        e = kLeavesTrial;
      }
      if (cur != dir) ::close(cur);
      errno = e;
      return fd;
    }
    if (!comp.empty() && comp != ".") {
      int next = ::openat(cur, comp.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC);
      int e = errno;
      if (next >= 0) {
        struct stat st;
        if (::fstat(next, &st) != 0) {
          e = errno;
          ::close(next);
          next = -1;
        } else if (S_ISLNK(st.st_mode)) {
          ::close(next);
          next = -1;
          e = kLeavesTrial;
        } else if (!S_ISDIR(st.st_mode)) {
          ::close(next);
          next = -1;
          e = ENOTDIR;
        }
      }
      if (cur != dir) ::close(cur);
      if (next < 0) {
        errno = e;
        return -1;
      }
      cur = next;
    }
    start = slash + 1;
  }
}

// Opens `rel` below the folder `dir`; a path that would leave it (a symbolic link to somewhere
// else, an absolute link, "..") fails with kLeavesTrial. Links that stay inside are followed
// where the kernel has openat2.
int OpenBeneath(int dir, const std::string& rel, int flags) {
#ifdef SYS_openat2
  static std::atomic<bool> have_openat2{true};
  if (have_openat2.load(std::memory_order_relaxed)) {
    struct open_how how;
    std::memset(&how, 0, sizeof how);
    how.flags = static_cast<uint64_t>(flags);
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
    long fd;
    do {
      fd = ::syscall(SYS_openat2, dir, rel.c_str(), &how, sizeof how);
    } while (fd < 0 && errno == EAGAIN);
    if (fd >= 0) return static_cast<int>(fd);
    // ENOSYS: a kernel before 5.6; EPERM: a sandbox (seccomp) that refuses the call (a read-only
    // open itself reports a permission problem as EACCES). Either way: the portable walk.
    if (errno != ENOSYS && errno != EPERM) return -1;  // EXDEV (kLeavesTrial): leaves `dir`
    have_openat2.store(false, std::memory_order_relaxed);
  }
#endif
  return OpenNoLinks(dir, rel, flags);
}

// A file being written as <name>.tmp, renamed to <name> on commit. Names are relative to dir_fd
// (the trial root, which the storage keeps open), or absolute with AT_FDCWD; tmp_/final_ are the
// full paths, for messages.
class LocalSink : public FileSink {
 public:
  LocalSink(int fd, int dir_fd, std::string rel, std::string rel_tmp, std::string final_path,
            std::string tmp_path)
      : fd_(fd),
        dir_fd_(dir_fd),
        rel_(std::move(rel)),
        rel_tmp_(std::move(rel_tmp)),
        final_(std::move(final_path)),
        tmp_(std::move(tmp_path)) {}
  ~LocalSink() override { Abort(); }

  Status Append(const struct iovec* pieces, int count) override {
    if (fd_ < 0) return InvalidState("file '" + tmp_ + "' is already closed");
    size_t total = 0;
    for (int i = 0; i < count; ++i) total += pieces[i].iov_len;
    size_ += total;
    // Small single appends are batched; anything else goes out in one writev, together with
    // what is batched.
    if (count == 1 && total < kDirectWriteThreshold) {
      if (buf_.size() + total > kSinkBufferSize) SMD_RETURN_IF_ERROR(FlushBuffer());
      buf_.append(static_cast<const char*>(pieces[0].iov_base), total);
      return Status::Ok();
    }
    iov_.clear();
    if (!buf_.empty()) iov_.push_back({buf_.data(), buf_.size()});
    iov_.insert(iov_.end(), pieces, pieces + count);
    SMD_RETURN_IF_ERROR(WriteFully(fd_, iov_.data(), static_cast<int>(iov_.size()), tmp_));
    buf_.clear();
    return Status::Ok();
  }

  uint64_t size() const override { return size_; }

  Status Commit() override {
    if (fd_ < 0) return InvalidState("file '" + tmp_ + "' is already closed");
    Status st = FlushBuffer();
    int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0 && st.ok()) st = ErrnoStatus("cannot close", tmp_, errno);
    if (st.ok() && ::renameat(dir_fd_, rel_tmp_.c_str(), dir_fd_, rel_.c_str()) != 0) {
      st = ErrnoStatus("cannot rename to '" + final_ + "'", tmp_, errno);
    }
    if (!st.ok()) ::unlinkat(dir_fd_, rel_tmp_.c_str(), 0);
    committed_ = st.ok();
    return st;
  }

  Status Sync() override {
    if (fd_ < 0) return InvalidState("file '" + tmp_ + "' is already closed");
    SMD_RETURN_IF_ERROR(FlushBuffer());
    if (::fsync(fd_) != 0) {
      const int e = errno;
      return ErrnoStatus("cannot fsync", tmp_, e);
    }
    return Status::Ok();
  }

  void Abort() override {
    if (fd_ >= 0) {
      ::close(fd_);
      fd_ = -1;
    }
    if (!committed_ && !aborted_) {
      ::unlinkat(dir_fd_, rel_tmp_.c_str(), 0);
      aborted_ = true;
    }
  }

 private:
  Status FlushBuffer() {
    if (buf_.empty()) return Status::Ok();
    struct iovec v = {buf_.data(), buf_.size()};
    Status st = WriteFully(fd_, &v, 1, tmp_);
    buf_.clear();
    return st;
  }

  int fd_;
  int dir_fd_;
  std::string rel_, rel_tmp_, final_, tmp_;
  std::string buf_;
  std::vector<struct iovec> iov_;  // reused by Append (WriteFully advances through it)
  uint64_t size_ = 0;
  bool committed_ = false, aborted_ = false;
};

// A file opened with O_APPEND. Every Append is written at once (callers batch).
class LocalAppendFile : public AppendFile {
 public:
  LocalAppendFile(int fd, uint64_t size, std::string path) : fd_(fd), size_(size), path_(std::move(path)) {}
  ~LocalAppendFile() override { (void)Close(); }

  Status Append(std::string_view bytes) override {
    if (fd_ < 0) return InvalidState("file '" + path_ + "' is already closed");
    size_ += bytes.size();
    struct iovec v = {const_cast<char*>(bytes.data()), bytes.size()};
    return WriteFully(fd_, &v, 1, path_);
  }
  uint64_t size() const override { return size_; }
  Status Close() override {
    if (fd_ < 0) return Status::Ok();
    Status st;
    if (::close(fd_) != 0) st = ErrnoStatus("cannot close", path_, errno);
    fd_ = -1;
    return st;
  }

 private:
  int fd_;
  uint64_t size_;
  std::string path_;
};

class LocalStorage : public Storage {
 public:
  explicit LocalStorage(std::string root) : root_(std::move(root)) {
    while (root_.size() > 1 && root_.back() == '/') root_.pop_back();
  }
  ~LocalStorage() override {
    int fd = root_fd_.load();
    if (fd >= 0) ::close(fd);
  }

  const std::string& root() const override { return root_; }
  std::string Describe(std::string_view rel) const override { return Path(rel); }

  Status PrepareForWriting() override {
    SMD_RETURN_IF_ERROR(MakeLocalDirs(root_));
    if (::access(root_.c_str(), W_OK | X_OK) != 0) {
      return ErrnoStatus("cannot write into out_dir", root_, errno);
    }
    return Status::Ok();
  }

  Result<std::unique_ptr<FileSink>> Create(const std::string& rel) override {
    return CreateAs(rel, kTmpSuffix);
  }

  Result<std::unique_ptr<FileSink>> CreateWhole(const std::string& rel) override {
    static std::atomic<uint64_t> serial{0};
    return CreateAs(rel, "." + std::to_string(::getpid()) + "-" + std::to_string(++serial) + kTmpSuffix);
  }

  Result<std::unique_ptr<AppendFile>> OpenForAppend(const std::string& rel) override {
    std::string path = Path(rel);
    SMD_RETURN_IF_ERROR(EnsureParent(path));
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) return ErrnoStatus("cannot open", path, errno);
    struct stat st;
    if (::fstat(fd, &st) != 0) {
      int err = errno;
      ::close(fd);
      return ErrnoStatus("cannot stat", path, err);
    }
    return std::unique_ptr<AppendFile>(
        new LocalAppendFile(fd, static_cast<uint64_t>(st.st_size), std::move(path)));
  }

  std::unique_ptr<ChangeWatch> WatchChanges() override { return LocalChangeWatch::Create(root_); }

  Status WriteAtomic(const std::string& rel, std::string_view content) override {
    SMD_ASSIGN_OR_RETURN(std::unique_ptr<FileSink> sink, CreateWhole(rel));
    Status st = sink->Append(content);
    if (st.ok()) st = sink->Commit();
    if (!st.ok()) sink->Abort();
    return st;
  }

  Status CreateExclusive(const std::string& rel) override {
    std::string path = Path(rel);
    SMD_RETURN_IF_ERROR(EnsureParent(path));
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) return ErrnoStatus("cannot create", path, errno);
    ::fsync(fd);
    ::close(fd);
    return Status::Ok();
  }

  Status Remove(const std::string& rel) override {
    std::string path = Path(rel);
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) return ErrnoStatus("cannot remove", path, errno);
    return Status::Ok();
  }

  Result<bool> Exists(const std::string& rel) override {
    struct stat st;
    if (StatAt(rel, &st) == 0) return true;
    const int e = errno;
    if (e == ENOENT || e == ENOTDIR) return false;
    return ReadError("cannot stat", Path(rel), e);
  }

  Result<uint64_t> FileSize(const std::string& rel) override {
    struct stat st;
    if (StatAt(rel, &st) != 0) {
      const int e = errno;
      return ReadError("cannot stat", Path(rel), e);
    }
    if (!S_ISREG(st.st_mode)) return Status(Code::kCorrupt, "'" + Path(rel) + "' is not a regular file");
    return static_cast<uint64_t>(st.st_size);
  }

  Result<std::string> ReadAll(const std::string& rel) override {
    std::string out;
    SMD_RETURN_IF_ERROR(ReadAllInto(rel, &out));
    return out;
  }

  Status ReadAllInto(const std::string& rel, std::string* result) override {
    // O_NONBLOCK: a FIFO (or another special file) where a file should be must not block the
    // reader; regular files ignore it.
    int fd = OpenAt(rel, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) {
      int e = errno;
      return ReadError("cannot open", Path(rel), e);
    }
    // The files read whole (index and collections files) are small: one read into a scratch
    // buffer usually gets all of it, without a stat. A regular file returns a short read only at
    // its end. Only a read that fills the buffer needs the size, and the file type.
    thread_local std::vector<char> scratch(kReadAllScratch);
    ssize_t n;
    do {
      n = ::read(fd, scratch.data(), scratch.size());
    } while (n < 0 && errno == EINTR);
    if (n < 0) {
      int e = errno;
      ::close(fd);
      // Not a file at all (a folder, a FIFO...): a malformed trial, not a failed read to retry.
      if (e == EISDIR) return Status(Code::kCorrupt, "cannot read '" + Path(rel) + "': it is a folder");
      return ErrnoStatus("cannot read", Path(rel), e);
    }
    if (static_cast<size_t>(n) < scratch.size()) {
      ::close(fd);
      result->assign(scratch.data(), static_cast<size_t>(n));  // (keeps the capacity)
      return Status::Ok();
    }
    struct stat st;
    if (::fstat(fd, &st) != 0) {
      int e = errno;
      ::close(fd);
      return ReadError("cannot stat", Path(rel), e);
    }
    if (!S_ISREG(st.st_mode)) {
      ::close(fd);
      return Status(Code::kCorrupt, "cannot read '" + Path(rel) + "': it is not a regular file");
    }
    std::string& out = *result;
    out.assign(scratch.data(), static_cast<size_t>(n));
    size_t done = out.size();
    size_t cap = std::max(done, static_cast<size_t>(st.st_size)) + 1;
    out.resize(cap);
    for (;;) {  // to the end, also when the file grows meanwhile
      ssize_t m = ::read(fd, &out[done], cap - done);
      if (m < 0) {
        if (errno == EINTR) continue;
        int e = errno;
        ::close(fd);
        return ErrnoStatus("cannot read", Path(rel), e);
      }
      if (m == 0) break;
      done += static_cast<size_t>(m);
      if (done < cap) break;
      cap *= 2;
      out.resize(cap);
    }
    ::close(fd);
    out.resize(done);
    return Status::Ok();
  }

  Status ReadRange(const std::string& rel, uint64_t offset, uint64_t len, char* out) override {
    if (offset > static_cast<uint64_t>(INT64_MAX) - len) {
      return Corrupt("range at byte " + std::to_string(offset) + " of '" + Path(rel) +
                     "' is beyond any file size");
    }
    int fd = OpenAt(rel, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);  // (see ReadAll)
    if (fd < 0) {
      int e = errno;
      return ReadError("cannot open", Path(rel), e);
    }
    uint64_t done = 0;
    while (done < len) {
      ssize_t n = ::pread(fd, out + done, len - done, static_cast<off_t>(offset + done));
      if (n < 0) {
        if (errno == EINTR) continue;
        int e = errno;
        ::close(fd);
        return ErrnoStatus("cannot read", Path(rel), e);
      }
      if (n == 0) {  // the end of the file (which may be before `offset`)
        struct stat st;
        const bool sized = ::fstat(fd, &st) == 0;
        ::close(fd);
        return Corrupt("'" + Path(rel) + "' is shorter than expected: " +
                       (sized ? "it has " + std::to_string(st.st_size) + " bytes"
                              : "it ends before byte " + std::to_string(offset + len)) +
                       ", and bytes " + std::to_string(offset) + " to " +
                       std::to_string(offset + len) + " were to be read");
      }
      done += static_cast<uint64_t>(n);
    }
    ::close(fd);
    return Status::Ok();
  }

  Result<std::vector<std::string>> ListDir(const std::string& rel_dir) override {
    int fd = OpenAt(rel_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR* d = fd < 0 ? nullptr : ::fdopendir(fd);
    if (d == nullptr) {
      int e = errno;
      if (fd >= 0) ::close(fd);
      return ReadError("cannot list", Path(rel_dir), e);
    }
    std::vector<std::string> out;
    while (struct dirent* e = ::readdir(d)) {
      if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
      out.emplace_back(e->d_name);
    }
    ::closedir(d);
    return out;
  }

  Status SyncDir(const std::string& rel_dir) override {
    int fd = OpenAt(rel_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
      const int e = errno;
      return ErrnoStatus("cannot open folder", Path(rel_dir), e);
    }
    const int rc = ::fsync(fd);
    const int e = errno;
    ::close(fd);
    if (rc != 0) return ErrnoStatus("cannot fsync folder", Path(rel_dir), e);
    return Status::Ok();
  }

 private:
  // Starts writing `rel` as <rel><tmp_suffix>, renamed to `rel` on commit.
  Result<std::unique_ptr<FileSink>> CreateAs(const std::string& rel, const std::string& tmp_suffix) {
    std::string path = Path(rel);
    std::string tmp = path + tmp_suffix;
    SMD_RETURN_IF_ERROR(EnsureParent(path));
    // Relative to the root's descriptor: the kernel does not walk out_dir's own path each time.
    int dir = rel.empty() ? -1 : RootFd();
    std::string rel_tmp = rel + tmp_suffix;
    int fd = dir >= 0 ? ::openat(dir, rel_tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)
                      : ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return ErrnoStatus("cannot create", tmp, errno);
    if (dir < 0) return std::unique_ptr<FileSink>(new LocalSink(fd, AT_FDCWD, path, tmp, path, tmp));
    return std::unique_ptr<FileSink>(new LocalSink(fd, dir, rel, rel_tmp, path, tmp));
  }

  std::string Path(std::string_view rel) const {
    if (rel.empty()) return root_;
    std::string p = root_;
    p += '/';
    p.append(rel.data(), rel.size());
    return p;
  }

  Status EnsureParent(const std::string& path) {
    size_t slash = path.rfind('/');
    if (slash == std::string::npos || slash == 0) return Status::Ok();
    std::string dir = path.substr(0, slash);
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (known_dirs_.count(dir)) return Status::Ok();
    }
    // The usual case: a new step folder whose parent exists (one mkdirat from the root).
    const int root = RootFd();
    const size_t prefix = root_.size() + 1;
    bool made = false;
    if (root >= 0 && dir.size() > prefix && dir.compare(0, root_.size(), root_) == 0) {
      made = ::mkdirat(root, dir.c_str() + prefix, 0755) == 0;  // otherwise MakeDirs sorts it out
    }
    if (!made) SMD_RETURN_IF_ERROR(MakeLocalDirs(dir));
    std::lock_guard<std::mutex> lock(mu_);
    if (known_dirs_.size() > 4096) known_dirs_.clear();
    known_dirs_.insert(dir);
    return Status::Ok();
  }

  // Reads resolve paths relative to a descriptor of the root (opened at the first read that
  // finds the root), which spares the kernel walking the root's own components on every open.
  int RootFd() {
    int fd = root_fd_.load(std::memory_order_acquire);
    if (fd >= 0) return fd;
    int nfd = ::open(root_.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (nfd < 0) return -1;
    int expected = -1;
    if (!root_fd_.compare_exchange_strong(expected, nfd)) {
      ::close(nfd);
      return expected;
    }
    return nfd;
  }
  // Reads never leave the trial folder: a symbolic link inside it that leads out (to another
  // trial's event file, to any readable file) fails with kLeavesTrial instead of being followed.
  int OpenAt(const std::string& rel, int flags) {
    if (rel.empty()) return ::open(root_.c_str(), flags);
    int root = RootFd();
    if (root < 0) return ::open(Path(rel).c_str(), flags);  // fails: the root is not there
    return OpenBeneath(root, rel, flags);
  }
  int StatAt(const std::string& rel, struct stat* st) {
    if (rel.empty()) return ::stat(root_.c_str(), st);
    int fd = OpenAt(rel, O_PATH | O_CLOEXEC);
    if (fd < 0) return -1;
    const int rc = ::fstat(fd, st);
    const int e = errno;
    ::close(fd);
    errno = e;
    return rc;
  }

  std::string root_;
  std::atomic<int> root_fd_{-1};
  std::mutex mu_;
  std::unordered_set<std::string> known_dirs_;
};

}  // namespace

Status MakeLocalDirs(const std::string& dir) {
  if (dir.empty()) return Status::Ok();
  if (::mkdir(dir.c_str(), 0755) == 0) return Status::Ok();
  if (errno == EEXIST) {
    struct stat st;
    if (::stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return Status::Ok();
    return Status(Code::kIO, "cannot create folder '" + dir + "': a file of that name exists");
  }
  if (errno != ENOENT) return ErrnoStatus("cannot create folder", dir, errno);
  size_t slash = dir.rfind('/');
  if (slash == std::string::npos || slash == 0) return ErrnoStatus("cannot create folder", dir, ENOENT);
  SMD_RETURN_IF_ERROR(MakeLocalDirs(dir.substr(0, slash)));
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
    return ErrnoStatus("cannot create folder", dir, errno);
  }
  return Status::Ok();
}

namespace {
std::string ParentOf(const std::string& rel) {
  const size_t slash = rel.rfind('/');
  return slash == std::string::npos ? std::string() : rel.substr(0, slash);
}
}  // namespace

Status Storage::CommitDurably(FileSink* sink, const std::string& rel) {
  SMD_RETURN_IF_ERROR(sink->Sync());
  SMD_RETURN_IF_ERROR(sink->Commit());
  const std::string dir = ParentOf(rel);
  SMD_RETURN_IF_ERROR(SyncDir(dir));
  if (dir.empty()) return Status::Ok();
  std::string up = ParentOf(dir);
  SMD_RETURN_IF_ERROR(SyncDir(up));
  // The folders above that one (up to the root: the root holds the entries of events/, index/,
  // collections/) are synced the first time a file is committed under them through this
  // storage; they may have been created for it. Later commits there only add deeper entries.
  while (!up.empty()) {
    const std::string child = up;  // its entry is made durable by syncing its parent
    up = ParentOf(up);
    {
      std::lock_guard<std::mutex> lock(durable_mu_);
      if (!durable_dirs_.insert(child).second) continue;
    }
    Status st = SyncDir(up);
    if (!st.ok()) {
      std::lock_guard<std::mutex> lock(durable_mu_);
      durable_dirs_.erase(child);
      return st;
    }
  }
  return Status::Ok();
}

Status Storage::WriteDurably(const std::string& rel, std::string_view content) {
  SMD_ASSIGN_OR_RETURN(std::unique_ptr<FileSink> sink, CreateWhole(rel));
  Status st = sink->Append(content);
  if (st.ok()) st = CommitDurably(sink.get(), rel);
  if (!st.ok()) sink->Abort();
  return st;
}

std::unique_ptr<Storage> MakeLocalStorage(const std::string& root) {
  return std::unique_ptr<Storage>(new LocalStorage(root));
}

}  // namespace smd::io
