// Unit tests for impl/core/reductions.{h,cc}.
#include "impl/core/reductions.h"

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

namespace smd {
namespace {

using Bytes = std::vector<unsigned char>;

template <typename T>
Bytes ToBytes(const std::vector<T>& v) {
  Bytes b(v.size() * sizeof(T));
  if (!v.empty()) std::memcpy(b.data(), v.data(), b.size());
  return b;
}

Bytes HalfBytes(const std::vector<float>& v) {
  std::vector<uint16_t> h;
  for (float f : v) h.push_back(FloatToHalf(f));
  return ToBytes(h);
}

Bytes BFloat16Bytes(const std::vector<float>& v) {
  std::vector<uint16_t> h;
  for (float f : v) h.push_back(FloatToBFloat16(f));
  return ToBytes(h);
}

template <typename F>
Bytes ComplexBytes(const std::vector<std::complex<double>>& v) {
  std::vector<F> parts;
  for (auto c : v) {
    parts.push_back(static_cast<F>(c.real()));
    parts.push_back(static_cast<F>(c.imag()));
  }
  return ToBytes(parts);
}

Result<ReductionValue> Compute(ReductionOp op, bool abs, DType t, const Bytes& b) {
  size_t size = DTypeSize(t);
  return ComputeReduction(op, abs, t, b.data(), size ? b.size() / size : 0);
}

template <typename T>
T Get(const ReductionValue& v) {
  T x;
  std::memcpy(&x, v.bytes, sizeof(T));
  return x;
}

uint16_t Bits16(const ReductionValue& v) { return Get<uint16_t>(v); }

std::complex<double> GetComplex(const ReductionValue& v) {
  if (v.dtype == DType::kComplex64) {
    float p[2];
    std::memcpy(p, v.bytes, sizeof(p));
    return {p[0], p[1]};
  }
  double p[2];
  std::memcpy(p, v.bytes, sizeof(p));
  return {p[0], p[1]};
}

// The data the numpy table below was computed from.
const std::vector<int> kSignedData = {3, -1, 4, -1, 5, -9, 2, 6};
const std::vector<int> kUnsignedData = {3, 1, 4, 1, 5, 9, 2, 6};
const std::vector<int> kBoolData = {1, 0, 1, 1, 0, 1, 0, 1};
const std::vector<float> kFloatData = {3.5f, -1.25f, 4, -1, 5.5f, -9, 2, 6.25f};
const std::vector<std::complex<double>> kComplexData = {
    {3, 1}, {-1, -2}, {4, 0}, {-1, 1}, {5.5, -3}, {-9, 0.5}, {2, 2}, {6.25, -1}};

template <typename T, typename S>
Bytes Cast(const std::vector<S>& v) {
  std::vector<T> out;
  for (S x : v) out.push_back(static_cast<T>(x));
  return ToBytes(out);
}

Bytes TableInput(DType t) {
  switch (t) {
    case DType::kBool: return Cast<uint8_t>(kBoolData);
    case DType::kInt8: return Cast<int8_t>(kSignedData);
    case DType::kInt16: return Cast<int16_t>(kSignedData);
    case DType::kInt32: return Cast<int32_t>(kSignedData);
    case DType::kInt64: return Cast<int64_t>(kSignedData);
    case DType::kUInt8: return Cast<uint8_t>(kUnsignedData);
    case DType::kUInt16: return Cast<uint16_t>(kUnsignedData);
    case DType::kUInt32: return Cast<uint32_t>(kUnsignedData);
    case DType::kUInt64: return Cast<uint64_t>(kUnsignedData);
    case DType::kFloat16: return HalfBytes(kFloatData);
    case DType::kBFloat16: return BFloat16Bytes(kFloatData);
    case DType::kFloat32: return Cast<float>(kFloatData);
    case DType::kFloat64: return Cast<double>(kFloatData);
    case DType::kComplex64: return ComplexBytes<float>(kComplexData);
    case DType::kComplex128: return ComplexBytes<double>(kComplexData);
    default: return {};
  }
}

// One unit in the last place of x in dtype t (0 for integer dtypes: exact comparison).
double Ulp(DType t, double x) {
  int mantissa_bits;
  switch (t) {
    case DType::kFloat16: mantissa_bits = 10; break;
    case DType::kBFloat16: mantissa_bits = 7; break;
    case DType::kFloat32: mantissa_bits = 23; break;
    case DType::kFloat64: mantissa_bits = 52; break;
    case DType::kComplex64: mantissa_bits = 23; break;
    case DType::kComplex128: mantissa_bits = 52; break;
    default: return 0;
  }
  if (x == 0) return 0;
  int e;
  std::frexp(std::fabs(x), &e);  // |x| = m * 2^e, m in [0.5, 1)
  return std::ldexp(1.0, e - 1 - mantissa_bits);
}

struct TableRow {
  DType input;
  ReductionOp op;
  bool abs;
  DType result;
  double re;  // the value (the real part for complex results)
  double im;
};

// Expected dtypes and values from numpy 1.26.4 (np.amin, np.amax, np.mean, np.std, np.var, np.sum,
// np.prod, np.median, np.linalg.norm(x, 1), np.linalg.norm(x, 2) on 1-D arrays of the data above,
// after np.absolute for the abs rows). numpy has no bfloat16: those rows are numpy's float64
// results on the same values, rounded to the nearest bfloat16.
const TableRow kNumpyTable[] = {
    {DType::kBool, ReductionOp::kMin, false, DType::kBool, 0.0, 0.0},
    {DType::kBool, ReductionOp::kMax, false, DType::kBool, 1.0, 0.0},
    {DType::kBool, ReductionOp::kMean, false, DType::kFloat64, 0.625, 0.0},
    {DType::kBool, ReductionOp::kStd, false, DType::kFloat64, 0.4841229182759271, 0.0},
    {DType::kBool, ReductionOp::kVariance, false, DType::kFloat64, 0.234375, 0.0},
    {DType::kBool, ReductionOp::kSum, false, DType::kInt64, 5.0, 0.0},
    {DType::kBool, ReductionOp::kProd, false, DType::kInt64, 0.0, 0.0},
    {DType::kBool, ReductionOp::kMedian, false, DType::kFloat64, 1.0, 0.0},
    {DType::kBool, ReductionOp::kL1, false, DType::kFloat64, 5.0, 0.0},
    {DType::kBool, ReductionOp::kL2, false, DType::kFloat64, 2.23606797749979, 0.0},
    {DType::kBool, ReductionOp::kMin, true, DType::kBool, 0.0, 0.0},
    {DType::kBool, ReductionOp::kMax, true, DType::kBool, 1.0, 0.0},
    {DType::kBool, ReductionOp::kMean, true, DType::kFloat64, 0.625, 0.0},
    {DType::kBool, ReductionOp::kStd, true, DType::kFloat64, 0.4841229182759271, 0.0},
    {DType::kBool, ReductionOp::kVariance, true, DType::kFloat64, 0.234375, 0.0},
    {DType::kBool, ReductionOp::kSum, true, DType::kInt64, 5.0, 0.0},
    {DType::kBool, ReductionOp::kProd, true, DType::kInt64, 0.0, 0.0},
    {DType::kBool, ReductionOp::kMedian, true, DType::kFloat64, 1.0, 0.0},
    {DType::kBool, ReductionOp::kL1, true, DType::kFloat64, 5.0, 0.0},
    {DType::kBool, ReductionOp::kL2, true, DType::kFloat64, 2.23606797749979, 0.0},
    {DType::kInt8, ReductionOp::kMin, false, DType::kInt8, -9.0, 0.0},
    {DType::kInt8, ReductionOp::kMax, false, DType::kInt8, 6.0, 0.0},
    {DType::kInt8, ReductionOp::kMean, false, DType::kFloat64, 1.125, 0.0},
    {DType::kInt8, ReductionOp::kStd, false, DType::kFloat64, 4.512136411945011, 0.0},
    {DType::kInt8, ReductionOp::kVariance, false, DType::kFloat64, 20.359375, 0.0},
    {DType::kInt8, ReductionOp::kSum, false, DType::kInt64, 9.0, 0.0},
    {DType::kInt8, ReductionOp::kProd, false, DType::kInt64, -6480.0, 0.0},
    {DType::kInt8, ReductionOp::kMedian, false, DType::kFloat64, 2.5, 0.0},
    {DType::kInt8, ReductionOp::kL1, false, DType::kFloat64, 31.0, 0.0},
    {DType::kInt8, ReductionOp::kL2, false, DType::kFloat64, 13.152946437965905, 0.0},
    {DType::kInt8, ReductionOp::kMin, true, DType::kInt8, 1.0, 0.0},
    {DType::kInt8, ReductionOp::kMax, true, DType::kInt8, 9.0, 0.0},
    {DType::kInt8, ReductionOp::kMean, true, DType::kFloat64, 3.875, 0.0},
    {DType::kInt8, ReductionOp::kStd, true, DType::kFloat64, 2.5708704751503917, 0.0},
    {DType::kInt8, ReductionOp::kVariance, true, DType::kFloat64, 6.609375, 0.0},
    {DType::kInt8, ReductionOp::kSum, true, DType::kInt64, 31.0, 0.0},
    {DType::kInt8, ReductionOp::kProd, true, DType::kInt64, 6480.0, 0.0},
    {DType::kInt8, ReductionOp::kMedian, true, DType::kFloat64, 3.5, 0.0},
    {DType::kInt8, ReductionOp::kL1, true, DType::kFloat64, 31.0, 0.0},
    {DType::kInt8, ReductionOp::kL2, true, DType::kFloat64, 13.152946437965905, 0.0},
    {DType::kInt16, ReductionOp::kMin, false, DType::kInt16, -9.0, 0.0},
    {DType::kInt16, ReductionOp::kMax, false, DType::kInt16, 6.0, 0.0},
    {DType::kInt16, ReductionOp::kMean, false, DType::kFloat64, 1.125, 0.0},
    {DType::kInt16, ReductionOp::kStd, false, DType::kFloat64, 4.512136411945011, 0.0},
    {DType::kInt16, ReductionOp::kVariance, false, DType::kFloat64, 20.359375, 0.0},
    {DType::kInt16, ReductionOp::kSum, false, DType::kInt64, 9.0, 0.0},
    {DType::kInt16, ReductionOp::kProd, false, DType::kInt64, -6480.0, 0.0},
    {DType::kInt16, ReductionOp::kMedian, false, DType::kFloat64, 2.5, 0.0},
    {DType::kInt16, ReductionOp::kL1, false, DType::kFloat64, 31.0, 0.0},
    {DType::kInt16, ReductionOp::kL2, false, DType::kFloat64, 13.152946437965905, 0.0},
    {DType::kInt16, ReductionOp::kMin, true, DType::kInt16, 1.0, 0.0},
    {DType::kInt16, ReductionOp::kMax, true, DType::kInt16, 9.0, 0.0},
    {DType::kInt16, ReductionOp::kMean, true, DType::kFloat64, 3.875, 0.0},
    {DType::kInt16, ReductionOp::kStd, true, DType::kFloat64, 2.5708704751503917, 0.0},
    {DType::kInt16, ReductionOp::kVariance, true, DType::kFloat64, 6.609375, 0.0},
    {DType::kInt16, ReductionOp::kSum, true, DType::kInt64, 31.0, 0.0},
    {DType::kInt16, ReductionOp::kProd, true, DType::kInt64, 6480.0, 0.0},
    {DType::kInt16, ReductionOp::kMedian, true, DType::kFloat64, 3.5, 0.0},
    {DType::kInt16, ReductionOp::kL1, true, DType::kFloat64, 31.0, 0.0},
    {DType::kInt16, ReductionOp::kL2, true, DType::kFloat64, 13.152946437965905, 0.0},
    {DType::kInt32, ReductionOp::kMin, false, DType::kInt32, -9.0, 0.0},
    {DType::kInt32, ReductionOp::kMax, false, DType::kInt32, 6.0, 0.0},
    {DType::kInt32, ReductionOp::kMean, false, DType::kFloat64, 1.125, 0.0},
    {DType::kInt32, ReductionOp::kStd, false, DType::kFloat64, 4.512136411945011, 0.0},
    {DType::kInt32, ReductionOp::kVariance, false, DType::kFloat64, 20.359375, 0.0},
    {DType::kInt32, ReductionOp::kSum, false, DType::kInt64, 9.0, 0.0},
    {DType::kInt32, ReductionOp::kProd, false, DType::kInt64, -6480.0, 0.0},
    {DType::kInt32, ReductionOp::kMedian, false, DType::kFloat64, 2.5, 0.0},
    {DType::kInt32, ReductionOp::kL1, false, DType::kFloat64, 31.0, 0.0},
    {DType::kInt32, ReductionOp::kL2, false, DType::kFloat64, 13.152946437965905, 0.0},
    {DType::kInt32, ReductionOp::kMin, true, DType::kInt32, 1.0, 0.0},
    {DType::kInt32, ReductionOp::kMax, true, DType::kInt32, 9.0, 0.0},
    {DType::kInt32, ReductionOp::kMean, true, DType::kFloat64, 3.875, 0.0},
    {DType::kInt32, ReductionOp::kStd, true, DType::kFloat64, 2.5708704751503917, 0.0},
    {DType::kInt32, ReductionOp::kVariance, true, DType::kFloat64, 6.609375, 0.0},
    {DType::kInt32, ReductionOp::kSum, true, DType::kInt64, 31.0, 0.0},
    {DType::kInt32, ReductionOp::kProd, true, DType::kInt64, 6480.0, 0.0},
    {DType::kInt32, ReductionOp::kMedian, true, DType::kFloat64, 3.5, 0.0},
    {DType::kInt32, ReductionOp::kL1, true, DType::kFloat64, 31.0, 0.0},
    {DType::kInt32, ReductionOp::kL2, true, DType::kFloat64, 13.152946437965905, 0.0},
    {DType::kInt64, ReductionOp::kMin, false, DType::kInt64, -9.0, 0.0},
    {DType::kInt64, ReductionOp::kMax, false, DType::kInt64, 6.0, 0.0},
    {DType::kInt64, ReductionOp::kMean, false, DType::kFloat64, 1.125, 0.0},
    {DType::kInt64, ReductionOp::kStd, false, DType::kFloat64, 4.512136411945011, 0.0},
    {DType::kInt64, ReductionOp::kVariance, false, DType::kFloat64, 20.359375, 0.0},
    {DType::kInt64, ReductionOp::kSum, false, DType::kInt64, 9.0, 0.0},
    {DType::kInt64, ReductionOp::kProd, false, DType::kInt64, -6480.0, 0.0},
    {DType::kInt64, ReductionOp::kMedian, false, DType::kFloat64, 2.5, 0.0},
    {DType::kInt64, ReductionOp::kL1, false, DType::kFloat64, 31.0, 0.0},
    {DType::kInt64, ReductionOp::kL2, false, DType::kFloat64, 13.152946437965905, 0.0},
    {DType::kInt64, ReductionOp::kMin, true, DType::kInt64, 1.0, 0.0},
    {DType::kInt64, ReductionOp::kMax, true, DType::kInt64, 9.0, 0.0},
    {DType::kInt64, ReductionOp::kMean, true, DType::kFloat64, 3.875, 0.0},
    {DType::kInt64, ReductionOp::kStd, true, DType::kFloat64, 2.5708704751503917, 0.0},
    {DType::kInt64, ReductionOp::kVariance, true, DType::kFloat64, 6.609375, 0.0},
    {DType::kInt64, ReductionOp::kSum, true, DType::kInt64, 31.0, 0.0},
    {DType::kInt64, ReductionOp::kProd, true, DType::kInt64, 6480.0, 0.0},
    {DType::kInt64, ReductionOp::kMedian, true, DType::kFloat64, 3.5, 0.0},
    {DType::kInt64, ReductionOp::kL1, true, DType::kFloat64, 31.0, 0.0},
    {DType::kInt64, ReductionOp::kL2, true, DType::kFloat64, 13.152946437965905, 0.0},
    {DType::kUInt8, ReductionOp::kMin, false, DType::kUInt8, 1.0, 0.0},
    {DType::kUInt8, ReductionOp::kMax, false, DType::kUInt8, 9.0, 0.0},
    {DType::kUInt8, ReductionOp::kMean, false, DType::kFloat64, 3.875, 0.0},
    {DType::kUInt8, ReductionOp::kStd, false, DType::kFloat64, 2.5708704751503917, 0.0},
    {DType::kUInt8, ReductionOp::kVariance, false, DType::kFloat64, 6.609375, 0.0},
    {DType::kUInt8, ReductionOp::kSum, false, DType::kUInt64, 31.0, 0.0},
    {DType::kUInt8, ReductionOp::kProd, false, DType::kUInt64, 6480.0, 0.0},
    {DType::kUInt8, ReductionOp::kMedian, false, DType::kFloat64, 3.5, 0.0},
    {DType::kUInt8, ReductionOp::kL1, false, DType::kFloat64, 31.0, 0.0},
    {DType::kUInt8, ReductionOp::kL2, false, DType::kFloat64, 13.152946437965905, 0.0},
    {DType::kUInt8, ReductionOp::kMin, true, DType::kUInt8, 1.0, 0.0},
    {DType::kUInt8, ReductionOp::kMax, true, DType::kUInt8, 9.0, 0.0},
    {DType::kUInt8, ReductionOp::kMean, true, DType::kFloat64, 3.875, 0.0},
    {DType::kUInt8, ReductionOp::kStd, true, DType::kFloat64, 2.5708704751503917, 0.0},
    {DType::kUInt8, ReductionOp::kVariance, true, DType::kFloat64, 6.609375, 0.0},
    {DType::kUInt8, ReductionOp::kSum, true, DType::kUInt64, 31.0, 0.0},
    {DType::kUInt8, ReductionOp::kProd, true, DType::kUInt64, 6480.0, 0.0},
    {DType::kUInt8, ReductionOp::kMedian, true, DType::kFloat64, 3.5, 0.0},
    {DType::kUInt8, ReductionOp::kL1, true, DType::kFloat64, 31.0, 0.0},
    {DType::kUInt8, ReductionOp::kL2, true, DType::kFloat64, 13.152946437965905, 0.0},
    {DType::kUInt16, ReductionOp::kMin, false, DType::kUInt16, 1.0, 0.0},
    {DType::kUInt16, ReductionOp::kMax, false, DType::kUInt16, 9.0, 0.0},
    {DType::kUInt16, ReductionOp::kMean, false, DType::kFloat64, 3.875, 0.0},
    {DType::kUInt16, ReductionOp::kStd, false, DType::kFloat64, 2.5708704751503917, 0.0},
    {DType::kUInt16, ReductionOp::kVariance, false, DType::kFloat64, 6.609375, 0.0},
    {DType::kUInt16, ReductionOp::kSum, false, DType::kUInt64, 31.0, 0.0},
    {DType::kUInt16, ReductionOp::kProd, false, DType::kUInt64, 6480.0, 0.0},
    {DType::kUInt16, ReductionOp::kMedian, false, DType::kFloat64, 3.5, 0.0},
    {DType::kUInt16, ReductionOp::kL1, false, DType::kFloat64, 31.0, 0.0},
    {DType::kUInt16, ReductionOp::kL2, false, DType::kFloat64, 13.152946437965905, 0.0},
    {DType::kUInt16, ReductionOp::kMin, true, DType::kUInt16, 1.0, 0.0},
    {DType::kUInt16, ReductionOp::kMax, true, DType::kUInt16, 9.0, 0.0},
    {DType::kUInt16, ReductionOp::kMean, true, DType::kFloat64, 3.875, 0.0},
    {DType::kUInt16, ReductionOp::kStd, true, DType::kFloat64, 2.5708704751503917, 0.0},
    {DType::kUInt16, ReductionOp::kVariance, true, DType::kFloat64, 6.609375, 0.0},
    {DType::kUInt16, ReductionOp::kSum, true, DType::kUInt64, 31.0, 0.0},
    {DType::kUInt16, ReductionOp::kProd, true, DType::kUInt64, 6480.0, 0.0},
    {DType::kUInt16, ReductionOp::kMedian, true, DType::kFloat64, 3.5, 0.0},
    {DType::kUInt16, ReductionOp::kL1, true, DType::kFloat64, 31.0, 0.0},
    {DType::kUInt16, ReductionOp::kL2, true, DType::kFloat64, 13.152946437965905, 0.0},
    {DType::kUInt32, ReductionOp::kMin, false, DType::kUInt32, 1.0, 0.0},
    {DType::kUInt32, ReductionOp::kMax, false, DType::kUInt32, 9.0, 0.0},
    {DType::kUInt32, ReductionOp::kMean, false, DType::kFloat64, 3.875, 0.0},
    {DType::kUInt32, ReductionOp::kStd, false, DType::kFloat64, 2.5708704751503917, 0.0},
    {DType::kUInt32, ReductionOp::kVariance, false, DType::kFloat64, 6.609375, 0.0},
    {DType::kUInt32, ReductionOp::kSum, false, DType::kUInt64, 31.0, 0.0},
    {DType::kUInt32, ReductionOp::kProd, false, DType::kUInt64, 6480.0, 0.0},
    {DType::kUInt32, ReductionOp::kMedian, false, DType::kFloat64, 3.5, 0.0},
    {DType::kUInt32, ReductionOp::kL1, false, DType::kFloat64, 31.0, 0.0},
    {DType::kUInt32, ReductionOp::kL2, false, DType::kFloat64, 13.152946437965905, 0.0},
    {DType::kUInt32, ReductionOp::kMin, true, DType::kUInt32, 1.0, 0.0},
    {DType::kUInt32, ReductionOp::kMax, true, DType::kUInt32, 9.0, 0.0},
    {DType::kUInt32, ReductionOp::kMean, true, DType::kFloat64, 3.875, 0.0},
    {DType::kUInt32, ReductionOp::kStd, true, DType::kFloat64, 2.5708704751503917, 0.0},
    {DType::kUInt32, ReductionOp::kVariance, true, DType::kFloat64, 6.609375, 0.0},
    {DType::kUInt32, ReductionOp::kSum, true, DType::kUInt64, 31.0, 0.0},
    {DType::kUInt32, ReductionOp::kProd, true, DType::kUInt64, 6480.0, 0.0},
    {DType::kUInt32, ReductionOp::kMedian, true, DType::kFloat64, 3.5, 0.0},
    {DType::kUInt32, ReductionOp::kL1, true, DType::kFloat64, 31.0, 0.0},
    {DType::kUInt32, ReductionOp::kL2, true, DType::kFloat64, 13.152946437965905, 0.0},
    {DType::kUInt64, ReductionOp::kMin, false, DType::kUInt64, 1.0, 0.0},
    {DType::kUInt64, ReductionOp::kMax, false, DType::kUInt64, 9.0, 0.0},
    {DType::kUInt64, ReductionOp::kMean, false, DType::kFloat64, 3.875, 0.0},
    {DType::kUInt64, ReductionOp::kStd, false, DType::kFloat64, 2.5708704751503917, 0.0},
    {DType::kUInt64, ReductionOp::kVariance, false, DType::kFloat64, 6.609375, 0.0},
    {DType::kUInt64, ReductionOp::kSum, false, DType::kUInt64, 31.0, 0.0},
    {DType::kUInt64, ReductionOp::kProd, false, DType::kUInt64, 6480.0, 0.0},
    {DType::kUInt64, ReductionOp::kMedian, false, DType::kFloat64, 3.5, 0.0},
    {DType::kUInt64, ReductionOp::kL1, false, DType::kFloat64, 31.0, 0.0},
    {DType::kUInt64, ReductionOp::kL2, false, DType::kFloat64, 13.152946437965905, 0.0},
    {DType::kUInt64, ReductionOp::kMin, true, DType::kUInt64, 1.0, 0.0},
    {DType::kUInt64, ReductionOp::kMax, true, DType::kUInt64, 9.0, 0.0},
    {DType::kUInt64, ReductionOp::kMean, true, DType::kFloat64, 3.875, 0.0},
    {DType::kUInt64, ReductionOp::kStd, true, DType::kFloat64, 2.5708704751503917, 0.0},
    {DType::kUInt64, ReductionOp::kVariance, true, DType::kFloat64, 6.609375, 0.0},
    {DType::kUInt64, ReductionOp::kSum, true, DType::kUInt64, 31.0, 0.0},
    {DType::kUInt64, ReductionOp::kProd, true, DType::kUInt64, 6480.0, 0.0},
    {DType::kUInt64, ReductionOp::kMedian, true, DType::kFloat64, 3.5, 0.0},
    {DType::kUInt64, ReductionOp::kL1, true, DType::kFloat64, 31.0, 0.0},
    {DType::kUInt64, ReductionOp::kL2, true, DType::kFloat64, 13.152946437965905, 0.0},
    {DType::kFloat16, ReductionOp::kMin, false, DType::kFloat16, -9.0, 0.0},
    {DType::kFloat16, ReductionOp::kMax, false, DType::kFloat16, 6.25, 0.0},
    {DType::kFloat16, ReductionOp::kMean, false, DType::kFloat16, 1.25, 0.0},
    {DType::kFloat16, ReductionOp::kStd, false, DType::kFloat16, 4.64453125, 0.0},
    {DType::kFloat16, ReductionOp::kVariance, false, DType::kFloat16, 21.578125, 0.0},
    {DType::kFloat16, ReductionOp::kSum, false, DType::kFloat16, 10.0, 0.0},
    {DType::kFloat16, ReductionOp::kProd, false, DType::kFloat16, -10832.0, 0.0},
    {DType::kFloat16, ReductionOp::kMedian, false, DType::kFloat16, 2.75, 0.0},
    {DType::kFloat16, ReductionOp::kL1, false, DType::kFloat16, 32.5, 0.0},
    {DType::kFloat16, ReductionOp::kL2, false, DType::kFloat16, 13.609375, 0.0},
    {DType::kFloat16, ReductionOp::kMin, true, DType::kFloat16, 1.0, 0.0},
    {DType::kFloat16, ReductionOp::kMax, true, DType::kFloat16, 9.0, 0.0},
    {DType::kFloat16, ReductionOp::kMean, true, DType::kFloat16, 4.0625, 0.0},
    {DType::kFloat16, ReductionOp::kStd, true, DType::kFloat16, 2.576171875, 0.0},
    {DType::kFloat16, ReductionOp::kVariance, true, DType::kFloat16, 6.63671875, 0.0},
    {DType::kFloat16, ReductionOp::kSum, true, DType::kFloat16, 32.5, 0.0},
    {DType::kFloat16, ReductionOp::kProd, true, DType::kFloat16, 10832.0, 0.0},
    {DType::kFloat16, ReductionOp::kMedian, true, DType::kFloat16, 3.75, 0.0},
    {DType::kFloat16, ReductionOp::kL1, true, DType::kFloat16, 32.5, 0.0},
    {DType::kFloat16, ReductionOp::kL2, true, DType::kFloat16, 13.609375, 0.0},
    {DType::kFloat32, ReductionOp::kMin, false, DType::kFloat32, -9.0, 0.0},
    {DType::kFloat32, ReductionOp::kMax, false, DType::kFloat32, 6.25, 0.0},
    {DType::kFloat32, ReductionOp::kMean, false, DType::kFloat32, 1.25, 0.0},
    {DType::kFloat32, ReductionOp::kStd, false, DType::kFloat32, 4.645226001739502, 0.0},
    {DType::kFloat32, ReductionOp::kVariance, false, DType::kFloat32, 21.578125, 0.0},
    {DType::kFloat32, ReductionOp::kSum, false, DType::kFloat32, 10.0, 0.0},
    {DType::kFloat32, ReductionOp::kProd, false, DType::kFloat32, -10828.125, 0.0},
    {DType::kFloat32, ReductionOp::kMedian, false, DType::kFloat32, 2.75, 0.0},
    {DType::kFloat32, ReductionOp::kL1, false, DType::kFloat32, 32.5, 0.0},
    {DType::kFloat32, ReductionOp::kL2, false, DType::kFloat32, 13.606064796447754, 0.0},
    {DType::kFloat32, ReductionOp::kMin, true, DType::kFloat32, 1.0, 0.0},
    {DType::kFloat32, ReductionOp::kMax, true, DType::kFloat32, 9.0, 0.0},
    {DType::kFloat32, ReductionOp::kMean, true, DType::kFloat32, 4.0625, 0.0},
    {DType::kFloat32, ReductionOp::kStd, true, DType::kFloat32, 2.5761830806732178, 0.0},
    {DType::kFloat32, ReductionOp::kVariance, true, DType::kFloat32, 6.63671875, 0.0},
    {DType::kFloat32, ReductionOp::kSum, true, DType::kFloat32, 32.5, 0.0},
    {DType::kFloat32, ReductionOp::kProd, true, DType::kFloat32, 10828.125, 0.0},
    {DType::kFloat32, ReductionOp::kMedian, true, DType::kFloat32, 3.75, 0.0},
    {DType::kFloat32, ReductionOp::kL1, true, DType::kFloat32, 32.5, 0.0},
    {DType::kFloat32, ReductionOp::kL2, true, DType::kFloat32, 13.606064796447754, 0.0},
    {DType::kFloat64, ReductionOp::kMin, false, DType::kFloat64, -9.0, 0.0},
    {DType::kFloat64, ReductionOp::kMax, false, DType::kFloat64, 6.25, 0.0},
    {DType::kFloat64, ReductionOp::kMean, false, DType::kFloat64, 1.25, 0.0},
    {DType::kFloat64, ReductionOp::kStd, false, DType::kFloat64, 4.645226044015511, 0.0},
    {DType::kFloat64, ReductionOp::kVariance, false, DType::kFloat64, 21.578125, 0.0},
    {DType::kFloat64, ReductionOp::kSum, false, DType::kFloat64, 10.0, 0.0},
    {DType::kFloat64, ReductionOp::kProd, false, DType::kFloat64, -10828.125, 0.0},
    {DType::kFloat64, ReductionOp::kMedian, false, DType::kFloat64, 2.75, 0.0},
    {DType::kFloat64, ReductionOp::kL1, false, DType::kFloat64, 32.5, 0.0},
    {DType::kFloat64, ReductionOp::kL2, false, DType::kFloat64, 13.606064824187778, 0.0},
    {DType::kFloat64, ReductionOp::kMin, true, DType::kFloat64, 1.0, 0.0},
    {DType::kFloat64, ReductionOp::kMax, true, DType::kFloat64, 9.0, 0.0},
    {DType::kFloat64, ReductionOp::kMean, true, DType::kFloat64, 4.0625, 0.0},
    {DType::kFloat64, ReductionOp::kStd, true, DType::kFloat64, 2.5761829806906187, 0.0},
    {DType::kFloat64, ReductionOp::kVariance, true, DType::kFloat64, 6.63671875, 0.0},
    {DType::kFloat64, ReductionOp::kSum, true, DType::kFloat64, 32.5, 0.0},
    {DType::kFloat64, ReductionOp::kProd, true, DType::kFloat64, 10828.125, 0.0},
    {DType::kFloat64, ReductionOp::kMedian, true, DType::kFloat64, 3.75, 0.0},
    {DType::kFloat64, ReductionOp::kL1, true, DType::kFloat64, 32.5, 0.0},
    {DType::kFloat64, ReductionOp::kL2, true, DType::kFloat64, 13.606064824187778, 0.0},
    {DType::kComplex64, ReductionOp::kMin, false, DType::kComplex64, -9.0, 0.5},
    {DType::kComplex64, ReductionOp::kMax, false, DType::kComplex64, 6.25, -1.0},
    {DType::kComplex64, ReductionOp::kMean, false, DType::kComplex64, 1.21875, -0.1875},
    {DType::kComplex64, ReductionOp::kStd, false, DType::kFloat32, 4.865676403045654, 0.0},
    {DType::kComplex64, ReductionOp::kVariance, false, DType::kFloat32, 23.6748046875, 0.0},
    {DType::kComplex64, ReductionOp::kSum, false, DType::kComplex64, 9.75, -1.5},
    {DType::kComplex64, ReductionOp::kProd, false, DType::kComplex64, -30525.0, -26525.0},
    {DType::kComplex64, ReductionOp::kMedian, false, DType::kComplex64, 2.5, 1.5},
    {DType::kComplex64, ReductionOp::kL1, false, DType::kFloat32, 35.24934387207031, 0.0},
    {DType::kComplex64, ReductionOp::kL2, false, DType::kFloat32, 14.197270393371582, 0.0},
    {DType::kComplex64, ReductionOp::kMin, true, DType::kFloat32, 1.4142135381698608, 0.0},
    {DType::kComplex64, ReductionOp::kMax, true, DType::kFloat32, 9.01387882232666, 0.0},
    {DType::kComplex64, ReductionOp::kMean, true, DType::kFloat32, 4.406167984008789, 0.0},
    {DType::kComplex64, ReductionOp::kStd, true, DType::kFloat32, 2.4043710231781006, 0.0},
    {DType::kComplex64, ReductionOp::kVariance, true, DType::kFloat32, 5.781000137329102, 0.0},
    {DType::kComplex64, ReductionOp::kSum, true, DType::kFloat32, 35.24934387207031, 0.0},
    {DType::kComplex64, ReductionOp::kProd, true, DType::kFloat32, 40439.4765625, 0.0},
    {DType::kComplex64, ReductionOp::kMedian, true, DType::kFloat32, 3.581138849258423, 0.0},
    {DType::kComplex64, ReductionOp::kL1, true, DType::kFloat32, 35.24934387207031, 0.0},
    {DType::kComplex64, ReductionOp::kL2, true, DType::kFloat32, 14.197270393371582, 0.0},
    {DType::kComplex128, ReductionOp::kMin, false, DType::kComplex128, -9.0, 0.5},
    {DType::kComplex128, ReductionOp::kMax, false, DType::kComplex128, 6.25, -1.0},
    {DType::kComplex128, ReductionOp::kMean, false, DType::kComplex128, 1.21875, -0.1875},
    {DType::kComplex128, ReductionOp::kStd, false, DType::kFloat64, 4.865676179884971, 0.0},
    {DType::kComplex128, ReductionOp::kVariance, false, DType::kFloat64, 23.6748046875, 0.0},
    {DType::kComplex128, ReductionOp::kSum, false, DType::kComplex128, 9.75, -1.5},
    {DType::kComplex128, ReductionOp::kProd, false, DType::kComplex128, -30525.0, -26525.0},
    {DType::kComplex128, ReductionOp::kMedian, false, DType::kComplex128, 2.5, 1.5},
    {DType::kComplex128, ReductionOp::kL1, false, DType::kFloat64, 35.24934100710434, 0.0},
    {DType::kComplex128, ReductionOp::kL2, false, DType::kFloat64, 14.197270864500684, 0.0},
    {DType::kComplex128, ReductionOp::kMin, true, DType::kFloat64, 1.4142135623730951, 0.0},
    {DType::kComplex128, ReductionOp::kMax, true, DType::kFloat64, 9.013878188659973, 0.0},
    {DType::kComplex128, ReductionOp::kMean, true, DType::kFloat64, 4.406167625888043, 0.0},
    {DType::kComplex128, ReductionOp::kStd, true, DType::kFloat64, 2.4043708849876153, 0.0},
    {DType::kComplex128, ReductionOp::kVariance, true, DType::kFloat64, 5.780999352576128, 0.0},
    {DType::kComplex128, ReductionOp::kSum, true, DType::kFloat64, 35.24934100710434, 0.0},
    {DType::kComplex128, ReductionOp::kProd, true, DType::kFloat64, 40439.47638137765, 0.0},
    {DType::kComplex128, ReductionOp::kMedian, true, DType::kFloat64, 3.58113883008419, 0.0},
    {DType::kComplex128, ReductionOp::kL1, true, DType::kFloat64, 35.24934100710434, 0.0},
    {DType::kComplex128, ReductionOp::kL2, true, DType::kFloat64, 14.197270864500684, 0.0},
    {DType::kBFloat16, ReductionOp::kMin, false, DType::kBFloat16, -9.0, 0.0},
    {DType::kBFloat16, ReductionOp::kMax, false, DType::kBFloat16, 6.25, 0.0},
    {DType::kBFloat16, ReductionOp::kMean, false, DType::kBFloat16, 1.25, 0.0},
    {DType::kBFloat16, ReductionOp::kStd, false, DType::kBFloat16, 4.65625, 0.0},
    {DType::kBFloat16, ReductionOp::kVariance, false, DType::kBFloat16, 21.625, 0.0},
    {DType::kBFloat16, ReductionOp::kSum, false, DType::kBFloat16, 10.0, 0.0},
    {DType::kBFloat16, ReductionOp::kProd, false, DType::kBFloat16, -10816.0, 0.0},
    {DType::kBFloat16, ReductionOp::kMedian, false, DType::kBFloat16, 2.75, 0.0},
    {DType::kBFloat16, ReductionOp::kL1, false, DType::kBFloat16, 32.5, 0.0},
    {DType::kBFloat16, ReductionOp::kL2, false, DType::kBFloat16, 13.625, 0.0},
    {DType::kBFloat16, ReductionOp::kMin, true, DType::kBFloat16, 1.0, 0.0},
    {DType::kBFloat16, ReductionOp::kMax, true, DType::kBFloat16, 9.0, 0.0},
    {DType::kBFloat16, ReductionOp::kMean, true, DType::kBFloat16, 4.0625, 0.0},
    {DType::kBFloat16, ReductionOp::kStd, true, DType::kBFloat16, 2.578125, 0.0},
    {DType::kBFloat16, ReductionOp::kVariance, true, DType::kBFloat16, 6.625, 0.0},
    {DType::kBFloat16, ReductionOp::kSum, true, DType::kBFloat16, 32.5, 0.0},
    {DType::kBFloat16, ReductionOp::kProd, true, DType::kBFloat16, 10816.0, 0.0},
    {DType::kBFloat16, ReductionOp::kMedian, true, DType::kBFloat16, 3.75, 0.0},
    {DType::kBFloat16, ReductionOp::kL1, true, DType::kBFloat16, 32.5, 0.0},
    {DType::kBFloat16, ReductionOp::kL2, true, DType::kBFloat16, 13.625, 0.0},
};

TEST(ReductionTable, MatchesNumpyDTypesAndValues) {
  ASSERT_EQ(sizeof(kNumpyTable) / sizeof(kNumpyTable[0]), 15u * kNumReductionOps * 2);
  for (const TableRow& row : kNumpyTable) {
    SCOPED_TRACE(std::string(DTypeName(row.input)) + " " + (row.abs ? "abs_" : "") +
                 ReductionOpName(row.op));
    Result<DType> rd = ReductionResultDType(row.op, row.abs, row.input);
    ASSERT_TRUE(rd.ok()) << rd.status().message();
    EXPECT_EQ(rd.value(), row.result);
    Bytes in = TableInput(row.input);
    ASSERT_EQ(in.size(), 8 * DTypeSize(row.input));
    Result<ReductionValue> r = Compute(row.op, row.abs, row.input, in);
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_EQ(r->dtype, row.result);
    // Within one unit in the last place of numpy's answer (exact for integer results): smd sums
    // in double where numpy sums in the result type. numpy's np.absolute of complex64 is not
    // correctly rounded (1 ulp off for -9+0.5j and 6.25-1j; smd's moduli are), so those rows may
    // differ by 2.
    double ulps = (row.abs && row.input == DType::kComplex64) ? 2 : 1;
    if (IsComplexDType(row.result)) {
      std::complex<double> c = GetComplex(r.value());
      EXPECT_NEAR(c.real(), row.re, ulps * Ulp(row.result, row.re));
      EXPECT_NEAR(c.imag(), row.im, ulps * Ulp(row.result, row.im));
    } else {
      EXPECT_NEAR(r->AsDouble(), row.re, ulps * Ulp(row.result, row.re));
    }
  }
}

TEST(ReductionTable, BitExactWhereTheMathIsExact) {
  // Spot checks with exact bytes: these results are exactly representable.
  Bytes h = TableInput(DType::kFloat16);
  Result<ReductionValue> mean = Compute(ReductionOp::kMean, false, DType::kFloat16, h);
  ASSERT_TRUE(mean.ok());
  EXPECT_EQ(Bits16(mean.value()), FloatToHalf(1.25f));
  Result<ReductionValue> prod = Compute(ReductionOp::kProd, true, DType::kBFloat16,
                                        TableInput(DType::kBFloat16));
  ASSERT_TRUE(prod.ok());
  EXPECT_EQ(prod->dtype, DType::kBFloat16);
  EXPECT_EQ(Bits16(prod.value()), FloatToBFloat16(10832.0f));  // 10832 rounds to 10816 in bf16
  EXPECT_EQ(BFloat16ToFloat(Bits16(prod.value())), 10816.0f);
  Result<ReductionValue> sum = Compute(ReductionOp::kSum, false, DType::kInt8,
                                       TableInput(DType::kInt8));
  ASSERT_TRUE(sum.ok());
  EXPECT_EQ(sum->dtype, DType::kInt64);
  EXPECT_EQ(Get<int64_t>(sum.value()), 9);
  Result<ReductionValue> p8 = Compute(ReductionOp::kProd, false, DType::kInt8,
                                      TableInput(DType::kInt8));
  ASSERT_TRUE(p8.ok());
  EXPECT_EQ(Get<int64_t>(p8.value()), -6480);
}

TEST(ReductionResultDType, StringsAndUnknownDTypesAreUnsupported) {
  for (int op = 0; op < kNumReductionOps; ++op) {
    for (bool abs : {false, true}) {
      for (DType t : {DType::kString, DType::kInvalid, static_cast<DType>(99)}) {
        Result<DType> rd = ReductionResultDType(static_cast<ReductionOp>(op), abs, t);
        EXPECT_EQ(rd.status().code(), Code::kUnsupported);
        const char dummy[8] = {0};
        Result<ReductionValue> r = ComputeReduction(static_cast<ReductionOp>(op), abs, t, dummy, 1);
        EXPECT_EQ(r.status().code(), Code::kUnsupported);
      }
    }
  }
}

TEST(ReductionResultDType, InvalidOpIsAnError) {
  Result<DType> rd = ReductionResultDType(static_cast<ReductionOp>(42), false, DType::kFloat32);
  EXPECT_EQ(rd.status().code(), Code::kInvalidArgument);
  float x = 1;
  EXPECT_FALSE(ComputeReduction(static_cast<ReductionOp>(-1), false, DType::kFloat32, &x, 1).ok());
}

TEST(ReductionCompute, NullDataWithElementsIsInvalid) {
  Result<ReductionValue> r =
      ComputeReduction(ReductionOp::kSum, false, DType::kFloat32, nullptr, 3);
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
  Result<ReductionValue> empty =
      ComputeReduction(ReductionOp::kSum, false, DType::kFloat32, nullptr, 0);
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(Get<float>(empty.value()), 0.0f);
}

// ---- Integer arithmetic ----

TEST(ReductionIntegers, SumAndProdWrapLikeNumpy) {
  // Values from numpy 1.26.
  const int64_t kMax64 = std::numeric_limits<int64_t>::max();
  Result<ReductionValue> s = Compute(ReductionOp::kSum, false, DType::kInt64,
                                     ToBytes<int64_t>({kMax64, 1}));
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(Get<int64_t>(s.value()), std::numeric_limits<int64_t>::min());

  Result<ReductionValue> p = Compute(ReductionOp::kProd, false, DType::kInt64,
                                     ToBytes<int64_t>({int64_t{1} << 32, (int64_t{1} << 32) + 1}));
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(Get<int64_t>(p.value()), int64_t{4294967296});

  Result<ReductionValue> u = Compute(ReductionOp::kSum, false, DType::kUInt64,
                                     ToBytes<uint64_t>({~uint64_t{0}, 2}));
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->dtype, DType::kUInt64);
  EXPECT_EQ(Get<uint64_t>(u.value()), 1u);

