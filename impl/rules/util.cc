#include "impl/rules/util.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>

#include "impl/core/dtype.h"
#include "impl/core/text.h"
#include "impl/rules/rule.h"

namespace smd::rules {

namespace {

bool Absent(Code c) { return SkipsStep(c); }  // the data a rule would skip the step for

template <typename T>
void Widen(const void* data, size_t n, double* out) {
  const T* p = static_cast<const T*>(data);
  for (size_t i = 0; i < n; ++i) out[i] = static_cast<double>(p[i]);
}

}  // namespace

Result<std::vector<std::string>> TensorsMatching(Trial& t, const std::vector<std::string>& regexes,
                                                 std::optional<int64_t> step) {
  if (regexes.empty()) return std::vector<std::string>();
  trial::TensorFilter f;
  f.step = step;
  f.regexes = regexes;
  return t.TensorNames(f);
}

Result<std::vector<std::string>> SelectTensors(Trial& t, const std::vector<std::string>& collections,
                                               const std::vector<std::string>& regexes,
                                               std::optional<int64_t> step, bool all_if_none) {
  if (collections.empty() && regexes.empty()) {
    if (!all_if_none) return std::vector<std::string>();
    trial::TensorFilter f;
    f.step = step;
    return t.TensorNames(f);
  }
  std::set<std::string> names;
  for (const std::string& c : collections) {
    trial::TensorFilter f;
    f.step = step;
    f.collection = c;
    SMD_ASSIGN_OR_RETURN(std::vector<std::string> got, t.TensorNames(f));
    names.insert(got.begin(), got.end());
  }
  if (!regexes.empty()) {
    SMD_ASSIGN_OR_RETURN(std::vector<std::string> got, TensorsMatching(t, regexes, step));
    names.insert(got.begin(), got.end());
  }
  return std::vector<std::string>(names.begin(), names.end());
}

Result<ValuePtr> ValueAt(Trial& t, const std::string& name, int64_t step, Mode mode) {
  auto id = t.TensorId(name);
  if (!id.ok()) {
    if (Absent(id.status().code())) return ValuePtr();
    return id.status();
  }
  auto v = t.TensorValue(*id, step, mode, nullptr);
  if (!v.ok()) {
    if (Absent(v.status().code())) return ValuePtr();
    return v.status();
  }
  return std::move(v).value();
}

Result<std::optional<double>> ReductionAt(Trial& t, const std::string& name, int64_t step,
                                          const std::string& reduction, Mode mode) {
  auto id = t.TensorId(name);
  if (!id.ok()) {
    if (Absent(id.status().code())) return std::optional<double>();
    return id.status();
  }
  auto v = t.TensorReductionValue(*id, step, reduction, mode, nullptr);
  if (!v.ok()) {
    // kUnsupported: a string tensor has no reductions.
    if (Absent(v.status().code()) || v.status().code() == Code::kUnsupported) {
      return std::optional<double>();
    }
    return v.status();
  }
  const trial::Value& val = **v;
  if (val.is_string() || val.count() == 0) return std::optional<double>();
  return std::optional<double>(ElementAt(val, 0));
}

double ElementAt(const trial::Value& v, size_t i) {
  if (v.is_string() || i >= v.count()) return 0.0;
  return LoadAsDouble(v.dtype(), v.data(), i);
}

std::vector<double> ToDoubles(const trial::Value& v) {
  std::vector<double> out;
  if (v.is_string()) return out;
  const size_t n = v.count();
  out.resize(n);
  const void* d = v.data();
  switch (v.dtype()) {
    case DType::kFloat32: Widen<float>(d, n, out.data()); break;
    case DType::kFloat64: std::memcpy(out.data(), d, n * sizeof(double)); break;
    case DType::kInt32: Widen<int32_t>(d, n, out.data()); break;
    case DType::kInt64: Widen<int64_t>(d, n, out.data()); break;
    case DType::kUInt8: Widen<uint8_t>(d, n, out.data()); break;
    case DType::kInt8: Widen<int8_t>(d, n, out.data()); break;
    case DType::kInt16: Widen<int16_t>(d, n, out.data()); break;
    case DType::kUInt16: Widen<uint16_t>(d, n, out.data()); break;
    case DType::kUInt32: Widen<uint32_t>(d, n, out.data()); break;
    case DType::kUInt64: Widen<uint64_t>(d, n, out.data()); break;
    default:
      for (size_t i = 0; i < n; ++i) out[i] = LoadAsDouble(v.dtype(), d, i);
      break;
  }
  return out;
}

bool CanBeNonFinite(const trial::Value& v) {
  return IsFloatingDType(v.dtype()) || IsComplexDType(v.dtype());
}

bool AllClose(const std::vector<double>& a, const std::vector<double>& b, double rtol, double atol,
              bool equal_nan) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    const double x = a[i], y = b[i];
    if (std::isnan(x) || std::isnan(y)) {
      if (!(equal_nan && std::isnan(x) && std::isnan(y))) return false;
      continue;
    }
    if (std::isinf(x) || std::isinf(y)) {
      if (x != y) return false;
      continue;
    }
    if (!(std::fabs(x - y) <= atol + rtol * std::fabs(y))) return false;
  }
  return true;
}

