#include "impl/format/collections_file.h"

#include "gtest/gtest.h"

namespace smd::trial {
namespace {

std::string File(const std::string& colls, const std::string& meta = "{\"num_workers\": 2}") {
  return "{\"collections\": " + colls + ", \"_meta\": " + meta + "}";
}

TEST(CollectionsFile, WhatSmdebugWrites) {
  auto f = ParseCollectionsFile(
      File("{\"weights\": {\"name\": \"weights\", \"include_regex\": [\"w\", \"w\"], "
           "\"tensor_names\": [\"a\"], \"reduction_config\": {\"save_raw_tensor\": true, "
           "\"reductions\": \"min,l2_norm\", \"save_shape\": false}, \"save_config\": null, "
           "\"save_histogram\": false}}"),
      "c.json");
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(f->num_workers, 2);
  const CollectionInfo& c = f->collections.at("weights");
  EXPECT_EQ(c.include_regex, (std::vector<std::string>{"w", "w"}));
  EXPECT_EQ(c.tensor_names, std::vector<std::string>{"a"});
  EXPECT_TRUE(c.has_reduction_config && c.save_raw_tensor && !c.save_shape && !c.save_histogram);
  EXPECT_EQ(c.reductions, "min,l2_norm");
}

TEST(CollectionsFile, LenientWhereSmdebugIs) {
  // null / missing keys, a bare string for a list, another top-level key, no _meta.
  auto f = ParseCollectionsFile(
      "{\"collections\": {\"c\": {\"include_regex\": null, \"tensor_names\": \"t\", "
      "\"reduction_config\": null}}, \"other\": 1}",
      "c.json");
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_FALSE(f->num_workers);
  const CollectionInfo& c = f->collections.at("c");
  EXPECT_EQ(c.name, "c");
  EXPECT_TRUE(c.include_regex.empty());
  EXPECT_EQ(c.tensor_names, std::vector<std::string>{"t"});
  EXPECT_FALSE(c.has_reduction_config);
  for (const char* meta : {"{\"num_workers\": 0}", "{\"num_workers\": -3}", "{\"num_workers\": 1.5}",
                           "{\"num_workers\": \"2\"}", "{\"num_workers\": 1e300}", "[]"}) {
    auto g = ParseCollectionsFile(File("{}", meta), "c.json");
    ASSERT_TRUE(g.ok()) << meta;
    EXPECT_FALSE(g->num_workers) << meta;
  }
}

TEST(CollectionsFile, MalformedFilesNameTheFile) {
  const std::string bad[] = {
      "",
      "[]",
      "{\"collections\": [",
      "{\"_meta\": {\"num_workers\": 1}}",
      File("[]"),
      File("{\"c\": 7}"),
      File("{\"c\": {\"include_regex\": 5}}"),
      File("{\"c\": {\"include_regex\": [\"a\", 5]}}"),
      File("{\"c\": {\"tensor_names\": {\"a\": 1}}}"),
      File("{\"c\": {\"tensor_names\": [\"\xff\"]}}"),
      File("{\"\xc3\": {}}"),
      File("{\"c\": {\"name\": \"\xed\xa0\x80\"}}"),
      File("{\"c\": {\"reduction_config\": {\"reductions\": \"m\xff\"}}}"),
  };
  for (const std::string& text : bad) {
    auto f = ParseCollectionsFile(text, "dir/worker_0_collections.json");
    EXPECT_EQ(f.status().code(), Code::kCorrupt) << text;
    EXPECT_NE(f.status().message().find("dir/worker_0_collections.json"), std::string::npos);
  }
}

}  // namespace
}  // namespace smd::trial

