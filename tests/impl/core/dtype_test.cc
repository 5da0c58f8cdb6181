// Unit tests for impl/core/dtype.{h,cc}: the dtype table, name and DLPack lookups, the
// float16/bfloat16 conversions and LoadAsDouble.
#include "impl/core/dtype.h"

#include <gtest/gtest.h>

#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "smd/dlpack.h"  // the DLPack type codes

namespace smd {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

float FloatFromBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

uint32_t BitsOfFloat(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

bool IsHalfNaN(uint16_t h) { return (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu) != 0; }
bool IsBFloat16NaN(uint16_t b) { return (b & 0x7f80u) == 0x7f80u && (b & 0x7fu) != 0; }

struct Expected {
  DType dtype;
  int value;  // TensorFlow's DataType number
  size_t size;
  const char* name;
  int dl_code;
  int dl_bits;
};

const Expected kAll[] = {
    {DType::kFloat32, 1, 4, "float32", kDLFloat, 32},
    {DType::kFloat64, 2, 8, "float64", kDLFloat, 64},
    {DType::kInt32, 3, 4, "int32", kDLInt, 32},
    {DType::kUInt8, 4, 1, "uint8", kDLUInt, 8},
    {DType::kInt16, 5, 2, "int16", kDLInt, 16},
    {DType::kInt8, 6, 1, "int8", kDLInt, 8},
    {DType::kString, 7, 0, "str", 0, 0},
    {DType::kComplex64, 8, 8, "complex64", kDLComplex, 64},
    {DType::kInt64, 9, 8, "int64", kDLInt, 64},
    {DType::kBool, 10, 1, "bool", kDLBool, 8},
    {DType::kBFloat16, 14, 2, "bfloat16", kDLBfloat, 16},
    {DType::kUInt16, 17, 2, "uint16", kDLUInt, 16},
    {DType::kComplex128, 18, 16, "complex128", kDLComplex, 128},
    {DType::kFloat16, 19, 2, "float16", kDLFloat, 16},
    {DType::kUInt32, 22, 4, "uint32", kDLUInt, 32},
    {DType::kUInt64, 23, 8, "uint64", kDLUInt, 64},
};

// ---- the table ----

TEST(DType, TableHasTensorFlowNumbersNumpyNamesAndDLPackTypes) {
  for (const Expected& e : kAll) {
    SCOPED_TRACE(e.name);
    EXPECT_EQ(static_cast<int>(e.dtype), e.value);
    const DTypeInfo* info = GetDTypeInfo(e.value);
    ASSERT_NE(info, nullptr);
    EXPECT_EQ(info->dtype, e.dtype);
    EXPECT_EQ(info->size, e.size);
    EXPECT_STREQ(info->name, e.name);
    EXPECT_EQ(info->dl_code, e.dl_code);
    EXPECT_EQ(info->dl_bits, e.dl_bits);
    EXPECT_EQ(DTypeSize(e.dtype), e.size);
    EXPECT_STREQ(DTypeName(e.dtype), e.name);
    EXPECT_EQ(DTypeFromName(e.name), e.dtype);
    if (e.dtype != DType::kString) {
      EXPECT_EQ(size_t{info->dl_bits}, 8 * info->size);
    }
  }
}

TEST(DType, OnlyTheListedNumbersAreKnown) {
  int known = 0;
  for (int v = -2; v <= 130; ++v) {
    if (GetDTypeInfo(v) != nullptr) ++known;
  }
  EXPECT_EQ(known, 16);
  for (int v : {0, 11, 12, 13, 15, 16, 20, 21, 24, 101, -1, INT_MIN, INT_MAX}) {
    EXPECT_EQ(GetDTypeInfo(v), nullptr) << v;
    EXPECT_EQ(DTypeName(static_cast<DType>(v)), nullptr) << v;
    EXPECT_EQ(DTypeSize(static_cast<DType>(v)), 0u) << v;
  }
  EXPECT_EQ(DTypeName(DType::kInvalid), nullptr);
  EXPECT_EQ(DTypeSize(DType::kInvalid), 0u);
}

TEST(DType, NamesAreExactAndCaseSensitive) {
  EXPECT_EQ(DTypeFromName("float"), DType::kFloat32);
  EXPECT_EQ(DTypeFromName("double"), DType::kFloat64);
  EXPECT_EQ(DTypeFromName("half"), DType::kFloat16);
  EXPECT_EQ(DTypeFromName("string"), DType::kString);
  for (const char* bad : {"", "Float32", "FLOAT32", "float32 ", " float32", "float_32", "int",
                          "uint", "complex", "float8", "bfloat", "boolean", "object", "f4"}) {
    EXPECT_FALSE(DTypeFromName(bad).has_value()) << "'" << bad << "'";
  }
  // A name followed by a NUL is not the name.
  EXPECT_FALSE(DTypeFromName(std::string_view("int32\0", 6)).has_value());
  EXPECT_FALSE(DTypeFromName(std::string_view("int32", 3)).has_value());  // "int"
}

TEST(DType, FromDLPackRoundTripsEveryNumericDType) {
  for (const Expected& e : kAll) {
    if (e.dtype == DType::kString) continue;
    const auto code = static_cast<uint8_t>(e.dl_code), bits = static_cast<uint8_t>(e.dl_bits);
    EXPECT_EQ(DTypeFromDLPack(code, bits, 1), e.dtype) << e.name;
    EXPECT_FALSE(DTypeFromDLPack(code, bits, 0).has_value()) << e.name;
    EXPECT_FALSE(DTypeFromDLPack(code, bits, 2).has_value()) << e.name;
    EXPECT_FALSE(DTypeFromDLPack(code, bits, 65535).has_value()) << e.name;
  }
}

TEST(DType, FromDLPackRefusesTypesWithoutADType) {
  EXPECT_FALSE(DTypeFromDLPack(kDLFloat, 8, 1).has_value());
  EXPECT_FALSE(DTypeFromDLPack(kDLFloat, 128, 1).has_value());
  EXPECT_FALSE(DTypeFromDLPack(kDLBfloat, 32, 1).has_value());
  EXPECT_FALSE(DTypeFromDLPack(kDLInt, 4, 1).has_value());
  EXPECT_FALSE(DTypeFromDLPack(kDLInt, 128, 1).has_value());
  EXPECT_FALSE(DTypeFromDLPack(kDLComplex, 32, 1).has_value());
  EXPECT_FALSE(DTypeFromDLPack(kDLBool, 1, 1).has_value());
  EXPECT_FALSE(DTypeFromDLPack(kDLBool, 16, 1).has_value());
  EXPECT_FALSE(DTypeFromDLPack(kDLOpaqueHandle, 64, 1).has_value());
  EXPECT_FALSE(DTypeFromDLPack(kDLFloat8_e4m3fn, 8, 1).has_value());
  EXPECT_FALSE(DTypeFromDLPack(kDLFloat8_e5m2, 8, 1).has_value());
  EXPECT_FALSE(DTypeFromDLPack(kDLFloat4_e2m1fn, 4, 1).has_value());
  // The string row's (0, 0) is not a DLPack type.
  EXPECT_FALSE(DTypeFromDLPack(0, 0, 1).has_value());
  EXPECT_FALSE(DTypeFromDLPack(255, 8, 1).has_value());
  // uint8 and bool have the same width: the code tells them apart.
  EXPECT_EQ(DTypeFromDLPack(kDLUInt, 8, 1), DType::kUInt8);
  EXPECT_EQ(DTypeFromDLPack(kDLBool, 8, 1), DType::kBool);
}

TEST(DType, KindPredicatesPartitionTheNumericDTypes) {
  for (const Expected& e : kAll) {
    const int kinds = IsFloatingDType(e.dtype) + IsComplexDType(e.dtype) +
                      IsSignedIntDType(e.dtype) + IsUnsignedIntDType(e.dtype);
    const bool none = e.dtype == DType::kBool || e.dtype == DType::kString;
    EXPECT_EQ(kinds, none ? 0 : 1) << e.name;
    if (IsFloatingDType(e.dtype)) {
      EXPECT_TRUE(e.dl_code == kDLFloat || e.dl_code == kDLBfloat);
    }
    if (IsComplexDType(e.dtype)) {
      EXPECT_EQ(e.dl_code, kDLComplex);
    }
    if (IsSignedIntDType(e.dtype)) {
      EXPECT_EQ(e.dl_code, kDLInt);
    }
    if (IsUnsignedIntDType(e.dtype)) {
      EXPECT_EQ(e.dl_code, kDLUInt);
    }
  }
  EXPECT_FALSE(IsFloatingDType(DType::kInvalid) || IsComplexDType(DType::kInvalid) ||
               IsSignedIntDType(DType::kInvalid) || IsUnsignedIntDType(DType::kInvalid));
}

// ---- float16 ----

TEST(DType, HalfToFloatSpecialValues) {
  EXPECT_EQ(HalfToFloat(0x7c00), kInf);
  EXPECT_EQ(HalfToFloat(0xfc00), -kInf);
  EXPECT_EQ(HalfToFloat(0x7bff), 65504.0f);
  EXPECT_EQ(HalfToFloat(0xfbff), -65504.0f);
  EXPECT_EQ(HalfToFloat(0x0400), std::ldexp(1.0f, -14));       // smallest normal
  EXPECT_EQ(HalfToFloat(0x03ff), 1023 * std::ldexp(1.0f, -24));  // largest subnormal
  EXPECT_EQ(HalfToFloat(0x0001), std::ldexp(1.0f, -24));       // smallest subnormal
  EXPECT_EQ(HalfToFloat(0x8001), -std::ldexp(1.0f, -24));
  EXPECT_EQ(HalfToFloat(0x3c00), 1.0f);
  EXPECT_EQ(HalfToFloat(0x3c01), 1.0f + std::ldexp(1.0f, -10));
  EXPECT_EQ(BitsOfFloat(HalfToFloat(0x0000)), 0u);
  EXPECT_EQ(BitsOfFloat(HalfToFloat(0x8000)), 0x80000000u);  // -0.0 keeps its sign
  // Every NaN stays a NaN (signalling ones, with only the lowest payload bit, included), sign kept.
  for (uint16_t h : {0x7c01, 0x7e00, 0x7fff, 0x7d00}) {
    float f = HalfToFloat(h);
    EXPECT_TRUE(std::isnan(f)) << std::hex << h;
    EXPECT_FALSE(std::signbit(f)) << std::hex << h;
    EXPECT_TRUE(std::isnan(HalfToFloat(static_cast<uint16_t>(h | 0x8000))));
    EXPECT_TRUE(std::signbit(HalfToFloat(static_cast<uint16_t>(h | 0x8000))));
  }
}

TEST(DType, FloatToHalfSpecialValues) {
  EXPECT_EQ(FloatToHalf(kInf), 0x7c00);
  EXPECT_EQ(FloatToHalf(-kInf), 0xfc00);
  EXPECT_EQ(FloatToHalf(std::numeric_limits<float>::max()), 0x7c00);
  EXPECT_EQ(FloatToHalf(std::numeric_limits<float>::lowest()), 0xfc00);
  EXPECT_EQ(FloatToHalf(-65520.0f), 0xfc00);
  EXPECT_EQ(FloatToHalf(-65504.0f), 0xfbff);
  EXPECT_EQ(FloatToHalf(0.0f), 0x0000);
  EXPECT_EQ(FloatToHalf(-0.0f), 0x8000);
  EXPECT_EQ(FloatToHalf(std::numeric_limits<float>::denorm_min()), 0x0000);
  EXPECT_EQ(FloatToHalf(-std::numeric_limits<float>::denorm_min()), 0x8000);  // -0, not +0
  EXPECT_EQ(FloatToHalf(std::numeric_limits<float>::min()), 0x0000);         // 2^-126
  EXPECT_EQ(FloatToHalf(std::ldexp(1.0f, -14)), 0x0400);
  // NaNs stay NaNs whatever their payload (one only in the bits float16 drops included).
  for (uint32_t bits : {0x7fc00000u, 0x7f800001u, 0x7f801fffu, 0x7fbfffffu, 0x7fffffffu}) {
    uint16_t h = FloatToHalf(FloatFromBits(bits));
    EXPECT_TRUE(IsHalfNaN(h)) << std::hex << bits << " -> " << h;
    EXPECT_EQ(h & 0x8000, 0) << std::hex << bits;
    uint16_t neg = FloatToHalf(FloatFromBits(bits | 0x80000000u));
    EXPECT_TRUE(IsHalfNaN(neg)) << std::hex << bits;
    EXPECT_EQ(neg & 0x8000, 0x8000) << std::hex << bits;
  }
  EXPECT_TRUE(IsHalfNaN(FloatToHalf(std::nanf(""))));
}

TEST(DType, HalfNaNsSurviveARoundTrip) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    if (!IsHalfNaN(static_cast<uint16_t>(h))) continue;
    uint16_t back = FloatToHalf(HalfToFloat(static_cast<uint16_t>(h)));
    ASSERT_TRUE(IsHalfNaN(back)) << std::hex << h;
    ASSERT_EQ(back & 0x8000, h & 0x8000) << std::hex << h;
  }
}