  const int32_t kMax32 = std::numeric_limits<int32_t>::max();
  Result<ReductionValue> p32 = Compute(ReductionOp::kProd, false, DType::kInt32,
                                       ToBytes<int32_t>({kMax32, kMax32, kMax32}));
  ASSERT_TRUE(p32.ok());
  EXPECT_EQ(p32->dtype, DType::kInt64);
  EXPECT_EQ(Get<int64_t>(p32.value()), int64_t{4611686024869838847});

  // Small types promote to int64 first: no wrap at 8 bits.
  Result<ReductionValue> s8 = Compute(ReductionOp::kSum, false, DType::kInt8,
                                      ToBytes<int8_t>({127, 127}));
  ASSERT_TRUE(s8.ok());
  EXPECT_EQ(Get<int64_t>(s8.value()), 254);
  Result<ReductionValue> p8 = Compute(ReductionOp::kProd, false, DType::kInt8,
                                      ToBytes<int8_t>({127, 127, 127}));
  ASSERT_TRUE(p8.ok());
  EXPECT_EQ(Get<int64_t>(p8.value()), 2048383);

  Result<ReductionValue> pu8 = Compute(ReductionOp::kProd, false, DType::kUInt8,
                                       ToBytes<uint8_t>({255, 255, 255, 255}));
  ASSERT_TRUE(pu8.ok());
  EXPECT_EQ(pu8->dtype, DType::kUInt64);
  EXPECT_EQ(Get<uint64_t>(pu8.value()), uint64_t{4228250625});
}

TEST(ReductionIntegers, ExtremesOfWideTypesAreExact) {
  Result<ReductionValue> m = Compute(ReductionOp::kMax, false, DType::kUInt64,
                                     ToBytes<uint64_t>({~uint64_t{0}, 0, 7}));
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->dtype, DType::kUInt64);
  EXPECT_EQ(Get<uint64_t>(m.value()), ~uint64_t{0});
  const int64_t big = int64_t{1} << 62;
  Result<ReductionValue> lo = Compute(ReductionOp::kMin, false, DType::kInt64,
                                      ToBytes<int64_t>({big + 1, -big - 1}));
  ASSERT_TRUE(lo.ok());
  EXPECT_EQ(Get<int64_t>(lo.value()), -big - 1);
}