namespace smd::trial {
namespace {

// One collection as smdebug 1.0.34 writes it (a fixture's "biases" entry), plus a second one that
// needs escapes, built by the writer and read back by the reader.
TEST(CollectionsFile, BuildWritesSmdebugsLayoutAndReadsBack) {
  const std::string save = "{\"save_interval\": 1, \"save_steps\": [], \"start_step\": 0, \"end_step\": null}";
  CollectionsFileEntry biases;
  biases.name = "biases";
  biases.include_regex = {"^(?!gradient).*bias"};
  biases.reduction_config_json = "{\"save_raw_tensor\": true, \"reductions\": \"\", \"save_shape\": false}";
  for (std::string& s : biases.save_config_json) s = save;
  CollectionsFileEntry odd;
  odd.name = "caf\xc3\xa9 \"q\"";
  odd.include_regex = {"a\\d", "a\\d"};
  odd.tensor_names = {"x/y:0", "\xe2\x82\xac"};
  odd.reduction_config_json = "null";
  for (std::string& s : odd.save_config_json) s = "null";
  odd.save_histogram = false;

  std::string json = BuildCollectionsJson({biases, odd}, 3);
  EXPECT_EQ(json,
            "{\"collections\": {\"biases\": {\"name\": \"biases\", \"include_regex\": "
            "[\"^(?!gradient).*bias\"], \"tensor_names\": [], \"reduction_config\": "
            "{\"save_raw_tensor\": true, \"reductions\": \"\", \"save_shape\": false}, "
            "\"save_config\": {\"TRAIN\": " + save + ", \"EVAL\": " + save + ", \"PREDICT\": " +
                save + ", \"GLOBAL\": " + save + "}, \"save_histogram\": true}, "
            "\"caf\\u00e9 \\\"q\\\"\": {\"name\": \"caf\\u00e9 \\\"q\\\"\", \"include_regex\": "
            "[\"a\\\\d\", \"a\\\\d\"], \"tensor_names\": [\"x/y:0\", \"\\u20ac\"], "
            "\"reduction_config\": null, \"save_config\": {\"TRAIN\": null, \"EVAL\": null, "
            "\"PREDICT\": null, \"GLOBAL\": null}, \"save_histogram\": false}}, "
            "\"_meta\": {\"num_workers\": 3}}");

  auto back = ParseCollectionsFile(json, "c.json");
  ASSERT_TRUE(back.ok()) << back.status().message();
  ASSERT_EQ(back->collections.size(), 2u);
  const CollectionInfo& b = back->collections.at("biases");
  EXPECT_EQ(b.include_regex, biases.include_regex);
  EXPECT_TRUE(b.save_raw_tensor);
  EXPECT_TRUE(b.save_histogram);
  const CollectionInfo& o = back->collections.at(odd.name);
  EXPECT_EQ(o.include_regex, odd.include_regex);
  EXPECT_EQ(o.tensor_names, odd.tensor_names);
  EXPECT_FALSE(o.has_reduction_config);
  EXPECT_FALSE(o.save_histogram);
  EXPECT_EQ(back->num_workers, 3);
  // save_config: every mode of "biases" as written; "odd" has the object, every mode null
  ASSERT_TRUE(b.save_config.has_value());
  for (const auto& m : *b.save_config) {
    ASSERT_TRUE(m.has_value());
    EXPECT_EQ(m->save_interval, 1);
    EXPECT_EQ(m->start_step, 0);
    EXPECT_FALSE(m->end_step.has_value());
    EXPECT_TRUE(m->save_steps.empty());
  }
  ASSERT_TRUE(o.save_config.has_value());
  for (const auto& m : *o.save_config) EXPECT_FALSE(m.has_value());
}

TEST(CollectionsFile, SaveConfigAsSmdebugReadsIt) {
  auto f = ParseCollectionsFile(
      File("{\"none\": {\"save_config\": null}, \"missing\": {}, "
           "\"c\": {\"save_config\": {\"TRAIN\": {\"save_interval\": \" 4 \", \"end_step\": -2}, "
           "\"GLOBAL\": {\"start_step\": 3, \"end_step\": 10, \"save_steps\": [7, 2], \"x\": 1}, "
           "\"EVAL\": {\"save_interval\": 2}, \"EVAL\": null}}}"),
      "c.json");
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_FALSE(f->collections.at("none").save_config.has_value());
  EXPECT_FALSE(f->collections.at("missing").save_config.has_value());
  const SaveConfigInfo& sc = *f->collections.at("c").save_config;
  ASSERT_TRUE(sc[0].has_value());  // TRAIN
  EXPECT_EQ(sc[0]->save_interval, 4);
  EXPECT_EQ(sc[0]->end_step, 0);  // an end before step 0
  EXPECT_FALSE(sc[1].has_value());  // EVAL: the last key, null
  EXPECT_FALSE(sc[2].has_value());  // PREDICT: missing
  ASSERT_TRUE(sc[3].has_value());  // GLOBAL
  EXPECT_EQ(sc[3]->save_interval, 500);
  EXPECT_EQ(sc[3]->start_step, 3);
  EXPECT_EQ(sc[3]->end_step, 10);
  EXPECT_EQ(sc[3]->save_steps, (std::vector<int64_t>{7, 2}));

  for (const char* bad : {"[]", "{\"Train\": {}}", "{\"TRAIN\": []}",
                          "{\"TRAIN\": {\"save_interval\": 0}}",
                          "{\"TRAIN\": {\"save_interval\": \"+-5\"}}",
                          "{\"TRAIN\": {\"start_step\": 1.5}}",
                          "{\"TRAIN\": {\"end_step\": false}}",
                          "{\"TRAIN\": {\"save_steps\": [true]}}",
                          "{\"TRAIN\": {\"save_steps\": [9007199254740992]}}"}) {
    // Ignored with a warning: the collection has no save_config, the file still parses.
    auto g = ParseCollectionsFile(File(std::string("{\"c\": {\"save_config\": ") + bad + "}}"),
                                  "dir/worker_0_collections.json");
    ASSERT_TRUE(g.ok()) << bad << ": " << g.status().message();
    EXPECT_FALSE(g->collections.at("c").save_config.has_value()) << bad;
    ASSERT_EQ(g->warnings.size(), 1u) << bad;
    EXPECT_NE(g->warnings[0].find("'dir/worker_0_collections.json': "), std::string::npos)
        << g->warnings[0];
    EXPECT_NE(g->warnings[0].find("'c'"), std::string::npos) << g->warnings[0];
  }
}

}  // namespace
}  // namespace smd::trial
