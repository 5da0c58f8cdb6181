#include "impl/core/reductions.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>

#include "impl/core/text.h"

namespace smd {
namespace {

constexpr const char* kOpNames[kNumReductionOps] = {"min", "max",    "mean",   "std", "variance",
                                                    "sum", "prod",   "median", "l1",  "l2"};

template <typename T>
struct IsComplexT : std::false_type {};
template <typename F>
struct IsComplexT<std::complex<F>> : std::true_type {};
template <typename T>
constexpr bool kIsComplex = IsComplexT<T>::value;

// ---- Loaders: element i of a raw little-endian buffer as the value a reduction works on. ----
// Integers stay integers (bool as 0/1), float16 and bfloat16 widen exactly to float, complex
// numbers become std::complex. Loads go through memcpy, so the buffer need not be aligned.

template <typename S>
struct NativeLoader {
  using Value = S;
  static Value Load(const unsigned char* p, size_t i) {
    S v;
    std::memcpy(&v, p + i * sizeof(S), sizeof(S));
    return v;
  }
};

struct BoolLoader {
  using Value = uint8_t;
  static Value Load(const unsigned char* p, size_t i) { return p[i] != 0 ? 1 : 0; }
};

struct HalfLoader {
  using Value = float;
  static Value Load(const unsigned char* p, size_t i) {
    uint16_t h;
    std::memcpy(&h, p + 2 * i, 2);
    return HalfToFloat(h);
  }
};

struct BFloat16Loader {
  using Value = float;
  static Value Load(const unsigned char* p, size_t i) {
    uint16_t b;
    std::memcpy(&b, p + 2 * i, 2);
    return BFloat16ToFloat(b);
  }
};

template <typename F>
struct ComplexLoader {
  using Value = std::complex<F>;
  static Value Load(const unsigned char* p, size_t i) {
    F parts[2];
    std::memcpy(parts, p + i * 2 * sizeof(F), 2 * sizeof(F));
    return Value(parts[0], parts[1]);
  }
};

// np.absolute, element-wise. Signed integers wrap (abs of the minimum is the minimum), floats
// clear the sign, complex numbers become their modulus in the matching real type.
template <typename S>
S WrappingAbs(S v) {
  using U = std::make_unsigned_t<S>;
  U u = static_cast<U>(v);
  if (v < 0) u = static_cast<U>(U{0} - u);
  return static_cast<S>(u);  // two's complement: the minimum maps to itself
}
inline int8_t AbsValue(int8_t v) { return WrappingAbs(v); }
inline int16_t AbsValue(int16_t v) { return WrappingAbs(v); }
inline int32_t AbsValue(int32_t v) { return WrappingAbs(v); }
inline int64_t AbsValue(int64_t v) { return WrappingAbs(v); }
inline float AbsValue(float v) { return std::fabs(v); }
inline double AbsValue(double v) { return std::fabs(v); }
inline float AbsValue(std::complex<float> v) {
  return static_cast<float>(std::hypot(static_cast<double>(v.real()),
                                       static_cast<double>(v.imag())));
}
inline double AbsValue(std::complex<double> v) { return std::hypot(v.real(), v.imag()); }

template <typename L>
struct AbsLoader {
  using Value = decltype(AbsValue(std::declval<typename L::Value>()));
  static Value Load(const unsigned char* p, size_t i) { return AbsValue(L::Load(p, i)); }
};

// ---- Element helpers ----

template <typename V>
bool IsNan(const V& v) {
  if constexpr (std::is_floating_point_v<V>) {
    return std::isnan(v);
  } else if constexpr (kIsComplex<V>) {
    return std::isnan(v.real()) || std::isnan(v.imag());
  } else {
    return false;
  }
}

// numpy's ordering: complex numbers compare by real part, then imaginary part. Only used on
// values that are not NaN.
template <typename V>
bool Less(const V& a, const V& b) {
  if constexpr (kIsComplex<V>) {
    return a.real() < b.real() || (a.real() == b.real() && a.imag() < b.imag());
  } else {
    return a < b;
  }
}

// Real values as double, complex values as complex<double>.
template <typename V>
using Wide = std::conditional_t<kIsComplex<V>, std::complex<double>, double>;

template <typename V>
Wide<V> Widen(const V& v) {
  if constexpr (kIsComplex<V>) {
    return std::complex<double>(v.real(), v.imag());
  } else {
    return static_cast<double>(v);
  }
}

// |v| and |v|^2 in double (true magnitudes: |INT8_MIN| is 128 here, as np.linalg.norm gives).
template <typename V>
double Magnitude(const V& v) {
  if constexpr (kIsComplex<V>) {
    return std::hypot(static_cast<double>(v.real()), static_cast<double>(v.imag()));
  } else {
    return std::fabs(static_cast<double>(v));
  }
}
template <typename V>
double SquaredMagnitude(const V& v) {
  if constexpr (kIsComplex<V>) {
    double re = v.real(), im = v.imag();
    return re * re + im * im;
  } else {
    double d = static_cast<double>(v);
    return d * d;
  }
}

// The NaN numpy returns for the mean, std, variance and median of an empty array: 0/0 computed by
// the FPU, which on x86 and ARM is the quiet NaN with the sign bit set (float64 bytes
// 00 00 00 00 00 00 f8 ff). smdebug writes those bytes; so does smd.
template <typename W>
W NanOf() {
  const double nan = std::copysign(std::numeric_limits<double>::quiet_NaN(), -1.0);
  if constexpr (kIsComplex<W>) {
    return W(nan, nan);
  } else {
    return nan;
  }
}

// ---- Summation ----

// Neumaier's compensated sum. Infinities and NaNs bypass the compensation (which would turn
// inf into NaN).
class CompensatedSum {
 public:
  void Add(double x) {
    double t = sum_ + x;
    if (std::fabs(sum_) >= std::fabs(x)) {
      comp_ += (sum_ - t) + x;
    } else {
      comp_ += (x - t) + sum_;
    }
    sum_ = t;
  }
  double Total() const { return std::isfinite(sum_) ? sum_ + comp_ : sum_; }