TEST(ReductionIntegers, BoolSumProdMean) {
  Bytes b = ToBytes<uint8_t>({1, 1, 0});
  Result<ReductionValue> s = Compute(ReductionOp::kSum, false, DType::kBool, b);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->dtype, DType::kInt64);
  EXPECT_EQ(Get<int64_t>(s.value()), 2);
  Result<ReductionValue> p = Compute(ReductionOp::kProd, false, DType::kBool, b);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(Get<int64_t>(p.value()), 0);
  Result<ReductionValue> mean = Compute(ReductionOp::kMean, false, DType::kBool, b);
  ASSERT_TRUE(mean.ok());
  EXPECT_EQ(mean->dtype, DType::kFloat64);
  EXPECT_DOUBLE_EQ(mean->AsDouble(), 2.0 / 3.0);
  // min/max keep bool: a 0/1 byte.
  Result<ReductionValue> mx = Compute(ReductionOp::kMax, true, DType::kBool, b);
  ASSERT_TRUE(mx.ok());
  EXPECT_EQ(mx->dtype, DType::kBool);
  EXPECT_EQ(mx->bytes[0], 1);
  // Any nonzero byte is true.
  Result<ReductionValue> s2 = Compute(ReductionOp::kSum, false, DType::kBool,
                                      ToBytes<uint8_t>({2, 255, 0}));
  ASSERT_TRUE(s2.ok());
  EXPECT_EQ(Get<int64_t>(s2.value()), 2);
}

