// Unit tests for impl/core/json_scan.h (JsonHasNulEscape, implemented in text.cc): the boundaries
// of the scan. The common cases (keys, values, escaped quotes and backslashes) are in text_test.cc.
#include "impl/core/json_scan.h"

#include <gtest/gtest.h>

#include <string>

namespace smd {
namespace {

TEST(JsonScan, EmptyAndTrivialTexts) {
  EXPECT_FALSE(JsonHasNulEscape(""));
  EXPECT_FALSE(JsonHasNulEscape("\""));
  EXPECT_FALSE(JsonHasNulEscape("\"\""));
  EXPECT_FALSE(JsonHasNulEscape("{}"));
  EXPECT_FALSE(JsonHasNulEscape("null"));
}

TEST(JsonScan, TextEndingInsideAnEscape) {
  // Each must neither read past the end nor report a NUL.
  EXPECT_FALSE(JsonHasNulEscape(R"("\)"));
  EXPECT_FALSE(JsonHasNulEscape(R"("\u)"));
  EXPECT_FALSE(JsonHasNulEscape(R"("\u000)"));
  EXPECT_FALSE(JsonHasNulEscape(R"({"a": "b\)"));
  // A view that stops inside the escape, though the memory after it holds the rest.
  const std::string full = R"("\u0000")";
  EXPECT_FALSE(JsonHasNulEscape(std::string_view(full).substr(0, 6)));
  EXPECT_TRUE(JsonHasNulEscape(std::string_view(full).substr(0, 7)));
}

TEST(JsonScan, OnlyTheExactEscapeCounts) {
  EXPECT_TRUE(JsonHasNulEscape(R"(["\u00000"])"));  // NUL, then the character '0'
  EXPECT_TRUE(JsonHasNulEscape(R"(["\u0000\u0000"])"));
  EXPECT_FALSE(JsonHasNulEscape(R"(["\U0000"])"));  // not a JSON escape
  EXPECT_FALSE(JsonHasNulEscape(R"(["\u0001", "\u0010", "\u0100", "\u1000", "\u00a0"])"));
  EXPECT_FALSE(JsonHasNulEscape(R"(["u0000", "\n0000"])"));
  EXPECT_FALSE(JsonHasNulEscape(R"(["\ud800\udc00"])"));  // a surrogate pair is not a NUL
}

TEST(JsonScan, RunsOfBackslashes) {
  // An odd number of backslashes before u0000 leaves the last one escaping 'u'.
  EXPECT_TRUE(JsonHasNulEscape(R"(["\\\u0000"])"));
  EXPECT_FALSE(JsonHasNulEscape(R"(["\\\\u0000"])"));
  EXPECT_TRUE(JsonHasNulEscape(R"(["\\\\\u0000"])"));
  // A string that ends in an escaped backslash: the next string is a string again.
  EXPECT_TRUE(JsonHasNulEscape(R"(["x\\", "\u0000"])"));
  EXPECT_FALSE(JsonHasNulEscape(R"(["x\\", \u0000])"));
}

TEST(JsonScan, RawBytesDoNotConfuseTheScan) {
  EXPECT_TRUE(JsonHasNulEscape("[\"caf\xc3\xa9\\u0000\"]"));
  EXPECT_TRUE(JsonHasNulEscape("[\"\xff\xfe\\u0000\"]"));  // invalid UTF-8 before the escape
  // A raw NUL byte is not the escape (the JSON parser refuses it on its own).
  EXPECT_FALSE(JsonHasNulEscape(std::string_view("[\"a\0b\"]", 7)));
  // ...and it does not end the scan: the escape after it is still found.
  EXPECT_TRUE(JsonHasNulEscape(std::string_view("[\"a\0b\\u0000\"]", 13)));
}

TEST(JsonScan, LongDocuments) {
  std::string doc = "{\"k\": \"" + std::string(1 << 20, 'x') + "\"}";
  EXPECT_FALSE(JsonHasNulEscape(doc));
  doc.insert(doc.size() - 2, "\\u0000");  // at the very end of the last string
  EXPECT_TRUE(JsonHasNulEscape(doc));
  std::string many;
  for (int i = 0; i < 10000; ++i) many += "\"\\\\\",";
  EXPECT_FALSE(JsonHasNulEscape("[" + many + "\"\"]"));
  EXPECT_TRUE(JsonHasNulEscape("[" + many + "\"\\u0000\"]"));
}

}  // namespace
}  // namespace smd