// Every rounding boundary of float16: the float halfway between two neighbouring halves rounds to
// the one with the even mantissa, and the floats just below and above it to the nearer one.
TEST(DType, FloatToHalfRoundsToNearestEvenAtEveryBoundary) {
  for (uint32_t a = 0; a < 0x7c00; ++a) {
    const uint16_t lo = static_cast<uint16_t>(a), hi = static_cast<uint16_t>(a + 1);
    // hi == 0x7c00 is infinity: the halfway point is then 65520 (as if 2^16 were the next half).
    const double upper = hi == 0x7c00 ? 65536.0 : HalfToFloat(hi);
    const float mid = static_cast<float>((HalfToFloat(lo) + upper) / 2);  // exact in float
    const uint16_t even = (lo & 1) ? hi : lo;
    for (uint16_t sign : {0x0000, 0x8000}) {
      const float m = sign ? -mid : mid;
      ASSERT_EQ(FloatToHalf(m), even | sign) << std::hex << a;
      ASSERT_EQ(FloatToHalf(std::nextafter(m, 0.0f)), lo | sign) << std::hex << a;
      ASSERT_EQ(FloatToHalf(std::nextafter(m, sign ? -kInf : kInf)), hi | sign) << std::hex << a;
    }
  }
}

// ---- bfloat16 ----

