// numpy's array printing (numpy/core/arrayprint.py of numpy 1.26, legacy=False), for the values of
// the public C API: the element formats (BoolFormat, IntegerFormat, FloatingFormat,
// ComplexFloatingFormat, repr for strings) and the layout (_formatArray: nested brackets, line
// wrapping at 75 columns, summarization with "...").
#include "numpy_format.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

namespace smdtool {
namespace {

constexpr size_t kThreshold = 1000;  // numpy's threshold: more elements are summarized
constexpr int64_t kEdgeItems = 3;
constexpr size_t kLineWidth = 75;
constexpr int kPrecision = 8;
const char* const kSeparator = ", ";

// ---- 16-bit floats --------------------------------------------------------------------------

enum class FloatKind { kF16, kBF16, kF32, kF64 };

double HalfToDouble(uint16_t h) {
  const int sign = h >> 15, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  double v;
  if (exp == 0) {
    v = std::ldexp(static_cast<double>(man), -24);
  } else if (exp == 31) {
    v = man ? NAN : INFINITY;
  } else {
    v = std::ldexp(static_cast<double>(man | 0x400), exp - 25);
  }
  return sign ? -v : v;
}

double BFloat16ToDouble(uint16_t b) {
  uint32_t u = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

double Bits16ToDouble(FloatKind k, uint16_t bits) {
  return k == FloatKind::kF16 ? HalfToDouble(bits) : BFloat16ToDouble(bits);
}

uint16_t MaxFinite16(FloatKind k) { return k == FloatKind::kF16 ? 0x7bff : 0x7f7f; }

// The nearest value of a 16-bit format (ties to even), as a double; infinity past the largest.
double RoundTo16(FloatKind k, double x) {
  if (!std::isfinite(x) || x == 0) return x;
  const double a = std::fabs(x);
  // Binary search over the magnitudes, which increase with their bit patterns.
  uint16_t lo = 0, hi = MaxFinite16(k);
  if (a >= Bits16ToDouble(k, hi)) {
    const double top = Bits16ToDouble(k, hi), ulp = top - Bits16ToDouble(k, hi - 1);
    const double r = a < top + ulp / 2 ? top : INFINITY;
    return x < 0 ? -r : r;
  }
  while (hi - lo > 1) {
    uint16_t mid = static_cast<uint16_t>((lo + hi) / 2);
    if (Bits16ToDouble(k, mid) <= a) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  const double vl = Bits16ToDouble(k, lo), vh = Bits16ToDouble(k, hi);
  double r;
  if (a - vl < vh - a) {
    r = vl;
  } else if (a - vl > vh - a) {
    r = vh;
  } else {
    r = (lo % 2 == 0) ? vl : vh;
  }
  return x < 0 ? -r : r;
}

// The value of x rounded to the element type.
double RoundToKind(FloatKind k, double x) {
  switch (k) {
    case FloatKind::kF64: return x;
    case FloatKind::kF32: return static_cast<float>(x);
    default: return RoundTo16(k, x);
  }
}

// ---- shortest digits ------------------------------------------------------------------------

// |x| = digits[0].digits[1..] x 10^exp10, digits without trailing zeros ("0" for zero).
struct Decimal {
  std::string digits;
  int exp10 = 0;
};

// Parses "d.ddde[+-]XX" (printf / to_chars scientific output of a non-negative number).
Decimal ParseScientific(const char* s) {
  Decimal d;
  const char* e = std::strchr(s, 'e');
  for (const char* p = s; p != e; ++p) {
    if (*p >= '0' && *p <= '9') d.digits.push_back(*p);
  }
  d.exp10 = std::atoi(e + 1);
  while (d.digits.size() > 1 && d.digits.back() == '0') d.digits.pop_back();
  if (d.digits == "0") d.exp10 = 0;
  return d;
}

// Whether y is read back as the 16-bit value v (bits `m` of its magnitude), ties to even.
bool ReadsBackAs16(FloatKind k, uint16_t m, double a, double y) {
  const double up = m == MaxFinite16(k) ? a + (a - Bits16ToDouble(k, m - 1))
                                        : Bits16ToDouble(k, static_cast<uint16_t>(m + 1));
  const double down = m == 0 ? -Bits16ToDouble(k, 1) : Bits16ToDouble(k, static_cast<uint16_t>(m - 1));
  const double lo = (down + a) / 2, hi = (a + up) / 2;
  if (y > lo && y < hi) return true;
  return (y == lo || y == hi) && m % 2 == 0;
}

// The shortest digits that read back as |x| in its type.
Decimal Shortest(FloatKind k, double x) {
  const double a = std::fabs(x);
  char buf[64];
  if (a == 0) return Decimal{"0", 0};
  if (k == FloatKind::kF64 || k == FloatKind::kF32) {
    std::to_chars_result r = k == FloatKind::kF64
                                 ? std::to_chars(buf, buf + sizeof buf - 1, a, std::chars_format::scientific)
                                 : std::to_chars(buf, buf + sizeof buf - 1, static_cast<float>(a),
                                                 std::chars_format::scientific);
    *r.ptr = '\0';
    return ParseScientific(buf);
  }
  // 16-bit types: the shortest digit count whose nearest decimal (or a neighbour of it in the
  // last digit) reads back as the value; among those, the closest to it.
  uint16_t m = 0, hi = MaxFinite16(k);  // the magnitude's bits: binary search (they increase)
  while (m < hi) {
    const uint16_t mid = static_cast<uint16_t>((m + hi) / 2);
    if (Bits16ToDouble(k, mid) < a) {
      m = static_cast<uint16_t>(mid + 1);
    } else {
      hi = mid;
    }
  }
  for (int p = 1; p <= 17; ++p) {
    std::snprintf(buf, sizeof buf, "%.*e", p - 1, a);
    // the p digits as an integer
    std::string full(buf);
    uint64_t mant = 0;
    for (char c : full.substr(0, full.find('e'))) {
      if (c >= '0' && c <= '9') mant = mant * 10 + static_cast<uint64_t>(c - '0');
    }
    const int e = std::atoi(std::strchr(buf, 'e') + 1) - (p - 1);
    bool found = false;
    double best_err = 0;
    uint64_t best = 0;
    for (int64_t delta = -1; delta <= 1; ++delta) {
      if (mant == 0 && delta < 0) continue;
      uint64_t cand = mant + static_cast<uint64_t>(delta);
      char c[48];
      std::snprintf(c, sizeof c, "%llue%d", static_cast<unsigned long long>(cand), e);
      double y = std::strtod(c, nullptr);
      if (!ReadsBackAs16(k, m, a, y)) continue;
      double err = std::fabs(y - a);
      // A tie between two candidates goes to the even last digit, as in numpy.
      if (!found || err < best_err || (err == best_err && cand % 2 == 0)) {
        found = true;
        best_err = err;
        best = cand;
      }
    }
    if (found) {
      char c[48];
      std::snprintf(c, sizeof c, "%llue%d", static_cast<unsigned long long>(best), e);
      std::snprintf(buf, sizeof buf, "%.*e", p - 1, std::strtod(c, nullptr));
      return ParseScientific(buf);
    }
  }
  std::snprintf(buf, sizeof buf, "%.16e", a);
  return ParseScientific(buf);
}

// numpy's dragon4_positional(x, precision=8, unique=True, trim='.') without padding: int and
// fraction parts (the fraction possibly empty: "1.").
void Positional(FloatKind k, double x, std::string* int_part, std::string* frac_part) {
  const Decimal d = Shortest(k, x);
  const int nd = static_cast<int>(d.digits.size());
  const int frac_needed = std::max(0, nd - 1 - d.exp10);
  std::string ip, fp;
  if (frac_needed <= kPrecision) {
    if (d.exp10 >= nd - 1 && d.digits != "0") {
      // No fraction: then |x| is an integer, and numpy prints all its digits, not only the
      // unique ones (float16 16784 is "16784.", not "16780.").
      char buf[400];
      std::snprintf(buf, sizeof buf, "%.0f", std::fabs(x));
      ip = buf;
    } else if (d.exp10 >= 0) {
      for (int i = 0; i <= d.exp10; ++i) ip.push_back(d.digits[static_cast<size_t>(i)]);
      fp = d.digits.substr(static_cast<size_t>(d.exp10 + 1));
    } else {
      ip = "0";
      fp = std::string(static_cast<size_t>(-d.exp10 - 1), '0') + d.digits;
      if (d.digits == "0") fp.clear();
    }
  } else {  // more digits than the precision: the value rounded to 8 decimals, zeros trimmed
    char buf[400];
    std::snprintf(buf, sizeof buf, "%.*f", kPrecision, std::fabs(x));
    std::string s(buf);
    size_t dot = s.find('.');
    ip = s.substr(0, dot);
    fp = s.substr(dot + 1);
    while (!fp.empty() && fp.back() == '0') fp.pop_back();
  }
  if (std::signbit(x)) ip.insert(ip.begin(), '-');
  *int_part = ip;
  *frac_part = fp;
}

// numpy's dragon4_scientific(x, precision=8, unique=True, trim='.'), or with min_digits fraction
// digits at least (further digits of the exact value). Parts: "-1", "5", exponent value.
void Scientific(FloatKind k, double x, int min_digits, std::string* int_part,
                std::string* frac_part, int* exp10) {
  Decimal d = Shortest(k, x);
  auto exact = [&](int frac_digits, bool trim) {  // |x| rounded to frac_digits decimals
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*e", frac_digits, std::fabs(x));
    const char* e = std::strchr(buf, 'e');
    d.exp10 = std::atoi(e + 1);
    d.digits.clear();
    for (const char* p = buf; p != e; ++p) {
      if (*p != '.') d.digits.push_back(*p);
    }
    if (trim) {
      while (d.digits.size() > 1 && d.digits.back() == '0') d.digits.pop_back();
    }
  };
  if (static_cast<int>(d.digits.size()) - 1 > kPrecision) exact(kPrecision, true);
  if (static_cast<int>(d.digits.size()) - 1 < min_digits) exact(min_digits, false);
  std::string ip(1, d.digits[0]);
  if (std::signbit(x)) ip.insert(ip.begin(), '-');
  *int_part = ip;
  *frac_part = d.digits.substr(1);
  *exp10 = d.exp10;
}

std::string ExpText(int e, int digits) {
  std::string s = std::to_string(std::abs(e));
  while (static_cast<int>(s.size()) < digits) s.insert(s.begin(), '0');
  return std::string(e < 0 ? "e-" : "e+") + s;
}

// numpy's FloatingFormat (floatmode 'maxprec', suppress_small False).
class FloatFormat {
 public:
  FloatFormat(FloatKind kind, const std::vector<double>& data, bool plus_sign)
      : kind_(kind), plus_(plus_sign) {
    std::vector<double> finite;
    for (double v : data) {
      if (std::isfinite(v)) finite.push_back(v);
    }
    double max_val = 0, min_val = 0;
    bool any_nonzero = false;
    for (double v : finite) {
      if (v == 0) continue;
      const double a = std::fabs(v);
      if (!any_nonzero || a > max_val) max_val = a;
      if (!any_nonzero || a < min_val) min_val = a;
      any_nonzero = true;
    }
    if (any_nonzero) {
      // As numpy: the quotient in the element type, the comparisons with Python floats.
      const double ratio = RoundToKind(kind, max_val / min_val);
      exp_ = max_val >= 1e8 || min_val < 0.0001 || ratio > 1000.0;
    }
    if (finite.empty()) {
      pad_left_ = pad_right_ = 0;
    } else if (exp_) {
      int max_frac = 0, max_exp_len = 0;
      for (double v : finite) {
        std::string ip, fp;
        int e;
        Scientific(kind, v, 0, &ip, &fp, &e);
        max_frac = std::max(max_frac, static_cast<int>(fp.size()));
        max_exp_len = std::max(max_exp_len, static_cast<int>(ExpText(e, 2).size()) - 2);
        pad_left_ = std::max(pad_left_, static_cast<int>(ip.size()) + (plus_ && !std::signbit(v)));
      }
      exp_size_ = max_exp_len;
      min_digits_ = max_frac;
      pad_right_ = exp_size_ + 2 + min_digits_;
    } else {
      for (double v : finite) {
        std::string ip, fp;
        Positional(kind, v, &ip, &fp);
        pad_left_ = std::max(pad_left_, static_cast<int>(ip.size()) + (plus_ && !std::signbit(v)));
        pad_right_ = std::max(pad_right_, static_cast<int>(fp.size()));
      }
    }
    if (finite.size() != data.size()) {
      bool neginf = plus_;
      for (double v : data) {
        if (std::isinf(v) && v < 0) neginf = true;
      }
      const int offset = pad_right_ + 1;
      pad_left_ = std::max({pad_left_, 3 - offset, 3 + (neginf ? 1 : 0) - offset});
    }
  }

  std::string operator()(double v) const {
    if (!std::isfinite(v)) {
      std::string r = std::isnan(v) ? (plus_ ? "+nan" : "nan")
                                    : (v < 0 ? "-inf" : (plus_ ? "+inf" : "inf"));
      const int width = pad_left_ + pad_right_ + 1;
      return std::string(static_cast<size_t>(std::max(0, width - static_cast<int>(r.size()))), ' ') + r;
    }
    std::string ip, fp;
    std::string tail;
    if (exp_) {
      int e;
      Scientific(kind_, v, min_digits_, &ip, &fp, &e);
      tail = ExpText(e, exp_size_);
    } else {
      Positional(kind_, v, &ip, &fp);
    }
    if (plus_ && !std::signbit(v)) ip.insert(ip.begin(), '+');
    std::string out(static_cast<size_t>(std::max(0, pad_left_ - static_cast<int>(ip.size()))), ' ');
    out += ip;
    out += '.';
    out += fp;
    if (exp_) {
      out += tail;
    } else {
      out.append(static_cast<size_t>(std::max(0, pad_right_ - static_cast<int>(fp.size()))), ' ');
    }
    return out;
  }

 private:
  FloatKind kind_;
  bool plus_;
  bool exp_ = false;
  int pad_left_ = 0, pad_right_ = 0, exp_size_ = -1, min_digits_ = 0;
};

// ---- strings --------------------------------------------------------------------------------

// Decodes one UTF-8 sequence at s[i]; -1 if invalid (then one byte is consumed).
int32_t DecodeUtf8(const unsigned char* s, size_t n, size_t* i) {
  const unsigned char c = s[*i];
  int len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
  if (len == 0 || *i + static_cast<size_t>(len) > n) {
    ++*i;
    return -1;
  }
  int32_t cp = len == 1 ? c : c & (0x7f >> len);
  for (int k = 1; k < len; ++k) {
    const unsigned char cc = s[*i + static_cast<size_t>(k)];
    if ((cc >> 6) != 2) {
      ++*i;
      return -1;
    }
    cp = (cp << 6) | (cc & 0x3f);
  }
  static const int32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMin[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
    ++*i;
    return -1;
  }
  *i += static_cast<size_t>(len);
  return cp;
}

}  // namespace

std::string PythonStrRepr(const char* s, size_t n) {
  const unsigned char* u = reinterpret_cast<const unsigned char*>(s);
  const bool has_single = std::memchr(s, '\'', n) != nullptr;
  const bool has_double = std::memchr(s, '"', n) != nullptr;
  const char quote = has_single && !has_double ? '"' : '\'';
  std::string out(1, quote);
  char buf[16];
  for (size_t i = 0; i < n;) {
    const size_t start = i;
    const int32_t cp = DecodeUtf8(u, n, &i);
    if (cp < 0) {
      std::snprintf(buf, sizeof buf, "\\x%02x", u[start]);
      out += buf;
    } else if (cp == quote || cp == '\\') {
      out += '\\';
      out += static_cast<char>(cp);
    } else if (cp == '\n') {
      out += "\\n";
    } else if (cp == '\r') {
      out += "\\r";
    } else if (cp == '\t') {
      out += "\\t";
    } else if (cp < 0x20 || (cp >= 0x7f && cp <= 0xa0) || cp == 0xad) {
      std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned>(cp));
      out += buf;
    } else if ((cp >= 0x2028 && cp <= 0x2029) || (cp >= 0x200b && cp <= 0x200f) || cp == 0xfeff) {
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(cp));
      out += buf;
    } else {
      out.append(s + start, i - start);
    }
  }
  out += quote;
  return out;
}

std::string ShapeText(const int64_t* dims, size_t ndim) {
  std::string s = "[";
  for (size_t i = 0; i < ndim; ++i) {
    if (i) s += ", ";
    s += std::to_string(dims[i]);
  }
  return s + "]";
}

namespace {

// The layout of _formatArray, over elements given by their flat index.
class Layout {
 public:
  Layout(std::vector<int64_t> shape, bool summarize, std::function<std::string(size_t)> word)
      : shape_(std::move(shape)), summarize_(summarize), word_(std::move(word)) {
    strides_.assign(shape_.size(), 1);
    for (size_t i = shape_.size(); i-- > 1;) strides_[i - 1] = strides_[i] * static_cast<size_t>(shape_[i]);
  }