 private:
  double sum_ = 0.0;
  double comp_ = 0.0;
};

// Sum of term(i) for i in [0, n): plain double sums over short blocks (a tight loop), whose
// results are combined with compensation. Float32 data keeps ~1e-15 relative accuracy at 1e7+
// elements.
constexpr size_t kBlock = 512;

template <typename Term>
double AccurateSum(size_t n, Term term) {
  CompensatedSum total;
  for (size_t begin = 0; begin < n; begin += kBlock) {
    size_t end = std::min(n, begin + kBlock);
    double block = 0.0;
    for (size_t i = begin; i < end; ++i) block += term(i);
    total.Add(block);
  }
  return total.Total();
}

template <typename L>
Wide<typename L::Value> FloatSum(const unsigned char* p, size_t n) {
  using V = typename L::Value;
  if constexpr (kIsComplex<V>) {
    double re = AccurateSum(n, [p](size_t i) { return static_cast<double>(L::Load(p, i).real()); });
    double im = AccurateSum(n, [p](size_t i) { return static_cast<double>(L::Load(p, i).imag()); });
    return {re, im};
  } else {
    return AccurateSum(n, [p](size_t i) { return static_cast<double>(L::Load(p, i)); });
  }
}

// Integer sum / product with 64-bit two's-complement wrap-around (numpy's int64/uint64).
template <typename L>
uint64_t WrappingSum(const unsigned char* p, size_t n) {
  uint64_t s = 0;
  for (size_t i = 0; i < n; ++i) s += static_cast<uint64_t>(L::Load(p, i));
  return s;
}

template <typename L>
uint64_t WrappingProd(const unsigned char* p, size_t n) {
  uint64_t s = 1;
  for (size_t i = 0; i < n; ++i) s *= static_cast<uint64_t>(L::Load(p, i));
  return s;
}

template <typename L>
Wide<typename L::Value> FloatProd(const unsigned char* p, size_t n) {
  using V = typename L::Value;
  if constexpr (kIsComplex<V>) {
    double re = 1.0, im = 0.0;
    for (size_t i = 0; i < n; ++i) {
      V v = L::Load(p, i);
      double vr = v.real(), vi = v.imag();
      double nr = re * vr - im * vi;
      im = re * vi + im * vr;
      re = nr;
    }
    return {re, im};
  } else {
    double s = 1.0;
    for (size_t i = 0; i < n; ++i) s *= static_cast<double>(L::Load(p, i));
    return s;
  }
}

template <typename L>
Wide<typename L::Value> Mean(const unsigned char* p, size_t n) {
  return FloatSum<L>(p, n) / static_cast<double>(n);
}

// Population variance, two passes: the mean, then the mean squared deviation.
template <typename L>
double Variance(const unsigned char* p, size_t n) {
  using V = typename L::Value;
  Wide<V> mean = Mean<L>(p, n);
  double ss = AccurateSum(n, [p, mean](size_t i) {
    return SquaredMagnitude(Widen(L::Load(p, i)) - mean);
  });
  return ss / static_cast<double>(n);
}

// ---- Order statistics ----

template <typename L, bool kMax>
typename L::Value Extreme(const unsigned char* p, size_t n) {
  using V = typename L::Value;
  V m = L::Load(p, 0);
  if (IsNan(m)) return m;
  for (size_t i = 1; i < n; ++i) {
    V v = L::Load(p, i);
    if constexpr (!std::is_integral_v<V>) {
      if (IsNan(v)) return v;  // the first NaN wins, as in numpy
    }
    if (kMax ? Less(m, v) : Less(v, m)) m = v;
  }
  return m;
}

// a/2 + b/2 without overflowing to infinity when a + b would.
inline double Midpoint(double a, double b) {
  double s = a + b;
  if (std::isinf(s) && std::isfinite(a) && std::isfinite(b)) return a / 2 + b / 2;
  return s / 2;
}
inline std::complex<double> Midpoint(std::complex<double> a, std::complex<double> b) {
  return {Midpoint(a.real(), b.real()), Midpoint(a.imag(), b.imag())};
}

// n > 0. Copies the data (the one allocation of this module) and selects the middle with
// nth_element; an even count averages the two middle values.
template <typename L>
Result<Wide<typename L::Value>> Median(const unsigned char* p, size_t n) {
  using V = typename L::Value;
  std::unique_ptr<V[]> buf(new (std::nothrow) V[n]);
  if (!buf) return Status(Code::kOutOfMemory, "median: cannot allocate a copy of the data");
  for (size_t i = 0; i < n; ++i) {
    V v = L::Load(p, i);
    if (IsNan(v)) return Widen(v);
    buf[i] = v;
  }
  V* b = buf.get();
  auto less = [](const V& x, const V& y) { return Less(x, y); };
  size_t mid = n / 2;
  std::nth_element(b, b + mid, b + n, less);
  Wide<V> hi = Widen(b[mid]);
  if (n % 2 == 1) return hi;
  Wide<V> lo = Widen(*std::max_element(b, b + mid, less));
  return Midpoint(lo, hi);
}

// ---- Storing a result in its dtype ----

// Rounds to a float, but inexact results keep the lowest mantissa bit set ("round to odd"), so a
// second rounding to float16 or bfloat16 (both at least 2 bits shorter) is correctly rounded.
float DoubleToFloatRoundToOdd(double d) {
  float f = static_cast<float>(d);
  if (std::isnan(d) || static_cast<double>(f) == d) return f;
  if (std::fabs(static_cast<double>(f)) > std::fabs(d)) f = std::nextafter(f, 0.0f);
  uint32_t u;
  std::memcpy(&u, &f, 4);
  u |= 1u;
  std::memcpy(&f, &u, 4);
  return f;
}

template <typename T>
void PutBytes(ReductionValue* out, const T& v) {
  static_assert(sizeof(T) <= sizeof(out->bytes), "value too large");
  std::memcpy(out->bytes, &v, sizeof(T));
}

// Stores a real value into a floating-point dtype, rounding to nearest (even).
void StoreReal(ReductionValue* out, double d) {
  switch (out->dtype) {
    case DType::kFloat16: PutBytes(out, FloatToHalf(DoubleToFloatRoundToOdd(d))); break;
    case DType::kBFloat16: PutBytes(out, FloatToBFloat16(DoubleToFloatRoundToOdd(d))); break;
    case DType::kFloat32: PutBytes(out, static_cast<float>(d)); break;
    default: PutBytes(out, d); break;  // kFloat64
  }
}

void StoreComplex(ReductionValue* out, std::complex<double> c) {
  if (out->dtype == DType::kComplex64) {
    float parts[2] = {static_cast<float>(c.real()), static_cast<float>(c.imag())};
    PutBytes(out, parts);
  } else {
    double parts[2] = {c.real(), c.imag()};
    PutBytes(out, parts);
  }
}

template <typename W>
void StoreWide(ReductionValue* out, const W& w) {
  if constexpr (kIsComplex<W>) {
    StoreComplex(out, w);
  } else {
    StoreReal(out, w);
  }
}

// Stores an element value unchanged (min, max): the dtype is the value's own.
template <typename V>
void StoreElement(ReductionValue* out, const V& v) {
  if constexpr (std::is_integral_v<V>) {
    PutBytes(out, v);  // bool is a 0/1 byte
  } else {
    StoreWide(out, Widen(v));  // exact: the value came from this dtype
  }
}

// ---- Dispatch ----

template <typename L>
Result<ReductionValue> Reduce(ReductionOp op, DType result, const unsigned char* p, size_t n) {
  using V = typename L::Value;
  ReductionValue out;
  out.dtype = result;
  const double nan = NanOf<double>();
  switch (op) {
    case ReductionOp::kMin:
    case ReductionOp::kMax:
      if (n == 0) {
        return InvalidArgument(std::string("zero-size array to reduction operation ") +
                               (op == ReductionOp::kMin ? "minimum" : "maximum") +
                               " which has no identity");
      }
      StoreElement(&out,
                   op == ReductionOp::kMin ? Extreme<L, false>(p, n) : Extreme<L, true>(p, n));
      break;
    case ReductionOp::kSum:
    case ReductionOp::kProd:
      if constexpr (std::is_integral_v<V>) {
        PutBytes(&out, op == ReductionOp::kSum ? WrappingSum<L>(p, n) : WrappingProd<L>(p, n));
      } else {
        StoreWide(&out, op == ReductionOp::kSum ? FloatSum<L>(p, n) : FloatProd<L>(p, n));
      }
      break;
    case ReductionOp::kMean:
      if (n == 0) {
        StoreWide(&out, NanOf<Wide<V>>());
      } else {
        StoreWide(&out, Mean<L>(p, n));
      }
      break;
    case ReductionOp::kVariance:
      StoreReal(&out, n == 0 ? nan : Variance<L>(p, n));
      break;
    case ReductionOp::kStd:
      StoreReal(&out, n == 0 ? nan : std::sqrt(Variance<L>(p, n)));
      break;
    case ReductionOp::kMedian:
      if (n == 0) {
        StoreWide(&out, NanOf<Wide<V>>());
      } else {
        Result<Wide<V>> m = Median<L>(p, n);
        if (!m.ok()) return m.status();
        StoreWide(&out, m.value());
      }
      break;
    case ReductionOp::kL1:
      StoreReal(&out, AccurateSum(n, [p](size_t i) { return Magnitude(L::Load(p, i)); }));
      break;
    case ReductionOp::kL2: {
      double ss = AccurateSum(n, [p](size_t i) { return SquaredMagnitude(L::Load(p, i)); });
      StoreReal(&out, std::sqrt(ss));
      break;
    }
  }
  return out;
}

template <typename L>
Result<ReductionValue> ReduceMaybeAbs(ReductionOp op, bool abs, DType result,
                                      const unsigned char* p, size_t n) {
  if (abs) return Reduce<AbsLoader<L>>(op, result, p, n);
  return Reduce<L>(op, result, p, n);
}

bool IsValidOp(ReductionOp op) {
  int v = static_cast<int>(op);
  return v >= 0 && v < kNumReductionOps;
}

// Removes every ':' followed by one or more ASCII digits (Python's re.sub(r":\d+", "", s) for
// ASCII input).
std::string RemoveColonIndexes(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    if (s[i] == ':' && i + 1 < s.size() && s[i + 1] >= '0' && s[i + 1] <= '9') {
      i += 2;
      while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    } else {
      out.push_back(s[i++]);
    }
  }
  return out;
}

}  // namespace

