#include "impl/core/dtype.h"

#include <cmath>
#include <complex>

namespace smd {
namespace {

// DLPack type codes.
constexpr uint8_t kDLInt = 0, kDLUInt = 1, kDLFloat = 2, kDLBfloat = 4, kDLComplex = 5,
                  kDLBool = 6;

constexpr DTypeInfo kTable[] = {
    {DType::kFloat32, 4, "float32", kDLFloat, 32},
    {DType::kFloat64, 8, "float64", kDLFloat, 64},
    {DType::kInt32, 4, "int32", kDLInt, 32},
    {DType::kUInt8, 1, "uint8", kDLUInt, 8},
    {DType::kInt16, 2, "int16", kDLInt, 16},
    {DType::kInt8, 1, "int8", kDLInt, 8},
    {DType::kString, 0, "str", 0, 0},
    {DType::kComplex64, 8, "complex64", kDLComplex, 64},
    {DType::kInt64, 8, "int64", kDLInt, 64},
    {DType::kBool, 1, "bool", kDLBool, 8},
    {DType::kBFloat16, 2, "bfloat16", kDLBfloat, 16},
    {DType::kUInt16, 2, "uint16", kDLUInt, 16},
    {DType::kComplex128, 16, "complex128", kDLComplex, 128},
    {DType::kFloat16, 2, "float16", kDLFloat, 16},
    {DType::kUInt32, 4, "uint32", kDLUInt, 32},
    {DType::kUInt64, 8, "uint64", kDLUInt, 64},
};

}  // namespace

const DTypeInfo* GetDTypeInfo(int value) {
  for (const DTypeInfo& i : kTable) {
    if (static_cast<int>(i.dtype) == value) return &i;
  }
  return nullptr;
}

const char* DTypeName(DType t) {
  const DTypeInfo* i = GetDTypeInfo(static_cast<int>(t));
  return i ? i->name : nullptr;
}

std::optional<DType> DTypeFromName(std::string_view name) {
  for (const DTypeInfo& i : kTable) {
    if (name == i.name) return i.dtype;
  }
  if (name == "float") return DType::kFloat32;
  if (name == "double") return DType::kFloat64;
  if (name == "half") return DType::kFloat16;
  if (name == "string") return DType::kString;
  return std::nullopt;
}

std::optional<DType> DTypeFromDLPack(uint8_t code, uint8_t bits, uint16_t lanes) {
  if (lanes != 1) return std::nullopt;
  for (const DTypeInfo& i : kTable) {
    if (i.dtype == DType::kString) continue;
    if (i.dl_code == code && i.dl_bits == bits) return i.dtype;
  }
  return std::nullopt;
}

float HalfToFloat(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: normalize
      int e = -1;
      do {
        ++e;
        mant <<= 1;
      } while ((mant & 0x400u) == 0);
      mant &= 0x3ffu;
      bits = sign | (static_cast<uint32_t>(127 - 15 - e) << 23) | (mant << 13);
    }
  } else if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + (127 - 15)) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t FloatToHalf(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  uint32_t absx = x & 0x7fffffffu;
  if (absx >= 0x7f800000u) {  // inf or nan
    if (absx > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u | ((absx >> 13) & 0x3ffu));
    return static_cast<uint16_t>(sign | 0x7c00u);
  }
  if (absx >= 0x477ff000u) {  // rounds to >= 65520: overflow to inf
    return static_cast<uint16_t>(sign | 0x7c00u);
  }
  if (absx < 0x38800000u) {  // below the smallest normal half (2^-14): subnormal or zero
    if (absx < 0x33000000u) return sign;  // < 2^-25 rounds to zero
    uint32_t exp = absx >> 23;
    uint32_t mant = (absx & 0x7fffffu) | 0x800000u;
    uint32_t shift = 126 - exp;  // 14 - (exp - 127) + 13 - 1 ... total shift to half subnormal
    // value = mant * 2^(exp-150); half subnormal unit = 2^-24 → q = mant * 2^(exp-126)
    uint32_t q = mant >> shift;
    uint32_t rem = mant & ((1u << shift) - 1);
    uint32_t halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (q & 1u))) ++q;
    return static_cast<uint16_t>(sign | q);
  }
  uint32_t exp = (absx >> 23) - 127 + 15;
  uint32_t mant = absx & 0x7fffffu;
  uint32_t h = (exp << 10) | (mant >> 13);
  uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;  // may carry into the exponent: fine
  return static_cast<uint16_t>(sign | h);
}

uint16_t FloatToBFloat16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);  // quiet NaN
  uint32_t lsb = (x >> 16) & 1u;
  x += 0x7fffu + lsb;
  return static_cast<uint16_t>(x >> 16);
}

double LoadAsDouble(DType t, const void* data, size_t i) {
  const unsigned char* p = static_cast<const unsigned char*>(data);
  switch (t) {
    case DType::kFloat32: { float v; std::memcpy(&v, p + 4 * i, 4); return v; }
    case DType::kFloat64: { double v; std::memcpy(&v, p + 8 * i, 8); return v; }
    case DType::kFloat16: { uint16_t v; std::memcpy(&v, p + 2 * i, 2); return HalfToFloat(v); }
    case DType::kBFloat16: { uint16_t v; std::memcpy(&v, p + 2 * i, 2); return BFloat16ToFloat(v); }
    case DType::kInt8: return static_cast<int8_t>(p[i]);
    case DType::kUInt8: return p[i];
    case DType::kBool: return p[i] ? 1.0 : 0.0;
    case DType::kInt16: { int16_t v; std::memcpy(&v, p + 2 * i, 2); return v; }
    case DType::kUInt16: { uint16_t v; std::memcpy(&v, p + 2 * i, 2); return v; }
    case DType::kInt32: { int32_t v; std::memcpy(&v, p + 4 * i, 4); return v; }
    case DType::kUInt32: { uint32_t v; std::memcpy(&v, p + 4 * i, 4); return v; }
    case DType::kInt64: { int64_t v; std::memcpy(&v, p + 8 * i, 8); return static_cast<double>(v); }
    case DType::kUInt64: { uint64_t v; std::memcpy(&v, p + 8 * i, 8); return static_cast<double>(v); }
    case DType::kComplex64: { float v; std::memcpy(&v, p + 8 * i, 4); return v; }
    case DType::kComplex128: { double v; std::memcpy(&v, p + 16 * i, 8); return v; }
    default: return std::nan("");
  }
}

}  // namespace smd