bool ValuesClose(const trial::Value& a, const trial::Value& b, double rtol, double atol,
                 bool equal_nan) {
  if (a.shape() != b.shape() || a.is_string() != b.is_string()) return false;
  if (a.is_string()) {
    for (size_t i = 0; i < a.count(); ++i) {
      if (a.string_at(i) != b.string_at(i)) return false;
    }
    return true;
  }
  if (IsComplexDType(a.dtype()) || IsComplexDType(b.dtype())) {
    // Compare real and imaginary parts (numpy compares complex magnitudes of the difference;
    // close enough for "did it change").
    auto parts = [](const trial::Value& v) {
      std::vector<double> out;
      const size_t w = v.dtype() == DType::kComplex64 ? 4 : 8;
      const bool cplx = IsComplexDType(v.dtype());
      for (size_t i = 0; i < v.count(); ++i) {
        if (!cplx) {
          out.push_back(LoadAsDouble(v.dtype(), v.data(), i));
          out.push_back(0.0);
          continue;
        }
        const unsigned char* p = static_cast<const unsigned char*>(v.data()) + 2 * w * i;
        for (int k = 0; k < 2; ++k) {
          if (w == 4) {
            float f;
            std::memcpy(&f, p + 4 * k, 4);
            out.push_back(f);
          } else {
            double d;
            std::memcpy(&d, p + 8 * k, 8);
            out.push_back(d);
          }
        }
      }
      return out;
    };
    return AllClose(parts(a), parts(b), rtol, atol, equal_nan);
  }
  return AllClose(ToDoubles(a), ToDoubles(b), rtol, atol, equal_nan);
}

double Percentile(std::vector<double> v, double q) {
  if (v.empty()) return std::nan("");
  for (double x : v) {
    if (std::isnan(x)) return x;  // numpy: NaN propagates
  }
  const double pos = q / 100.0 * static_cast<double>(v.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, v.size() - 1);
  std::nth_element(v.begin(), v.begin() + static_cast<ptrdiff_t>(lo), v.end());
  const double a = v[lo];
  double b = a;
  if (hi != lo) b = *std::min_element(v.begin() + static_cast<ptrdiff_t>(lo) + 1, v.end());
  return a + (b - a) * (pos - static_cast<double>(lo));
}

Status InsufficientInformation(const std::string& rule, const std::string& message) {
  return InvalidArgument("Insufficient information to invoke rule " + rule + ": " + message);
}

std::string Num(double x) { return PythonFloatRepr(x); }

int64_t NameIndex(const std::string& name) {
  size_t us = name.rfind('_');
  if (us == std::string::npos || us + 1 == name.size()) return 0;
  int64_t v = 0;
  for (size_t i = us + 1; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') return 0;
    v = v * 10 + (name[i] - '0');
    if (v > (int64_t(1) << 50)) return v;
  }
  return v;
}

}  // namespace smd::rules