const char* ReductionOpName(ReductionOp op) {
  return IsValidOp(op) ? kOpNames[static_cast<int>(op)] : "unknown";
}

bool IsNorm(ReductionOp op) { return op == ReductionOp::kL1 || op == ReductionOp::kL2; }

std::optional<ReductionOp> ParseReductionOp(std::string_view name) {
  for (int i = 0; i < kNumReductionOps; ++i) {
    if (name == kOpNames[i]) return static_cast<ReductionOp>(i);
  }
  return std::nullopt;
}

std::vector<std::string> ReductionSpellings() {
  std::vector<std::string> names(std::begin(kOpNames), std::end(kOpNames));
  for (int i = 0; i < kNumReductionOps; ++i) {
    if (IsNorm(static_cast<ReductionOp>(i))) names.push_back(std::string(kOpNames[i]) + "_norm");
  }
  return names;
}

Result<ReductionName> ParseReductionName(std::string_view name) {
  constexpr std::string_view kAbs = "abs_";
  constexpr std::string_view kNorm = "_norm";
  std::string_view s = name;
  bool abs = false;
  if (s.substr(0, kAbs.size()) == kAbs) {
    abs = true;
    s.remove_prefix(kAbs.size());
  }
  bool norm_suffix = false;
  if (s.size() >= kNorm.size() && s.substr(s.size() - kNorm.size()) == kNorm) {
    norm_suffix = true;
    s.remove_suffix(kNorm.size());
  }
  std::optional<ReductionOp> op = ParseReductionOp(s);
  if (!op || (norm_suffix && !IsNorm(*op))) {
    std::string accepted;
    for (const std::string& n : ReductionSpellings()) accepted += (accepted.empty() ? "" : ", ") + n;
    return InvalidArgument("invalid reduction '" + std::string(name) + "': expected one of " +
                           accepted + ", each optionally prefixed with abs_");
  }
  return ReductionName{*op, abs};
}

