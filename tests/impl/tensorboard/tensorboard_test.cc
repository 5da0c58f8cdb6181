// TensorBoard export: bucket edges against TensorFlow's definition, histograms against a direct
// numpy.histogram model and smdebug's output, tag sanitization, records (bytes and CRCs) against
// smdebug's, the event files, and the hook writing them.
#include <gtest/gtest.h>

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "impl/core/dtype.h"
#include "impl/format/event.h"
#include "impl/format/record.h"
#include "impl/format/wire.h"
#include "impl/hook/hook.h"
#include "impl/tensorboard/files.h"
#include "impl/tensorboard/sink.h"
#include "impl/tensorboard/summary.h"

namespace smd::tensorboard {
namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

std::string Hex(std::string_view s) {
  static const char* d = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s) {
    out.push_back(d[c >> 4]);
    out.push_back(d[c & 15]);
  }
  return out;
}

double FromHexFloat(const char* s) { return std::strtod(s, nullptr); }

// ComputeHistogram, failing the test on an error.
bool Computed(DType dtype, const void* data, size_t n, Histogram* out) {
  Result<bool> r = ComputeHistogram(dtype, data, n, out);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() && *r;
}

std::optional<std::string> SageMakerDir() {
  Result<std::optional<std::string>> r = SageMakerTensorBoardDir();
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? *r : std::nullopt;
}

// ---------------------------------------------------------------------------------------------
// Bucket edges

TEST(BucketEdges, TensorFlowDefinition) {
  const std::vector<double>& e = DefaultBucketEdges();
  ASSERT_EQ(e.size(), 1549u);
  const size_t K = 774;
  EXPECT_EQ(e[K], 0.0);
  // p[0] = 1e-12, p[k+1] = p[k] * 1.1 in double arithmetic, while below 1e20.
  double v = 1e-12;
  for (size_t k = 0; k < K; ++k) {
    ASSERT_EQ(e[K + 1 + k], v) << k;
    ASSERT_EQ(e[K - 1 - k], -v) << k;
    v *= 1.1;
  }
  EXPECT_GE(v, 1e20);
  EXPECT_LT(e.back(), 1e20);
  EXPECT_TRUE(std::is_sorted(e.begin(), e.end()));
  // Values printed by smdebug's _get_default_bins() (float.hex()).
  EXPECT_EQ(e[0], FromHexFloat("-0x1.58323029f544cp+66"));
  EXPECT_EQ(e[1], FromHexFloat("-0x1.38e7ceb1c7b2dp+66"));
  EXPECT_EQ(e[773], FromHexFloat("-0x1.19799812dea11p-40"));
  EXPECT_EQ(e[776], FromHexFloat("0x1.359f5a7b2817ap-40"));
  EXPECT_EQ(e[875], FromHexFloat("0x1.d97f8c4c9da89p-27"));
  EXPECT_EQ(e[1548], FromHexFloat("0x1.58323029f544cp+66"));
}

// ---------------------------------------------------------------------------------------------
// Histograms

// numpy.histogram(values, bins=edges) followed by smdebug's trimming, written the obvious way.
struct Reference {
  bool any = false;
  Histogram h;
};

Reference ReferenceHistogram(const std::vector<double>& values) {
  const std::vector<double>& e = DefaultBucketEdges();
  const size_t nb = e.size() - 1;
  std::vector<double> counts(nb, 0);
  for (double x : values) {
    if (!(x >= e.front() && x <= e.back())) continue;  // NaN and out of range: not counted
    size_t b = static_cast<size_t>(std::upper_bound(e.begin(), e.end(), x) - e.begin()) - 1;
    if (b == nb) b = nb - 1;  // x == last edge: the last bucket is closed
    counts[b] += 1;
  }
  Reference r;
  size_t first = nb, last = 0;
  for (size_t b = 0; b < nb; ++b) {
    if (counts[b] != 0) {
      first = std::min(first, b);
      last = b;
    }
  }
  if (first == nb) return r;
  r.any = true;
  r.h.bucket.push_back(first > 0 ? counts[first - 1] : 0.0);
  for (size_t b = first; b <= last; ++b) r.h.bucket.push_back(counts[b]);
  for (size_t i = first; i <= last + 1; ++i) r.h.bucket_limit.push_back(e[i]);
  bool nan = false;
  double mn = kInf, mx = -kInf;
  for (double x : values) {
    nan = nan || std::isnan(x);
    mn = std::min(mn, x);
    mx = std::max(mx, x);
  }
  r.h.min = nan ? kNaN : mn;
  r.h.max = nan ? kNaN : mx;
  r.h.num = static_cast<double>(values.size());
  return r;
}

void ExpectSameBuckets(const std::vector<double>& values, const std::string& what) {
  Histogram h;
  Result<bool> any = ComputeHistogram(DType::kFloat64, values.data(), values.size(), &h);
  ASSERT_TRUE(any.ok()) << any.status().message();
  Reference ref = ReferenceHistogram(values);
  ASSERT_EQ(*any, ref.any) << what;
  if (!ref.any) return;
  EXPECT_EQ(h.bucket, ref.h.bucket) << what;
  EXPECT_EQ(h.bucket_limit, ref.h.bucket_limit) << what;
  EXPECT_EQ(h.num, ref.h.num) << what;
  if (std::isnan(ref.h.min)) {
    EXPECT_TRUE(std::isnan(h.min) && std::isnan(h.max)) << what;
  } else {
    EXPECT_EQ(h.min, ref.h.min) << what;
    EXPECT_EQ(h.max, ref.h.max) << what;
  }
}

TEST(Histogram, EveryEdgeAndItsNeighbours) {
  // Each edge, the doubles just below and above it, and the midpoints: the table lookup and the
  // half-open / closed bucket rules must agree with a binary search everywhere.
  const std::vector<double>& e = DefaultBucketEdges();
  std::vector<double> values;
  for (size_t i = 0; i < e.size(); ++i) {
    values.push_back(e[i]);
    values.push_back(std::nextafter(e[i], -kInf));
    values.push_back(std::nextafter(e[i], kInf));
    if (i + 1 < e.size()) values.push_back(e[i] + (e[i + 1] - e[i]) / 2);
  }
  ExpectSameBuckets(values, "all edges");
  // One at a time, so that a misplaced single value shows.
  for (size_t i = 0; i < e.size(); i += 7) {
    for (double x : {e[i], std::nextafter(e[i], -kInf), std::nextafter(e[i], kInf)}) {
      ExpectSameBuckets({x}, "value " + std::to_string(x) + " near edge " + std::to_string(i));
    }
  }
}