  std::string Run() { return Recurse(0, 0, " ", static_cast<int64_t>(kLineWidth)); }

 private:
  // Widths are signed, as in numpy: deep arrays take them below zero (every word then wraps).
  static void ExtendLine(std::string* s, std::string* line, const std::string& word, int64_t width,
                         const std::string& next_prefix) {
    bool wrap = static_cast<int64_t>(line->size() + word.size()) > width;
    if (line->size() <= next_prefix.size()) wrap = false;  // wrapping would not help
    if (wrap) {
      size_t end = line->find_last_not_of(' ');
      *s += line->substr(0, end == std::string::npos ? 0 : end + 1) + "\n";
      *line = next_prefix;
    }
    *line += word;
  }

  // One level per axis: the decoder refuses tensors of more than io::kMaxTensorDims axes, which
  // bounds the depth.
  std::string Recurse(size_t axis, size_t base, const std::string& hanging, int64_t width) {
    if (axis == shape_.size()) return word_(base);
    const std::string next_hanging = hanging + " ";
    const int64_t next_width = width - 1;
    const int64_t n = shape_[axis];
    const bool summary = summarize_ && 2 * kEdgeItems < n;
    const int64_t leading = summary ? kEdgeItems : 0;
    const int64_t trailing = summary ? kEdgeItems : n;
    const size_t stride = strides_[axis];
    auto at = [&](int64_t i) { return base + static_cast<size_t>(i < 0 ? n + i : i) * stride; };
    const size_t axes_left = shape_.size() - axis;
    const std::string sep = kSeparator;
    std::string s;
    if (axes_left == 1) {
      const int64_t elem_width = width - 1;  // room for the separator's "," or the "]"
      std::string line = hanging;
      for (int64_t i = 0; i < leading; ++i) {
        ExtendLine(&s, &line, Recurse(axis + 1, at(i), next_hanging, next_width), elem_width, hanging);
        line += sep;
      }
      if (summary) {
        ExtendLine(&s, &line, "...", elem_width, hanging);
        line += sep;
      }
      for (int64_t i = trailing; i > 1; --i) {
        ExtendLine(&s, &line, Recurse(axis + 1, at(-i), next_hanging, next_width), elem_width, hanging);
        line += sep;
      }
      ExtendLine(&s, &line, Recurse(axis + 1, at(-1), next_hanging, next_width), elem_width, hanging);
      s += line;
    } else {
      const std::string line_sep = "," + std::string(axes_left - 1, '\n');
      for (int64_t i = 0; i < leading; ++i) {
        s += hanging + Recurse(axis + 1, at(i), next_hanging, next_width) + line_sep;
      }
      if (summary) s += hanging + "..." + line_sep;
      for (int64_t i = trailing; i > 1; --i) {
        s += hanging + Recurse(axis + 1, at(-i), next_hanging, next_width) + line_sep;
      }
      s += hanging + Recurse(axis + 1, at(-1), next_hanging, next_width);
    }
    return "[" + s.substr(hanging.size()) + "]";
  }

