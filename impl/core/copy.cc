#include "impl/core/copy.h"

#include <cstdint>
#include <cstring>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#define SMD_COPY_X86 1
#endif

namespace smd {
namespace {

constexpr size_t kStreamingThreshold = 256u << 10;

#ifdef SMD_COPY_X86
bool HasAvx2() {
  unsigned eax, ebx, ecx, edx;
  if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return false;
  if ((ebx & bit_AVX2) == 0) return false;
  // The OS must save the YMM state.
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx) || (ecx & bit_OSXSAVE) == 0) return false;
  uint32_t xcr0_lo, xcr0_hi;
  __asm__("xgetbv" : "=a"(xcr0_lo), "=d"(xcr0_hi) : "c"(0));
  return (xcr0_lo & 6) == 6;
}

__attribute__((target("avx2"))) void StreamCopy(char* d, const char* s, size_t n) {
  // Align the destination to 32 bytes with a plain copy, stream the middle, copy the tail.
  size_t head = (32 - (reinterpret_cast<uintptr_t>(d) & 31)) & 31;
  std::memcpy(d, s, head);
  d += head;
  s += head;
  n -= head;
  size_t i = 0;
  for (; i + 128 <= n; i += 128) {
    __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i));
    __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i + 32));
    __m256i c = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i + 64));
    __m256i e = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i + 96));
    _mm256_stream_si256(reinterpret_cast<__m256i*>(d + i), a);
    _mm256_stream_si256(reinterpret_cast<__m256i*>(d + i + 32), b);
    _mm256_stream_si256(reinterpret_cast<__m256i*>(d + i + 64), c);
    _mm256_stream_si256(reinterpret_cast<__m256i*>(d + i + 96), e);
  }
  _mm_sfence();  // the writer thread reads this buffer after the hand-off
  std::memcpy(d + i, s + i, n - i);
}
#endif

}  // namespace

void CopyForHandOff(void* dst, const void* src, size_t n) {
#ifdef SMD_COPY_X86
  static const bool avx2 = HasAvx2();
  if (avx2 && n >= kStreamingThreshold) {
    StreamCopy(static_cast<char*>(dst), static_cast<const char*>(src), n);
    return;
  }
#endif
  std::memcpy(dst, src, n);
}

}  // namespace smd
