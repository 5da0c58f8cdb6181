#include "impl/trial/record_reader.h"

#include <cstdint>
#include <cstring>

#include "impl/format/event.h"
#include "impl/format/record.h"
#include "impl/trial/trial.h"
#include "impl/trial/trial_internal.h"

namespace smd::trial {

RecordReader::RecordReader(io::Storage* storage, size_t cache_bytes)
    : storage_(storage), cache_(std::make_unique<RecordCache>(cache_bytes)) {}

RecordReader::~RecordReader() = default;

Result<ValuePtr> RecordReader::Read(const RecordLocation& at, const std::string& tag,
                                    const RecordOwner& who) {
  int reads = 0;
  auto value = ReadUncached(at, tag, who, /*use_blocks=*/true, &reads);
  reads_ += static_cast<uint64_t>(reads);
  if (value.ok()) cache_->PutValue(at.file, at.offset, RecordCache::TagKey(tag), value.value());
  return value;
}

Result<ValuePtr> RecordReader::ReadUncached(const RecordLocation& at, const std::string& tag,
                                           const RecordOwner& who, bool use_blocks, int* reads) {
  const std::string& rel = *at.rel;
  const uint32_t file = at.file;
  const uint64_t span = at.span, offset = at.offset, length = at.length;
  // Messages are built only on failure.
  auto context = [&](const Status& st) { return RecordError(rel, offset, st); };
  auto missing = [&]() { return MissingEventFileError(rel, who); };
  if (rel.empty()) return missing();  // an index file with event_file_name ""
  if (length < io::kRecordOverhead) {
    return context(Corrupt("the index gives a record length of " + std::to_string(length) +
                           " bytes, less than the 16-byte framing"));
  }
  if (length > static_cast<uint64_t>(INT64_MAX) ||
      offset > static_cast<uint64_t>(INT64_MAX) - length) {
    return context(Corrupt("the index gives a record beyond any file size"));
  }
  std::string_view record;
  std::shared_ptr<const std::string> block;
  std::unique_ptr<char[]> own;  // a large record (no zero-filling)
  if (use_blocks && span <= kSmallEventFile && offset + length <= span && cache_->capacity() > 0) {
    block = cache_->GetBlock(file);
    // A block read before a later index file named more of this event file (the job was still
    // writing it) ends short of this record: read the file again at the span known now.
    const bool stale = block && block->size() < offset + length;
    if (stale) block = nullptr;
    if (!block && (stale || cache_->TouchFile(file))) {
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
        return TruncatedRecordError(at, who, Status());
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
        if (hs.code() == Code::kCorrupt) return TruncatedRecordError(at, who, hs);
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
      if (st.code() == Code::kCorrupt) return TruncatedRecordError(at, who, st);
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

Status RecordReader::RecordError(const std::string& rel, uint64_t offset, const Status& st) const {
  return Status(st.code(), "event file '" + storage_->Describe(rel) + "', record at offset " +
                               std::to_string(offset) + ": " + st.message());
}

Status RecordReader::TruncatedRecordError(const RecordLocation& at, const RecordOwner& who,
                                          const Status& read) const {
  const std::string& rel = *at.rel;
  const uint64_t offset = at.offset, length = at.length;
  // The file's real size, if it can be had (the read's own message otherwise).
  auto size = storage_->FileSize(rel);
  if (!size.ok()) return RecordError(rel, offset, read.ok() ? size.status() : read);
  return Corrupt("event file '" + storage_->Describe(rel) + "' is truncated: it has " +
                 std::to_string(size.value()) + " bytes, but the record of tensor '" +
                 *who.tensor + "' at step " + std::to_string(who.step) + " spans bytes " +
                 std::to_string(offset) + " to " + std::to_string(offset + length) +
                 " (its index file says so)");
}

Status RecordReader::MissingEventFileError(const std::string& rel, const RecordOwner& who) const {
  Status st = TensorUnavailableForStepError(*who.tensor, who.step, who.mode);
  if (rel.empty()) {
    return Status(st.code(), st.message() + " (its index file names no event file)");
  }
  return Status(st.code(), st.message() + " (its event file '" + storage_->Describe(rel) +
                               "' is missing)");
}

Result<std::optional<ValueInfo>> RecordReader::ReadHead(const RecordLocation& at,
                                                        const std::string& tag,
                                                        const RecordOwner& who) {
  const std::string& rel = *at.rel;
  const uint64_t offset = at.offset, length = at.length;
  if (rel.empty()) return MissingEventFileError(rel, who);
  if (length <= kRecordHeadBytes || length > static_cast<uint64_t>(INT64_MAX) ||
      offset > static_cast<uint64_t>(INT64_MAX) - length) {
    return std::optional<ValueInfo>();  // the whole read reports it
  }
  char head[kRecordHeadBytes];
  Status st = storage_->ReadRange(rel, offset, kRecordHeadBytes, head);
  ++reads_;
  if (!st.ok()) {
    if (st.code() == Code::kNotFound) return MissingEventFileError(rel, who);
    if (st.code() == Code::kCorrupt) return TruncatedRecordError(at, who, st);
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