  std::vector<int64_t> shape_;
  std::vector<size_t> strides_;
  bool summarize_;
  std::function<std::string(size_t)> word_;
};

// The flat indices numpy looks at to choose the element format (_leading_trailing).
std::vector<size_t> ShownIndices(const std::vector<int64_t>& shape, bool summarize) {
  std::vector<size_t> out;
  std::vector<std::vector<int64_t>> per_axis;
  for (int64_t n : shape) {
    std::vector<int64_t> idx;
    if (summarize && n > 2 * kEdgeItems) {
      for (int64_t i = 0; i < kEdgeItems; ++i) idx.push_back(i);
      for (int64_t i = n - kEdgeItems; i < n; ++i) idx.push_back(i);
    } else {
      for (int64_t i = 0; i < n; ++i) idx.push_back(i);
    }
    per_axis.push_back(std::move(idx));
  }
  std::vector<size_t> cur(shape.size(), 0);
  for (const auto& a : per_axis) {
    if (a.empty()) return out;
  }
  for (;;) {
    size_t flat = 0;
    for (size_t ax = 0; ax < shape.size(); ++ax) {
      flat = flat * static_cast<size_t>(shape[ax]) + static_cast<size_t>(per_axis[ax][cur[ax]]);
    }
    out.push_back(flat);
    size_t ax = shape.size();
    while (ax > 0) {
      --ax;
      if (++cur[ax] < per_axis[ax].size()) break;
      cur[ax] = 0;
      if (ax == 0) return out;
    }
    if (shape.empty()) return out;
  }
}

template <typename T>
T Load(const void* data, size_t i) {
  T v;
  std::memcpy(&v, static_cast<const char*>(data) + i * sizeof(T), sizeof(T));
  return v;
}

double LoadReal(smd_dtype dt, const void* data, size_t i) {
  switch (dt) {
    case SMD_DTYPE_FLOAT16: return HalfToDouble(Load<uint16_t>(data, i));
    case SMD_DTYPE_BFLOAT16: return BFloat16ToDouble(Load<uint16_t>(data, i));
    case SMD_DTYPE_FLOAT32: return Load<float>(data, i);
    case SMD_DTYPE_FLOAT64: return Load<double>(data, i);
    case SMD_DTYPE_COMPLEX64: return Load<float>(data, 2 * i);
    case SMD_DTYPE_COMPLEX128: return Load<double>(data, 2 * i);
    default: return 0;
  }
}

double LoadImag(smd_dtype dt, const void* data, size_t i) {
  return dt == SMD_DTYPE_COMPLEX64 ? Load<float>(data, 2 * i + 1) : Load<double>(data, 2 * i + 1);
}

std::string IntText(smd_dtype dt, const void* data, size_t i) {
  switch (dt) {
    case SMD_DTYPE_INT8: return std::to_string(Load<int8_t>(data, i));
    case SMD_DTYPE_INT16: return std::to_string(Load<int16_t>(data, i));
    case SMD_DTYPE_INT32: return std::to_string(Load<int32_t>(data, i));
    case SMD_DTYPE_INT64: return std::to_string(Load<int64_t>(data, i));
    case SMD_DTYPE_UINT8: return std::to_string(Load<uint8_t>(data, i));
    case SMD_DTYPE_UINT16: return std::to_string(Load<uint16_t>(data, i));
    case SMD_DTYPE_UINT32: return std::to_string(Load<uint32_t>(data, i));
    case SMD_DTYPE_UINT64: return std::to_string(Load<uint64_t>(data, i));
    default: return "?";
  }
}

FloatKind KindOf(smd_dtype dt) {
  switch (dt) {
    case SMD_DTYPE_FLOAT16: return FloatKind::kF16;
    case SMD_DTYPE_BFLOAT16: return FloatKind::kBF16;
    case SMD_DTYPE_FLOAT32:
    case SMD_DTYPE_COMPLEX64: return FloatKind::kF32;
    default: return FloatKind::kF64;
  }
}

}  // namespace

std::string FormatValue(const smd_value* value, bool full) {
  const smd_dtype dt = smd_value_dtype(value);
  const size_t ndim = smd_value_ndim(value);
  const int64_t* dims = smd_value_shape(value);
  std::vector<int64_t> shape(dims, dims + ndim);
  const size_t count = smd_value_count(value);
  if (count == 0) return "[]";
  const bool summarize = !full && count > kThreshold;
  const std::vector<size_t> shown = ShownIndices(shape, summarize);
  const void* data = smd_value_data(value);
  std::function<std::string(size_t)> word;

  switch (dt) {
    case SMD_DTYPE_BOOL: {
      const bool scalar = ndim == 0;
      word = [data, scalar](size_t i) {
        return Load<uint8_t>(data, i) ? std::string(scalar ? "True" : " True") : std::string("False");
      };
      break;
    }
    case SMD_DTYPE_INT8: case SMD_DTYPE_INT16: case SMD_DTYPE_INT32: case SMD_DTYPE_INT64:
    case SMD_DTYPE_UINT8: case SMD_DTYPE_UINT16: case SMD_DTYPE_UINT32: case SMD_DTYPE_UINT64: {
      size_t width = 0;
      for (size_t i : shown) width = std::max(width, IntText(dt, data, i).size());
      word = [dt, data, width](size_t i) {
        std::string t = IntText(dt, data, i);
        return std::string(width > t.size() ? width - t.size() : 0, ' ') + t;
      };
      break;
    }
    case SMD_DTYPE_FLOAT16: case SMD_DTYPE_BFLOAT16: case SMD_DTYPE_FLOAT32: case SMD_DTYPE_FLOAT64: {
      std::vector<double> vals;
      for (size_t i : shown) vals.push_back(LoadReal(dt, data, i));
      auto fmt = std::make_shared<FloatFormat>(KindOf(dt), vals, false);
      word = [dt, data, fmt](size_t i) { return (*fmt)(LoadReal(dt, data, i)); };
      break;
    }
    case SMD_DTYPE_COMPLEX64: case SMD_DTYPE_COMPLEX128: {
      std::vector<double> re, im;
      for (size_t i : shown) {
        re.push_back(LoadReal(dt, data, i));
        im.push_back(LoadImag(dt, data, i));
      }
      auto fre = std::make_shared<FloatFormat>(KindOf(dt), re, false);
      auto fim = std::make_shared<FloatFormat>(KindOf(dt), im, true);
      word = [dt, data, fre, fim](size_t i) {
        std::string r = (*fre)(LoadReal(dt, data, i));
        std::string m = (*fim)(LoadImag(dt, data, i));
        size_t end = m.find_last_not_of(' ');
        end = end == std::string::npos ? 0 : end + 1;
        return r + m.substr(0, end) + "j" + m.substr(end);
      };
      break;
    }
    case SMD_DTYPE_STRING:
      word = [value](size_t i) {
        const char* s = nullptr;
        size_t len = 0;
        smd_error* e = smd_value_string(value, i, &s, &len);
        if (e != nullptr) {
          smd_error_free(e);
          return std::string("?");
        }
        return PythonStrRepr(s, len);
      };
      break;
    default:
      return "<values of unknown data type " + std::to_string(static_cast<int>(dt)) + ">";
  }
  return Layout(std::move(shape), summarize, word).Run();
}

}  // namespace smdtool
