#include "impl/tensorboard/summary.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>

#include "impl/core/regex.h"
#include "impl/core/text.h"
#include "impl/format/record.h"
#include "impl/format/wire.h"

namespace smd::tensorboard {

// ------------------------------------------------------------------------------------------
// Tags

namespace {

bool IsAsciiTagChar(unsigned char c) {
  return IsAsciiAlnum(static_cast<char>(c)) || c == '_' || c == '-' || c == '/' || c == '.';
}

// Length of the UTF-8 sequence starting at s[i], or 0 if it is not a valid one.
size_t Utf8SequenceLength(std::string_view s, size_t i) {
  const unsigned char c = static_cast<unsigned char>(s[i]);
  size_t len;
  uint32_t min;
  if (c >= 0xc2 && c <= 0xdf) {
    len = 2, min = 0x80;
  } else if (c >= 0xe0 && c <= 0xef) {
    len = 3, min = 0x800;
  } else if (c >= 0xf0 && c <= 0xf4) {
    len = 4, min = 0x10000;
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  uint32_t cp = c & (0x7f >> len);
  for (size_t k = 1; k < len; ++k) {
    const unsigned char cc = static_cast<unsigned char>(s[i + k]);
    if ((cc & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (cc & 0x3f);
  }
  if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  return len;
}

// Python's \w for one non-ASCII character: str.isalnum(), i.e. the Unicode letter and number
// categories (spelled out: newer PCRE2 versions also count marks and connectors as \w).
bool IsUnicodeWordChar(std::string_view ch) {
  static const std::shared_ptr<const Regex> re = [] {
    Result<std::shared_ptr<const Regex>> r = Regex::Compile("^[\\p{L}\\p{N}]$");
    return r.ok() ? *r : nullptr;
  }();
  if (re == nullptr) return false;
  Result<bool> m = re->Search(ch);  // one character: no backtracking to speak of
  return m.ok() && *m;
}

}  // namespace

std::string SanitizeTag(std::string_view name) {
  std::string out;
  out.reserve(name.size());
  for (size_t i = 0; i < name.size();) {
    const unsigned char c = static_cast<unsigned char>(name[i]);
    if (c < 0x80) {
      out.push_back(IsAsciiTagChar(c) ? static_cast<char>(c) : '_');
      ++i;
      continue;
    }
    const size_t len = Utf8SequenceLength(name, i);
    if (len == 0) {
      out.push_back('_');
      ++i;
    } else {
      std::string_view ch = name.substr(i, len);
      if (IsUnicodeWordChar(ch)) {
        out.append(ch.data(), ch.size());
      } else {
        out.push_back('_');
      }
      i += len;
    }
  }
  size_t lead = 0;
  while (lead < out.size() && out[lead] == '/') ++lead;
  out.erase(0, lead);
  return out;
}

// ------------------------------------------------------------------------------------------
// Bucket edges and the lookup table

namespace {

constexpr int kCellBits = 5;  // mantissa bits per row: a cell spans < 3.2%, the edges 10%
constexpr int kCellsPerRow = 1 << kCellBits;

int BiasedExponent(double v) {
  uint64_t b;
  std::memcpy(&b, &v, 8);
  return static_cast<int>((b >> 52) & 0x7ff);
}

// Everything the counting loop needs, built once.
struct BucketTable {
  std::vector<double> edges;  // all 2K + 1 edges
  std::vector<double> pos;    // p[0..K-1]
  uint32_t K = 0;
  // For |x| in table cell c, t = table[c] is the number of positive edges below the cell's start;
  // the cell holds at most the edge p[t]. The count of edges <= |x| (x >= 0) or < |x| (x < 0) is
  // then t + (|x| >= threshold[2t + (x < 0)]).
  std::vector<uint16_t> table;
  std::vector<double> threshold;  // 2 (K + 1)
  int row_base = 0;               // biased exponent of table row 0 (everything below p[0])
  int rows = 0;

  BucketTable() {
    std::vector<double> neg;
    for (double v = 1e-12; v < 1e20; v *= 1.1) {
      pos.push_back(v);
      neg.push_back(-v);
    }
    K = static_cast<uint32_t>(pos.size());
    edges.assign(neg.rbegin(), neg.rend());
    edges.push_back(0.0);
    edges.insert(edges.end(), pos.begin(), pos.end());

    const int e_lo = BiasedExponent(pos.front());
    const int e_hi = BiasedExponent(pos.back());
    row_base = e_lo - 1;
    rows = e_hi - e_lo + 3;  // a row below p[0], the rows of e_lo..e_hi, a row above p[K-1]
    table.assign(static_cast<size_t>(rows) * kCellsPerRow, 0);
    for (int r = 0; r < rows; ++r) {
      for (int m = 0; m < kCellsPerRow; ++m) {
        uint16_t t;
        if (r == 0) {
          t = 0;
        } else if (r == rows - 1) {
          t = static_cast<uint16_t>(K);
        } else {
          const uint64_t bits = (static_cast<uint64_t>(row_base + r) << 52) |
                                (static_cast<uint64_t>(m) << (52 - kCellBits));
          double start;
          std::memcpy(&start, &bits, 8);
          t = static_cast<uint16_t>(std::lower_bound(pos.begin(), pos.end(), start) - pos.begin());
        }
        table[static_cast<size_t>(r) * kCellsPerRow + m] = t;
      }
    }
    const double inf = std::numeric_limits<double>::infinity();
    const double nan = std::numeric_limits<double>::quiet_NaN();
    threshold.assign(2 * (K + 1), nan);  // t == K: nothing more to count (NaN compares false)
    for (uint32_t t = 0; t < K; ++t) {
      // x >= 0 counts edges <= |x|, except that the last edge closes the last bucket: |x| equal
      // to it stays inside.
      threshold[2 * t] = t + 1 < K ? pos[t] : std::nextafter(pos[t], inf);
      // x < 0 counts edges < |x|.
      threshold[2 * t + 1] = std::nextafter(pos[t], inf);
    }
  }
};

const BucketTable& Table() {
  static const BucketTable* table = new BucketTable();
  return *table;
}

// Maps a value to its counter slot. Copied into a local by the counting loop: read through a
// reference, its fields would be reloaded after every counter store (uint32_t may alias them).
struct Classifier {
  const uint16_t* table;
  const double* threshold;
  uint32_t K;
  int row_base;
  int rows;

  inline uint32_t Slot(double x) const {
    uint64_t b;
    std::memcpy(&b, &x, 8);
    const uint64_t ab = b & 0x7fffffffffffffffull;
    double y;
    std::memcpy(&y, &ab, 8);
    int r = static_cast<int>(ab >> 52) - row_base;
    r = r < 0 ? 0 : r;
    r = r >= rows ? rows - 1 : r;
    const uint32_t t = table[static_cast<uint32_t>(r) * kCellsPerRow +
                             static_cast<uint32_t>((ab >> (52 - kCellBits)) & (kCellsPerRow - 1))];
    const uint32_t neg = x < 0 ? 1u : 0u;
    const uint32_t cnt = t + (y >= threshold[2 * t + neg] ? 1u : 0u);
    return neg ? K - cnt : K + 1 + cnt;
  }
};

// Counts into slots: slot 0 holds values below the first edge (or NaN-free negatives beyond it),
// slots 1..2K the buckets, slot 2K+1 everything above the last edge, infinities and NaN.
constexpr int kLanes = 4;

struct Accumulator {
  const BucketTable& tb;
  const uint16_t* table;
  const double* threshold;
  uint32_t K;
  std::vector<uint32_t> lanes;  // kLanes x (2K + 2)
  std::vector<uint64_t> totals;
  size_t since_drain = 0;
  double mn[kLanes], mx[kLanes], sum[kLanes], sumsq[kLanes];
  bool nan = false;

  explicit Accumulator(const BucketTable& t)
      : tb(t), table(t.table.data()), threshold(t.threshold.data()), K(t.K) {
    lanes.assign(kLanes * (2 * K + 2), 0);
    totals.assign(2 * K + 2, 0);
    for (int l = 0; l < kLanes; ++l) {
      mn[l] = std::numeric_limits<double>::infinity();
      mx[l] = -std::numeric_limits<double>::infinity();
      sum[l] = sumsq[l] = 0;
    }
  }

  // Counts the n values of type T (float or double) at p, converted to double. p need not be
  // aligned.
  template <typename T>
  void Add(const unsigned char* p, size_t n) {
    auto v = [p](size_t i) {
      T x;
      std::memcpy(&x, p + i * sizeof(T), sizeof(T));
      return static_cast<double>(x);
    };
    // Four elements per iteration, each with its own counters and accumulators, all in named
    // locals: arrays indexed by the lane would live in memory and chain every addition through a
    // store and a load.
    const Classifier cls{table, threshold, K, tb.row_base, tb.rows};
    const size_t stride = 2 * K + 2;
    uint32_t* c0 = lanes.data();
    uint32_t* c1 = c0 + stride;
    uint32_t* c2 = c1 + stride;
    uint32_t* c3 = c2 + stride;
    double mn0 = mn[0], mn1 = mn[1], mn2 = mn[2], mn3 = mn[3];
    double mx0 = mx[0], mx1 = mx[1], mx2 = mx[2], mx3 = mx[3];
    double s0 = sum[0], s1 = sum[1], s2 = sum[2], s3 = sum[3];
    double q0 = sumsq[0], q1 = sumsq[1], q2 = sumsq[2], q3 = sumsq[3];
    bool any_nan = false;
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
      const double x0 = v(i), x1 = v(i + 1), x2 = v(i + 2), x3 = v(i + 3);
      ++c0[cls.Slot(x0)];
      ++c1[cls.Slot(x1)];
      ++c2[cls.Slot(x2)];
      ++c3[cls.Slot(x3)];
      mn0 = x0 < mn0 ? x0 : mn0;
      mn1 = x1 < mn1 ? x1 : mn1;
      mn2 = x2 < mn2 ? x2 : mn2;
      mn3 = x3 < mn3 ? x3 : mn3;
      mx0 = x0 > mx0 ? x0 : mx0;
      mx1 = x1 > mx1 ? x1 : mx1;
      mx2 = x2 > mx2 ? x2 : mx2;
      mx3 = x3 > mx3 ? x3 : mx3;
      s0 += x0;
      s1 += x1;
      s2 += x2;
      s3 += x3;
      q0 += x0 * x0;
      q1 += x1 * x1;
      q2 += x2 * x2;
      q3 += x3 * x3;
      any_nan |= (x0 != x0) | (x1 != x1) | (x2 != x2) | (x3 != x3);
    }
    for (; i < n; ++i) {
      const double x = v(i);
      ++c0[cls.Slot(x)];
      mn0 = x < mn0 ? x : mn0;
      mx0 = x > mx0 ? x : mx0;
      s0 += x;
      q0 += x * x;
      any_nan |= x != x;
    }
    mn[0] = mn0, mn[1] = mn1, mn[2] = mn2, mn[3] = mn3;
    mx[0] = mx0, mx[1] = mx1, mx[2] = mx2, mx[3] = mx3;
    sum[0] = s0, sum[1] = s1, sum[2] = s2, sum[3] = s3;
    sumsq[0] = q0, sumsq[1] = q1, sumsq[2] = q2, sumsq[3] = q3;
    nan = nan || any_nan;
    since_drain += n;
    if (since_drain >= (1u << 30)) Drain();
  }

  void Drain() {
    const size_t stride = 2 * K + 2;
    for (int l = 0; l < kLanes; ++l) {
      for (size_t s = 0; s < stride; ++s) {
        totals[s] += lanes[l * stride + s];
        lanes[l * stride + s] = 0;
      }
    }
    since_drain = 0;
  }
};

// Converts elements [begin, begin + n) of a buffer to doubles (the dtypes without a direct path).
void ToDoubles(DType dtype, const void* data, size_t begin, size_t n, double* out) {
  for (size_t i = 0; i < n; ++i) out[i] = LoadAsDouble(dtype, data, begin + i);
}

}  // namespace

const std::vector<double>& DefaultBucketEdges() { return Table().edges; }

namespace {

// numpy's trimming: counts[first-1 : last+1] (or [0] + counts[:last+1] when first == 0) with
// right edges edges[first : last+2]. count(b): the elements in bucket b.
template <typename Count>
void TrimBuckets(const std::vector<double>& edges, size_t first, size_t last, Count count,
                 Histogram* out) {
  out->bucket.clear();
  out->bucket_limit.clear();
  out->bucket.reserve(last - first + 2);
  out->bucket_limit.reserve(last - first + 2);
  out->bucket.push_back(first > 0 ? static_cast<double>(count(first - 1)) : 0.0);
  for (size_t b = first; b <= last; ++b) out->bucket.push_back(static_cast<double>(count(b)));
  for (size_t e = first; e <= last + 1; ++e) out->bucket_limit.push_back(edges[e]);
}

}  // namespace

Result<bool> ComputeHistogram(DType dtype, const void* data, size_t n, Histogram* out) {
  if (dtype == DType::kString || GetDTypeInfo(static_cast<int>(dtype)) == nullptr) {
    return InvalidArgument("a histogram needs a numeric tensor");
  }
  if (n == 0) return InvalidArgument("a histogram needs at least one element");
  const BucketTable& tb = Table();
  Accumulator acc(tb);
  constexpr size_t kBlock = 1024;
  double buf[kBlock];
  for (size_t begin = 0; begin < n; begin += kBlock) {
    const size_t len = std::min(kBlock, n - begin);
    const unsigned char* p = static_cast<const unsigned char*>(data);
    if (dtype == DType::kFloat64) {
      acc.Add<double>(p + 8 * begin, len);
    } else if (dtype == DType::kFloat32) {
      acc.Add<float>(p + 4 * begin, len);
    } else {
      ToDoubles(dtype, data, begin, len, buf);
      acc.Add<double>(reinterpret_cast<const unsigned char*>(buf), len);
    }
  }
  acc.Drain();

  // Buckets are slots 1..2K; find the first and last non-empty one.
  const uint32_t K = tb.K;
  size_t first = 0, last = 0;
  bool any = false;
  for (size_t b = 0; b < 2 * static_cast<size_t>(K); ++b) {
    if (acc.totals[b + 1] != 0) {
      if (!any) first = b;
      last = b;
      any = true;
    }
  }
  if (!any) return false;

  double mn = acc.mn[0], mx = acc.mx[0], sum = 0, sumsq = 0;
  for (int l = 0; l < kLanes; ++l) {
    mn = std::min(mn, acc.mn[l]);
    mx = std::max(mx, acc.mx[l]);
  }
  sum = (acc.sum[0] + acc.sum[1]) + (acc.sum[2] + acc.sum[3]);
  sumsq = (acc.sumsq[0] + acc.sumsq[1]) + (acc.sumsq[2] + acc.sumsq[3]);
  if (acc.nan) mn = mx = std::numeric_limits<double>::quiet_NaN();
  out->min = mn;
  out->max = mx;
  out->num = static_cast<double>(n);
  out->sum = sum;
  out->sum_squares = sumsq;
  TrimBuckets(tb.edges, first, last, [&](size_t b) { return acc.totals[b + 1]; }, out);
  return true;
}

Result<bool> HistogramFromCounts(const uint64_t* counts, size_t n_counts, uint64_t num, double min,
                                 double max, double sum, double sum_squares, Histogram* out) {
  const std::vector<double>& edges = DefaultBucketEdges();
  if (n_counts != edges.size() - 1) {
    return InvalidArgument("expected counts of " + std::to_string(edges.size() - 1) +
                           " buckets (one per pair of adjacent default edges), got " + std::to_string(n_counts));
  }
  if (counts == nullptr) return InvalidArgument("the counts are NULL");
  uint64_t total = 0;
  size_t first = 0, last = 0;
  bool any = false;
  for (size_t b = 0; b < n_counts; ++b) {
    if (counts[b] > num - total) {
      return InvalidArgument("the bucket counts add up to more than the tensor's " +
                             std::to_string(num) + " elements");
    }
    total += counts[b];
    if (counts[b] != 0) {
      if (!any) first = b;
      last = b;
      any = true;
    }
  }
  if (!any) return false;
  out->min = min;
  out->max = max;
  out->num = static_cast<double>(num);
  out->sum = sum;
  out->sum_squares = sum_squares;
  TrimBuckets(edges, first, last, [&](size_t b) { return counts[b]; }, out);
  return true;
}

Result<double> ScalarValue(DType dtype, const void* data, size_t n) {
  if (dtype == DType::kString || GetDTypeInfo(static_cast<int>(dtype)) == nullptr) {
    return InvalidArgument("a scalar summary needs a numeric tensor");
  }
  if (n != 1) return InvalidArgument("a scalar summary needs exactly one element");
  return LoadAsDouble(dtype, data, 0);
}

// ------------------------------------------------------------------------------------------
// Records

namespace {

using io::wire::LengthDelimitedSize;
using io::wire::PutDouble;
using io::wire::PutLengthDelimited;
using io::wire::PutTag;
using io::wire::PutVarint;

void PutDoubleField(std::string* out, uint32_t field, double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, 8);
  if (bits == 0) return;  // proto3 omits +0.0
  PutTag(out, field, io::wire::kFixed64);
  PutDouble(out, v);
}

// Event{wall_time, step, <rest>}; `rest` is the already encoded oneof field.
void AppendEvent(std::string* out, double wall_time, int64_t step, std::string_view rest) {
  std::string payload;
  payload.reserve(24 + rest.size());
  PutDoubleField(&payload, 1, wall_time);
  if (step != 0) {
    PutTag(&payload, 2, io::wire::kVarint);
    PutVarint(&payload, static_cast<uint64_t>(step));
  }
  payload.append(rest.data(), rest.size());
  io::AppendRecord(out, payload, io::PayloadCrcKind::kReal);
}

// Event.summary = Summary{value: [Value{tag, <value_field>}]}.
std::string SummaryField(std::string_view tag, std::string_view value_field) {
  std::string value;
  if (!tag.empty()) PutLengthDelimited(&value, 1, tag);
  value.append(value_field.data(), value_field.size());
  std::string summary;
  PutLengthDelimited(&summary, 1, value);
  std::string field;
  PutLengthDelimited(&field, 5, summary);
  return field;
}

void PutPackedDoubles(std::string* out, uint32_t field, const std::vector<double>& v) {
  if (v.empty()) return;
  PutTag(out, field, io::wire::kLengthDelimited);
  PutVarint(out, 8 * v.size());
  for (double d : v) PutDouble(out, d);
}

}  // namespace

void AppendScalarRecord(std::string* out, double wall_time, int64_t step, std::string_view tag,
                        float value) {
  std::string field;
  PutTag(&field, 2, io::wire::kFixed32);  // simple_value is in a oneof: always written
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  for (int i = 0; i < 4; ++i) field.push_back(static_cast<char>(bits >> (8 * i)));
  AppendEvent(out, wall_time, step, SummaryField(tag, field));
}

void AppendHistogramRecord(std::string* out, double wall_time, int64_t step, std::string_view tag,
                           const Histogram& h) {
  std::string histo;
  histo.reserve(64 + 16 * h.bucket.size());
  PutDoubleField(&histo, 1, h.min);
  PutDoubleField(&histo, 2, h.max);
  PutDoubleField(&histo, 3, h.num);
  PutDoubleField(&histo, 4, h.sum);
  PutDoubleField(&histo, 5, h.sum_squares);
  PutPackedDoubles(&histo, 6, h.bucket_limit);
  PutPackedDoubles(&histo, 7, h.bucket);
  std::string field;
  PutLengthDelimited(&field, 5, histo);  // histo is in a oneof: always written
  AppendEvent(out, wall_time, step, SummaryField(tag, field));
}

void AppendFileVersionRecord(std::string* out, double wall_time) {
  std::string field;
  PutLengthDelimited(&field, 3, "brain.Event:2");
  AppendEvent(out, wall_time, 0, field);
}

}  // namespace smd::tensorboard
