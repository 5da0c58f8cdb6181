// Reading a trial's event-file records: a whole record decoded into a Value (through the value
// cache; a small event file is read whole once and kept as a block), or only a large record's
// start (its dtype and shape). It knows nothing of the trial's tables: callers say where a record
// is and whose it is (for the messages of failed reads: the event file, the offset, the tensor
// and step).
//
// Thread safety: every method may be called from any thread concurrently.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "impl/core/mode.h"
#include "impl/core/status.h"
#include "impl/storage/storage.h"
#include "impl/trial/record_cache.h"
#include "impl/trial/value.h"

namespace smd::trial {

// Where a record is.
struct RecordLocation {
  uint32_t file = 0;                // the event file's id (the caches' key)
  const std::string* rel = nullptr;  // its path in the trial; "" when the index named none
  uint64_t span = 0;                // bytes of the file that the index's records cover
  uint64_t offset = 0;
  uint64_t length = 0;              // the whole record, framing included
};

// Whose record it is, for messages.
struct RecordOwner {
  const std::string* tensor = nullptr;
  int64_t step = 0;
  Mode mode = Mode::kGlobal;
};

class RecordReader {
 public:
  // storage: the trial's, which outlives the reader.
  RecordReader(io::Storage* storage, size_t cache_bytes);
  ~RecordReader();
  RecordReader(const RecordReader&) = delete;
  RecordReader& operator=(const RecordReader&) = delete;

  // The value of the record whose payload is the event tagged `tag`, read, decoded and cached.
  // Callers look in cache() first (then a cached record need not even be located). Errors: TensorUnavailableForStep naming a missing event file, kCorrupt (a
  // truncated file, a bad length or CRC), the storage's errors, each naming file and offset.
  Result<ValuePtr> Read(const RecordLocation& at, const std::string& tag, const RecordOwner& who);
  // The same without the value cache (bulk readers look it up and fill it once for many
  // records); use_blocks: whole small files may be read and cached. *reads counts the storage
  // reads done, which the caller adds with CountReads.
  Result<ValuePtr> ReadUncached(const RecordLocation& at, const std::string& tag,
                                const RecordOwner& who, bool use_blocks, int* reads);
  // The dtype and shape of a large record from its first bytes; nullopt when they do not
  // suffice (then read it whole).
  Result<std::optional<ValueInfo>> ReadHead(const RecordLocation& at, const std::string& tag,
                                            const RecordOwner& who);

  RecordCache& cache() { return *cache_; }
  void CountReads(uint64_t n) { reads_ += n; }
  uint64_t reads() const { return reads_.load(); }

 private:
  // The event file and record offset in front of `st`.
  Status RecordError(const std::string& rel, uint64_t offset, const Status& st) const;
  // TensorUnavailableForStep naming the missing event file.
  Status MissingEventFileError(const std::string& rel, const RecordOwner& who) const;
  // A record the index places (partly) beyond the end of its event file: names the file once,
  // its real size, the record's byte range, and the tensor and step. `read` is the failed read's
  // status (ok when the size was checked before reading).
  Status TruncatedRecordError(const RecordLocation& at, const RecordOwner& who,
                              const Status& read) const;

  io::Storage* const storage_;
  std::unique_ptr<RecordCache> cache_;
  std::atomic<uint64_t> reads_{0};
};

}  // namespace smd::trial
