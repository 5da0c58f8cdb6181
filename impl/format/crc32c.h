// CRC-32C (Castagnoli) and TFRecord's masking. SSE4.2 instructions where the CPU has them (three
// chains side by side on large buffers), a table-driven fallback where not.
#pragma once

#include <cstddef>
#include <cstdint>

namespace smd::io {

// Extends `crc` (the CRC of the bytes before, 0 to start) over n bytes. Standard CRC-32C:
// Crc32c("123456789", 9) == 0xE3069283.
uint32_t Crc32c(const void* data, size_t n, uint32_t crc = 0);
// The portable implementation, always available (tests compare both).
uint32_t Crc32cPortable(const void* data, size_t n, uint32_t crc = 0);
// The SSE4.2 instruction in one dependent chain (Crc32c runs three side by side on buffers of
// 6 KiB and more); the benchmark and the tests compare both.
uint32_t Crc32cOneChain(const void* data, size_t n, uint32_t crc = 0);
// The CRC of the bytes of `crc` followed by `bytes` zero bytes, computed without reading them
// (the arithmetic that joins interleaved chains; tests check it against real zeros).
uint32_t Crc32cShift(uint32_t crc, size_t bytes);
// True if Crc32c uses the SSE4.2 instruction.
bool Crc32cIsHardware();

constexpr uint32_t kCrcMaskDelta = 0xa282ead8u;
inline uint32_t MaskCrc(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + kCrcMaskDelta; }
inline uint32_t UnmaskCrc(uint32_t masked) {
  uint32_t rot = masked - kCrcMaskDelta;
  return (rot >> 17) | (rot << 15);
}

}  // namespace smd::io