TEST(Histogram, SpecialValues) {
  const double last = DefaultBucketEdges().back();
  ExpectSameBuckets({0.0}, "zero");
  ExpectSameBuckets({-0.0}, "negative zero is in [0, 1e-12)");
  ExpectSameBuckets({5e-324, -5e-324, 1e-300, -1e-300}, "subnormal and tiny");
  ExpectSameBuckets({last}, "the last edge is inside (closed bucket)");
  ExpectSameBuckets({-last}, "the first edge is inside");
  ExpectSameBuckets({1.0, kNaN, 2.0}, "NaN is not counted but makes min/max NaN");
  ExpectSameBuckets({1.0, kInf, -kInf}, "infinities are not counted");
  ExpectSameBuckets({1e25, -1e21, 3.0}, "beyond the edges");
  ExpectSameBuckets({std::nextafter(last, kInf)}, "just beyond the last edge: nothing");
}

TEST(Histogram, NothingInRangeGivesNoHistogram) {
  for (std::vector<double> v : {std::vector<double>{kNaN}, std::vector<double>{kInf, -kInf, 1e30}}) {
    Histogram h;
    Result<bool> any = ComputeHistogram(DType::kFloat64, v.data(), v.size(), &h);
    ASSERT_TRUE(any.ok());
    EXPECT_FALSE(*any);
  }
}

TEST(Histogram, RandomDataAgainstReference) {
  std::mt19937_64 rng(7);
  std::normal_distribution<double> normal(0, 1);
  std::uniform_real_distribution<double> expo(-45, 70);
  for (int round = 0; round < 20; ++round) {
    std::vector<double> v(5000);
    for (double& x : v) {
      x = (rng() & 1) ? normal(rng) * std::pow(10.0, round % 7 - 3) : std::pow(2.0, expo(rng));
      if (rng() % 3 == 0) x = -x;
    }
    ExpectSameBuckets(v, "round " + std::to_string(round));
  }
}

TEST(Histogram, FromCountsIsWhatComputingGives) {
  // A caller that counts over the default edges (a GPU) gets the histogram smd computes itself.
  std::mt19937_64 rng(11);
  std::normal_distribution<double> normal(0, 1);
  const std::vector<double>& e = DefaultBucketEdges();
  for (int round = 0; round < 10; ++round) {
    std::vector<double> v(2000);
    for (double& x : v) x = normal(rng) * std::pow(10.0, round - 5);
    if (round == 3) v[17] = kNaN;
    if (round == 4) v[5] = kInf;
    Histogram computed;
    Result<bool> any = ComputeHistogram(DType::kFloat64, v.data(), v.size(), &computed);
    ASSERT_TRUE(any.ok() && *any);
    std::vector<uint64_t> counts(e.size() - 1, 0);
    for (double x : v) {
      if (!(x >= e.front() && x <= e.back())) continue;
      size_t b = static_cast<size_t>(std::upper_bound(e.begin(), e.end(), x) - e.begin()) - 1;
      if (b == counts.size()) b = counts.size() - 1;
      ++counts[b];
    }
    Histogram given;
    Result<bool> any2 = HistogramFromCounts(counts.data(), counts.size(), v.size(), computed.min,
                                            computed.max, computed.sum, computed.sum_squares, &given);
    ASSERT_TRUE(any2.ok() && *any2) << any2.status().message();
    EXPECT_EQ(given.bucket, computed.bucket) << round;
    EXPECT_EQ(given.bucket_limit, computed.bucket_limit) << round;
    EXPECT_EQ(given.num, computed.num);
  }
}

TEST(Histogram, FromCountsRefusals) {
  const size_t nb = DefaultBucketEdges().size() - 1;
  std::vector<uint64_t> counts(nb, 0);
  Histogram h;
  Result<bool> r = HistogramFromCounts(counts.data(), nb - 1, 3, 0, 0, 0, 0, &h);
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
  EXPECT_NE(r.status().message().find("1548 buckets"), std::string::npos) << r.status().message();
  r = HistogramFromCounts(counts.data(), nb, 3, 0, 0, 0, 0, &h);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(*r);  // nothing in any bucket: no histogram
  counts[10] = 2;
  counts[20] = 2;
  r = HistogramFromCounts(counts.data(), nb, 3, 0, 0, 0, 0, &h);
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
  counts[20] = UINT64_MAX;  // a sum that would wrap
  r = HistogramFromCounts(counts.data(), nb, 3, 0, 0, 0, 0, &h);
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
  r = HistogramFromCounts(nullptr, nb, 3, 0, 0, 0, 0, &h);
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
}

TEST(Histogram, MatchesSmdebug) {
  // smdebug's _make_histogram(np.array([0, 1, 2, -3.5, 1e-13, 2.0]), _get_default_bins(), None).
  std::vector<double> v = {0.0, 1.0, 2.0, -3.5, 1e-13, 2.0};
  Histogram h;
  ASSERT_TRUE(Computed(DType::kFloat64, v.data(), v.size(), &h));
  EXPECT_EQ(h.min, -3.5);
  EXPECT_EQ(h.max, 2.0);
  EXPECT_EQ(h.num, 6.0);
  EXPECT_DOUBLE_EQ(h.sum, 1.5000000000001);
  EXPECT_EQ(h.sum_squares, 21.25);
  ASSERT_EQ(h.bucket.size(), 605u);
  ASSERT_EQ(h.bucket_limit.size(), 605u);
  std::map<size_t, double> nonzero;
  for (size_t i = 0; i < h.bucket.size(); ++i) {
    if (h.bucket[i] != 0) nonzero[i] = h.bucket[i];
  }
  EXPECT_EQ(nonzero, (std::map<size_t, double>{{1, 1}, {306, 2}, {596, 1}, {604, 2}}));
  EXPECT_EQ(h.bucket_limit.front(), FromHexFloat("-0x1.ea70bf84b4481p+1"));
  EXPECT_EQ(h.bucket_limit[1], FromHexFloat("-0x1.bddadca72f875p+1"));
  EXPECT_EQ(h.bucket_limit.back(), FromHexFloat("0x1.14d740cf111e0p+1"));
}

