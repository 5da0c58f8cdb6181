#include "impl/format/index_parser.h"

#include "gtest/gtest.h"
#include "impl/format/index_file.h"

namespace smd::trial {
namespace {

Status Parse(const std::string& text, ParsedIndex* out) { return ParseIndexFile(text, out); }

TEST(IndexParser, ParsesWhatSmdebugWrites) {
  io::IndexMeta meta;
  meta.mode = Mode::kEval;
  meta.mode_step = 17;
  meta.event_file_name = "events/000000000042/000000000042_worker_0.tfevents";
  std::vector<io::IndexTensorEntry> tensors = {
      {"smdebug/reductions/abs_l2/fc1_weight", 0, 146}, {"fc1_weight", 146, 138},
      {"caf\xc3\xa9/\xe4\xb8\xad \"q\"\\", 284, 90}};
  std::vector<io::IndexShapeEntry> shapes = {{"fc1_weight", "fc1_weight", {2, 3}},
                                             {"scalar", "orig", {}}};
  const std::string text = io::BuildIndexJson(meta, tensors, shapes);
  ParsedIndex p;
  ASSERT_TRUE(Parse(text, &p).ok());
  EXPECT_EQ(p.mode, Mode::kEval);
  EXPECT_EQ(p.mode_step, 17);
  ASSERT_TRUE(p.has_event_file_name);
  EXPECT_EQ(p.event_file_name, *meta.event_file_name);
  ASSERT_EQ(p.tensors.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(p.tensors[i].name, tensors[i].name);  // \uXXXX and \" escapes decoded
    EXPECT_EQ(p.tensors[i].start, tensors[i].start);
    EXPECT_EQ(p.tensors[i].length, tensors[i].length);
  }
  ASSERT_EQ(p.shapes.size(), 2u);
  EXPECT_EQ(p.shapes[0].name, "fc1_weight");
  ASSERT_EQ(p.shapes[0].ndim, 2u);
  EXPECT_EQ(p.dims[p.shapes[0].dims_begin], 2);
  EXPECT_EQ(p.dims[p.shapes[0].dims_begin + 1], 3);
  EXPECT_EQ(p.shapes[1].original_name, "orig");
  EXPECT_EQ(p.shapes[1].ndim, 0u);
}

TEST(IndexParser, ShapesOnlyFileHasNoEventFile) {
  ParsedIndex p;
  ASSERT_TRUE(Parse("{\"meta\": {\"mode\": \"TRAIN\", \"mode_step\": 0}, \"tensor_payload\": [], "
                    "\"shape_payload\": [{\"tensorname\": \"a\", \"originalname\": \"a\", \"shape\": [4]}]}",
                    &p)
                  .ok());
  EXPECT_FALSE(p.has_event_file_name);
  EXPECT_EQ(p.shapes.size(), 1u);
}

// Entries in smdebug's exact layout take a fast path; every variation of it (spacing, key order,
// escapes, non-ASCII names, big or zero-led numbers, fractions) must give the general parser's
// answer, the same as the fast path's for the equivalent canonical text.
TEST(IndexParser, FastPathAgreesWithTheGeneralParser) {
  const std::string head =
      "{\"meta\": {\"mode\": \"TRAIN\", \"mode_step\": 0, \"event_file_name\": \"e\"}, "
      "\"tensor_payload\": [";
  struct Case {
    std::string entry;
    bool ok;
    std::string name;
    uint64_t start, length;
  };
  const Case cases[] = {
      {"{\"tensorname\": \"a/b:0\", \"start_idx\": 0, \"length\": 20}", true, "a/b:0", 0, 20},
      {"{\"tensorname\":\"a\",\"start_idx\":7,\"length\":20}", true, "a", 7, 20},
      {"{\"length\": 20, \"tensorname\": \"a\", \"start_idx\": 7}", true, "a", 7, 20},
      {"{\"tensorname\": \"a\\\"q\", \"start_idx\": 1, \"length\": 2}", true, "a\"q", 1, 2},
      {"{\"tensorname\": \"caf\xc3\xa9\", \"start_idx\": 1, \"length\": 2}", true, "caf\xc3\xa9", 1, 2},
      {"{\"tensorname\": \"a\", \"start_idx\": 123456789012345678, \"length\": 2}", true, "a",
       123456789012345678u, 2},
      {"{\"tensorname\": \"a\", \"start_idx\": 1234567890123456789, \"length\": 2}", true, "a",
       1234567890123456789u, 2},
      {"{\"tensorname\": \"a\", \"start_idx\": 9223372036854775808, \"length\": 2}", false, "", 0, 0},
      {"{\"tensorname\": \"a\", \"start_idx\": 01, \"length\": 2}", false, "", 0, 0},
      {"{\"tensorname\": \"a\", \"start_idx\": 1.0, \"length\": 2}", false, "", 0, 0},
      {"{\"tensorname\": \"a\", \"start_idx\": 1, \"length\": 2e3}", false, "", 0, 0},
      {"{\"tensorname\": \"a\", \"start_idx\": -1, \"length\": 2}", false, "", 0, 0},
      {"{\"tensorname\": \"a\", \"start_idx\": 1, \"length\": 2, \"x\": null}", true, "a", 1, 2},
      {"{\"tensorname\": \"a\", \"start_idx\": 1, \"length\": 2, \"length\": 3}", true, "a", 1, 3},
      {"{\"tensorname\": \"a\\u00e9\", \"start_idx\": 1, \"length\": 2}", true, "a\xc3\xa9", 1, 2},
      {"{\"tensorname\": \"a\x01\", \"start_idx\": 1, \"length\": 2}", false, "", 0, 0},
      {"{\"tensorname\": \"a\xff\", \"start_idx\": 1, \"length\": 2}", false, "", 0, 0},
      {"{\"tensorname\": \"a\", \"start_idx\": 1, \"length\": 2", false, "", 0, 0},
  };
  for (const Case& c : cases) {
    for (const std::string& sep : {std::string(""), std::string("\n ")}) {
      const std::string text = head + sep + c.entry + ", " + c.entry + "]}";
      ParsedIndex p;
      Status st = Parse(text, &p);
      ASSERT_EQ(st.ok(), c.ok) << text << ": " << st.message();
      if (!c.ok) continue;
      ASSERT_EQ(p.tensors.size(), 2u);
      for (const IndexTensorRef& t : p.tensors) {
        EXPECT_EQ(t.name, c.name) << text;
        EXPECT_EQ(t.start, c.start) << text;
        EXPECT_EQ(t.length, c.length) << text;
      }
    }
  }
}

TEST(IndexParser, LenientWherePythonJsonIs) {
  ParsedIndex p;
  // Other key order, extra keys (skipped, nested and odd values too), whitespace, " GLOBAL ".
  ASSERT_TRUE(Parse(" \n{ \"x\": [1, 2.5e3, -0.5, true, null, {\"y\": [NaN, -Infinity]}],"
                    "\"tensor_payload\" : [ {\"length\":20 , \"extra\": \"z\", \"start_idx\": 0,"
                    "\"tensorname\": \"t\"} ], \"meta\": {\"event_file_name\": \"events/e\","
                    "\"mode_step\": 3, \"mode\": \" GLOBAL \", \"more\": {}}}\t\r\n",
                    &p)
                  .ok());
  EXPECT_EQ(p.mode, Mode::kGlobal);
  EXPECT_EQ(p.mode_step, 3);
  ASSERT_EQ(p.tensors.size(), 1u);
  EXPECT_EQ(p.tensors[0].length, 20u);
  // A repeated key: the last value wins.
  ASSERT_TRUE(Parse("{\"meta\": {\"mode\": \"TRAIN\", \"mode_step\": 1, \"mode_step\": 2}, "
                    "\"shape_payload\": []}",
                    &p)
                  .ok());
  EXPECT_EQ(p.mode_step, 2);
}

TEST(IndexParser, RejectsMalformedFilesWithAReason) {
  const char* bad[] = {
      "",
      "   ",
      "[]",
      "{",
      "{\"meta\": {\"mode\": \"TRAIN\", \"mode_step\": 0}",  // truncated
      "{\"tensor_payload\": []}",                           // no meta
      "{\"meta\": {}, \"tensor_payload\": []}",             // empty meta
      "{\"meta\": [1], \"tensor_payload\": []}",
      "{\"meta\": {\"mode_step\": 0}, \"tensor_payload\": []}",
      "{\"meta\": {\"mode\": \"train\", \"mode_step\": 0}, \"tensor_payload\": []}",
      "{\"meta\": {\"mode\": \"TRAIN\", \"mode_step\": 1.5}, \"tensor_payload\": []}",
      "{\"meta\": {\"mode\": \"TRAIN\", \"mode_step\": 0}}",  // neither payload
      "{\"meta\": {\"mode\": \"TRAIN\", \"mode_step\": 0}, \"tensor_payload\": "
      "[{\"tensorname\": \"a\", \"start_idx\": 0, \"length\": 20}]}",  // no event_file_name
      "{\"meta\": {\"mode\": \"TRAIN\", \"mode_step\": 0, \"event_file_name\": \"e\"}, "
      "\"tensor_payload\": [{\"tensorname\": \"a\", \"start_idx\": -1, \"length\": 20}]}",
      "{\"meta\": {\"mode\": \"TRAIN\", \"mode_step\": 0, \"event_file_name\": \"e\"}, "
      "\"tensor_payload\": [{\"tensorname\": \"a\", \"start_idx\": 0}]}",
      "{\"meta\": {\"mode\": \"TRAIN\", \"mode_step\": 0, \"event_file_name\": \"e\"}, "
      "\"tensor_payload\": [{\"tensorname\": \"a\", \"start_idx\": 99999999999999999999, \"length\": 1}]}",
      "{\"meta\": {\"mode\": \"TRAIN\", \"mode_step\": 0}, \"shape_payload\": "
      "[{\"tensorname\": \"a\", \"shape\": [-1]}]}",
      "{\"meta\": {\"mode\": \"TRAIN\", \"mode_step\": 0}, \"shape_payload\": [{\"tensorname\": \"a\"}]}",
      "{\"meta\": {\"mode\": \"TRAIN\", \"mode_step\": 0}, \"shape_payload\": []} x",  // trailing data
      "{\"meta\": {\"mode\": \"TR\xff\", \"mode_step\": 0}, \"shape_payload\": []}",   // not UTF-8
      "{\"meta\": {\"mode\": \"TRAIN\\ud800\", \"mode_step\": 0}, \"shape_payload\": []}",
      "{\"meta\": {\"mode\": \"TRA\nIN\", \"mode_step\": 0}, \"shape_payload\": []}",
      "{\"meta\": {\"mode\": \"TRAIN\", \"mode_step\": 0}, \"shape_payload\": [], \"x\": \"\\u0000\"}",
      "{\"meta\": {\"mode\": \"TRAIN\", \"mode_step\": 00}, \"shape_payload\": []}",
      "{\"meta\": {\"mode\": \"TRAIN\", \"mode_step\": 0,}, \"shape_payload\": []}",
      "{\"meta\": {\"mode\": \"TRAIN\" \"mode_step\": 0}, \"shape_payload\": []}",
  };
  for (const char* text : bad) {
    ParsedIndex p;
    Status st = Parse(text, &p);
    EXPECT_EQ(st.code(), Code::kCorrupt) << text;
    EXPECT_FALSE(st.message().empty());
  }
}

TEST(IndexParser, DeepNestingIsRefusedNotACrash) {
  std::string deep = "{\"meta\": {\"mode\": \"TRAIN\", \"mode_step\": 0}, \"shape_payload\": [], \"x\": ";
  for (int i = 0; i < 100000; ++i) deep += '[';
  ParsedIndex p;
  EXPECT_EQ(Parse(deep, &p).code(), Code::kCorrupt);
  std::string ok = "{\"meta\": {\"mode\": \"TRAIN\", \"mode_step\": 0}, \"shape_payload\": [], \"x\": ";
  for (int i = 0; i < 30; ++i) ok += '[';
  for (int i = 0; i < 30; ++i) ok += ']';
  ok += '}';
  EXPECT_TRUE(Parse(ok, &p).ok());
}

TEST(IndexParser, EveryTruncationFailsCleanly) {
  io::IndexMeta meta;
  meta.mode = Mode::kTrain;
  meta.event_file_name = "events/000000000000/000000000000_worker_0.tfevents";
  const std::string text = io::BuildIndexJson(meta, {{"a\xc3\xa9", 0, 20}, {"b", 20, 30}},
                                              {{"c", "c", {1, 2}}});
  ParsedIndex p;
  ASSERT_TRUE(Parse(text, &p).ok());
  for (size_t n = 0; n < text.size(); ++n) {
    EXPECT_EQ(Parse(text.substr(0, n), &p).code(), Code::kCorrupt) << n;
  }
}

}  // namespace
}  // namespace smd::trial