TEST(ReductionAbs, AbsOfSignedMinimumWrapsLikeNumpy) {
  // np.absolute(np.int8(-128)) == -128; values below from numpy 1.26.
  Result<ReductionValue> mn =
      Compute(ReductionOp::kMin, true, DType::kInt8, ToBytes<int8_t>({-128}));
  ASSERT_TRUE(mn.ok());
  EXPECT_EQ(mn->dtype, DType::kInt8);
  EXPECT_EQ(Get<int8_t>(mn.value()), -128);
  Result<ReductionValue> mx = Compute(ReductionOp::kMax, true, DType::kInt8,
                                      ToBytes<int8_t>({-128, 5}));
  ASSERT_TRUE(mx.ok());
  EXPECT_EQ(Get<int8_t>(mx.value()), 5);
  Result<ReductionValue> s = Compute(ReductionOp::kSum, true, DType::kInt8,
                                     ToBytes<int8_t>({-128, -128}));
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(Get<int64_t>(s.value()), -256);
  Result<ReductionValue> mean = Compute(ReductionOp::kMean, true, DType::kInt8,
                                        ToBytes<int8_t>({-128, 0}));
  ASSERT_TRUE(mean.ok());
  EXPECT_EQ(mean->AsDouble(), -64.0);
  Result<ReductionValue> med = Compute(ReductionOp::kMedian, true, DType::kInt8,
                                       ToBytes<int8_t>({-128, 1}));
  ASSERT_TRUE(med.ok());
  EXPECT_EQ(med->AsDouble(), -63.5);
  // The norms take true magnitudes (np.linalg.norm converts to float first).
  Result<ReductionValue> l1 =
      Compute(ReductionOp::kL1, true, DType::kInt8, ToBytes<int8_t>({-128}));
  ASSERT_TRUE(l1.ok());
  EXPECT_EQ(l1->AsDouble(), 128.0);
  Result<ReductionValue> l2 = Compute(ReductionOp::kL2, true, DType::kInt8,
                                      ToBytes<int8_t>({-128, -128}));
  ASSERT_TRUE(l2.ok());
  EXPECT_DOUBLE_EQ(l2->AsDouble(), 181.01933598375618);

  Result<ReductionValue> m16 = Compute(ReductionOp::kMin, true, DType::kInt16,
                                       ToBytes<int16_t>({std::numeric_limits<int16_t>::min(), 3}));
  ASSERT_TRUE(m16.ok());
  EXPECT_EQ(Get<int16_t>(m16.value()), std::numeric_limits<int16_t>::min());
  Result<ReductionValue> m32 = Compute(ReductionOp::kMin, true, DType::kInt32,
                                       ToBytes<int32_t>({std::numeric_limits<int32_t>::min(), 3}));
  ASSERT_TRUE(m32.ok());
  EXPECT_EQ(Get<int32_t>(m32.value()), std::numeric_limits<int32_t>::min());
  Result<ReductionValue> m64 = Compute(ReductionOp::kMin, true, DType::kInt64,
                                       ToBytes<int64_t>({std::numeric_limits<int64_t>::min(), 3}));
  ASSERT_TRUE(m64.ok());
  EXPECT_EQ(Get<int64_t>(m64.value()), std::numeric_limits<int64_t>::min());
}