TEST(Histogram, DtypesConvertAsNumpyAstypeFloat) {
  struct Case {
    DType dtype;
    std::vector<double> expect;  // the values as float64
    std::string bytes;
  };
  auto bytes_of = [](const void* p, size_t n) { return std::string(static_cast<const char*>(p), n); };
  const float f32[] = {1.5f, -2.25f, 0.0f};
  const int64_t i64[] = {-3, 9007199254740993LL, 7};  // 2^53 + 1 rounds to 2^53
  const uint8_t u8[] = {0, 200, 255};
  const int8_t i8[] = {-128, 0, 127};
  const uint16_t f16[] = {FloatToHalf(0.5f), FloatToHalf(-65504.0f), FloatToHalf(1e-4f)};
  const float c64[] = {1.0f, 9.0f, -2.0f, 5.0f};  // real parts 1, -2
  std::vector<Case> cases = {
      {DType::kFloat32, {1.5, -2.25, 0.0}, bytes_of(f32, sizeof f32)},
      {DType::kInt64, {-3.0, 9007199254740992.0, 7.0}, bytes_of(i64, sizeof i64)},
      {DType::kUInt8, {0, 200, 255}, bytes_of(u8, sizeof u8)},
      {DType::kInt8, {-128, 0, 127}, bytes_of(i8, sizeof i8)},
      {DType::kFloat16, {0.5, -65504.0, HalfToFloat(f16[2])}, bytes_of(f16, sizeof f16)},
      {DType::kComplex64, {1.0, -2.0}, bytes_of(c64, sizeof c64)},
  };
  for (const Case& c : cases) {
    Histogram got, want;
    const size_t n = c.bytes.size() / DTypeSize(c.dtype);
    ASSERT_TRUE(Computed(c.dtype, c.bytes.data(), n, &got)) << DTypeName(c.dtype);
    ASSERT_TRUE(Computed(DType::kFloat64, c.expect.data(), c.expect.size(), &want));
    EXPECT_EQ(got.bucket, want.bucket) << DTypeName(c.dtype);
    EXPECT_EQ(got.bucket_limit, want.bucket_limit) << DTypeName(c.dtype);
    EXPECT_EQ(got.min, want.min) << DTypeName(c.dtype);
    EXPECT_EQ(got.max, want.max) << DTypeName(c.dtype);
    EXPECT_EQ(got.sum, want.sum) << DTypeName(c.dtype);
  }
}

TEST(Histogram, LargeInputCountsEverything) {
  std::vector<float> v(3'000'001);
  std::mt19937 rng(3);
  std::normal_distribution<float> normal(0, 2);
  for (float& x : v) x = normal(rng);
  Histogram h;
  ASSERT_TRUE(Computed(DType::kFloat32, v.data(), v.size(), &h));
  double total = 0;
  for (double c : h.bucket) total += c;
  EXPECT_EQ(total, 3'000'001.0);
  EXPECT_EQ(h.num, 3'000'001.0);
  EXPECT_EQ(h.bucket.front(), 0.0);  // the empty bucket on the left
  EXPECT_NE(h.bucket.back(), 0.0);
}

TEST(Histogram, UnalignedData) {
  std::vector<double> v = {0.5, -3, 7e10, 1e-9, 2, 2, -0.25};
  std::vector<float> f(v.begin(), v.end());
  for (size_t off = 1; off < 8; ++off) {
    std::string buf64(off, '\0'), buf32(off, '\0');
    buf64.append(reinterpret_cast<const char*>(v.data()), v.size() * 8);
    buf32.append(reinterpret_cast<const char*>(f.data()), f.size() * 4);
    Histogram a, b, c, d;
    ASSERT_TRUE(Computed(DType::kFloat64, v.data(), v.size(), &a));
    ASSERT_TRUE(Computed(DType::kFloat64, buf64.data() + off, v.size(), &b));
    ASSERT_TRUE(Computed(DType::kFloat32, f.data(), f.size(), &c));
    ASSERT_TRUE(Computed(DType::kFloat32, buf32.data() + off, f.size(), &d));
    EXPECT_EQ(a.bucket, b.bucket);
    EXPECT_EQ(a.sum, b.sum);
    EXPECT_EQ(c.bucket, d.bucket);
    EXPECT_EQ(c.sum, d.sum);
  }
}