double ReductionValue::AsDouble() const { return LoadAsDouble(dtype, bytes, 0); }

Result<DType> ReductionResultDType(ReductionOp op, bool abs, DType input) {
  if (!IsValidOp(op)) {
    return InvalidArgument("invalid reduction op " + std::to_string(static_cast<int>(op)));
  }
  if (input == DType::kString || GetDTypeInfo(static_cast<int>(input)) == nullptr) {
    const char* name = DTypeName(input);
    return Unsupported(std::string("reductions are not supported for dtype ") +
                       (name ? name : std::to_string(static_cast<int>(input))));
  }
  const bool complex = IsComplexDType(input);
  const DType real_of_complex = input == DType::kComplex64 ? DType::kFloat32 : DType::kFloat64;
  // The dtype after np.absolute: complex becomes its real type, everything else is kept.
  const DType post_abs = (abs && complex) ? real_of_complex : input;
  const bool integral = input == DType::kBool || IsSignedIntDType(input) ||
                        IsUnsignedIntDType(input);
  switch (op) {
    case ReductionOp::kMin:
    case ReductionOp::kMax:
      return post_abs;
    case ReductionOp::kSum:
    case ReductionOp::kProd:
      if (IsUnsignedIntDType(input)) return DType::kUInt64;
      if (integral) return DType::kInt64;
      return post_abs;
    case ReductionOp::kMean:
    case ReductionOp::kMedian:
      return integral ? DType::kFloat64 : post_abs;
    case ReductionOp::kStd:
    case ReductionOp::kVariance:
    case ReductionOp::kL1:
    case ReductionOp::kL2:
      if (integral) return DType::kFloat64;
      return complex ? real_of_complex : post_abs;
  }
  return Internal("unreachable");
}

