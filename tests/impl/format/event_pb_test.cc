// smd's hand-written event codec against the protoc-c one generated from smd_event.proto: every
// record the real smdebug wrote in the fixtures, and records smd's encoder writes.
#include <dirent.h>

#include <fstream>
#include <sstream>

#include "gtest/gtest.h"
#include "impl/format/event.h"
#include "impl/format/record.h"
#include "tests/impl/format/pb_oracle.h"

namespace smd::io {
namespace {

void ListEventFiles(const std::string& dir, std::vector<std::string>* out) {
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return;
  while (dirent* e = readdir(d)) {
    std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    std::string path = dir + "/" + name;
    if (name.size() > 9 && name.compare(name.size() - 9, 9, ".tfevents") == 0) {
      out->push_back(path);
    } else {
      ListEventFiles(path, out);
    }
  }
  closedir(d);
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Splits an event file into its records' payloads.
std::vector<std::string_view> Payloads(std::string_view file) {
  std::vector<std::string_view> out;
  size_t off = 0;
  while (off + kRecordOverhead <= file.size()) {
    uint64_t len = DecodeFixed64(reinterpret_cast<const unsigned char*>(file.data() + off));
    if (len > file.size() - off - kRecordOverhead) break;
    auto payload = ParseRecord(file.substr(off, len + kRecordOverhead));
    EXPECT_TRUE(payload.ok()) << payload.status().message();
    if (!payload.ok()) break;
    out.push_back(payload.value());
    off += len + kRecordOverhead;
  }
  EXPECT_EQ(off, file.size()) << "trailing bytes";
  return out;
}

TEST(EventCodecOracle, FixtureRecordsDecodeAlikeAndAreCanonical) {
  std::vector<std::string> files;
  ListEventFiles(SMD_TEST_DATA_DIR "/trials", &files);
  ASSERT_GE(files.size(), 5u);
  size_t records = 0;
  for (const std::string& path : files) {
    std::string file = ReadAll(path);
    for (std::string_view payload : Payloads(file)) {
      ++records;
      std::unique_ptr<Smd__Event, pb_oracle::EventDeleter> pb(pb_oracle::Unpack(payload));
      ASSERT_NE(pb, nullptr) << path;
      // smdebug writes canonical protobuf, so the comparison below is on the file's own bytes.
      EXPECT_EQ(pb_oracle::Pack(pb.get()), payload) << path;
      DecodedEvent ev;
      ASSERT_TRUE(DecodeEvent(payload, &ev).ok()) << path;
      EXPECT_EQ(pb_oracle::Compare(pb.get(), ev), "") << path;
      EXPECT_EQ(pb_oracle::CheckDecode(payload), "") << path;
    }
  }
  EXPECT_GE(records, 20u);
}

TEST(EventCodecOracle, CompareNoticesADifference) {
  int64_t shape[] = {2};
  TensorEventFields f;
  f.tag = "w";
  f.shape = shape;
  f.ndim = 1;
  f.mode = Mode::kTrain;
  std::string record, prefix, suffix;
  EncodeTensorRecord(f, std::string(8, 'x'), PayloadCrcKind::kSmdebugConstant, &prefix, &suffix);
  record = prefix + std::string(8, 'x') + suffix;
  std::string_view payload = ParseRecord(record).value();
  std::unique_ptr<Smd__Event, pb_oracle::EventDeleter> pb(pb_oracle::Unpack(payload));
  ASSERT_NE(pb, nullptr);
  DecodedEvent ev;
  ASSERT_TRUE(DecodeEvent(payload, &ev).ok());
  EXPECT_EQ(pb_oracle::Compare(pb.get(), ev), "");
  DecodedEvent other = ev;
  other.tag = "v";
  EXPECT_EQ(pb_oracle::Compare(pb.get(), other), "tag");
  other = ev;
  other.shape = {3};
  EXPECT_EQ(pb_oracle::Compare(pb.get(), other), "shape dim 0");
  other = ev;
  other.mode = 2;
  EXPECT_EQ(pb_oracle::Compare(pb.get(), other), "mode");
  // And the encoder check notices a field that is not what was asked for.
  TensorEventFields g = f;
  g.mode_step = 5;
  EXPECT_EQ(pb_oracle::CheckEncoded(payload, g, std::string(8, 'x'), nullptr), "mode_step entry");
}

TEST(EventCodecOracle, EncoderWritesWhatProtocCReadsByteForByte) {
  const DType dtypes[] = {DType::kFloat32, DType::kFloat64, DType::kInt8,   DType::kUInt64,
                          DType::kBool,    DType::kFloat16, DType::kInt64,  DType::kComplex128};
  const std::vector<std::vector<int64_t>> shapes = {
      {}, {0}, {1}, {2, 3}, {300, 1, 70000}, {0, 5}, {1LL << 40}};
  const Mode modes[] = {Mode::kTrain, Mode::kEval, Mode::kPredict, Mode::kGlobal};
  const int64_t steps[] = {0, 1, 127, 128, -1, INT64_MAX, INT64_MIN};
  const double times[] = {0, 1600000000.5, 1e-300};
  const std::string tags[] = {"w", "fc1/weight:0", std::string("nul\0byte", 8), "\xff\xfe", "scalar/loss"};
  size_t checked = 0, i = 0;
  for (DType dt : dtypes) {
    for (const auto& shape : shapes) {
      for (Mode m : modes) {
        const int64_t step = steps[i % 7];
        TensorEventFields f;
        f.wall_time = times[i % 3];
        f.step = step;
        f.tag = tags[i % 5];
        f.dtype = dt;
        f.shape = shape.data();
        f.ndim = shape.size();
        f.mode = m;
        f.mode_step = steps[(i + 3) % 7];
        std::string content((i * 37) % 300, static_cast<char>(i));
        ++i;
        for (bool inline_content : {true, false}) {
          std::string out;
          size_t p, s;
          AppendTensorRecord(f, content, PayloadCrcKind::kReal, inline_content, &out, &p, &s);
          std::string record = inline_content ? out : out.substr(0, p) + content + out.substr(p);
          auto payload = ParseRecord(record, /*require_real_crc=*/true);
          ASSERT_TRUE(payload.ok()) << payload.status().message();
          ASSERT_EQ(pb_oracle::CheckEncoded(payload.value(), f, content, nullptr), "")
              << "dtype " << static_cast<int>(dt) << " ndim " << shape.size() << " tag " << f.tag;
          ++checked;
        }
      }
    }
  }
  std::vector<std::vector<std::string>> string_sets = {{}, {""}, {"a", "", "héllo", std::string(200, 'z')}};
  for (const auto& strings : string_sets) {
    TensorEventFields f;
    f.wall_time = 3.25;
    f.step = 9;
    f.tag = "names";
    f.mode = Mode::kEval;
    f.mode_step = -1;
    std::string record;
    EncodeStringTensorRecord(f, strings, PayloadCrcKind::kSmdebugConstant, &record);
    auto payload = ParseRecord(record);
    ASSERT_TRUE(payload.ok());
    ASSERT_EQ(pb_oracle::CheckEncoded(payload.value(), f, {}, &strings), "") << strings.size();
    ++checked;
  }
  EXPECT_EQ(checked, 8u * 7 * 4 * 2 + 3);
}

}  // namespace
}  // namespace smd::io