TEST(DType, BFloat16SpecialValues) {
  EXPECT_EQ(FloatToBFloat16(kInf), 0x7f80);
  EXPECT_EQ(FloatToBFloat16(-kInf), 0xff80);
  EXPECT_EQ(FloatToBFloat16(std::numeric_limits<float>::max()), 0x7f80);  // rounds up to inf
  EXPECT_EQ(FloatToBFloat16(FloatFromBits(0x7f7f7fffu)), 0x7f7f);         // the largest finite
  EXPECT_EQ(FloatToBFloat16(-0.0f), 0x8000);
  EXPECT_EQ(FloatToBFloat16(std::numeric_limits<float>::denorm_min()), 0x0000);
  EXPECT_EQ(FloatToBFloat16(FloatFromBits(0x00018000u)), 0x0002);  // subnormal tie: to even
  EXPECT_EQ(BFloat16ToFloat(0x7f80), kInf);
  EXPECT_EQ(BFloat16ToFloat(0xff80), -kInf);
  EXPECT_EQ(BitsOfFloat(BFloat16ToFloat(0x8000)), 0x80000000u);
  EXPECT_EQ(BFloat16ToFloat(0x0001), FloatFromBits(0x00010000u));
  for (uint32_t bits : {0x7fc00000u, 0x7f800001u, 0x7f80ffffu, 0x7fffffffu, 0x7fbf0000u}) {
    uint16_t b = FloatToBFloat16(FloatFromBits(bits));
    EXPECT_TRUE(IsBFloat16NaN(b)) << std::hex << bits << " -> " << b;
    EXPECT_EQ(b & 0x8000, 0) << std::hex << bits;
    uint16_t neg = FloatToBFloat16(FloatFromBits(bits | 0x80000000u));
    EXPECT_TRUE(IsBFloat16NaN(neg)) << std::hex << bits;
    EXPECT_EQ(neg & 0x8000, 0x8000) << std::hex << bits;
    EXPECT_TRUE(std::isnan(BFloat16ToFloat(b)));
  }
}

