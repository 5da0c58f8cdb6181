// Unit tests for impl/core/copy.{h,cc}: CopyForHandOff is memcpy, whatever the size and the
// alignment of either buffer, on both sides of the size where it switches to streaming stores.
#include "impl/core/copy.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

namespace smd {
namespace {

constexpr size_t kStreaming = 256u << 10;  // copy.cc's threshold for non-temporal stores
constexpr size_t kGuard = 64;              // bytes checked untouched on each side
constexpr unsigned char kFill = 0xa5;

std::vector<unsigned char> Pattern(size_t n, uint32_t seed) {
  std::vector<unsigned char> v(n);
  uint32_t x = seed;
  for (size_t i = 0; i < n; ++i) {
    x = x * 1664525u + 1013904223u;
    v[i] = static_cast<unsigned char>(x >> 24);
  }
  return v;
}

unsigned char* Align64(unsigned char* p) {
  return p + (64 - reinterpret_cast<uintptr_t>(p) % 64) % 64;
}

// Copies n bytes from src + src_off to dst + dst_off (offsets from 64-byte aligned storage) and
// checks the copy and the bytes around it.
void CheckCopy(size_t n, size_t dst_off, size_t src_off) {
  SCOPED_TRACE(testing::Message() << "n=" << n << " dst_off=" << dst_off
                                  << " src_off=" << src_off);
  const std::vector<unsigned char> data = Pattern(n + 1, static_cast<uint32_t>(n * 31 + dst_off));
  std::vector<unsigned char> src_store(n + src_off + 64 + 1);
  unsigned char* src_base = Align64(src_store.data());
  ASSERT_LE(src_base + src_off + n, src_store.data() + src_store.size());
  std::memcpy(src_base + src_off, data.data(), n);

  std::vector<unsigned char> dst_store(2 * kGuard + n + dst_off + 64, kFill);
  unsigned char* dst_base = Align64(dst_store.data());
  unsigned char* dst = dst_base + kGuard + dst_off;
  ASSERT_LE(dst + n + kGuard, dst_store.data() + dst_store.size());

  CopyForHandOff(dst, src_base + src_off, n);

  ASSERT_EQ(std::memcmp(dst, data.data(), n), 0);
  for (size_t i = 1; i <= kGuard; ++i) ASSERT_EQ(*(dst - i), kFill) << "before " << i;
  for (size_t i = 0; i < kGuard; ++i) ASSERT_EQ(dst[n + i], kFill) << "after " << i;
}

TEST(Copy, SmallSizesAndZero) {
  for (size_t n : {0, 1, 2, 15, 31, 32, 33, 63, 64, 127, 128, 129, 4096}) {
    for (size_t off : {0, 1, 31}) CheckCopy(n, off, 0);
  }
}

TEST(Copy, AroundTheStreamingThreshold) {
  for (size_t n : {kStreaming - 1, kStreaming, kStreaming + 1, kStreaming + 31, kStreaming + 127,
                   kStreaming + 128, kStreaming + 129}) {
    CheckCopy(n, 0, 0);
    CheckCopy(n, 1, 0);
  }
}

TEST(Copy, LargeCopiesAtEveryDestinationAlignment) {
  // The streaming copy aligns the destination with a plain head copy: each of the 32 phases.
  for (size_t dst_off = 0; dst_off < 32; ++dst_off) CheckCopy(kStreaming + 77, dst_off, 0);
  // The source is read unaligned whatever the destination.
  for (size_t src_off : {1, 3, 16, 31, 33}) {
    CheckCopy(kStreaming + 5, 0, src_off);
    CheckCopy(kStreaming + 5, 7, src_off);
  }
}

TEST(Copy, SeveralMegabytes) {
  CheckCopy((8u << 20) + 3, 5, 9);
}

}  // namespace
}  // namespace smd
