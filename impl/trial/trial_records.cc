// Trial: locating event-file records for the record reader.
#include "impl/trial/trial.h"

#include <shared_mutex>

#include "impl/trial/trial_internal.h"

namespace smd::trial {

// ---------------------------------------------------------------------------------------------
// Record reading: where a record is comes from the trial's tables, the reading is the
// RecordReader's (impl/trial/record_reader.h).

RecordLocation Trial::LocateRecord(uint32_t file, uint64_t offset, uint64_t length) const {
  RecordLocation at;
  at.file = file;
  at.offset = offset;
  at.length = length;
  std::shared_lock<std::shared_mutex> lock(mu_);
  at.rel = &tables_.event_file(file);
  at.span = tables_.event_file_span(file);
  return at;
}

Result<ValuePtr> Trial::ReadRecord(uint32_t file, uint64_t offset, uint64_t length,
                                   const std::string& tag, uint32_t tensor_id, int64_t step,
                                   Mode mode) {
  if (ValuePtr v = records_->cache().GetValue(file, offset, RecordCache::TagKey(tag))) return v;
  return records_->Read(LocateRecord(file, offset, length), tag,
                        RecordOwner{&TensorName(tensor_id), step, mode});
}

}  // namespace smd::trial