TEST(DType, BFloat16RoundTripsEveryValueAndRoundsToNearestEven) {
  for (uint32_t b = 0; b < 0x10000; ++b) {
    const uint16_t v = static_cast<uint16_t>(b);
    if (IsBFloat16NaN(v)) continue;
    ASSERT_EQ(FloatToBFloat16(BFloat16ToFloat(v)), v) << std::hex << b;
  }
  for (uint32_t a = 0; a < 0x7f80; ++a) {
    const uint16_t lo = static_cast<uint16_t>(a), hi = static_cast<uint16_t>(a + 1);
    const uint32_t mid = (a << 16) | 0x8000u;  // halfway to the next bfloat16 (or to inf)
    const uint16_t even = (lo & 1) ? hi : lo;
    for (uint32_t sign : {0u, 0x80000000u}) {
      const uint16_t s = static_cast<uint16_t>(sign >> 16);
      ASSERT_EQ(FloatToBFloat16(FloatFromBits(sign | mid)), even | s) << std::hex << a;
      ASSERT_EQ(FloatToBFloat16(FloatFromBits(sign | (mid - 1))), lo | s) << std::hex << a;
      ASSERT_EQ(FloatToBFloat16(FloatFromBits(sign | (mid + 1))), hi | s) << std::hex << a;
    }
  }
}