TEST(Histogram, Refusals) {
  Histogram h;
  double x = 1;
  EXPECT_EQ(ComputeHistogram(DType::kFloat64, &x, 0, &h).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(ComputeHistogram(DType::kString, &x, 1, &h).status().code(), Code::kInvalidArgument);
}

// ---------------------------------------------------------------------------------------------
// Tags

TEST(SanitizeTag, AsSmdebugCleanTag) {
  // Expected values printed by smdebug.core.tfevent.summary._clean_tag.
  const std::pair<const char*, const char*> cases[] = {
      {"a b", "a_b"},
      {"/x/y", "x/y"},
      {"//a:0", "a_0"},
      {"\xc3\xa9", "\xc3\xa9"},               // é: a letter
      {"\xe2\x86\x92x", "_x"},                // →: a symbol
      {"\xe6\x97\xa5\xe6\x9c\xac", "\xe6\x97\xa5\xe6\x9c\xac"},  // 日本
      {"\xd9\xa3", "\xd9\xa3"},               // ٣: a decimal digit
      {"\xc2\xbd", "\xc2\xbd"},               // ½: a number
      {"a.b-c/d_e", "a.b-c/d_e"},
      {"Net_fc1.weight", "Net_fc1.weight"},
      {"x:0/y", "x_0/y"},
      {"\xc7\x85", "\xc7\x85"},               // ǅ: a title-case letter
      {"\xcc\x81", "_"},                      // combining acute accent: a mark, not \w
      {"\xe2\x80\xbf", "_"},                  // ‿: a connector, not \w in Python
      {"a\tb", "a_b"},
      {"a\xff" "b", "a_b"},                   // not UTF-8
      {"///", ""},
  };
  for (const auto& c : cases) EXPECT_EQ(SanitizeTag(c.first), c.second) << Hex(c.first);
}

// ---------------------------------------------------------------------------------------------
// Records

TEST(Records, ScalarIsSmdebugBytesWithRealCrc) {
  // smdebug: RecordWriter(path, write_checksum=True).write_record(Event(wall_time=1700000000.5,
  // step=3, summary=scalar_summary("loss", np.array([0.5], np.float32))).SerializeToString())
  std::string rec;
  AppendScalarRecord(&rec, 1700000000.5, 3, "loss", 0.5f);
  EXPECT_EQ(Hex(rec),
            "1a00000000000000129bd82d0900002040fc54d94110032a0d0a0b0a046c6f7373150000003f8cff6fe4");
  Result<std::string_view> payload = io::ParseRecord(rec, /*require_real_crc=*/true);
  ASSERT_TRUE(payload.ok()) << payload.status().message();
}

TEST(Records, ZeroScalarStillCarriesItsValue) {
  // smdebug: Event(wall_time=1700000000.0, step=7, summary=scalar_summary("zero", 0.0))
  std::string rec;
  AppendScalarRecord(&rec, 1700000000.0, 7, "zero", 0.0f);
  Result<std::string_view> payload = io::ParseRecord(rec, true);
  ASSERT_TRUE(payload.ok());
  EXPECT_EQ(Hex(*payload), "0900000040fc54d94110072a0d0a0b0a047a65726f1500000000");
  io::DecodedEvent ev;
  ASSERT_TRUE(io::DecodeEvent(*payload, &ev).ok());
  EXPECT_EQ(ev.kind, io::DecodedEvent::ValueKind::kSimpleValue);
  EXPECT_EQ(ev.tag, "zero");
  EXPECT_EQ(ev.step, 7);
}

// HistogramProto back from a record, for the tests.
Histogram DecodeHisto(std::string_view record, std::string* tag, int64_t* step) {
  Result<std::string_view> payload = io::ParseRecord(record, true);
  EXPECT_TRUE(payload.ok());
  io::DecodedEvent ev;
  EXPECT_TRUE(io::DecodeEvent(*payload, &ev).ok());
  EXPECT_EQ(ev.kind, io::DecodedEvent::ValueKind::kHisto);
  *tag = std::string(ev.tag);
  *step = ev.step;
  // Find Event.summary.value.histo by walking the wire format.
  auto sub = [](std::string_view msg, uint32_t want) {
    io::wire::Reader r(msg);
    uint32_t f;
    io::wire::WireType wt;
    while (!r.done() && r.ReadTag(&f, &wt)) {
      std::string_view v;
      if (f == want && wt == io::wire::kLengthDelimited && r.ReadBytes(&v)) return v;
      if (!r.Skip(wt)) break;
    }
    return std::string_view();
  };
  std::string_view histo = sub(sub(sub(*payload, 5), 1), 5);
  Histogram h;
  io::wire::Reader r(histo);
  uint32_t f;
  io::wire::WireType wt;
  while (!r.done() && r.ReadTag(&f, &wt)) {
    if (wt == io::wire::kFixed64) {
      uint64_t u;
      r.ReadFixed64(&u);
      double d;
      std::memcpy(&d, &u, 8);
      double* fields[] = {&h.min, &h.max, &h.num, &h.sum, &h.sum_squares};
      if (f >= 1 && f <= 5) *fields[f - 1] = d;
    } else {
      std::string_view packed;
      r.ReadBytes(&packed);
      std::vector<double>& dst = f == 6 ? h.bucket_limit : h.bucket;
      for (size_t i = 0; i + 8 <= packed.size(); i += 8) {
        double d;
        std::memcpy(&d, packed.data() + i, 8);
        dst.push_back(d);
      }
    }
  }
  return h;
}

TEST(Records, HistogramRoundTrips) {
  std::vector<double> v = {0.0, 1.0, 2.0, -3.5, 1e-13, 2.0};
  Histogram h;
  ASSERT_TRUE(Computed(DType::kFloat64, v.data(), v.size(), &h));
  std::string rec;
  AppendHistogramRecord(&rec, 1700000001.0, 12, "weights/w", h);
  std::string tag;
  int64_t step = 0;
  Histogram back = DecodeHisto(rec, &tag, &step);
  EXPECT_EQ(tag, "weights/w");
  EXPECT_EQ(step, 12);
  EXPECT_EQ(back.min, h.min);
  EXPECT_EQ(back.max, h.max);
  EXPECT_EQ(back.num, h.num);
  EXPECT_EQ(back.sum, h.sum);
  EXPECT_EQ(back.sum_squares, h.sum_squares);
  EXPECT_EQ(back.bucket, h.bucket);
  EXPECT_EQ(back.bucket_limit, h.bucket_limit);
}

TEST(Records, CorruptionIsDetectedByTheRealCrc) {
  std::string rec;
  AppendScalarRecord(&rec, 1.0, 1, "x", 2.0f);
  for (size_t i = io::kRecordHeaderSize; i + io::kRecordFooterSize < rec.size(); ++i) {
    std::string bad = rec;
    bad[i] ^= 0x01;
    EXPECT_FALSE(io::ParseRecord(bad, true).ok()) << "flipped byte " << i;
  }
}

TEST(Records, FileVersion) {
  std::string rec;
  AppendFileVersionRecord(&rec, 5.0);
  Result<std::string_view> payload = io::ParseRecord(rec, true);
  ASSERT_TRUE(payload.ok());
  // Event{wall_time: 5.0, file_version: "brain.Event:2"}
  EXPECT_EQ(Hex(*payload), "0900000000000014401a0d627261696e2e4576656e743a32");
}

// ---------------------------------------------------------------------------------------------
// Files

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/smd_tb_test_XXXXXX";
    path_ = ::mkdtemp(tmpl);
  }
  ~TempDir() { std::system(("rm -rf '" + path_ + "'").c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::vector<std::string> ListDir(const std::string& dir) {
  std::vector<std::string> out;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (dirent* e = ::readdir(d)) {
      if (e->d_name[0] != '.') out.emplace_back(e->d_name);
    }
    ::closedir(d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Splits a file into records, checking every CRC.
std::vector<std::string> Records(const std::string& bytes) {
  std::vector<std::string> out;
  size_t off = 0;
  while (off < bytes.size()) {
    Result<uint64_t> len = io::ParseRecordHeader(reinterpret_cast<const unsigned char*>(bytes.data() + off));
    EXPECT_TRUE(len.ok());
    if (!len.ok()) break;
    std::string rec = bytes.substr(off, *len + io::kRecordOverhead);
    EXPECT_TRUE(io::ParseRecord(rec, true).ok());
    out.push_back(rec);
    off += rec.size();
  }
  return out;
}

TEST(EventFileSet, NamesFoldersAndStepSwitching) {
  TempDir tmp;
  EXPECT_EQ(EventFileRelPath(Mode::kEval, 42, "77_host"), "EVAL/000000000042_77_host.tfevents");
  {
    EventFileSet files(tmp.path() + "/tb/", {}, "1_h");
    std::string a, b, c;
    AppendScalarRecord(&a, 10.0, 0, "loss", 1.0f);
    AppendScalarRecord(&b, 11.0, 1, "loss", 2.0f);
    AppendScalarRecord(&c, 11.0, 1, "acc", 3.0f);
    ASSERT_TRUE(files.Append(Mode::kTrain, 0, 10.0, a).ok());
    ASSERT_TRUE(files.Append(Mode::kEval, 0, 10.0, a).ok());
    // A new step of TRAIN completes TRAIN's step-0 file; EVAL's stays open until FinishStep.
    ASSERT_TRUE(files.Append(Mode::kTrain, 1, 11.0, b).ok());
    ASSERT_TRUE(files.Append(Mode::kTrain, 1, 11.0, c).ok());
    EXPECT_EQ(Records(ReadFile(tmp.path() + "/tb/TRAIN/000000000000_1_h.tfevents")).size(), 2u);
    EXPECT_EQ(ReadFile(tmp.path() + "/tb/EVAL/000000000000_1_h.tfevents"), "");  // buffered
    ASSERT_TRUE(files.FinishStep(0).ok());
    EXPECT_EQ(Records(ReadFile(tmp.path() + "/tb/EVAL/000000000000_1_h.tfevents")).size(), 2u);
    ASSERT_TRUE(files.Close().ok());
  }
  EXPECT_EQ(ListDir(tmp.path() + "/tb"), (std::vector<std::string>{"EVAL", "TRAIN"}));
  EXPECT_EQ(ListDir(tmp.path() + "/tb/TRAIN"),
            (std::vector<std::string>{"000000000000_1_h.tfevents", "000000000001_1_h.tfevents"}));
  std::vector<std::string> recs = Records(ReadFile(tmp.path() + "/tb/TRAIN/000000000001_1_h.tfevents"));
  ASSERT_EQ(recs.size(), 3u);  // file_version, loss, acc
  std::string expect_version;
  AppendFileVersionRecord(&expect_version, 11.0);
  EXPECT_EQ(recs[0], expect_version);
  // Reopening an existing file appends, without a second file_version.
  {
    EventFileSet files(tmp.path() + "/tb", {}, "1_h");
    std::string d;
    AppendScalarRecord(&d, 12.0, 1, "late", 4.0f);
    ASSERT_TRUE(files.Append(Mode::kTrain, 1, 12.0, d).ok());
  }
  EXPECT_EQ(Records(ReadFile(tmp.path() + "/tb/TRAIN/000000000001_1_h.tfevents")).size(), 4u);
}

TEST(EventFileSet, ErrorsAreStickyAndNameTheFile) {
  TempDir tmp;
  std::ofstream(tmp.path() + "/blocker") << "x";  // a file where the log folder should be
  EventFileSet files(tmp.path() + "/blocker/tb", {}, "1_h");
  std::string a;
  AppendScalarRecord(&a, 1.0, 0, "loss", 1.0f);
  Status st = files.Append(Mode::kTrain, 0, 1.0, a);
  EXPECT_EQ(st.code(), Code::kIO);
  EXPECT_NE(st.message().find("blocker"), std::string::npos) << st.message();
  EXPECT_EQ(files.Append(Mode::kEval, 3, 1.0, a).code(), Code::kIO);
  EXPECT_EQ(files.Close().code(), Code::kIO);
}

TEST(EventFileSet, LargeStepsAreWrittenWhileTheyGrow) {
  TempDir tmp;
  EventFileSet files(tmp.path(), {}, "1_h");
  std::vector<double> v(100000);
  for (size_t i = 0; i < v.size(); ++i) v[i] = std::pow(1.0001, static_cast<double>(i)) - 2;
  Histogram h;
  ASSERT_TRUE(Computed(DType::kFloat64, v.data(), v.size(), &h));
  std::string rec;
  AppendHistogramRecord(&rec, 1.0, 0, "h", h);
  size_t n = (2u << 20) / rec.size() + 1;
  for (size_t i = 0; i < n; ++i) ASSERT_TRUE(files.Append(Mode::kTrain, 0, 1.0, rec).ok());
  // More than the buffer has reached the file before the step ends.
  EXPECT_GE(ReadFile(tmp.path() + "/TRAIN/000000000000_1_h.tfevents").size(), 1u << 20);
  ASSERT_TRUE(files.Close().ok());
  EXPECT_EQ(Records(ReadFile(tmp.path() + "/TRAIN/000000000000_1_h.tfevents")).size(), n + 1);
}

// ---------------------------------------------------------------------------------------------
// Directory resolution

TEST(TensorBoardDir, Resolution) {
  EXPECT_FALSE(ResolveTensorBoardDir("/o", false, std::nullopt));
  EXPECT_EQ(*ResolveTensorBoardDir("/o/", true, std::nullopt), "/o/tensorboard");
  EXPECT_EQ(*ResolveTensorBoardDir("/o", false, std::string("/tb")), "/tb");
  EXPECT_EQ(*ResolveTensorBoardDir("/o", true, std::string("/tb")), "/tb");
  EXPECT_FALSE(ResolveTensorBoardDir("/o", false, std::string("")));
  const char* home = std::getenv("HOME");
  if (home != nullptr && *home != '\0') {
    EXPECT_EQ(*ResolveTensorBoardDir("/o", false, std::string("~/tb")), std::string(home) + "/tb");
  }
}

TEST(TensorBoardDir, SageMakerConfigFile) {
  TempDir tmp;
  const std::string cfg = tmp.path() + "/tb.json";
  ::setenv("TENSORBOARD_CONFIG_FILE_PATH", cfg.c_str(), 1);
  EXPECT_FALSE(SageMakerDir());  // no file: no export
  std::ofstream(cfg) << "{\"LocalPath\": \"/opt/ml/output/tensorboard\"}";
  EXPECT_EQ(*SageMakerDir(), "/opt/ml/output/tensorboard");
  std::ofstream(cfg) << "{\"S3OutputPath\": \"s3://b/p\"}";
  EXPECT_FALSE(SageMakerDir());
  std::ofstream(cfg) << "{not json";
  EXPECT_EQ(SageMakerTensorBoardDir().status().code(), Code::kInvalidArgument);
  ::unsetenv("TENSORBOARD_CONFIG_FILE_PATH");
}

// ---------------------------------------------------------------------------------------------
// The hook

struct Parsed {
  std::string file;
  std::string tag;
  int64_t step;
  bool scalar;
  float value;
  Histogram histo;
};

std::vector<Parsed> ParseLogDir(const std::string& dir) {
  std::vector<Parsed> out;
  for (const std::string& mode : ListDir(dir)) {
    for (const std::string& f : ListDir(dir + "/" + mode)) {
      std::vector<std::string> recs = Records(ReadFile(dir + "/" + mode + "/" + f));
      EXPECT_FALSE(recs.empty());
      for (size_t i = 1; i < recs.size(); ++i) {  // recs[0] is the file version
        Result<std::string_view> payload = io::ParseRecord(recs[i], true);
        io::DecodedEvent ev;
        EXPECT_TRUE(io::DecodeEvent(*payload, &ev).ok());
        Parsed p{mode + "/" + f, std::string(ev.tag), ev.step,
                 ev.kind == io::DecodedEvent::ValueKind::kSimpleValue, ev.simple_value, {}};
        if (!p.scalar) {
          std::string tag;
          int64_t step;
          p.histo = DecodeHisto(recs[i], &tag, &step);
        }
        out.push_back(std::move(p));
      }
    }
  }
  return out;
}

TEST(HookExport, ScalarsHistogramsAndLayout) {
  TempDir tmp;
  hook::HookOptions opts;
  opts.worker = "worker_0";
  opts.num_workers = 1;
  opts.export_tensorboard = true;
  opts.wall_time_base = 1700000000;
  opts.include_collections = {"weights", "custom", "metrics"};
  for (Mode m : kAllModesInOrder) {
    hook::SaveConfigMode every;
    every.save_interval = 1;
    opts.save_config.mode(m) = every;
  }
  auto hook = hook::Hook::Create(tmp.path() + "/out", opts);
  ASSERT_TRUE(hook.ok()) << hook.status().message();
  hook::Hook& h = **hook;
  ASSERT_TRUE(h.tensorboard_dir().has_value());
  EXPECT_EQ(*h.tensorboard_dir(), tmp.path() + "/out/tensorboard");
  Result<size_t> custom_r = h.GetCollection("custom");
  ASSERT_TRUE(custom_r.ok());
  const size_t custom = *custom_r;
  ASSERT_TRUE(h.CollectionIncludeRegex(custom, "^act").ok());
  Result<hook::ReductionConfig> only_max = hook::ReductionConfig::Parse("max");  // no raw
  ASSERT_TRUE(only_max.ok());
  ASSERT_TRUE(h.CollectionSetReductionConfig(custom, *only_max).ok());
  Result<size_t> metrics_r = h.GetCollection("metrics");
  ASSERT_TRUE(metrics_r.ok());
  const size_t metrics = *metrics_r;
  ASSERT_TRUE(h.CollectionIncludeRegex(metrics, "^acc$").ok());

  auto save = [&](const char* name, DType dt, std::vector<int64_t> shape, const void* data,
                  size_t nbytes) {
    hook::Hook::SaveRequest r;
    r.name = name;
    r.dtype = dt;
    r.shape = shape.data();
    r.ndim = shape.size();
    r.data = data;
    r.nbytes = nbytes;
    Status st = h.Save(r);
    ASSERT_TRUE(st.ok()) << st.message();
  };
  ASSERT_TRUE(h.SetMode(Mode::kTrain).ok());
  const float w[6] = {1, -2, 3, 0.5f, 0, 7};
  const double act[3] = {1e-3, 2e-3, -5};
  const uint8_t flags[2] = {1, 0};
  const float loss1 = 0.25f, two[2] = {1, 2}, acc = 0.75f;
  for (int step = 0; step < 2; ++step) {
    ASSERT_TRUE(h.BeginStep().ok());
    save("fc.weight", DType::kFloat32, {2, 3}, w, sizeof w);
    save("act_1", DType::kFloat64, {3}, act, sizeof act);
    save("act_flags", DType::kBool, {2}, flags, sizeof flags);  // bool: no histogram
    save("act_empty", DType::kFloat32, {0}, nullptr, 0);        // empty: no histogram
    save("loss", DType::kFloat32, {1}, &loss1, sizeof loss1);
    save("two_losses", DType::kFloat32, {2}, two, sizeof two);  // 2 elements: no scalar
    save("acc", DType::kFloat32, {}, &acc, sizeof acc);         // 0-d, one element: a scalar
    ASSERT_TRUE(h.SaveScalar("lr", 0.125 * (step + 1)).ok());
  }
  ASSERT_TRUE(h.SetMode(Mode::kEval).ok());
  ASSERT_TRUE(h.BeginStep().ok());
  save("loss", DType::kFloat32, {1}, &loss1, sizeof loss1);
  ASSERT_TRUE(h.Close().ok());

  const std::string tb = tmp.path() + "/out/tensorboard";
  const std::string tag = ProcessTag();
  EXPECT_EQ(ListDir(tb), (std::vector<std::string>{"EVAL", "TRAIN"}));
  EXPECT_EQ(ListDir(tb + "/TRAIN"), (std::vector<std::string>{"000000000000_" + tag + ".tfevents",
                                                              "000000000001_" + tag + ".tfevents"}));
  EXPECT_EQ(ListDir(tb + "/EVAL"), (std::vector<std::string>{"000000000002_" + tag + ".tfevents"}));

  std::vector<Parsed> all = ParseLogDir(tb);
  std::vector<std::string> got;
  for (const Parsed& p : all) {
    got.push_back(p.file.substr(0, p.file.find('_')) + " " + p.tag + " " + std::to_string(p.step) +
                  (p.scalar ? " = " + std::to_string(p.value) : " histogram"));
  }
  // Per tensor: histogram, then scalar; save_scalar values at the end of their step.
  const std::vector<std::string> want = {
      "EVAL/000000000002 loss 2 = 0.250000",
      "TRAIN/000000000000 weights/fc.weight 0 histogram",
      "TRAIN/000000000000 custom/act_1 0 histogram",
      "TRAIN/000000000000 loss 0 = 0.250000",
      "TRAIN/000000000000 acc 0 = 0.750000",
      "TRAIN/000000000000 scalar/lr 0 = 0.125000",
      "TRAIN/000000000001 weights/fc.weight 1 histogram",
      "TRAIN/000000000001 custom/act_1 1 histogram",
      "TRAIN/000000000001 loss 1 = 0.250000",
      "TRAIN/000000000001 acc 1 = 0.750000",
      "TRAIN/000000000001 scalar/lr 1 = 0.250000",
  };
  EXPECT_EQ(got, want);
  for (const Parsed& p : all) {
    if (p.tag == "weights/fc.weight") {
      std::vector<double> wd(w, w + 6);
      Histogram ref;
      ASSERT_TRUE(Computed(DType::kFloat64, wd.data(), wd.size(), &ref));
      EXPECT_EQ(p.histo.bucket, ref.bucket);
      EXPECT_EQ(p.histo.num, 6);
      EXPECT_EQ(p.histo.sum, 9.5);
    }
  }
}

TEST(HookExport, SaveScalarGoesToTheStepAndModeOfTheCall) {
  // smdebug writes a cached scalar when the writers close: at the next *saved* step, in the mode
  // current then. smd writes it where its events record goes: the step and mode of the call.
  TempDir tmp;
  hook::HookOptions opts;
  opts.worker = "worker_0";
  opts.num_workers = 1;
  opts.tensorboard_dir = tmp.path() + "/tb";  // default save_interval 500: only step 0 is saved
  auto hook = hook::Hook::Create(tmp.path() + "/out", opts);
  ASSERT_TRUE(hook.ok());
  hook::Hook& h = **hook;
  ASSERT_TRUE(h.SetMode(Mode::kTrain).ok());
  ASSERT_TRUE(h.BeginStep().ok());
  ASSERT_TRUE(h.BeginStep().ok());
  ASSERT_TRUE(h.SaveScalar("lr", 0.5).ok());  // TRAIN, global step 1 (not a saved step)
  ASSERT_TRUE(h.SetMode(Mode::kEval).ok());   // the mode changes before the step ends
  ASSERT_TRUE(h.BeginStep().ok());
  ASSERT_TRUE(h.Close().ok());
  std::vector<Parsed> all = ParseLogDir(tmp.path() + "/tb");
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].file, "TRAIN/000000000001_" + ProcessTag() + ".tfevents");
  EXPECT_EQ(all[0].tag, "scalar/lr");
  EXPECT_EQ(all[0].step, 1);
  EXPECT_EQ(all[0].value, 0.5f);
}

TEST(HookExport, FirstHistogramCollectionByNameAndOnlyWritingWorkers) {
  TempDir tmp;
  for (int worker = 0; worker < 2; ++worker) {
    hook::HookOptions opts;
    opts.worker = "worker_" + std::to_string(worker);
    opts.num_workers = 2;  // include_workers "one": only worker_0 writes
    opts.tensorboard_dir = tmp.path() + "/tb" + std::to_string(worker);
    opts.include_collections = {"zeta", "alpha", "off"};
    auto hook = hook::Hook::Create(tmp.path() + "/out" + std::to_string(worker), opts);
    ASSERT_TRUE(hook.ok());
    hook::Hook& h = **hook;
    for (const char* c : {"zeta", "alpha", "off"}) {
      Result<size_t> idx = h.GetCollection(c);
      ASSERT_TRUE(idx.ok());
      ASSERT_TRUE(h.CollectionIncludeRegex(*idx, "^t").ok());
      if (std::string(c) == "off") ASSERT_TRUE(h.CollectionSetSaveHistogram(*idx, false).ok());
    }
    ASSERT_TRUE(h.BeginStep().ok());
    const float v[2] = {1, 2};
    const int64_t two = 2;
    hook::Hook::SaveRequest r;
    r.name = "t1";
    r.shape = &two;
    r.ndim = 1;
    r.data = v;
    r.nbytes = sizeof v;
    ASSERT_TRUE(h.Save(r).ok());
    ASSERT_TRUE(h.Close().ok());
  }
  std::vector<Parsed> all = ParseLogDir(tmp.path() + "/tb0");
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].tag, "alpha/t1");  // zeta, alpha and off hold t1; off has no histograms
  EXPECT_TRUE(ListDir(tmp.path() + "/tb1").empty());  // worker_1 writes nothing
}

