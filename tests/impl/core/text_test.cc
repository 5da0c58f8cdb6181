#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "impl/core/dtype.h"
#include "impl/core/json_scan.h"
#include "impl/core/text.h"

namespace smd {
namespace {

TEST(Text, PythonFloatRepr) {
  EXPECT_EQ(PythonFloatRepr(3.0), "3.0");
  EXPECT_EQ(PythonFloatRepr(0.0001), "0.0001");
  EXPECT_EQ(PythonFloatRepr(1e-05), "1e-05");
  EXPECT_EQ(PythonFloatRepr(-2.5), "-2.5");
  EXPECT_EQ(PythonFloatRepr(1e15), "1000000000000000.0");
  EXPECT_EQ(PythonFloatRepr(1e16), "1e+16");
  EXPECT_EQ(PythonFloatRepr(1.5e16), "1.5e+16");
  EXPECT_EQ(PythonFloatRepr(0.1), "0.1");
  EXPECT_EQ(PythonFloatRepr(static_cast<double>(1.0f / 3.0f)), "0.3333333432674408");
  EXPECT_EQ(PythonFloatRepr(-0.0), "-0.0");
  EXPECT_EQ(PythonFloatRepr(std::nan("")), "nan");
  EXPECT_EQ(PythonFloatRepr(-std::numeric_limits<double>::infinity()), "-inf");
  EXPECT_EQ(PythonFloatRepr(1.7976931348623157e308), "1.7976931348623157e+308");
  EXPECT_EQ(PythonFloatRepr(5e-324), "5e-324");
  EXPECT_EQ(PythonFloatRepr(123456.789), "123456.789");
}

TEST(Text, JsonEscapingLikePython) {
  std::string out;
  AppendJsonStringAscii(&out, std::string("a\"b\\c\n\x01\x7f\xc3\xa9", 10));
  EXPECT_EQ(out, "\"a\\\"b\\\\c\\n\\u0001\\u007f\\u00e9\"");
  out.clear();
  AppendJsonStringUtf8(&out, std::string("\xc3\xa9/\x1f", 4));
  EXPECT_EQ(out, "\"\xc3\xa9/\\u001f\"");
}

TEST(Text, Utf8Validation) {
  EXPECT_TRUE(IsValidUtf8("plain"));
  EXPECT_TRUE(IsValidUtf8("\xf0\x9f\x98\x80"));
  EXPECT_FALSE(IsValidUtf8("\xc3"));
  EXPECT_FALSE(IsValidUtf8("\xed\xa0\x80"));  // surrogate
  EXPECT_FALSE(IsValidUtf8("\xc0\x80"));      // overlong
}

TEST(Text, IntegerParsingAndSplitting) {
  EXPECT_EQ(ParseInt64(" 42 "), 42);
  EXPECT_EQ(ParseInt64("-7"), -7);
  EXPECT_FALSE(ParseInt64("1.5").has_value());
  EXPECT_FALSE(ParseInt64("").has_value());
  EXPECT_FALSE(ParseInt64("+-5").has_value());
  EXPECT_FALSE(ParseInt64("99999999999999999999").has_value());
  EXPECT_EQ(SplitAndStrip(" a, b,,c ", ','), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(ZeroPad(-1, 12), "-00000000001");
}

TEST(Text, JsonNulEscapeFoundOnlyInsideStrings) {
  EXPECT_TRUE(JsonHasNulEscape(R"({"a": "x\u0000y"})"));
  EXPECT_TRUE(JsonHasNulEscape(R"({"\u0000": 1})"));           // in a key
  EXPECT_TRUE(JsonHasNulEscape(R"(["\\", "\u0000"])"));      // after an escaped backslash
  EXPECT_FALSE(JsonHasNulEscape(R"({"a": "x\\u0000y"})"));    // an escaped backslash, then text
  EXPECT_TRUE(JsonHasNulEscape(R"({"b": "\"\u00001"})"));     // after an escaped quote
  EXPECT_FALSE(JsonHasNulEscape(R"({"a": "\u0001\u1000"})"));
  EXPECT_FALSE(JsonHasNulEscape(R"({"a": "x"} \u0000)"));      // outside strings: not ours to judge
  EXPECT_FALSE(JsonHasNulEscape(R"({"a": "\u000)"));          // cut short
}

TEST(DType, HalfConversionsRoundTripEveryValue) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    float f = HalfToFloat(static_cast<uint16_t>(h));
    if (std::isnan(f)) continue;
    EXPECT_EQ(FloatToHalf(f), h) << std::hex << h;
  }
  EXPECT_EQ(FloatToHalf(65520.0f), 0x7c00);       // rounds to infinity
  EXPECT_EQ(FloatToHalf(65519.0f), 0x7bff);
  EXPECT_EQ(FloatToHalf(5.9604645e-08f), 0x0001);  // smallest subnormal
  EXPECT_EQ(FloatToHalf(2.9802322e-08f), 0x0000);  // exactly half of it: ties to even
  EXPECT_EQ(BFloat16ToFloat(FloatToBFloat16(1.0f)), 1.0f);
  EXPECT_EQ(FloatToBFloat16(1.00390625f), 0x3f80);  // tie to even
}

}  // namespace
}  // namespace smd