// ---- LoadAsDouble ----

template <typename T>
std::vector<unsigned char> Buffer(std::vector<T> v) {
  std::vector<unsigned char> b(v.size() * sizeof(T));
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

TEST(DType, LoadAsDoubleReadsElementIOfEveryDType) {
  EXPECT_EQ(LoadAsDouble(DType::kInt8, Buffer<int8_t>({0, -128, 127}).data(), 1), -128.0);
  EXPECT_EQ(LoadAsDouble(DType::kUInt8, Buffer<uint8_t>({0, 0, 255}).data(), 2), 255.0);
  EXPECT_EQ(LoadAsDouble(DType::kInt16, Buffer<int16_t>({1, INT16_MIN}).data(), 1), -32768.0);
  EXPECT_EQ(LoadAsDouble(DType::kUInt16, Buffer<uint16_t>({1, 65535}).data(), 1), 65535.0);
  EXPECT_EQ(LoadAsDouble(DType::kInt32, Buffer<int32_t>({1, INT32_MIN}).data(), 1), -2147483648.0);
  EXPECT_EQ(LoadAsDouble(DType::kUInt32, Buffer<uint32_t>({1, UINT32_MAX}).data(), 1), 0x1p32 - 1);
  EXPECT_EQ(LoadAsDouble(DType::kInt64, Buffer<int64_t>({1, INT64_MIN}).data(), 1), -0x1p63);
  EXPECT_EQ(LoadAsDouble(DType::kInt64, Buffer<int64_t>({1, (int64_t{1} << 53) + 1}).data(), 1),
            0x1p53);  // the nearest double
  EXPECT_EQ(LoadAsDouble(DType::kUInt64, Buffer<uint64_t>({1, UINT64_MAX}).data(), 1), 0x1p64);
  EXPECT_EQ(LoadAsDouble(DType::kFloat32, Buffer<float>({1, -2.5f}).data(), 1), -2.5);
  EXPECT_EQ(LoadAsDouble(DType::kFloat64, Buffer<double>({1, 1e300}).data(), 1), 1e300);
  EXPECT_EQ(LoadAsDouble(DType::kFloat16, Buffer<uint16_t>({0, 0x7bff}).data(), 1), 65504.0);
  EXPECT_EQ(LoadAsDouble(DType::kBFloat16, Buffer<uint16_t>({0, 0xc0a0}).data(), 1), -5.0);
  EXPECT_EQ(LoadAsDouble(DType::kFloat32, Buffer<float>({-kInf}).data(), 0), -HUGE_VAL);
  EXPECT_TRUE(std::isnan(LoadAsDouble(DType::kFloat64, Buffer<double>({NAN}).data(), 0)));
  EXPECT_TRUE(std::isnan(LoadAsDouble(DType::kFloat16, Buffer<uint16_t>({0x7e00}).data(), 0)));
}

TEST(DType, LoadAsDoubleBoolIsZeroOrOne) {
  const std::vector<unsigned char> b = {0, 1, 2, 255};
  EXPECT_EQ(LoadAsDouble(DType::kBool, b.data(), 0), 0.0);
  EXPECT_EQ(LoadAsDouble(DType::kBool, b.data(), 1), 1.0);
  EXPECT_EQ(LoadAsDouble(DType::kBool, b.data(), 2), 1.0);
  EXPECT_EQ(LoadAsDouble(DType::kBool, b.data(), 3), 1.0);
}

TEST(DType, LoadAsDoubleComplexIsTheRealPartOfElementI) {
  // (1+2j), (-3+4j)
  EXPECT_EQ(LoadAsDouble(DType::kComplex64, Buffer<float>({1, 2, -3, 4}).data(), 1), -3.0);
  EXPECT_EQ(LoadAsDouble(DType::kComplex128, Buffer<double>({1, 2, -3, 4}).data(), 1), -3.0);
  EXPECT_EQ(LoadAsDouble(DType::kComplex64, Buffer<float>({1, 2, -3, 4}).data(), 0), 1.0);
}

TEST(DType, LoadAsDoubleOfNonNumericDTypesIsNaN) {
  const std::vector<unsigned char> b(16, 0);
  EXPECT_TRUE(std::isnan(LoadAsDouble(DType::kString, b.data(), 0)));
  EXPECT_TRUE(std::isnan(LoadAsDouble(DType::kInvalid, b.data(), 0)));
  EXPECT_TRUE(std::isnan(LoadAsDouble(static_cast<DType>(99), b.data(), 0)));
}

}  // namespace
}  // namespace smd