TEST(HookExport, DryRunAndNoExportWriteNothing) {
  TempDir tmp;
  for (int dry = 0; dry < 2; ++dry) {
    hook::HookOptions opts;
    opts.worker = "worker_0";
    opts.num_workers = 1;
    opts.dry_run = dry == 1;
    if (dry == 1) opts.tensorboard_dir = tmp.path() + "/tb_dry";
    auto hook = hook::Hook::Create(tmp.path() + "/out" + std::to_string(dry), opts);
    ASSERT_TRUE(hook.ok());
    ASSERT_TRUE((*hook)->BeginStep().ok());
    const float loss = 1;
    hook::Hook::SaveRequest r;
    int64_t one = 1;
    r.name = "loss";
    r.shape = &one;
    r.ndim = 1;
    r.data = &loss;
    r.nbytes = 4;
    ASSERT_TRUE((*hook)->Save(r).ok());
    ASSERT_TRUE((*hook)->SaveScalar("x", 1).ok());
    ASSERT_TRUE((*hook)->Close().ok());
  }
  EXPECT_EQ(ListDir(tmp.path() + "/out0").size(), 4u);  // collections, events, index, end marker
  for (const std::string& e : ListDir(tmp.path() + "/out0")) EXPECT_NE(e, "tensorboard");
  const std::vector<std::string> top = ListDir(tmp.path());
  EXPECT_TRUE(std::find(top.begin(), top.end(), "tb_dry") == top.end());
}