TEST(ReductionAbs, UnsignedAndBoolAreUnchangedFloatsLoseSign) {
  Result<ReductionValue> u =
      Compute(ReductionOp::kMax, true, DType::kUInt8, ToBytes<uint8_t>({255, 1}));
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(Get<uint8_t>(u.value()), 255);
  Result<ReductionValue> f = Compute(ReductionOp::kMin, true, DType::kFloat64,
                                     ToBytes<double>({-0.5, 2, -3}));
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(Get<double>(f.value()), 0.5);
  Result<ReductionValue> c = Compute(ReductionOp::kMax, true, DType::kComplex128,
                                     ComplexBytes<double>({{3, -4}, {-1, 1}}));
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->dtype, DType::kFloat64);
  EXPECT_EQ(Get<double>(c.value()), 5.0);
  // The complex64 modulus is correctly rounded to float32: 9.013877868652344f as np.hypot gives
  // (numpy 1.26's np.absolute(np.complex64(-9+0.5j)) gives 9.01387882232666, one ulp above).
  Result<ReductionValue> hyp = Compute(ReductionOp::kMax, true, DType::kComplex64,
                                       ComplexBytes<float>({{-9, 0.5}}));
  ASSERT_TRUE(hyp.ok());
  EXPECT_EQ(Get<float>(hyp.value()), 9.013877868652344f);
  Result<ReductionValue> c64 = Compute(ReductionOp::kMin, true, DType::kComplex64,
                                       ComplexBytes<float>({{3, -4}, {-6, 8}}));
  ASSERT_TRUE(c64.ok());
  EXPECT_EQ(c64->dtype, DType::kFloat32);
  EXPECT_EQ(Get<float>(c64.value()), 5.0f);
}