Result<ReductionValue> ComputeReduction(ReductionOp op, bool abs, DType t, const void* data,
                                        size_t n) {
  SMD_ASSIGN_OR_RETURN(DType result, ReductionResultDType(op, abs, t));
  if (data == nullptr && n > 0) return InvalidArgument("reduction over a null buffer");
  const unsigned char* p = static_cast<const unsigned char*>(data);
  switch (t) {
    case DType::kBool: return Reduce<BoolLoader>(op, result, p, n);  // abs is the identity
    case DType::kUInt8: return Reduce<NativeLoader<uint8_t>>(op, result, p, n);
    case DType::kUInt16: return Reduce<NativeLoader<uint16_t>>(op, result, p, n);
    case DType::kUInt32: return Reduce<NativeLoader<uint32_t>>(op, result, p, n);
    case DType::kUInt64: return Reduce<NativeLoader<uint64_t>>(op, result, p, n);
    case DType::kInt8: return ReduceMaybeAbs<NativeLoader<int8_t>>(op, abs, result, p, n);
    case DType::kInt16: return ReduceMaybeAbs<NativeLoader<int16_t>>(op, abs, result, p, n);
    case DType::kInt32: return ReduceMaybeAbs<NativeLoader<int32_t>>(op, abs, result, p, n);
    case DType::kInt64: return ReduceMaybeAbs<NativeLoader<int64_t>>(op, abs, result, p, n);
    case DType::kFloat16: return ReduceMaybeAbs<HalfLoader>(op, abs, result, p, n);
    case DType::kBFloat16: return ReduceMaybeAbs<BFloat16Loader>(op, abs, result, p, n);
    case DType::kFloat32: return ReduceMaybeAbs<NativeLoader<float>>(op, abs, result, p, n);
    case DType::kFloat64: return ReduceMaybeAbs<NativeLoader<double>>(op, abs, result, p, n);
    case DType::kComplex64: return ReduceMaybeAbs<ComplexLoader<float>>(op, abs, result, p, n);
    case DType::kComplex128: return ReduceMaybeAbs<ComplexLoader<double>>(op, abs, result, p, n);
    default: break;
  }
  return Unsupported("reductions are not supported for this dtype");
}

