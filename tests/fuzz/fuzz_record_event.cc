// Fuzzes the event-file decoders: TFRecord framing (io::ParseRecord), the Event message
// (io::DecodeEvent), the head-only decoder (io::DecodeTensorEventHead) and the value decoder the
// reader uses (trial::DecodeValue). The input is tried as a whole record and, framed with a valid
// length CRC, as a payload, so that the decoders see inputs the CRC would otherwise stop.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "impl/format/event.h"
#include "impl/format/record.h"
#include "impl/trial/value.h"

namespace {

// Reads every byte a view points at, so that the sanitizer sees a view that escaped its buffer.
size_t Touch(std::string_view v) {
  size_t h = 0;
  for (char c : v) h += static_cast<unsigned char>(c);
  return h;
}

void DecodePayload(std::string_view payload) {
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
  return 0;
}
