// CRC32C, record framing, the event codec against FORMAT.md's golden records, file names and
// index JSON.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "impl/format/crc32c.h"
#include "impl/format/event.h"
#include "impl/format/index_file.h"
#include "impl/format/layout.h"
#include "impl/format/record.h"

namespace smd::io {
namespace {

std::string Hex(std::string_view s) {
  static const char* d = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s) {
    out.push_back(d[c >> 4]);
    out.push_back(d[c & 15]);
  }
  return out;
}

TEST(Crc32c, CheckValue) {
  EXPECT_EQ(Crc32c("123456789", 9), 0xE3069283u);
  EXPECT_EQ(Crc32cPortable("123456789", 9), 0xE3069283u);
  EXPECT_EQ(Crc32c("", 0), 0u);
}

TEST(Crc32c, HardwareAndPortableAgreeAndExtend) {
  std::mt19937 rng(7);
  std::string buf(100008, '\0');
  for (char& c : buf) c = static_cast<char>(rng());
  for (size_t len : {0u, 1u, 7u, 8u, 9u, 63u, 64u, 1000u, 99999u}) {
    for (size_t off : {0u, 1u, 3u}) {
      EXPECT_EQ(Crc32c(buf.data() + off, len), Crc32cPortable(buf.data() + off, len)) << len;
    }
  }
  uint32_t whole = Crc32c(buf.data(), buf.size());
  uint32_t part = Crc32c(buf.data() + 5000, buf.size() - 5000, Crc32c(buf.data(), 5000));
  EXPECT_EQ(whole, part);
}

// Crc32c runs three chains side by side on large buffers (rounds of 3 x 32 KiB, then 3 x 2 KiB)
// and joins them: every length around those boundaries, at every alignment, against the portable
// table code and the single chain, whole and continued from a CRC of the bytes before.
TEST(Crc32c, InterleavedChainsAgreeAtEveryBoundary) {
  std::mt19937 rng(11);
  std::string buf(3 * 98304 + 64, '\0');
  for (char& c : buf) c = static_cast<char>(rng());
  std::vector<size_t> lengths;
  for (size_t base : {size_t{3 * 2048}, size_t{6 * 2048}, size_t{3 * 32768}, size_t{2 * 3 * 32768},
                      size_t{3 * 32768 + 3 * 2048}}) {
    for (size_t d = 0; d < 10; ++d) {
      lengths.push_back(base + d);
      lengths.push_back(base - 1 - d);
    }
  }
  lengths.push_back(buf.size() - 8);
  for (size_t len : lengths) {
    for (size_t off : {0u, 1u, 5u, 8u}) {
      const char* p = buf.data() + off;
      const uint32_t expect = Crc32cPortable(p, len);
      ASSERT_EQ(Crc32c(p, len), expect) << "length " << len << " offset " << off;
      ASSERT_EQ(Crc32cOneChain(p, len), expect) << "length " << len << " offset " << off;
      const size_t cut = len / 3 + off;
      ASSERT_EQ(Crc32c(p + cut, len - cut, Crc32c(p, cut)), expect) << len;
    }
  }
}

TEST(Crc32c, ShiftEqualsExtendingOverZeros) {
  const std::string zeros(70000, '\0');
  for (uint32_t crc : {0u, 1u, 0xE3069283u, 0xffffffffu}) {
    for (size_t n : {size_t{0}, size_t{1}, size_t{7}, size_t{8}, size_t{2048}, size_t{32768},
                     size_t{65537}}) {
      EXPECT_EQ(Crc32cShift(crc, n), Crc32cPortable(zeros.data(), n, crc)) << crc << " " << n;
    }
  }
}

TEST(Crc32c, MaskRoundTripAndSmdebugConstant) {
  EXPECT_EQ(UnmaskCrc(MaskCrc(0x12345678u)), 0x12345678u);
  EXPECT_EQ(MaskCrc(Crc32c("0x12345678", 10)), kSmdebugPayloadCrc);
}

// FORMAT.md §4.1: float32 [1, 2] named "x", TRAIN mode step 1, global step 3, wall time
// 1600000000.5 is exactly this 88-byte record.
TEST(Event, GoldenTrainRecord) {
  const char* golden =
      "4800000000000000fe92489d"
      "0900002000" "84d7d741" "1003" "2a3b" "0a39" "0a0178" "4217" "0801" "1209" "1207" "0802"
      "1203785f32" "2208" "0000803f00000040" "4a1b" "0a0e0a096d6f64655f737465701201" "31"
      "0a090a046d6f64651201" "31" "b3c02d06";
  const int64_t shape[] = {2};
  const float values[] = {1.0f, 2.0f};
  TensorEventFields f;
  f.wall_time = 1600000000.5;
  f.step = 3;
  f.tag = "x";
  f.dtype = DType::kFloat32;
  f.shape = shape;
  f.ndim = 1;
  f.mode = Mode::kTrain;
  f.mode_step = 1;
  std::string prefix, suffix;
  std::string_view content(reinterpret_cast<const char*>(values), sizeof values);
  EncodeTensorRecord(f, content, PayloadCrcKind::kSmdebugConstant, &prefix, &suffix);
  std::string record = prefix + std::string(content) + suffix;
  EXPECT_EQ(record.size(), 88u);
  EXPECT_EQ(Hex(record), golden);
}

TEST(Event, GoldenGlobalStepZeroFloat64) {
  const int64_t shape[] = {1};
  const double v = 1.0;
  TensorEventFields f;
  f.wall_time = 1.0;
  f.step = 0;
  f.tag = "y";
  f.dtype = DType::kFloat64;
  f.shape = shape;
  f.ndim = 1;
  f.mode = Mode::kGlobal;
  f.mode_step = 0;
  std::string prefix, suffix;
  std::string_view content(reinterpret_cast<const char*>(&v), 8);
  EncodeTensorRecord(f, content, PayloadCrcKind::kSmdebugConstant, &prefix, &suffix);
  EXPECT_EQ(Hex(prefix + std::string(content) + suffix),
            "46000000000000007235b9a509000000000000f03f2a3b0a390a0179421708021209120708011203795f"
            "312208000000000000f03f4a1b0a0e0a096d6f64655f737465701201300a090a046d6f64651201"
            "34b3c02d06");
}

TEST(Event, RoundTripThroughDecoderWithRealCrc) {
  const int64_t shape[] = {2, 0, 3};
  TensorEventFields f;
  f.wall_time = 5.25;
  f.step = -1;  // negative steps are ten-byte varints
  f.tag = "a/b:0";
  f.dtype = DType::kInt16;
  f.shape = shape;
  f.ndim = 3;
  f.mode = Mode::kEval;
  f.mode_step = 12345678901;
  std::string prefix, suffix;
  EncodeTensorRecord(f, std::string_view(), PayloadCrcKind::kReal, &prefix, &suffix);
  std::string record = prefix + suffix;
  auto payload = ParseRecord(record, /*require_real_crc=*/true);
  ASSERT_TRUE(payload.ok()) << payload.status().message();
  DecodedEvent ev;
  ASSERT_TRUE(DecodeEvent(*payload, &ev).ok());
  EXPECT_EQ(ev.wall_time, 5.25);
  EXPECT_EQ(ev.step, -1);
  EXPECT_EQ(ev.tag, "a/b:0");
  EXPECT_EQ(ev.kind, DecodedEvent::ValueKind::kTensor);
  EXPECT_EQ(ev.dtype, static_cast<int>(DType::kInt16));
  EXPECT_EQ(ev.shape, (std::vector<int64_t>{2, 0, 3}));
  EXPECT_TRUE(ev.tensor_content.empty());
  EXPECT_EQ(ev.mode, 2);
  EXPECT_EQ(ev.mode_step, 12345678901);
}

TEST(Event, StringTensorRoundTrip) {
  TensorEventFields f;
  f.wall_time = 2;
  f.tag = "s";
  std::string record;
  EncodeStringTensorRecord(f, {"alpha", "", "\xce\xb2"}, PayloadCrcKind::kSmdebugConstant, &record);
  auto payload = ParseRecord(record);
  ASSERT_TRUE(payload.ok());
  DecodedEvent ev;
  ASSERT_TRUE(DecodeEvent(*payload, &ev).ok());
  EXPECT_EQ(ev.dtype, 0);
  ASSERT_EQ(ev.string_val.size(), 3u);
  EXPECT_EQ(ev.string_val[2], "\xce\xb2");
  EXPECT_EQ(ev.shape, std::vector<int64_t>{3});
}

TEST(Record, RejectsCorruption) {
  std::string rec;
  AppendRecord(&rec, "hello", PayloadCrcKind::kReal);
  EXPECT_TRUE(ParseRecord(rec).ok());
  std::string bad_len = rec;
  bad_len[0] ^= 1;
  EXPECT_EQ(ParseRecord(bad_len).status().code(), Code::kCorrupt);
  std::string bad_payload = rec;
  bad_payload[13] ^= 1;
  auto r = ParseRecord(bad_payload);
  EXPECT_EQ(r.status().code(), Code::kCorrupt);
  EXPECT_NE(r.status().message().find("payload CRC"), std::string::npos);
  EXPECT_EQ(ParseRecord(rec.substr(0, 10)).status().code(), Code::kCorrupt);
  EXPECT_EQ(ParseRecord(rec + "x").status().code(), Code::kCorrupt);
  // The constant footer is accepted unless the real CRC is required.
  std::string constant;
  AppendRecord(&constant, "hello", PayloadCrcKind::kSmdebugConstant);
  EXPECT_TRUE(ParseRecord(constant).ok());
  EXPECT_FALSE(ParseRecord(constant, true).ok());
}

TEST(Event, DecoderRejectsGarbageWithoutCrashing) {
  std::mt19937 rng(1);
  DecodedEvent ev;
  for (int i = 0; i < 20000; ++i) {
    std::string s(rng() % 64, '\0');
    for (char& c : s) c = static_cast<char>(rng());
    (void)DecodeEvent(s, &ev);  // must not crash or read out of bounds (ASan)
  }
  EXPECT_EQ(DecodeEvent(std::string("\x2a\x7f", 2), &ev).code(), Code::kCorrupt);  // length past end
}

TEST(Layout, FileNames) {
  EXPECT_EQ(EventFileRelPath(3, "worker_0"), "events/000000000003/000000000003_worker_0.tfevents");
  EXPECT_EQ(IndexFileRelPath(1999, "worker_1"), "index/000000001/000000001999_worker_1.json");
  EXPECT_EQ(IndexFileRelPath(-1, "w"), "index/-00000001/-00000000001_w.json");
  EXPECT_EQ(CollectionsFileRelPath("worker_0"), "collections/000000000/worker_0_collections.json");
  EXPECT_EQ(CollectionsDirRelPath(), "collections/000000000");
  EXPECT_EQ(StepFromFileName("000000000010_worker_0.json"), 10);
  EXPECT_EQ(WorkerFromFileName("000000000010_worker_0.json"), "worker_0");
  EXPECT_EQ(WorkerFromFileName("000000000010__job-worker.json"), "_job-worker");
  EXPECT_FALSE(WorkerFromFileName("x_worker_0.json").has_value());
}

TEST(Layout, WorkerNameValidation) {
  EXPECT_TRUE(ValidateWorkerName("worker_0").ok());
  EXPECT_TRUE(ValidateWorkerName("node-1:gpu.3").ok());
  for (const char* bad : {"", ".", "..", "a/b", "a\\b", "_lead", "a__b", "tab\there"}) {
    EXPECT_EQ(ValidateWorkerName(bad).code(), Code::kInvalidArgument) << bad;
  }
}

TEST(IndexFile, PythonJsonDumpsLayout) {
  IndexMeta meta{Mode::kTrain, 0, std::string("events/000000000000/000000000000_worker_0.tfevents")};
  std::vector<IndexTensorEntry> t = {{"smdebug/reductions/min/fc1_weight", 0, 146},
                                     {"fc1_weight", 446, 138}};
  std::vector<IndexShapeEntry> s = {{"fc1_weight", "fc1_weight", {2, 3}}};
  EXPECT_EQ(BuildIndexJson(meta, t, s),
            "{\"meta\": {\"mode\": \"TRAIN\", \"mode_step\": 0, \"event_file_name\": "
            "\"events/000000000000/000000000000_worker_0.tfevents\"}, \"tensor_payload\": "
            "[{\"tensorname\": \"smdebug/reductions/min/fc1_weight\", \"start_idx\": 0, \"length\": "
            "146}, {\"tensorname\": \"fc1_weight\", \"start_idx\": 446, \"length\": 138}], "
            "\"shape_payload\": [{\"tensorname\": \"fc1_weight\", \"originalname\": \"fc1_weight\", "
            "\"shape\": [2, 3]}]}");
  IndexMeta shapes_only{Mode::kGlobal, 7, std::nullopt};
  EXPECT_EQ(BuildIndexJson(shapes_only, {}, {{"\xc3\xa9\xf0\x9f\x98\x80", "e", {}}}),
            "{\"meta\": {\"mode\": \"GLOBAL\", \"mode_step\": 7}, \"tensor_payload\": [], "
            "\"shape_payload\": [{\"tensorname\": \"\\u00e9\\ud83d\\ude00\", \"originalname\": \"e\", "
            "\"shape\": []}]}");
}

}  // namespace
}  // namespace smd::io
