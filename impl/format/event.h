// The Event / Summary / TensorProto messages of smdebug's event files: a zero-copy encoder for
// tensor records and a bounds-checked decoder.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "impl/core/dtype.h"
#include "impl/core/mode.h"
#include "impl/core/status.h"
#include "impl/format/record.h"

namespace smd::io {

// The most dimensions a tensor may have: the hook refuses more, the decoder refuses records with
// more (each costs memory and printing depth; numpy itself stops at 32, or 64 in numpy 2).
constexpr size_t kMaxTensorDims = 255;

struct TensorEventFields {
  double wall_time = 0;
  int64_t step = 0;            // the writer's global step (Event.step)
  std::string_view tag;        // Summary.Value.tag: tensor name, reduction tag or scalar/<name>
  DType dtype = DType::kFloat32;
  const int64_t* shape = nullptr;
  size_t ndim = 0;
  Mode mode = Mode::kGlobal;   // PluginData "mode"
  int64_t mode_step = 0;       // PluginData "mode_step"
};

// Encodes one complete record (framing included) for a tensor whose tensor_content is
// `content` (C-order little-endian element bytes). Everything before the content goes to
// *prefix and everything after it to *suffix (both are overwritten), so that
// prefix + content + suffix is the record; the content itself is not copied.
void EncodeTensorRecord(const TensorEventFields& f, std::string_view content, PayloadCrcKind crc,
                        std::string* prefix, std::string* suffix);

// The same, appending to *out: the prefix, then (with inline_content) the content, then the
// suffix. *prefix_len and *suffix_len give the sizes of the parts around the content. Without
// inline_content, `content` is only read for a real payload CRC and the caller places it between
// the two parts. No allocation beyond the growth of *out.
void AppendTensorRecord(const TensorEventFields& f, std::string_view content, PayloadCrcKind crc,
                        bool inline_content, std::string* out, size_t* prefix_len,
                        size_t* suffix_len);

// A complete record for a 1-D string tensor of n elements (dtype left unset, one string_val entry
// per element, shape [n]), as smdebug writes numpy string arrays; appended to *out.
void AppendStringTensorRecord(const TensorEventFields& f, const std::string_view* values, size_t n,
                              PayloadCrcKind crc, std::string* out);
// The same into *record (overwritten).
void EncodeStringTensorRecord(const TensorEventFields& f, const std::vector<std::string>& values,
                              PayloadCrcKind crc, std::string* record);

// What the decoder extracts from one Event payload. Views point into the payload.
struct DecodedEvent {
  double wall_time = 0;
  int64_t step = 0;
  bool has_summary_value = false;
  std::string_view tag;
  enum class ValueKind { kNone, kTensor, kSimpleValue, kHisto, kOther } kind = ValueKind::kNone;
  float simple_value = 0;
  // TensorProto
  int dtype = 0;  // raw DataType number
  std::vector<int64_t> shape;
  std::string_view tensor_content;
  std::vector<std::string_view> string_val;
  std::vector<float> float_val;
  std::vector<double> double_val;
  std::vector<int32_t> int_val;  // also half_val's carrier (field 13)
  std::vector<int32_t> half_val;
  std::vector<int64_t> int64_val;
  std::vector<uint8_t> bool_val;
  // SummaryMetadata plugin entries smdebug writes
  std::optional<int64_t> mode_step;
  std::optional<int> mode;
};

// Decodes an Event payload. Errors: kCorrupt naming the malformed field.
Status DecodeEvent(std::string_view payload, DecodedEvent* out);

// The start of a tensor event, up to its tensor_content: enough to know what a record holds
// without reading the tensor's bytes. Views point into the decoded bytes.
struct TensorEventHead {
  std::string_view tag;
  int dtype = 0;  // raw DataType number
  std::vector<int64_t> shape;
  uint64_t content_size = 0;  // the declared length of tensor_content
};

// Decodes the first bytes of an Event payload (any prefix of it) as far as tensor_content.
// Returns true when the tag, dtype and shape came before tensor_content within `prefix`; false
// when the prefix ends first, the event is laid out otherwise (no tensor_content, e.g. strings),
// or the bytes are malformed: decode the whole event then (DecodeEvent says what is wrong).
bool DecodeTensorEventHead(std::string_view prefix, TensorEventHead* out);

}  // namespace smd::io