Result<ReductionValue> ReductionValueFromDouble(DType result, double value) {
  ReductionValue out;
  out.dtype = result;
  switch (result) {
    case DType::kFloat16:
    case DType::kBFloat16:
    case DType::kFloat32:
    case DType::kFloat64:
      StoreReal(&out, value);
      return out;
    case DType::kBool:
      PutBytes(&out, static_cast<uint8_t>(value != 0 ? 1 : 0));
      return out;
    case DType::kComplex64:
    case DType::kComplex128:
      return Unsupported("a reduction of complex result cannot be given as a double");
    default:
      break;
  }
  const char* name = DTypeName(result);
  const std::string dt = name ? name : std::to_string(static_cast<int>(result));
  if (!std::isfinite(value) || std::trunc(value) != value) {
    return InvalidArgument("the value " + PythonFloatRepr(value) + " is not a whole number, as a " +
                           dt + " reduction is");
  }
  // Range: [lo, hi] as doubles; 2^63 and 2^64 are the first values out of int64/uint64 range.
  auto in_range = [&](double lo, double hi_exclusive) { return value >= lo && value < hi_exclusive; };
  bool ok = false;
  switch (result) {
    case DType::kInt8: ok = in_range(-128.0, 128.0); if (ok) PutBytes(&out, static_cast<int8_t>(value)); break;
    case DType::kInt16: ok = in_range(-32768.0, 32768.0); if (ok) PutBytes(&out, static_cast<int16_t>(value)); break;
    case DType::kInt32: ok = in_range(-2147483648.0, 2147483648.0); if (ok) PutBytes(&out, static_cast<int32_t>(value)); break;
    case DType::kInt64: ok = in_range(-9223372036854775808.0, 9223372036854775808.0); if (ok) PutBytes(&out, static_cast<int64_t>(value)); break;
    case DType::kUInt8: ok = in_range(0.0, 256.0); if (ok) PutBytes(&out, static_cast<uint8_t>(value)); break;
    case DType::kUInt16: ok = in_range(0.0, 65536.0); if (ok) PutBytes(&out, static_cast<uint16_t>(value)); break;
    case DType::kUInt32: ok = in_range(0.0, 4294967296.0); if (ok) PutBytes(&out, static_cast<uint32_t>(value)); break;
    case DType::kUInt64: ok = in_range(0.0, 18446744073709551616.0); if (ok) PutBytes(&out, static_cast<uint64_t>(value)); break;
    default:
      return Unsupported("reductions are not supported for dtype " + dt);
  }
  if (!ok) return InvalidArgument("the value " + std::to_string(value) + " is out of the range of " + dt);
  return out;
}

std::string ReductionTag(std::string_view tensor_name, ReductionOp op, bool abs,
                         bool keep_colon_index) {
  std::string op_and_tensor = std::string(ReductionOpName(op)) + "/" + std::string(tensor_name);
  return std::string("smdebug/reductions/") + (abs ? "abs_" : "") +
         (keep_colon_index ? op_and_tensor : RemoveColonIndexes(op_and_tensor));
}

}  // namespace smd