// ---- NaN, infinities, empty input ----

TEST(ReductionNaN, PropagatesThroughMinMaxMedianAndSums) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (ReductionOp op : {ReductionOp::kMin, ReductionOp::kMax, ReductionOp::kMedian,
                         ReductionOp::kMean, ReductionOp::kSum, ReductionOp::kStd,
                         ReductionOp::kL1, ReductionOp::kL2, ReductionOp::kProd}) {
    for (bool abs : {false, true}) {
      SCOPED_TRACE(std::string(abs ? "abs_" : "") + ReductionOpName(op));
      // NaN first, in the middle, last.
      for (const std::vector<double>& v : std::vector<std::vector<double>>{
               {nan, 1, -5}, {1, nan, -5}, {1, -5, nan}}) {
        Result<ReductionValue> d = Compute(op, abs, DType::kFloat64, ToBytes(v));
        ASSERT_TRUE(d.ok());
        EXPECT_TRUE(std::isnan(d->AsDouble()));
        std::vector<float> vf(v.begin(), v.end());
        Result<ReductionValue> f = Compute(op, abs, DType::kFloat32, ToBytes(vf));
        ASSERT_TRUE(f.ok());
        EXPECT_TRUE(std::isnan(f->AsDouble()));
        Result<ReductionValue> h = Compute(op, abs, DType::kFloat16, HalfBytes(vf));
        ASSERT_TRUE(h.ok());
        EXPECT_EQ(h->dtype, DType::kFloat16);
        EXPECT_TRUE(std::isnan(h->AsDouble()));
        Result<ReductionValue> b = Compute(op, abs, DType::kBFloat16, BFloat16Bytes(vf));
        ASSERT_TRUE(b.ok());
        EXPECT_EQ(b->dtype, DType::kBFloat16);
        EXPECT_TRUE(std::isnan(b->AsDouble()));
      }
    }
  }
}

TEST(ReductionNaN, ComplexMinMaxMedianReturnTheNaNElement) {
  // numpy 1.26: np.min([1+1j, complex(0, nan), complex(nan, 1)]) is 0+nanj.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Bytes b = ComplexBytes<double>({{1, 1}, {0, nan}, {nan, 1}});
  for (ReductionOp op : {ReductionOp::kMin, ReductionOp::kMax, ReductionOp::kMedian}) {
    Result<ReductionValue> r = Compute(op, false, DType::kComplex128, b);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->dtype, DType::kComplex128);
    std::complex<double> c = GetComplex(r.value());
    EXPECT_EQ(c.real(), 0.0) << ReductionOpName(op);
    EXPECT_TRUE(std::isnan(c.imag())) << ReductionOpName(op);
  }
}

TEST(ReductionInfinity, SumsStayInfiniteStdIsNaN) {
  const double inf = std::numeric_limits<double>::infinity();
  Result<ReductionValue> s =
      Compute(ReductionOp::kSum, false, DType::kFloat64, ToBytes<double>({inf, 1}));
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->AsDouble(), inf);
  Result<ReductionValue> s2 = Compute(ReductionOp::kSum, false, DType::kFloat64,
                                      ToBytes<double>({inf, -inf}));
  ASSERT_TRUE(s2.ok());
  EXPECT_TRUE(std::isnan(s2->AsDouble()));
  Result<ReductionValue> big = Compute(ReductionOp::kSum, false, DType::kFloat64,
                                       ToBytes<double>({1e308, 1e308}));
  ASSERT_TRUE(big.ok());
  EXPECT_EQ(big->AsDouble(), inf);
  Result<ReductionValue> sd =
      Compute(ReductionOp::kStd, false, DType::kFloat64, ToBytes<double>({1, inf}));
  ASSERT_TRUE(sd.ok());
  EXPECT_TRUE(std::isnan(sd->AsDouble()));
  // Median of two huge values does not overflow.
  Result<ReductionValue> med = Compute(ReductionOp::kMedian, false, DType::kFloat64,
                                       ToBytes<double>({1.5e308, 1.7e308}));
  ASSERT_TRUE(med.ok());
  EXPECT_DOUBLE_EQ(med->AsDouble(), 1.6e308);
}

