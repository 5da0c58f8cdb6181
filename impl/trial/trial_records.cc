// Trial: reading event-file records (whole, or only their start).
#include "impl/trial/trial.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <thread>

#include "impl/core/reductions.h"
#include "impl/core/regex.h"
#include "impl/core/text.h"
#include "impl/format/event.h"
#include "impl/format/layout.h"
#include "impl/format/record.h"
#include "impl/format/index_parser.h"
#include "impl/trial/record_cache.h"
#include "impl/trial/parallel.h"
#include "impl/trial/trial_internal.h"

namespace smd::trial {

// ---------------------------------------------------------------------------------------------
// Record reading

Result<ValuePtr> Trial::ReadRecord(uint32_t file, uint64_t offset, uint64_t length,
                                   const std::string& tag, uint32_t tensor_id, int64_t step,
                                   Mode mode) {
  if (ValuePtr v = cache_->GetValue(file, offset)) return v;
  const std::string* rel;  // event_files_ never moves its strings
  uint64_t span;
  {
    std::shared_lock<std::shared_mutex> lock(mu_);
    rel = &event_files_[file];
    span = event_file_span_[file];
  }
  int reads = 0;
  auto value = ReadRecordAt(*rel, span, file, offset, length, tag, tensor_id, step, mode,
                            /*use_blocks=*/true, &reads);
  records_read_ += static_cast<uint64_t>(reads);
  if (value.ok()) cache_->PutValue(file, offset, value.value());
  return value;
}

Result<ValuePtr> Trial::ReadRecordAt(const std::string& rel, uint64_t span, uint32_t file,
                                     uint64_t offset, uint64_t length, const std::string& tag,
                                     uint32_t tensor_id, int64_t step, Mode mode, bool use_blocks,
                                     int* reads) {
  // Messages are built only on failure.
  auto context = [&](const Status& st) { return RecordError(rel, offset, st); };
  auto missing = [&]() { return MissingEventFileError(rel, tensor_id, step, mode); };
  if (rel.empty()) return missing();  // an index file with event_file_name ""
  if (length < io::kRecordOverhead) {
    return context(Corrupt("the index gives a record length of " + std::to_string(length) +
                           " bytes, less than the 16-byte framing"));
  }
  if (offset > static_cast<uint64_t>(INT64_MAX) - length) {
    return context(Corrupt("the index gives a record beyond any file size"));
  }
  std::string_view record;
  std::shared_ptr<const std::string> block;
  std::unique_ptr<char[]> own;  // a large record (no zero-filling)
  if (use_blocks && span <= kSmallEventFile && offset + length <= span && cache_->capacity() > 0) {
    block = cache_->GetBlock(file);
    if (!block && cache_->TouchFile(file)) {
      std::string b(static_cast<size_t>(span), '\0');
      Status st = storage_->ReadRange(rel, 0, span, b.data());
      ++*reads;
      if (st.ok()) {
        block = std::make_shared<const std::string>(std::move(b));
        cache_->PutBlock(file, block);
      } else if (st.code() == Code::kNotFound) {
        return missing();
      }  // else: read just the record below, for a precise error
    }
    if (block) record = std::string_view(*block).substr(offset, length);
  }
  if (record.empty()) {
    if (length > (uint64_t(1) << 24)) {
      // A large record: check the file really holds it before allocating that much.
      auto size = storage_->FileSize(rel);
      if (!size.ok()) return size.status().code() == Code::kNotFound ? missing() : context(size.status());
      if (offset > size.value() || length > size.value() - offset) {
        return TruncatedRecordError(rel, offset, length, tensor_id, step, Status());
      }
    }
    // Small records go through a buffer each thread keeps; the value is decoded out of it
    // before the next read on this thread.
    thread_local std::string scratch;
    char* buf;
    if (length <= kScratchRecordMax) {
      if (scratch.size() < length) scratch.resize(static_cast<size_t>(length));
      buf = scratch.data();
    } else {
      // A large record: its header must give the index's length before that much is allocated
      // and read (a sparse file can be any size on disk and still not hold such a record).
      unsigned char header[io::kRecordHeaderSize];
      Status hs = storage_->ReadRange(rel, offset, sizeof header, reinterpret_cast<char*>(header));
      ++*reads;
      if (!hs.ok()) {
        if (hs.code() == Code::kNotFound) return missing();
        if (hs.code() == Code::kCorrupt) return TruncatedRecordError(rel, offset, length, tensor_id, step, hs);
        return context(hs);
      }
      auto len = io::ParseRecordHeader(header);
      if (!len.ok()) return context(len.status());
      if (len.value() != length - io::kRecordOverhead) {
        return context(Corrupt("record length field says " + std::to_string(len.value()) +
                               " payload bytes but the index gives " +
                               std::to_string(length - io::kRecordOverhead)));
      }
      own.reset(new char[static_cast<size_t>(length)]);
      buf = own.get();
    }
    Status st = storage_->ReadRange(rel, offset, length, buf);
    ++*reads;
    if (!st.ok()) {
      if (st.code() == Code::kNotFound) return missing();
      if (st.code() == Code::kCorrupt) return TruncatedRecordError(rel, offset, length, tensor_id, step, st);
      return context(st);
    }
    record = std::string_view(buf, static_cast<size_t>(length));
  }
  auto payload = io::ParseRecord(record);
  if (!payload.ok()) return context(payload.status());
  auto value = DecodeValue(payload.value(), tag);
  if (!value.ok()) return context(value.status());
  return value;
}

Status Trial::RecordError(const std::string& rel, uint64_t offset, const Status& st) const {
  return Status(st.code(), "event file '" + storage_->Describe(rel) + "', record at offset " +
                               std::to_string(offset) + ": " + st.message());
}

Status Trial::TruncatedRecordError(const std::string& rel, uint64_t offset, uint64_t length,
                                   uint32_t tensor_id, int64_t step, const Status& read) const {
  // The file's real size, if it can be had (the read's own message otherwise).
  auto size = storage_->FileSize(rel);
  if (!size.ok()) return RecordError(rel, offset, read.ok() ? size.status() : read);
  return Corrupt("event file '" + storage_->Describe(rel) + "' is truncated: it has " +
                 std::to_string(size.value()) + " bytes, but the record of tensor '" +
                 TensorName(tensor_id) + "' at step " + std::to_string(step) + " spans bytes " +
                 std::to_string(offset) + " to " + std::to_string(offset + length) +
                 " (its index file says so)");
}

Status Trial::MissingEventFileError(const std::string& rel, uint32_t tensor_id, int64_t step,
                                    Mode mode) const {
  Status st = TensorUnavailableForStepError(TensorName(tensor_id), step, mode);
  if (rel.empty()) {
    return Status(st.code(), st.message() + " (its index file names no event file)");
  }
  return Status(st.code(), st.message() + " (its event file '" + storage_->Describe(rel) +
                               "' is missing)");
}

Result<std::optional<Trial::ValueInfo>> Trial::ReadRecordHead(uint32_t file, uint64_t offset,
                                                              uint64_t length,
                                                              const std::string& tag,
                                                              uint32_t tensor_id, int64_t step,
                                                              Mode mode) {
  const std::string* rel_ptr;  // event_files_ never moves its strings
  {
    std::shared_lock<std::shared_mutex> lock(mu_);
    rel_ptr = &event_files_[file];
  }
  const std::string& rel = *rel_ptr;
  if (rel.empty()) return MissingEventFileError(rel, tensor_id, step, mode);
  if (length <= kRecordHeadBytes || offset > static_cast<uint64_t>(INT64_MAX) - length) {
    return std::optional<ValueInfo>();  // the whole read reports it
  }
  char head[kRecordHeadBytes];
  Status st = storage_->ReadRange(rel, offset, kRecordHeadBytes, head);
  ++records_read_;
  if (!st.ok()) {
    if (st.code() == Code::kNotFound) return MissingEventFileError(rel, tensor_id, step, mode);
    if (st.code() == Code::kCorrupt) return TruncatedRecordError(rel, offset, length, tensor_id, step, st);
    return RecordError(rel, offset, st);
  }
  auto len = io::ParseRecordHeader(reinterpret_cast<const unsigned char*>(head));
  if (!len.ok()) return RecordError(rel, offset, len.status());
  if (len.value() != length - io::kRecordOverhead) {
    return RecordError(rel, offset,
                       Corrupt("record length field says " + std::to_string(len.value()) +
                               " payload bytes but the index gives " +
                               std::to_string(length - io::kRecordOverhead)));
  }
  io::TensorEventHead h;
  if (!io::DecodeTensorEventHead(
          std::string_view(head + io::kRecordHeaderSize, kRecordHeadBytes - io::kRecordHeaderSize),
          &h)) {
    return std::optional<ValueInfo>();
  }
  const DTypeInfo* info = GetDTypeInfo(h.dtype);
  size_t count = 1;
  for (int64_t d : h.shape) {
    if (d != 0 && count > SIZE_MAX / static_cast<size_t>(d)) return std::optional<ValueInfo>();
    count *= static_cast<size_t>(d);
  }
  if (h.tag != tag || info == nullptr || info->size == 0 ||
      (count != 0 && info->size > SIZE_MAX / count) || count * info->size != h.content_size) {
    return std::optional<ValueInfo>();  // decoding the whole record says what is wrong
  }
  ValueInfo out;
  out.dtype = info->dtype;
  out.shape = std::move(h.shape);
  return std::optional<ValueInfo>(std::move(out));
}

}  // namespace smd::trial
