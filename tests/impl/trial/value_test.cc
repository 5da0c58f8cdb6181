#include "impl/trial/value.h"

#include <cstring>

#include "gtest/gtest.h"
#include "impl/format/event.h"
#include "impl/format/record.h"
#include "impl/format/wire.h"

namespace smd::trial {
namespace {

std::string Payload(DType dtype, std::vector<int64_t> shape, const std::string& content,
                    const std::string& tag = "t") {
  io::TensorEventFields f;
  f.wall_time = 1.0;
  f.tag = tag;
  f.dtype = dtype;
  f.shape = shape.data();
  f.ndim = shape.size();
  std::string prefix, suffix;
  io::EncodeTensorRecord(f, content, io::PayloadCrcKind::kSmdebugConstant, &prefix, &suffix);
  std::string record = prefix + content + suffix;
  auto payload = io::ParseRecord(record);
  EXPECT_TRUE(payload.ok());
  return std::string(payload.value());
}

TEST(Value, EveryDtypeDecodesAsItself) {
  const DType all[] = {DType::kFloat16, DType::kBFloat16, DType::kFloat32, DType::kFloat64,
                       DType::kInt8,    DType::kUInt8,    DType::kInt16,   DType::kUInt16,
                       DType::kInt32,   DType::kUInt32,   DType::kInt64,   DType::kUInt64,
                       DType::kComplex64, DType::kComplex128, DType::kBool};
  for (DType t : all) {
    const size_t n = 6, es = DTypeSize(t);
    std::string content(n * es, '\0');
    for (size_t i = 0; i < content.size(); ++i) content[i] = static_cast<char>(t == DType::kBool ? (i % 2) : i * 7 + 1);
    auto v = DecodeValue(Payload(t, {2, 3}, content), "t");
    ASSERT_TRUE(v.ok()) << DTypeName(t) << ": " << v.status().message();
    EXPECT_EQ(v.value()->dtype(), t);
    EXPECT_EQ(v.value()->shape(), (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(v.value()->count(), n);
    ASSERT_EQ(v.value()->nbytes(), content.size());
    EXPECT_EQ(0, std::memcmp(v.value()->data(), content.data(), content.size()));
    EXPECT_EQ(reinterpret_cast<uintptr_t>(v.value()->data()) % 64, 0u);
  }
}

TEST(Value, Int8StaysSigned) {
  const int8_t data[] = {-1, -128, 127};
  auto v = DecodeValue(Payload(DType::kInt8, {3}, std::string(reinterpret_cast<const char*>(data), 3)), "");
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v.value()->dtype(), DType::kInt8);
  EXPECT_EQ(static_cast<const int8_t*>(v.value()->data())[0], -1);
}

TEST(Value, ZeroDimAndEmpty) {
  double x = 2.5;
  auto v = DecodeValue(Payload(DType::kFloat64, {}, std::string(reinterpret_cast<char*>(&x), 8)), "t");
  ASSERT_TRUE(v.ok());
  EXPECT_TRUE(v.value()->shape().empty());
  EXPECT_EQ(v.value()->count(), 1u);
  // An empty tensor has no tensor_content on the wire; smdebug cannot read it back, smd can.
  auto e = DecodeValue(Payload(DType::kFloat32, {0, 3}, ""), "t");
  ASSERT_TRUE(e.ok()) << e.status().message();
  EXPECT_EQ(e.value()->count(), 0u);
  EXPECT_NE(e.value()->data(), nullptr);
}

TEST(Value, Strings) {
  io::TensorEventFields f;
  f.tag = "s";
  std::string record;
  io::EncodeStringTensorRecord(f, {"a", "b\xc3\xa9", ""}, io::PayloadCrcKind::kSmdebugConstant, &record);
  auto payload = io::ParseRecord(record);
  ASSERT_TRUE(payload.ok());
  auto v = DecodeValue(payload.value(), "s");
  ASSERT_TRUE(v.ok());
  EXPECT_TRUE(v.value()->is_string());
  EXPECT_EQ(v.value()->count(), 3u);
  EXPECT_EQ(v.value()->string_at(1), "b\xc3\xa9");
  EXPECT_EQ(v.value()->data(), nullptr);
}

TEST(Value, BoolBytesAreNormalized) {
  auto v = DecodeValue(Payload(DType::kBool, {3}, std::string("\x00\x05\x01", 3)), "t");
  ASSERT_TRUE(v.ok());
  const uint8_t* b = static_cast<const uint8_t*>(v.value()->data());
  EXPECT_EQ(b[0], 0);
  EXPECT_EQ(b[1], 1);
  EXPECT_EQ(b[2], 1);
}

TEST(Value, TypedValueFieldsAreAccepted) {
  // TensorProto{dtype: DT_FLOAT, shape [2], float_val: [1.5, -2]} (smdebug's reader accepts it).
  std::string tensor, shape, dim, value, summary, event;
  io::wire::PutTag(&tensor, 1, io::wire::kVarint);
  io::wire::PutVarint(&tensor, 1);
  io::wire::PutTag(&dim, 1, io::wire::kVarint);
  io::wire::PutVarint(&dim, 2);
  io::wire::PutLengthDelimited(&shape, 2, dim);
  io::wire::PutLengthDelimited(&tensor, 2, shape);
  std::string packed;
  float fv[2] = {1.5f, -2.0f};
  packed.append(reinterpret_cast<char*>(fv), 8);
  io::wire::PutLengthDelimited(&tensor, 5, packed);
  io::wire::PutLengthDelimited(&value, 1, "x");
  io::wire::PutLengthDelimited(&value, 8, tensor);
  io::wire::PutLengthDelimited(&summary, 1, value);
  io::wire::PutLengthDelimited(&event, 5, summary);
  auto v = DecodeValue(event, "x");
  ASSERT_TRUE(v.ok()) << v.status().message();
  EXPECT_EQ(static_cast<const float*>(v.value()->data())[1], -2.0f);
}

TEST(Value, Errors) {
  // Content size does not match the shape.
  EXPECT_EQ(DecodeValue(Payload(DType::kFloat32, {3}, std::string(8, 'a')), "t").status().code(),
            Code::kCorrupt);
  // A dtype smd does not know (qint8).
  EXPECT_EQ(DecodeValue(Payload(static_cast<DType>(11), {1}, "a"), "t").status().code(),
            Code::kUnsupported);
  // The record holds another tensor than the index says.
  auto wrong = DecodeValue(Payload(DType::kFloat32, {1}, std::string(4, 'a'), "other"), "t");
  EXPECT_EQ(wrong.status().code(), Code::kCorrupt);
  EXPECT_NE(wrong.status().message().find("other"), std::string::npos);
  // Not an event at all.
  EXPECT_EQ(DecodeValue("\xff\xff\xff", "t").status().code(), Code::kCorrupt);
  EXPECT_EQ(DecodeValue("", "t").status().code(), Code::kCorrupt);
  // Shape whose element count overflows.
  EXPECT_FALSE(DecodeValue(Payload(DType::kFloat32, {INT64_C(1) << 40, INT64_C(1) << 40}, ""), "t").ok());
}

}  // namespace
}  // namespace smd::trial
