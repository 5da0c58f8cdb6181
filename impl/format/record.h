// TFRecord framing as smdebug writes it:
//   u64 LE payload length | u32 LE masked CRC32C(length bytes) | payload | u32 LE payload "CRC".
// smdebug's events/ files carry a constant in place of the payload CRC (kSmdebugPayloadCrc);
// TensorBoard files carry the real masked CRC32C of the payload.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "impl/core/status.h"

namespace smd::io {

constexpr size_t kRecordHeaderSize = 12;
constexpr size_t kRecordFooterSize = 4;
constexpr size_t kRecordOverhead = kRecordHeaderSize + kRecordFooterSize;
// MaskCrc(Crc32c("0x12345678")): what smdebug writes as every events/ record's payload CRC.
constexpr uint32_t kSmdebugPayloadCrc = 0x062dc0b3u;

void EncodeRecordHeader(uint64_t payload_len, unsigned char out[kRecordHeaderSize]);
void EncodeFixed32(uint32_t v, unsigned char out[4]);
uint32_t DecodeFixed32(const unsigned char* p);
uint64_t DecodeFixed64(const unsigned char* p);

enum class PayloadCrcKind { kSmdebugConstant, kReal };

// Frames a payload into a complete record appended to *out.
void AppendRecord(std::string* out, std::string_view payload, PayloadCrcKind kind);

// Reads the payload length from a 12-byte header, checking the length CRC.
// Errors: kCorrupt ("record length CRC mismatch ...").
Result<uint64_t> ParseRecordHeader(const unsigned char* header);

// Checks one complete record held in `data` (exactly header + payload + footer) and returns the
// payload. The payload CRC is accepted if it is smdebug's constant or the real CRC; with
// require_real_crc only the real one is. Errors: kCorrupt naming what is wrong.
Result<std::string_view> ParseRecord(std::string_view data, bool require_real_crc = false);

}  // namespace smd::io