TEST(ReductionEmpty, FollowsNumpy) {
  const DType kAll[] = {DType::kBool,    DType::kInt8,     DType::kInt16,     DType::kInt32,
                        DType::kInt64,   DType::kUInt8,    DType::kUInt16,    DType::kUInt32,
                        DType::kUInt64,  DType::kFloat16,  DType::kBFloat16,  DType::kFloat32,
                        DType::kFloat64, DType::kComplex64, DType::kComplex128};
  for (DType t : kAll) {
    for (bool abs : {false, true}) {
      for (int o = 0; o < kNumReductionOps; ++o) {
        ReductionOp op = static_cast<ReductionOp>(o);
        SCOPED_TRACE(std::string(DTypeName(t)) + " " + (abs ? "abs_" : "") + ReductionOpName(op));
        Result<ReductionValue> r = ComputeReduction(op, abs, t, nullptr, 0);
        if (op == ReductionOp::kMin || op == ReductionOp::kMax) {
          ASSERT_FALSE(r.ok());
          EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
          EXPECT_NE(r.status().message().find("zero-size array"), std::string::npos);
          continue;
        }
        ASSERT_TRUE(r.ok()) << r.status().message();
        EXPECT_EQ(r->dtype, ReductionResultDType(op, abs, t).value());
        double v = r->AsDouble();
        switch (op) {
          case ReductionOp::kSum:
          case ReductionOp::kL1:
          case ReductionOp::kL2:
            EXPECT_EQ(v, 0.0);
            break;
          case ReductionOp::kProd:
            EXPECT_EQ(v, 1.0);
            break;
          default: {  // mean, std, variance, median
            EXPECT_TRUE(std::isnan(v));
            // numpy's bytes (0/0 on the FPU: the quiet NaN with the sign bit set), each part of a
            // complex value alike, so that smd's reduction records equal smdebug's.
            std::string part;
            switch (r->dtype) {
              case DType::kFloat16: part = std::string("\x00\xfe", 2); break;
              case DType::kBFloat16: part = std::string("\xc0\xff", 2); break;
              case DType::kFloat32:
              case DType::kComplex64: part = std::string("\x00\x00\xc0\xff", 4); break;
              default: part = std::string("\x00\x00\x00\x00\x00\x00\xf8\xff", 8); break;
            }
            const std::string want = IsComplexDType(r->dtype) ? part + part : part;
            EXPECT_EQ(std::string(reinterpret_cast<const char*>(r->bytes), DTypeSize(r->dtype)), want);
            if (IsComplexDType(r->dtype)) {
              EXPECT_TRUE(std::isnan(GetComplex(r.value()).imag()));
            }
            break;
          }
        }
        if (IsComplexDType(r->dtype) && op != ReductionOp::kMean && op != ReductionOp::kMedian) {
          EXPECT_EQ(GetComplex(r.value()).imag(), 0.0);
        }
      }
    }
  }
  // Integer sums are integers.
  Result<ReductionValue> s = ComputeReduction(ReductionOp::kSum, false, DType::kUInt8, nullptr, 0);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->dtype, DType::kUInt64);
  EXPECT_EQ(Get<uint64_t>(s.value()), 0u);
  Result<ReductionValue> p = ComputeReduction(ReductionOp::kProd, false, DType::kInt16, nullptr, 0);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(Get<int64_t>(p.value()), 1);
}

// ---- float16 / bfloat16 ----

TEST(ReductionHalf, ResultsAreCorrectlyRoundedFromDouble) {
  // 1 + 2^-11 + 2^-24 is just above the halfway point between 1 and 1 + 2^-10. Rounding via
  // float32 first would land exactly on the halfway point and round to 1 (numpy 1.26's
  // np.sum gives 1.0 here); smd rounds the exact sum once: 1 + 2^-10 (0x3C01).
  Bytes h = HalfBytes({1.0f, std::ldexp(1.0f, -11), std::ldexp(1.0f, -24)});
  Result<ReductionValue> s = Compute(ReductionOp::kSum, false, DType::kFloat16, h);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->dtype, DType::kFloat16);
  EXPECT_EQ(Bits16(s.value()), 0x3C01);
  // bfloat16 likewise: 1 + 2^-8 + 2^-30 rounds up to 1 + 2^-7 (0x3F81).
  Bytes b = BFloat16Bytes({1.0f, std::ldexp(1.0f, -8), std::ldexp(1.0f, -30)});
  Result<ReductionValue> sb = Compute(ReductionOp::kSum, false, DType::kBFloat16, b);
  ASSERT_TRUE(sb.ok());
  EXPECT_EQ(sb->dtype, DType::kBFloat16);
  EXPECT_EQ(Bits16(sb.value()), 0x3F81);
  // An exact tie still rounds to even.
  Bytes tie = HalfBytes({1.0f, std::ldexp(1.0f, -11)});
  Result<ReductionValue> st = Compute(ReductionOp::kSum, false, DType::kFloat16, tie);
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(Bits16(st.value()), 0x3C00);
}

TEST(ReductionHalf, OverflowAndSubnormals) {
  // numpy 1.26: sum of ten float16 60000s is inf, their mean is 60000.
  Bytes h = HalfBytes(std::vector<float>(10, 60000.0f));
  Result<ReductionValue> s = Compute(ReductionOp::kSum, false, DType::kFloat16, h);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(Bits16(s.value()), 0x7C00);
  Result<ReductionValue> m = Compute(ReductionOp::kMean, false, DType::kFloat16, h);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->AsDouble(), 60000.0);
  Result<ReductionValue> mn = Compute(ReductionOp::kMin, false, DType::kFloat16,
                                      HalfBytes({std::ldexp(1.0f, -24), 1.0f}));
  ASSERT_TRUE(mn.ok());
  EXPECT_EQ(Bits16(mn.value()), 0x0001);
  // Min/max return the element's own bits.
  Result<ReductionValue> mx = Compute(ReductionOp::kMax, true, DType::kBFloat16,
                                      BFloat16Bytes({1.5f, -3.0f, 2.0f}));
  ASSERT_TRUE(mx.ok());
  EXPECT_EQ(mx->dtype, DType::kBFloat16);
  EXPECT_EQ(Bits16(mx.value()), 0x4040);
  Result<ReductionValue> neg = Compute(ReductionOp::kMin, false, DType::kFloat16,
                                       HalfBytes({1.5f, -3.0f, 2.0f}));
  ASSERT_TRUE(neg.ok());
  EXPECT_EQ(Bits16(neg.value()), 0xC200);
}

// ---- Shapes: one element, 2-D ----

TEST(ReductionShapes, SingleElement) {
  // numpy 1.26 on np.array([-2.5], np.float32).
  Bytes b = ToBytes<float>({-2.5f});
  const struct {
    ReductionOp op;
    float expected;
  } kCases[] = {{ReductionOp::kMin, -2.5f}, {ReductionOp::kMax, -2.5f}, {ReductionOp::kMean, -2.5f},
                {ReductionOp::kStd, 0.0f},  {ReductionOp::kVariance, 0.0f},
                {ReductionOp::kSum, -2.5f}, {ReductionOp::kProd, -2.5f},
                {ReductionOp::kMedian, -2.5f}, {ReductionOp::kL1, 2.5f}, {ReductionOp::kL2, 2.5f}};
  for (const auto& c : kCases) {
    Result<ReductionValue> r = Compute(c.op, false, DType::kFloat32, b);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->dtype, DType::kFloat32);
    EXPECT_EQ(Get<float>(r.value()), c.expected) << ReductionOpName(c.op);
    Result<ReductionValue> a = Compute(c.op, true, DType::kFloat32, b);
    ASSERT_TRUE(a.ok());
    EXPECT_EQ(Get<float>(a.value()), std::fabs(c.expected)) << ReductionOpName(c.op);
  }
}

TEST(ReductionShapes, TwoDimensionalDataUsesVectorNorms) {
  // [[-2,-1,0],[1,2,3]]: numpy's matrix 2-norm is 3.9396443; smd's vector norm is sqrt(19).
  Bytes a = ToBytes<float>({-2, -1, 0, 1, 2, 3});
  Result<ReductionValue> l2 = Compute(ReductionOp::kL2, true, DType::kFloat32, a);
  ASSERT_TRUE(l2.ok());
  EXPECT_EQ(Get<float>(l2.value()), static_cast<float>(std::sqrt(19.0)));
  // [[1,-2],[3,4]]: numpy's matrix 1-norm is 6; smd's vector norm is 10.
  Bytes b = ToBytes<float>({1, -2, 3, 4});
  Result<ReductionValue> l1 = Compute(ReductionOp::kL1, false, DType::kFloat32, b);
  ASSERT_TRUE(l1.ok());
  EXPECT_EQ(Get<float>(l1.value()), 10.0f);
}

// ---- Accuracy ----

TEST(ReductionAccuracy, LongFloat32Sums) {
  const size_t n = 10000000;
  std::vector<float> v(n, 0.1f);
  Bytes b = ToBytes(v);
  const double x = static_cast<double>(0.1f);
  Result<ReductionValue> mean = Compute(ReductionOp::kMean, false, DType::kFloat32, b);
  ASSERT_TRUE(mean.ok());
  EXPECT_EQ(mean->dtype, DType::kFloat32);
  EXPECT_NEAR(mean->AsDouble(), 0.1, 1e-6 * 0.1);
  EXPECT_EQ(Get<float>(mean.value()), 0.1f);
  Result<ReductionValue> sum = Compute(ReductionOp::kSum, false, DType::kFloat32, b);
  ASSERT_TRUE(sum.ok());
  EXPECT_EQ(Get<float>(sum.value()), static_cast<float>(x * n));
  Result<ReductionValue> l2 = Compute(ReductionOp::kL2, false, DType::kFloat32, b);
  ASSERT_TRUE(l2.ok());
  EXPECT_NEAR(l2->AsDouble(), x * std::sqrt(static_cast<double>(n)), 1e-6 * l2->AsDouble());
  Result<ReductionValue> sd = Compute(ReductionOp::kStd, false, DType::kFloat32, b);
  ASSERT_TRUE(sd.ok());
  EXPECT_LT(sd->AsDouble(), 1e-9);
}

