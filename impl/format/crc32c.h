// CRC-32C (Castagnoli) and TFRecord's masking. SSE4.2 instructions where the CPU has them, a
// table-driven fallback where not.
#pragma once

#include <cstddef>
#include <cstdint>

namespace smd::io {

// Extends `crc` (the CRC of the bytes before, 0 to start) over n bytes. Standard CRC-32C:
// Crc32c("123456789", 9) == 0xE3069283.
uint32_t Crc32c(const void* data, size_t n, uint32_t crc = 0);
// The portable implementation, always available (tests compare both).
uint32_t Crc32cPortable(const void* data, size_t n, uint32_t crc = 0);
// True if Crc32c uses the SSE4.2 instruction.
bool Crc32cIsHardware();

constexpr uint32_t kCrcMaskDelta = 0xa282ead8u;
inline uint32_t MaskCrc(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + kCrcMaskDelta; }
inline uint32_t UnmaskCrc(uint32_t masked) {
  uint32_t rot = masked - kCrcMaskDelta;
  return (rot >> 17) | (rot << 15);
}

}  // namespace smd::io
