// Value: one decoded tensor read from an event file. Immutable once built and shared by
// reference count, so it can outlive the trial it came from (and be exported through DLPack).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "impl/core/dtype.h"
#include "impl/core/status.h"

namespace smd::trial {

class Value {
 public:
  Value(const Value&) = delete;
  Value& operator=(const Value&) = delete;
  ~Value();

  DType dtype() const { return dtype_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  size_t count() const { return count_; }
  // Bytes of data(): count * element size; 0 for strings.
  size_t nbytes() const { return nbytes_; }
  // C-contiguous little-endian elements, 64-byte aligned; never null (a valid empty buffer when
  // count is 0). For strings: a null pointer.
  const void* data() const { return data_; }
  // String tensors: element i (UTF-8 is not guaranteed: the bytes as stored).
  bool is_string() const { return dtype_ == DType::kString; }
  std::string_view string_at(size_t i) const;
  // Bytes this value holds in memory (for cache accounting).
  size_t memory_size() const;

  // A numeric value with `count` elements of `dtype` (not kString), uninitialized data. The
  // caller fills mutable_data() before sharing the value.
  static std::shared_ptr<Value> MakeNumeric(DType dtype, std::vector<int64_t> shape);
  static std::shared_ptr<Value> MakeStrings(std::vector<int64_t> shape,
                                            std::vector<std::string> strings);
  void* mutable_data() { return data_; }

 private:
  Value() = default;
  DType dtype_ = DType::kInvalid;
  std::vector<int64_t> shape_;
  size_t count_ = 0;
  size_t nbytes_ = 0;
  void* data_ = nullptr;  // aligned allocation (numeric)
  std::vector<std::string> strings_;
};

using ValuePtr = std::shared_ptr<const Value>;

// The dtype and shape of a saved value, without its elements.
struct ValueInfo {
  DType dtype = DType::kInvalid;
  std::vector<int64_t> shape;
};

// Decodes the Event payload of one record (FORMAT.md §5-6) into a Value. `expected_tag`, when
// not empty, must equal the record's tag (a wrong offset in an index shows up here).
// Every dtype smd knows is decoded with its own type (int8 stays int8; int16, uint16/32/64,
// complex64 and bfloat16 included); strings are the DT_INVALID + string_val form smdebug writes.
// Errors: kCorrupt (malformed event, wrong tag, content size not matching the shape),
// kUnsupported (a dtype smd does not know, e.g. quantized or float8 types).
Result<ValuePtr> DecodeValue(std::string_view payload, std::string_view expected_tag);

}  // namespace smd::trial
