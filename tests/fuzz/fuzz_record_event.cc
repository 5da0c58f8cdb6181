// Fuzzes the event-file decoders: TFRecord framing (io::ParseRecord), the Event message
// (io::DecodeEvent), the head-only decoder (io::DecodeTensorEventHead) and the value decoder the
// reader uses (trial::DecodeValue). The input is tried as a whole record and, framed with a valid
// length CRC, as a payload, so that the decoders see inputs the CRC would otherwise stop.
//
// Differential oracle: the protoc-c codec generated from impl/format/proto/smd_event.proto.
// Every payload is decoded by both (they must agree wherever protoc-c accepts it), and the input
// also drives smd's encoder, whose record protoc-c must decode to exactly the fields given and
// re-encode byte for byte. A disagreement aborts with what differs.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "impl/format/event.h"
#include "impl/format/record.h"
#include "impl/trial/value.h"
#include "tests/impl/format/pb_oracle.h"

namespace {

// Reads every byte a view points at, so that the sanitizer sees a view that escaped its buffer.
size_t Touch(std::string_view v) {
  size_t h = 0;
  for (char c : v) h += static_cast<unsigned char>(c);
  return h;
}

[[noreturn]] void Disagree(const std::string& what) {
  std::fprintf(stderr, "event codec oracle: %s\n", what.c_str());
  std::abort();
}

void DecodePayload(std::string_view payload) {
  std::string diff = smd::pb_oracle::CheckDecode(payload);
  if (!diff.empty()) Disagree(diff);
  smd::io::DecodedEvent ev;
  if (smd::io::DecodeEvent(payload, &ev).ok()) {
    volatile size_t h = Touch(ev.tag) + Touch(ev.tensor_content);
    for (std::string_view s : ev.string_val) h = h + Touch(s);
    (void)h;
  }
  smd::io::TensorEventHead head;
  if (smd::io::DecodeTensorEventHead(payload, &head)) {
    volatile size_t h = Touch(head.tag) + head.shape.size();
    (void)h;
  }
  // Every prefix decodes without reading past it (what the reader does with a record's first
  // 4 KiB); a few lengths are enough.
  for (size_t n : {size_t(0), payload.size() / 3, payload.size() / 2}) {
    smd::io::DecodeTensorEventHead(payload.substr(0, n), &head);
  }
  auto value = smd::trial::DecodeValue(payload, "");
  if (value.ok()) {
    const smd::trial::Value& v = *value.value();
    volatile size_t h = v.nbytes() + v.count();
    if (v.is_string()) {
      for (size_t i = 0; i < v.count(); ++i) h = h + Touch(v.string_at(i));
    } else if (v.nbytes() > 0) {
      h = h + static_cast<const unsigned char*>(v.data())[v.nbytes() - 1];
    }
    (void)h;
  }
  (void)smd::trial::DecodeValue(payload, "x");
}

// Takes bytes from the front of the input as the fields of a tensor event.
struct Bytes {
  std::string_view rest;
  uint64_t Take(size_t n) {
    uint64_t v = 0;
    n = std::min(n, rest.size());
    std::memcpy(&v, rest.data(), n);
    rest.remove_prefix(n);
    return v;
  }
};

// Encodes a tensor event (numeric or string) whose fields come from the input, and checks the
// record with protoc-c.
void EncodeFromInput(std::string_view input) {
  static const smd::DType kDTypes[] = {
      smd::DType::kFloat32, smd::DType::kFloat64, smd::DType::kInt32,     smd::DType::kUInt8,
      smd::DType::kInt16,   smd::DType::kInt8,    smd::DType::kComplex64, smd::DType::kInt64,
      smd::DType::kBool,    smd::DType::kBFloat16, smd::DType::kUInt16,   smd::DType::kComplex128,
      smd::DType::kFloat16, smd::DType::kUInt32,  smd::DType::kUInt64};
  static const smd::Mode kModes[] = {smd::Mode::kTrain, smd::Mode::kEval, smd::Mode::kPredict,
                                     smd::Mode::kGlobal};
  Bytes b{input};
  uint64_t flags = b.Take(1);
  smd::io::TensorEventFields f;
  double wall = 0;
  uint64_t wall_bits = b.Take(8);
  std::memcpy(&wall, &wall_bits, 8);
  if (wall == 0) wall = 0;  // smd and smdebug both leave out a -0.0 wall time; protoc-c would not
  f.wall_time = wall;
  f.step = static_cast<int64_t>(b.Take(flags & 1 ? 8 : 1));
  f.mode = kModes[b.Take(1) % 4];
  f.mode_step = static_cast<int64_t>(b.Take(flags & 2 ? 8 : 1));
  f.dtype = kDTypes[b.Take(1) % (sizeof kDTypes / sizeof kDTypes[0])];
  size_t ndim = b.Take(1) % 6;
  std::vector<int64_t> shape;
  for (size_t i = 0; i < ndim; ++i) shape.push_back(static_cast<int64_t>(b.Take(flags & 4 ? 4 : 1)));
  f.shape = shape.data();
  f.ndim = shape.size();
  size_t tag_len = 1 + b.Take(1) % 24;  // tags are never empty
  std::string tag(b.rest.substr(0, tag_len));
  if (tag.empty()) tag = "t";
  b.rest.remove_prefix(std::min(tag_len, b.rest.size()));
  f.tag = tag;
  std::string_view content = b.rest;
  auto crc = flags & 8 ? smd::io::PayloadCrcKind::kReal : smd::io::PayloadCrcKind::kSmdebugConstant;

  std::string out;
  size_t p, s;
  smd::io::AppendTensorRecord(f, content, crc, /*inline_content=*/true, &out, &p, &s);
  auto payload = smd::io::ParseRecord(out, crc == smd::io::PayloadCrcKind::kReal);
  if (!payload.ok()) Disagree("smd cannot parse the record it encoded: " + payload.status().message());
  std::string diff = smd::pb_oracle::CheckEncoded(payload.value(), f, content, nullptr);
  if (!diff.empty()) Disagree("encoded tensor: " + diff);

  // The same fields as a string tensor: the content split at NUL bytes.
  std::vector<std::string> strings;
  size_t start = 0;
  for (size_t i = 0; i <= content.size() && strings.size() < 64; ++i) {
    if (i == content.size() || content[i] == '\0') {
      strings.emplace_back(content.substr(start, i - start));
      start = i + 1;
    }
  }
  std::string record;
  smd::io::EncodeStringTensorRecord(f, strings, crc, &record);
  payload = smd::io::ParseRecord(record, crc == smd::io::PayloadCrcKind::kReal);
  if (!payload.ok()) Disagree("smd cannot parse the string record it encoded");
  diff = smd::pb_oracle::CheckEncoded(payload.value(), f, {}, &strings);
  if (!diff.empty()) Disagree("encoded string tensor: " + diff);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  for (bool real : {false, true}) {
    auto payload = smd::io::ParseRecord(input, real);
    if (payload.ok()) DecodePayload(payload.value());
  }
  if (size >= smd::io::kRecordHeaderSize) {
    auto len = smd::io::ParseRecordHeader(data);
    (void)len;
  }
  std::string framed;
  smd::io::AppendRecord(&framed, input, smd::io::PayloadCrcKind::kSmdebugConstant);
  auto payload = smd::io::ParseRecord(framed);
  if (payload.ok()) DecodePayload(payload.value());
  EncodeFromInput(input);
  return 0;
}
