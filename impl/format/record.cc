#include "impl/format/record.h"

#include <cstring>

#include "impl/format/crc32c.h"

namespace smd::io {

void EncodeFixed32(uint32_t v, unsigned char out[4]) {
  out[0] = static_cast<unsigned char>(v);
  out[1] = static_cast<unsigned char>(v >> 8);
  out[2] = static_cast<unsigned char>(v >> 16);
  out[3] = static_cast<unsigned char>(v >> 24);
}

uint32_t DecodeFixed32(const unsigned char* p) {
  return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) |
         (static_cast<uint32_t>(p[2]) << 16) | (static_cast<uint32_t>(p[3]) << 24);
}

uint64_t DecodeFixed64(const unsigned char* p) {
  return static_cast<uint64_t>(DecodeFixed32(p)) | (static_cast<uint64_t>(DecodeFixed32(p + 4)) << 32);
}

void EncodeRecordHeader(uint64_t payload_len, unsigned char out[kRecordHeaderSize]) {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<unsigned char>(payload_len >> (8 * i));
  EncodeFixed32(MaskCrc(Crc32c(out, 8)), out + 8);
}

void AppendRecord(std::string* out, std::string_view payload, PayloadCrcKind kind) {
  unsigned char header[kRecordHeaderSize];
  EncodeRecordHeader(payload.size(), header);
  out->append(reinterpret_cast<const char*>(header), sizeof header);
  out->append(payload.data(), payload.size());
  uint32_t crc = kind == PayloadCrcKind::kReal ? MaskCrc(Crc32c(payload.data(), payload.size()))
                                               : kSmdebugPayloadCrc;
  unsigned char footer[4];
  EncodeFixed32(crc, footer);
  out->append(reinterpret_cast<const char*>(footer), 4);
}

Result<uint64_t> ParseRecordHeader(const unsigned char* header) {
  uint32_t expect = MaskCrc(Crc32c(header, 8));
  uint32_t got = DecodeFixed32(header + 8);
  if (expect != got) {
    // The stored bytes are not quoted: a file that is not a record file (anything a broken or
    // hostile trial points at) must not leak its content through error messages.
    return Corrupt("record length CRC mismatch (the record header is not a valid TFRecord header)");
  }
  return DecodeFixed64(header);
}

Result<std::string_view> ParseRecord(std::string_view data, bool require_real_crc) {
  if (data.size() < kRecordOverhead) {
    return Corrupt("record of " + std::to_string(data.size()) +
                   " bytes is shorter than the 16-byte framing");
  }
  const unsigned char* p = reinterpret_cast<const unsigned char*>(data.data());
  SMD_ASSIGN_OR_RETURN(uint64_t len, ParseRecordHeader(p));
  if (len != data.size() - kRecordOverhead) {
    return Corrupt("record length field says " + std::to_string(len) + " payload bytes but " +
                   std::to_string(data.size() - kRecordOverhead) + " are there");
  }
  std::string_view payload = data.substr(kRecordHeaderSize, len);
  uint32_t footer = DecodeFixed32(p + kRecordHeaderSize + len);
  if (footer == kSmdebugPayloadCrc && !require_real_crc) return payload;
  uint32_t real = MaskCrc(Crc32c(payload.data(), payload.size()));
  if (footer != real) return Corrupt("record payload CRC mismatch");
  return payload;
}

}  // namespace smd::io
