#include "impl/tensorboard/files.h"

#include <unistd.h>

#include <climits>
#include <cstdio>

#include "impl/storage/open.h"
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

EventFileSet::EventFileSet(std::string dir, const io::StorageOptions& options,
                           std::string process_tag)
    : dir_(std::move(dir)), process_tag_(std::move(process_tag)) {
  while (dir_.size() > 1 && dir_.back() == '/') dir_.pop_back();
  Result<std::unique_ptr<io::Storage>> storage = io::OpenStorage(dir_, options);
  if (storage.ok()) {
    storage_ = std::move(storage).value();
    dir_ = storage_->root();
  } else {
    error_ = storage.status();
  }
}

EventFileSet::EventFileSet(std::shared_ptr<io::Storage> storage, std::string prefix,
                           std::string process_tag)
    : storage_(std::move(storage)), prefix_(std::move(prefix)), process_tag_(std::move(process_tag)) {
  std::string folder = prefix_;
  while (!folder.empty() && folder.back() == '/') folder.pop_back();
  dir_ = storage_->Describe(folder);
}

EventFileSet::~EventFileSet() { (void)Close(); }

Status EventFileSet::Fail(Status st) {
  if (error_.ok()) error_ = st;
  return st;
}

Status EventFileSet::Open(File* f, Mode mode, int64_t step, double wall_time) {
  SMD_ASSIGN_OR_RETURN(f->out, storage_->OpenForAppend(prefix_ + EventFileRelPath(mode, step, process_tag_)));
  f->step = step;
  f->buf.clear();
  if (f->out->size() == 0) AppendFileVersionRecord(&f->buf, wall_time);
  return Status::Ok();
}

Status EventFileSet::WriteOut(File* f) {
  Status st = f->buf.empty() ? Status::Ok() : f->out->Append(f->buf);
  f->buf.clear();
  return st;
}

Status EventFileSet::CloseFile(File* f) {
  if (!f->out) return Status::Ok();
  Status st = WriteOut(f);
  Status closed = f->out->Close();
  if (st.ok()) st = closed;
  f->out.reset();
  std::string().swap(f->buf);
  return st;
}

Status EventFileSet::Append(Mode mode, int64_t step, double wall_time, std::string_view records) {
  if (!error_.ok()) return error_;
  if (!IsValidMode(static_cast<int>(mode))) {
    return InvalidArgument("invalid mode " + std::to_string(static_cast<int>(mode)));
  }
  File* f = &files_[ModeIndex(mode)];
  if (f->out && f->step != step) {
    Status st = CloseFile(f);
    if (!st.ok()) return Fail(st);
  }
  if (!f->out) {
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
    if (f.out && f.step == step) {
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
    if (!f.out) continue;
    Status st = WriteOut(&f);
    if (st.ok()) st = f.out->Flush();  // on S3: the object is uploaded as it is now
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
