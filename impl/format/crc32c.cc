#include "impl/format/crc32c.h"

#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <nmmintrin.h>
#define SMD_CRC_X86 1
#endif

namespace smd::io {
namespace {

constexpr uint32_t kPoly = 0x82f63b78u;  // reflected Castagnoli polynomial

struct Tables {
  uint32_t t[8][256];
  Tables() {
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ kPoly : c >> 1;
      t[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; ++i) {
      for (int s = 1; s < 8; ++s) t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xff];
    }
  }
};

const Tables& GetTables() {
  static const Tables tables;
  return tables;
}

// Joining CRCs of consecutive blocks. The CRC register after bytes D, started from state s, is
// s * x^(8|D|) + (the register after D started from 0), modulo the polynomial (arithmetic in
// GF(2), reflected: bit 31 is the coefficient of x^0). So three chains over three consecutive
// blocks can run side by side (the instruction's latency is 3 cycles, its throughput 1 a cycle)
// and be joined by two multiplications by x^(8 * block).
uint32_t MulModPoly(uint32_t a, uint32_t b) {
  uint32_t product = 0;
  for (uint32_t bit = 1u << 31; bit != 0; bit >>= 1) {
    if (a & bit) product ^= b;
    b = (b & 1) ? (b >> 1) ^ kPoly : b >> 1;  // b *= x
  }
  return product;
}

// x^n modulo the polynomial.
uint32_t XPowModPoly(uint64_t n) {
  uint32_t result = 1u << 31;   // x^0
  uint32_t square = 1u << 30;   // x^(2^0)
  while (n != 0) {
    if (n & 1) result = MulModPoly(result, square);
    square = MulModPoly(square, square);
    n >>= 1;
  }
  return result;
}

#ifdef SMD_CRC_X86
// Multiplication by a fixed x^(8 * bytes), as four table lookups (it is linear in the state).
struct Shift {
  uint32_t t[4][256];
  explicit Shift(size_t bytes) {
    const uint32_t k = XPowModPoly(8 * static_cast<uint64_t>(bytes));
    for (int j = 0; j < 4; ++j) {
      for (uint32_t i = 0; i < 256; ++i) t[j][i] = MulModPoly(k, i << (8 * j));
    }
  }
  uint32_t Apply(uint32_t state) const {
    return t[0][state & 0xff] ^ t[1][(state >> 8) & 0xff] ^ t[2][(state >> 16) & 0xff] ^
           t[3][state >> 24];
  }
};

// Block sizes of the three-chain rounds: the large one for the bulk of big buffers, the small one
// for what is left (a round of three small blocks costs about as much as the join).
constexpr size_t kLargeBlock = 32 * 1024;
constexpr size_t kSmallBlock = 2 * 1024;

const Shift& LargeShift() {
  static const Shift shift(kLargeBlock);
  return shift;
}
const Shift& SmallShift() {
  static const Shift shift(kSmallBlock);
  return shift;
}

__attribute__((target("sse4.2"))) inline uint64_t OneChain(const unsigned char* p, size_t n,
                                                           uint64_t c) {
  for (; n >= 8; n -= 8, p += 8) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    c = _mm_crc32_u64(c, v);
  }
  return c;
}

// Three consecutive blocks of `block` bytes (a multiple of 8), joined.
__attribute__((target("sse4.2"))) inline uint64_t ThreeChains(const unsigned char* p, size_t block,
                                                              uint64_t c0, const Shift& shift) {
  const unsigned char* p1 = p + block;
  const unsigned char* p2 = p1 + block;
  uint64_t c1 = 0, c2 = 0;
  for (size_t i = 0; i < block; i += 8) {
    uint64_t v0, v1, v2;
    std::memcpy(&v0, p + i, 8);
    std::memcpy(&v1, p1 + i, 8);
    std::memcpy(&v2, p2 + i, 8);
    c0 = _mm_crc32_u64(c0, v0);
    c1 = _mm_crc32_u64(c1, v1);
    c2 = _mm_crc32_u64(c2, v2);
  }
  uint32_t joined = shift.Apply(static_cast<uint32_t>(c0)) ^ static_cast<uint32_t>(c1);
  return shift.Apply(joined) ^ static_cast<uint32_t>(c2);
}

__attribute__((target("sse4.2"))) uint32_t Crc32cSse42(const void* data, size_t n, uint32_t crc,
                                                       bool interleave) {
  const unsigned char* p = static_cast<const unsigned char*>(data);
  uint64_t c = ~crc;
  while (n > 0 && (reinterpret_cast<uintptr_t>(p) & 7) != 0) {
    c = _mm_crc32_u8(static_cast<uint32_t>(c), *p++);
    --n;
  }
  if (interleave) {
    for (; n >= 3 * kLargeBlock; n -= 3 * kLargeBlock, p += 3 * kLargeBlock) {
      c = ThreeChains(p, kLargeBlock, c, LargeShift());
    }
    for (; n >= 3 * kSmallBlock; n -= 3 * kSmallBlock, p += 3 * kSmallBlock) {
      c = ThreeChains(p, kSmallBlock, c, SmallShift());
    }
  }
  c = OneChain(p, n, c);
  p += n & ~size_t{7};
  n &= 7;
  while (n > 0) {
    c = _mm_crc32_u8(static_cast<uint32_t>(c), *p++);
    --n;
  }
  return ~static_cast<uint32_t>(c);
}

bool DetectSse42() {
  unsigned eax, ebx, ecx, edx;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return false;
  return (ecx & bit_SSE4_2) != 0;
}
#endif

}  // namespace

uint32_t Crc32cPortable(const void* data, size_t n, uint32_t crc) {
  const Tables& tb = GetTables();
  const unsigned char* p = static_cast<const unsigned char*>(data);
  uint32_t c = ~crc;
  while (n >= 8) {
    uint32_t lo, hi;
    std::memcpy(&lo, p, 4);
    std::memcpy(&hi, p + 4, 4);
    lo ^= c;
    c = tb.t[7][lo & 0xff] ^ tb.t[6][(lo >> 8) & 0xff] ^ tb.t[5][(lo >> 16) & 0xff] ^
        tb.t[4][lo >> 24] ^ tb.t[3][hi & 0xff] ^ tb.t[2][(hi >> 8) & 0xff] ^
        tb.t[1][(hi >> 16) & 0xff] ^ tb.t[0][hi >> 24];
    p += 8;
    n -= 8;
  }
  while (n-- > 0) c = (c >> 8) ^ tb.t[0][(c ^ *p++) & 0xff];
  return ~c;
}

bool Crc32cIsHardware() {
#ifdef SMD_CRC_X86
  static const bool hw = DetectSse42();
  return hw;
#else
  return false;
#endif
}

uint32_t Crc32c(const void* data, size_t n, uint32_t crc) {
#ifdef SMD_CRC_X86
  if (Crc32cIsHardware()) return Crc32cSse42(data, n, crc, /*interleave=*/true);
#endif
  return Crc32cPortable(data, n, crc);
}

uint32_t Crc32cOneChain(const void* data, size_t n, uint32_t crc) {
#ifdef SMD_CRC_X86
  if (Crc32cIsHardware()) return Crc32cSse42(data, n, crc, /*interleave=*/false);
#endif
  return Crc32cPortable(data, n, crc);
}

uint32_t Crc32cShift(uint32_t crc, size_t bytes) {
  // The register is the complement of the CRC; shifting it by zero bytes is the same as
  // extending the CRC over that many zeros.
  return ~MulModPoly(XPowModPoly(8 * static_cast<uint64_t>(bytes)), ~crc);
}

}  // namespace smd::io
