// Element types. The numeric values are TensorFlow's DataType numbers, which is what the event
// files store and what smd_dtype exposes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string_view>

namespace smd {

enum class DType : int {
  kInvalid = 0,
  kFloat32 = 1,
  kFloat64 = 2,
  kInt32 = 3,
  kUInt8 = 4,
  kInt16 = 5,
  kInt8 = 6,
  kString = 7,
  kComplex64 = 8,
  kInt64 = 9,
  kBool = 10,
  kBFloat16 = 14,
  kUInt16 = 17,
  kComplex128 = 18,
  kFloat16 = 19,
  kUInt32 = 22,
  kUInt64 = 23,
};

struct DTypeInfo {
  DType dtype;
  size_t size;          // bytes per element; 0 for strings
  const char* name;     // numpy's name
  uint8_t dl_code;      // DLDataTypeCode
  uint8_t dl_bits;      // bits per element in DLPack
};

// nullptr for values that are not a known dtype.
const DTypeInfo* GetDTypeInfo(int value);
inline size_t DTypeSize(DType t) {
  const DTypeInfo* i = GetDTypeInfo(static_cast<int>(t));
  return i ? i->size : 0;
}
const char* DTypeName(DType t);  // nullptr if unknown
std::optional<DType> DTypeFromName(std::string_view name);
std::optional<DType> DTypeFromDLPack(uint8_t code, uint8_t bits, uint16_t lanes);

inline bool IsFloatingDType(DType t) {
  return t == DType::kFloat16 || t == DType::kBFloat16 || t == DType::kFloat32 ||
         t == DType::kFloat64;
}
inline bool IsComplexDType(DType t) { return t == DType::kComplex64 || t == DType::kComplex128; }
inline bool IsSignedIntDType(DType t) {
  return t == DType::kInt8 || t == DType::kInt16 || t == DType::kInt32 || t == DType::kInt64;
}
inline bool IsUnsignedIntDType(DType t) {
  return t == DType::kUInt8 || t == DType::kUInt16 || t == DType::kUInt32 || t == DType::kUInt64;
}

// IEEE binary16 <-> binary32, round-to-nearest-even, NaN and infinities preserved.
float HalfToFloat(uint16_t h);
uint16_t FloatToHalf(float f);
// bfloat16 <-> binary32, round-to-nearest-even.
inline float BFloat16ToFloat(uint16_t b) {
  uint32_t u = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
uint16_t FloatToBFloat16(float f);

// Loads element i of a buffer of dtype t as a double (complex: the real part; bool: 0/1).
double LoadAsDouble(DType t, const void* data, size_t i);

}  // namespace smd