TEST(ReductionAccuracy, VarianceDoesNotCancelWithALargeMean) {
  // 1e8 + {0, 1, 2, 3}: population variance 1.25 exactly; a one-pass E[x^2]-E[x]^2 loses it.
  Result<ReductionValue> v = Compute(ReductionOp::kVariance, false, DType::kFloat64,
                                     ToBytes<double>({1e8, 1e8 + 1, 1e8 + 2, 1e8 + 3}));
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->AsDouble(), 1.25);
}

// ---- Median ----

TEST(ReductionMedian, EvenOddAndUnsorted) {
  Result<ReductionValue> even = Compute(ReductionOp::kMedian, false, DType::kInt16,
                                        ToBytes<int16_t>({5, 1, 4, 2, 3, 3}));
  ASSERT_TRUE(even.ok());
  EXPECT_EQ(even->dtype, DType::kFloat64);
  EXPECT_EQ(even->AsDouble(), 3.0);
  Result<ReductionValue> i64 = Compute(ReductionOp::kMedian, false, DType::kInt64,
                                       ToBytes<int64_t>({4, 3, 2, 1}));
  ASSERT_TRUE(i64.ok());
  EXPECT_EQ(i64->AsDouble(), 2.5);
  Result<ReductionValue> odd = Compute(ReductionOp::kMedian, false, DType::kFloat32,
                                       ToBytes<float>({9, -1, 7, 3, 3}));
  ASSERT_TRUE(odd.ok());
  EXPECT_EQ(Get<float>(odd.value()), 3.0f);
  Result<ReductionValue> bools = Compute(ReductionOp::kMedian, false, DType::kBool,
                                         ToBytes<uint8_t>({1, 0}));
  ASSERT_TRUE(bools.ok());
  EXPECT_EQ(bools->AsDouble(), 0.5);
  // numpy 1.26: np.median([1+2j, 3+0j, 2+5j, 1+3j]) is 1.5+4j (lexicographic order).
  Result<ReductionValue> c = Compute(ReductionOp::kMedian, false, DType::kComplex128,
                                     ComplexBytes<double>({{1, 2}, {3, 0}, {2, 5}, {1, 3}}));
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->dtype, DType::kComplex128);
  EXPECT_EQ(GetComplex(c.value()), std::complex<double>(1.5, 4));
}

TEST(ReductionCompute, UnalignedDataIsFine) {
  Bytes b(1 + 3 * sizeof(double));
  const double v[3] = {1.5, -2.0, 4.0};
  std::memcpy(b.data() + 1, v, sizeof(v));
  Result<ReductionValue> r =
      ComputeReduction(ReductionOp::kSum, false, DType::kFloat64, b.data() + 1, 3);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->AsDouble(), 3.5);
}

TEST(ReductionValue, AsDouble) {
  ReductionValue v;
  EXPECT_EQ(v.dtype, DType::kFloat64);
  EXPECT_EQ(v.AsDouble(), 0.0);
  v.dtype = DType::kBool;
  v.bytes[0] = 1;
  EXPECT_EQ(v.AsDouble(), 1.0);
  v.dtype = DType::kComplex64;
  const float parts[2] = {2.5f, -7.0f};
  std::memcpy(v.bytes, parts, sizeof(parts));
  EXPECT_EQ(v.AsDouble(), 2.5);
  v.dtype = DType::kFloat16;
  uint16_t h = FloatToHalf(-0.75f);
  std::memcpy(v.bytes, &h, 2);
  EXPECT_EQ(v.AsDouble(), -0.75);
  v.dtype = DType::kUInt64;
  const uint64_t u = uint64_t{1} << 63;
  std::memcpy(v.bytes, &u, 8);
  EXPECT_EQ(v.AsDouble(), 9223372036854775808.0);
}

// ---- Names ----

TEST(ReductionNames, OpNamesRoundTrip) {
  const char* kNames[] = {"min", "max", "mean", "std", "variance",
                          "sum", "prod", "median", "l1", "l2"};
  for (int i = 0; i < kNumReductionOps; ++i) {
    ReductionOp op = static_cast<ReductionOp>(i);
    EXPECT_STREQ(ReductionOpName(op), kNames[i]);
    ASSERT_TRUE(ParseReductionOp(kNames[i]).has_value());
    EXPECT_EQ(*ParseReductionOp(kNames[i]), op);
    EXPECT_EQ(IsNorm(op), op == ReductionOp::kL1 || op == ReductionOp::kL2);
  }
  for (const char* bad : {"l1_norm", "abs_min", "", "Min", "var", "l3", "min "}) {
    EXPECT_FALSE(ParseReductionOp(bad).has_value()) << bad;
  }
}

TEST(ReductionNames, ParseEverySpelling) {
  const struct {
    const char* name;
    ReductionOp op;
    bool abs;
  } kCases[] = {
      {"min", ReductionOp::kMin, false},         {"abs_min", ReductionOp::kMin, true},
      {"max", ReductionOp::kMax, false},         {"abs_max", ReductionOp::kMax, true},
      {"mean", ReductionOp::kMean, false},       {"abs_mean", ReductionOp::kMean, true},
      {"std", ReductionOp::kStd, false},         {"abs_std", ReductionOp::kStd, true},
      {"variance", ReductionOp::kVariance, false}, {"abs_variance", ReductionOp::kVariance, true},
      {"sum", ReductionOp::kSum, false},         {"abs_sum", ReductionOp::kSum, true},
      {"prod", ReductionOp::kProd, false},       {"abs_prod", ReductionOp::kProd, true},
      {"median", ReductionOp::kMedian, false},   {"abs_median", ReductionOp::kMedian, true},
      {"l1", ReductionOp::kL1, false},           {"abs_l1", ReductionOp::kL1, true},
      {"l2", ReductionOp::kL2, false},           {"abs_l2", ReductionOp::kL2, true},
      {"l1_norm", ReductionOp::kL1, false},      {"abs_l1_norm", ReductionOp::kL1, true},
      {"l2_norm", ReductionOp::kL2, false},      {"abs_l2_norm", ReductionOp::kL2, true},
  };
  for (const auto& c : kCases) {
    Result<ReductionName> r = ParseReductionName(c.name);
    ASSERT_TRUE(r.ok()) << c.name << ": " << r.status().message();
    EXPECT_EQ(r->op, c.op) << c.name;
    EXPECT_EQ(r->abs, c.abs) << c.name;
  }
}

TEST(ReductionNames, ParseRejects) {
  for (const char* bad : {"l3", "abs_", "", "MEAN", "Abs_mean", "abs_MEAN", "mean_norm",
                          "abs_median_norm", "abs_abs_mean", "l1_norm_norm", "_norm", "abs",
                          "abs_l3_norm", " mean", "mean ", "abs_ mean", "var", "l1norm",
                          "abs-l1"}) {
    Result<ReductionName> r = ParseReductionName(bad);
    ASSERT_FALSE(r.ok()) << "'" << bad << "'";
    EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
    const std::string& m = r.status().message();
    EXPECT_NE(m.find("'" + std::string(bad) + "'"), std::string::npos) << m;
    for (const char* accepted : {"min", "max", "mean", "std", "variance", "sum", "prod", "median",
                                 "l1", "l2", "l1_norm", "l2_norm", "abs_"}) {
      EXPECT_NE(m.find(accepted), std::string::npos) << m;
    }
  }
}

TEST(ReductionNames, Tags) {
  // Expected strings from smdebug's get_reduction_tensor_name (re.sub(r":\d+", "", ...)).
  EXPECT_EQ(ReductionTag("act:0", ReductionOp::kMax, false), "smdebug/reductions/max/act");
  EXPECT_EQ(ReductionTag("a:1/b:23", ReductionOp::kMean, true), "smdebug/reductions/abs_mean/a/b");
  EXPECT_EQ(ReductionTag("fc1_weight", ReductionOp::kMin, false),
            "smdebug/reductions/min/fc1_weight");
  EXPECT_EQ(ReductionTag("fc1_weight", ReductionOp::kL2, true),
            "smdebug/reductions/abs_l2/fc1_weight");
  EXPECT_EQ(ReductionTag("w", ReductionOp::kL1, false), "smdebug/reductions/l1/w");
  EXPECT_EQ(ReductionTag("w", ReductionOp::kVariance, true), "smdebug/reductions/abs_variance/w");
  EXPECT_EQ(ReductionTag("t:12ab:3", ReductionOp::kMax, false), "smdebug/reductions/max/tab");
  EXPECT_EQ(ReductionTag("x:", ReductionOp::kMax, false), "smdebug/reductions/max/x:");
  EXPECT_EQ(ReductionTag("x:y", ReductionOp::kMax, false), "smdebug/reductions/max/x:y");
  EXPECT_EQ(ReductionTag("x::1", ReductionOp::kMax, false), "smdebug/reductions/max/x:");
  EXPECT_EQ(ReductionTag(":7", ReductionOp::kSum, true), "smdebug/reductions/abs_sum/");
  EXPECT_EQ(ReductionTag("", ReductionOp::kProd, false), "smdebug/reductions/prod/");
  EXPECT_EQ(ReductionTag("gradient/dense:0/kernel:0", ReductionOp::kStd, true),
            "smdebug/reductions/abs_std/gradient/dense/kernel");
}

}  // namespace
}  // namespace smd