TEST(HookExport, WriteErrorsSurfaceThroughTheHook) {
  TempDir tmp;
  std::ofstream(tmp.path() + "/blocker") << "x";
  hook::HookOptions opts;
  opts.worker = "worker_0";
  opts.num_workers = 1;
  opts.tensorboard_dir = tmp.path() + "/blocker/tb";
  auto hook = hook::Hook::Create(tmp.path() + "/out", opts);
  ASSERT_TRUE(hook.ok());
  ASSERT_TRUE((*hook)->BeginStep().ok());
  ASSERT_TRUE((*hook)->SaveScalar("x", 1).ok());
  // Step 0 is written in the background: this call may already report the failure.
  Status early = (*hook)->BeginStep();
  EXPECT_TRUE(early.ok() || early.code() == Code::kIO) << early.message();
  Status st = (*hook)->Close();  // sticky: returned (again) by close
  EXPECT_EQ(st.code(), Code::kIO) << st.message();
  EXPECT_NE(st.message().find("blocker"), std::string::npos) << st.message();
}

TEST(HookExport, JsonKeys) {
  TempDir tmp;
  const std::string json = "{\"LocalPath\": \"" + tmp.path() +
                           "/out\", \"HookParameters\": {\"export_tensorboard\": \"true\", "
                           "\"save_interval\": \"1\"}}";
  ::unsetenv("TRAINING_JOB_NAME");
  hook::HookOptions base;
  base.worker = "worker_0";
  base.num_workers = 1;
  auto hook = hook::Hook::CreateFromJson(json, "test", base);
  ASSERT_TRUE(hook.ok()) << hook.status().message();
  ASSERT_TRUE((*hook)->tensorboard_dir().has_value());
  EXPECT_EQ(*(*hook)->tensorboard_dir(), tmp.path() + "/out/tensorboard");
  ASSERT_TRUE((*hook)->Close().ok());

  const std::string json2 = "{\"LocalPath\": \"" + tmp.path() +
                            "/out2\", \"HookParameters\": {\"tensorboard_dir\": \"" + tmp.path() +
                            "/tb2\"}}";
  auto hook2 = hook::Hook::CreateFromJson(json2, "test", base);
  ASSERT_TRUE(hook2.ok());
  EXPECT_EQ(*(*hook2)->tensorboard_dir(), tmp.path() + "/tb2");  // the folder alone enables it
  ASSERT_TRUE((*hook2)->Close().ok());

  // SageMaker: the hook parameters are ignored; the TensorBoard configuration file decides.
  ::setenv("TRAINING_JOB_NAME", "job", 1);
  ::setenv("TENSORBOARD_CONFIG_FILE_PATH", (tmp.path() + "/none.json").c_str(), 1);
  const std::string json3 = "{\"LocalPath\": \"" + tmp.path() +
                            "/out3\", \"HookParameters\": {\"tensorboard_dir\": \"" + tmp.path() +
                            "/tb3\", \"export_tensorboard\": true}}";
  auto hook3 = hook::Hook::CreateFromJson(json3, "test", base);
  ASSERT_TRUE(hook3.ok()) << hook3.status().message();
  EXPECT_FALSE((*hook3)->tensorboard_dir().has_value());
  ASSERT_TRUE((*hook3)->Close().ok());
  std::ofstream(tmp.path() + "/tb.json") << "{\"LocalPath\": \"" << tmp.path() << "/sm_tb\"}";
  ::setenv("TENSORBOARD_CONFIG_FILE_PATH", (tmp.path() + "/tb.json").c_str(), 1);
  const std::string json4 = "{\"LocalPath\": \"" + tmp.path() + "/out4\"}";
  auto hook4 = hook::Hook::CreateFromJson(json4, "test", base);
  ASSERT_TRUE(hook4.ok());
  EXPECT_EQ(*(*hook4)->tensorboard_dir(), tmp.path() + "/sm_tb");
  ASSERT_TRUE((*hook4)->Close().ok());
  ::unsetenv("TRAINING_JOB_NAME");
  ::unsetenv("TENSORBOARD_CONFIG_FILE_PATH");
}

