#include "impl/tensorboard/files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>

#include "impl/storage/storage.h"
#include "impl/tensorboard/summary.h"

namespace smd::tensorboard {
namespace {

constexpr size_t kBufferBytes = 1 << 20;  // written out when a file's buffer grows past this

}  // namespace

std::string ProcessTag() {
  char host[HOST_NAME_MAX + 1] = {0};
  if (::gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  return std::to_string(static_cast<long long>(::getpid())) + "_" + host;
}

std::string EventFileRelPath(Mode mode, int64_t step, std::string_view process_tag) {
  char num[32];
  std::snprintf(num, sizeof num, "%012lld", static_cast<long long>(step));
  std::string out = ModeName(mode);
  out += '/';
  out += num;
  out += '_';
  out.append(process_tag.data(), process_tag.size());
  out += ".tfevents";
  return out;
}

EventFileSet::EventFileSet(std::string dir, std::string process_tag)
    : dir_(std::move(dir)), process_tag_(std::move(process_tag)) {
  while (dir_.size() > 1 && dir_.back() == '/') dir_.pop_back();
}

EventFileSet::~EventFileSet() { (void)Close(); }

Status EventFileSet::Fail(Status st) {
  if (error_.ok()) error_ = st;
  return st;
}

Status EventFileSet::Open(File* f, Mode mode, int64_t step, double wall_time) {
  f->path = dir_ + "/" + EventFileRelPath(mode, step, process_tag_);
  SMD_RETURN_IF_ERROR(io::MakeLocalDirs(f->path.substr(0, f->path.rfind('/'))));
  int fd = ::open(f->path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoStatus("cannot create", f->path, errno);
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    return ErrnoStatus("cannot stat", f->path, err);
  }
  f->fd = fd;
  f->step = step;
  f->buf.clear();
  if (st.st_size == 0) AppendFileVersionRecord(&f->buf, wall_time);
  return Status::Ok();
}

Status EventFileSet::WriteOut(File* f) {
  size_t done = 0;
  while (done < f->buf.size()) {
    ssize_t n = ::write(f->fd, f->buf.data() + done, f->buf.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      f->buf.clear();
      return ErrnoStatus("cannot write", f->path, err);
    }
    done += static_cast<size_t>(n);
  }
  f->buf.clear();
  return Status::Ok();
}

Status EventFileSet::CloseFile(File* f) {
  if (f->fd < 0) return Status::Ok();
  Status st = WriteOut(f);
  if (::close(f->fd) != 0 && st.ok()) st = ErrnoStatus("cannot close", f->path, errno);
  f->fd = -1;
  f->buf.clear();
  std::string().swap(f->buf);
  return st;
}

Status EventFileSet::Append(Mode mode, int64_t step, double wall_time, std::string_view records) {
  if (!error_.ok()) return error_;
  if (!IsValidMode(static_cast<int>(mode))) {
    return InvalidArgument("invalid mode " + std::to_string(static_cast<int>(mode)));
  }
  File* f = &files_[ModeIndex(mode)];
  if (f->fd >= 0 && f->step != step) {
    Status st = CloseFile(f);
    if (!st.ok()) return Fail(st);
  }
  if (f->fd < 0) {
    Status st = Open(f, mode, step, wall_time);
    if (!st.ok()) return Fail(st);
  }
  f->buf.append(records.data(), records.size());
  if (f->buf.size() >= kBufferBytes) {
    Status st = WriteOut(f);
    if (!st.ok()) return Fail(st);
  }
  return Status::Ok();
}

Status EventFileSet::FinishStep(int64_t step) {
  Status first;
  for (File& f : files_) {
    if (f.fd >= 0 && f.step == step) {
      Status st = CloseFile(&f);
      if (first.ok()) first = st;
    }
  }
  if (!first.ok()) return Fail(first);
  return error_;
}

Status EventFileSet::Flush() {
  if (!error_.ok()) return error_;
  for (File& f : files_) {
    if (f.fd < 0) continue;
    Status st = WriteOut(&f);
    if (!st.ok()) return Fail(st);
  }
  return Status::Ok();
}

Status EventFileSet::Close() {
  Status first;
  for (File& f : files_) {
    Status st = CloseFile(&f);
    if (first.ok()) first = st;
  }
  if (!first.ok()) (void)Fail(first);
  return error_;
}

}  // namespace smd::tensorboard