// Under SageMaker the TensorBoard configuration file is read at hook creation: a FIFO there used
// to block the hook forever, a folder read as "not a JSON object", and a \u0000 cut LocalPath.
TEST(HookExport, SageMakerConfigFileMustBeARegularFile) {
  TempDir tmp;
  hook::HookOptions base;
  base.worker = "worker_0";
  const std::string json = "{\"LocalPath\": \"" + tmp.path() + "/out\"}";
  ::setenv("TRAINING_JOB_NAME", "job", 1);
  const std::string fifo = tmp.path() + "/tb-fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  ::setenv("TENSORBOARD_CONFIG_FILE_PATH", fifo.c_str(), 1);
  auto h1 = hook::Hook::CreateFromJson(json, "test", base);
  ASSERT_FALSE(h1.ok());
  EXPECT_EQ(h1.status().code(), Code::kInvalidArgument);
  EXPECT_NE(h1.status().message().find("'" + fifo + "' is a FIFO"), std::string::npos)
      << h1.status().message();
  ::setenv("TENSORBOARD_CONFIG_FILE_PATH", tmp.path().c_str(), 1);
  auto h2 = hook::Hook::CreateFromJson(json, "test", base);
  ASSERT_FALSE(h2.ok());
  EXPECT_NE(h2.status().message().find("is a folder"), std::string::npos) << h2.status().message();
  const std::string cfg = tmp.path() + "/tb.json";
  std::ofstream(cfg) << "{\"LocalPath\": \"" << tmp.path() << "/tb\\u0000x\"}";
  ::setenv("TENSORBOARD_CONFIG_FILE_PATH", cfg.c_str(), 1);
  auto h3 = hook::Hook::CreateFromJson(json, "test", base);
  ASSERT_FALSE(h3.ok());
  EXPECT_NE(h3.status().message().find("NUL"), std::string::npos) << h3.status().message();
  ::unsetenv("TRAINING_JOB_NAME");
  ::unsetenv("TENSORBOARD_CONFIG_FILE_PATH");
}

}  // namespace
}  // namespace smd::tensorboard
