// Tests for the hook JSON configuration parser (impl/format/hook_config.h, FORMAT.md §12).
#include "impl/format/hook_config.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace smd::io {
namespace {

constexpr char kSource[] = "debughookconfig.json";

Result<HookConfigSpec> Parse(std::string_view json) { return ParseHookConfig(json, kSource); }

// Parses `json`, expects kInvalidArgument, and returns the message.
std::string ErrorOf(std::string_view json) {
  Result<HookConfigSpec> r = Parse(json);
  EXPECT_FALSE(r.ok()) << "unexpectedly parsed: " << json;
  if (r.ok()) return "";
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument) << r.status().message();
  EXPECT_EQ(r.status().message().rfind(std::string(kSource) + ": ", 0), 0u)
      << r.status().message();
  return r.status().message();
}

// {"HookParameters": {<params>}}
std::string Hook(const std::string& params) { return R"({"HookParameters": {)" + params + "}}"; }
// {"CollectionConfigurations": [{"CollectionName": "c", "CollectionParameters": {<params>}}]}
std::string Coll(const std::string& params) {
  return R"({"CollectionConfigurations": [{"CollectionName": "c", "CollectionParameters": {)" +
         params + "}}]}";
}

HookConfigSpec ParseOk(std::string_view json) {
  Result<HookConfigSpec> r = Parse(json);
  EXPECT_TRUE(r.ok()) << r.status().message() << "\n" << json;
  if (!r.ok()) return HookConfigSpec();
  return std::move(r).value();
}

using Steps = std::vector<int64_t>;
using Strings = std::vector<std::string>;

constexpr int kTrain = 0, kEval = 1, kPredict = 2, kGlobal = 3;

// A config as SageMaker writes it (string-valued numbers), with smd's extensions mixed in.
constexpr char kFullConfig[] = R"json({
  "S3OutputPath": "s3://my-bucket/debug-output",
  "LocalPath": "/opt/ml/output/tensors-custom",
  "HookParameters": {
    "save_interval": "100",
    "start_step": 5,
    "end_step": " 1000 ",
    "save_steps": "1, 2,3",
    "train.save_interval": "50",
    "eval.save_steps": "7,8",
    "predict.start_step": "-2",
    "global.end_step": 20,
    "reductions": "min,max,abs_l2_norm",
    "save_raw_tensor": "true",
    "save_shape": true,
    "save_all": "False",
    "include_regex": "relu_.*, conv[0-9]+ ,",
    "include_workers": "all",
    "export_tensorboard": "TRUE",
    "tensorboard_dir": "/opt/ml/output/tensorboard",
    "dry_run": false,
    "save_histogram": "not even looked at",
    "some_future_key": {"nested": [1, 2, 3]}
  },
  "CollectionConfigurations": [
    {"CollectionName": "weights", "CollectionParameters": null},
    {"CollectionName": "gradients"},
    {
      "CollectionName": "custom_relu",
      "CollectionParameters": {
        "include_regex": "relu_input_.*",
        "save_interval": 10,
        "train.save_interval": "5",
        "eval.end_step": "40",
        "predict.save_steps": [3, "4"],
        "global.start_step": 1,
        "reductions": "mean, abs_mean",
        "save_shape": "false",
        "save_histogram": "False",
        "save_all": "ignored at collection level"
      }
    },
    {"CollectionName": "losses", "CollectionParameters": {"save_interval": "1"}}
  ],
  "Unknown": 42
})json";

TEST(HookConfigParse, FullSageMakerConfig) {
  const HookConfigSpec s = ParseOk(kFullConfig);
  EXPECT_EQ(s.local_path, "/opt/ml/output/tensors-custom");

  EXPECT_EQ(s.save.generic.save_interval, 100);
  EXPECT_EQ(s.save.generic.start_step, 5);
  EXPECT_EQ(s.save.generic.end_step, 1000);
  EXPECT_EQ(s.save.generic.save_steps, Steps({1, 2, 3}));

  const SaveConfigModeSpec& train = s.save.per_mode[kTrain];
  EXPECT_EQ(train.save_interval, 50);
  EXPECT_FALSE(train.start_step || train.end_step || train.save_steps);
  const SaveConfigModeSpec& eval = s.save.per_mode[kEval];
  EXPECT_EQ(eval.save_steps, Steps({7, 8}));
  EXPECT_FALSE(eval.save_interval || eval.start_step || eval.end_step);
  const SaveConfigModeSpec& predict = s.save.per_mode[kPredict];
  EXPECT_EQ(predict.start_step, -2);
  EXPECT_FALSE(predict.save_interval || predict.end_step || predict.save_steps);
  const SaveConfigModeSpec& global = s.save.per_mode[kGlobal];
  EXPECT_EQ(global.end_step, 20);
  EXPECT_FALSE(global.save_interval || global.start_step || global.save_steps);

  ASSERT_TRUE(s.reduction.has_value());
  EXPECT_EQ(s.reduction->reductions, "min,max,abs_l2_norm");
  EXPECT_TRUE(s.reduction->save_raw_tensor);
  EXPECT_TRUE(s.reduction->save_shape);
  EXPECT_EQ(s.save_all, false);
  EXPECT_EQ(s.include_regex, Strings({"relu_.*", "conv[0-9]+"}));
  EXPECT_EQ(s.include_workers, "all");
  EXPECT_EQ(s.export_tensorboard, true);
  EXPECT_EQ(s.tensorboard_dir, "/opt/ml/output/tensorboard");
  EXPECT_EQ(s.dry_run, false);

  ASSERT_EQ(s.collections.size(), 4u);
  const CollectionSpec& weights = s.collections[0];
  EXPECT_EQ(weights.name, "weights");
  EXPECT_TRUE(weights.include_regex.empty());
  EXPECT_FALSE(weights.save.generic.any());
  for (const auto& m : weights.save.per_mode) EXPECT_FALSE(m.any());
  EXPECT_FALSE(weights.reduction.has_value());
  EXPECT_FALSE(weights.save_histogram.has_value());

  const CollectionSpec& gradients = s.collections[1];
  EXPECT_EQ(gradients.name, "gradients");
  EXPECT_FALSE(gradients.save.generic.any());
  EXPECT_FALSE(gradients.reduction.has_value());

  const CollectionSpec& custom = s.collections[2];
  EXPECT_EQ(custom.name, "custom_relu");
  EXPECT_EQ(custom.include_regex, Strings({"relu_input_.*"}));
  EXPECT_EQ(custom.save.generic.save_interval, 10);
  EXPECT_FALSE(custom.save.generic.start_step || custom.save.generic.end_step ||
               custom.save.generic.save_steps);
  EXPECT_EQ(custom.save.per_mode[kTrain].save_interval, 5);
  EXPECT_EQ(custom.save.per_mode[kEval].end_step, 40);
  EXPECT_EQ(custom.save.per_mode[kPredict].save_steps, Steps({3, 4}));
  EXPECT_EQ(custom.save.per_mode[kGlobal].start_step, 1);
  ASSERT_TRUE(custom.reduction.has_value());
  EXPECT_EQ(custom.reduction->reductions, "mean, abs_mean");
  EXPECT_FALSE(custom.reduction->save_raw_tensor);
  EXPECT_FALSE(custom.reduction->save_shape);
  EXPECT_EQ(custom.save_histogram, false);

  const CollectionSpec& losses = s.collections[3];
  EXPECT_EQ(losses.name, "losses");
  EXPECT_EQ(losses.save.generic.save_interval, 1);
}

TEST(HookConfigParse, EmptyObjectGivesDefaults) {
  for (const char* json : {"{}", " \n\t{ }\r\n ",
                           R"({"HookParameters": null, "CollectionConfigurations": null,
                               "LocalPath": null})",
                           R"({"HookParameters": {}, "CollectionConfigurations": []})",
                           R"({"S3OutputPath": "s3://b/p"})"}) {
    SCOPED_TRACE(json);
    const HookConfigSpec s = ParseOk(json);
    EXPECT_EQ(s.local_path, "/opt/ml/output/tensors");
    EXPECT_FALSE(s.save.generic.any());
    for (const auto& m : s.save.per_mode) EXPECT_FALSE(m.any());
    EXPECT_FALSE(s.reduction.has_value());
    EXPECT_FALSE(s.save_all.has_value());
    EXPECT_TRUE(s.include_regex.empty());
    EXPECT_FALSE(s.include_workers.has_value());
    EXPECT_FALSE(s.export_tensorboard.has_value());
    EXPECT_FALSE(s.tensorboard_dir.has_value());
    EXPECT_FALSE(s.dry_run.has_value());
    EXPECT_TRUE(s.collections.empty());
  }
}

TEST(HookConfigParse, NullValuesAreAbsent) {
  const HookConfigSpec s = ParseOk(Hook(
      R"("save_interval": null, "train.save_steps": null, "save_all": null, "dry_run": null,
         "reductions": null, "include_regex": null, "include_workers": null,
         "tensorboard_dir": null, "export_tensorboard": null)"));
  EXPECT_FALSE(s.save.generic.any());
  EXPECT_FALSE(s.save.per_mode[kTrain].any());
  EXPECT_FALSE(s.save_all || s.dry_run || s.export_tensorboard);
  EXPECT_FALSE(s.reduction || s.include_workers || s.tensorboard_dir);
  EXPECT_TRUE(s.include_regex.empty());
}

// ---- booleans ----

struct BoolKey {
  std::string key;
  bool collection_level;
  bool needs_reductions;
};

const BoolKey kBoolKeys[] = {
    {"save_all", false, false},        {"export_tensorboard", false, false},
    {"dry_run", false, false},         {"save_raw_tensor", false, true},
    {"save_shape", false, true},       {"save_histogram", true, false},
    {"save_raw_tensor", true, true},   {"save_shape", true, true},
};

std::optional<bool> BoolField(const HookConfigSpec& s, const BoolKey& k) {
  if (k.collection_level) {
    if (s.collections.size() != 1) return std::nullopt;
    const CollectionSpec& c = s.collections[0];
    if (k.key == "save_histogram") return c.save_histogram;
    if (!c.reduction) return std::nullopt;
    return k.key == "save_raw_tensor" ? c.reduction->save_raw_tensor : c.reduction->save_shape;
  }
  if (k.key == "save_all") return s.save_all;
  if (k.key == "export_tensorboard") return s.export_tensorboard;
  if (k.key == "dry_run") return s.dry_run;
  if (!s.reduction) return std::nullopt;
  return k.key == "save_raw_tensor" ? s.reduction->save_raw_tensor : s.reduction->save_shape;
}

std::string BoolConfig(const BoolKey& k, const std::string& value) {
  std::string params = "\"" + k.key + "\": " + value;
  if (k.needs_reductions) params += R"(, "reductions": "min")";
  return k.collection_level ? Coll(params) : Hook(params);
}

TEST(HookConfigBool, EveryAcceptedSpelling) {
  const std::pair<const char*, bool> kSpellings[] = {
      {"true", true},       {"false", false},      {"\"true\"", true},  {"\"True\"", true},
      {"\"TRUE\"", true},   {"\"false\"", false},  {"\"False\"", false}, {"\"FALSE\"", false},
  };
  for (const BoolKey& k : kBoolKeys) {
    for (const auto& [text, expected] : kSpellings) {
      SCOPED_TRACE(k.key + (k.collection_level ? " (collection) = " : " (hook) = ") + text);
      const HookConfigSpec s = ParseOk(BoolConfig(k, text));
      EXPECT_EQ(BoolField(s, k), std::optional<bool>(expected));
    }
  }
}

TEST(HookConfigBool, EveryRejectedSpelling) {
  const std::pair<const char*, const char*> kRejected[] = {
      // value as written, how the message shows it
      {"\"yes\"", "\"yes\""},   {"\"no\"", "\"no\""},    {"\"1\"", "\"1\""},
      {"\"0\"", "\"0\""},       {"\"tRuE\"", "\"tRuE\""}, {"\"\"", "\"\""},
      {"\" true\"", "\" true\""}, {"\"true \"", "\"true \""}, {"\"t\"", "\"t\""},
      {"1", "1"},               {"0", "0"},              {"1.5", "1.5"},
      {"[]", "an array"},       {"{}", "an object"},     {"[true]", "an array"},
  };
  for (const BoolKey& k : kBoolKeys) {
    for (const auto& [text, shown] : kRejected) {
      SCOPED_TRACE(k.key + (k.collection_level ? " (collection) = " : " (hook) = ") + text);
      const std::string msg = ErrorOf(BoolConfig(k, text));
      const std::string path = k.collection_level
                                   ? "CollectionConfigurations[0].CollectionParameters." + k.key
                                   : "HookParameters." + k.key;
      EXPECT_NE(msg.find(path + ": "), std::string::npos) << msg;
      EXPECT_NE(msg.find(std::string("got ") + shown), std::string::npos) << msg;
    }
  }
}

TEST(HookConfigBool, ExactMessage) {
  EXPECT_EQ(ErrorOf(Hook(R"("save_all": "yes")")),
            "debughookconfig.json: HookParameters.save_all: expected true or false (a JSON "
            "boolean or the string \"true\"/\"false\"), got \"yes\"");
}

// ---- integers ----

TEST(HookConfigInt, AcceptedForms) {
  const std::pair<const char*, int64_t> kAccepted[] = {
      {"0", 0},
      {"42", 42},
      {"-3", -3},
      {"1.0", 1},
      {"1e3", 1000},
      {"9007199254740991", 9007199254740991},
      {"\"42\"", 42},
      {"\" 42 \"", 42},
      {"\"\\t7\\n\"", 7},
      {"\"+7\"", 7},
      {"\"-15\"", -15},
      {"\"007\"", 7},
      {"\"9223372036854775807\"", INT64_MAX},
      {"\"-9223372036854775808\"", INT64_MIN},
  };
  for (const char* key : {"save_interval", "start_step", "end_step"}) {
    for (const auto& [text, expected] : kAccepted) {
      SCOPED_TRACE(std::string(key) + " = " + text);
      const HookConfigSpec s = ParseOk(Hook("\"" + std::string(key) + "\": " + text));
      const SaveConfigModeSpec& g = s.save.generic;
      const std::optional<int64_t>& field = std::string(key) == "save_interval" ? g.save_interval
                                            : std::string(key) == "start_step"  ? g.start_step
                                                                                : g.end_step;
      EXPECT_EQ(field, expected);
    }
  }
}

TEST(HookConfigInt, RejectedForms) {
  const std::pair<const char*, const char*> kRejected[] = {
      // value as written, expected message tail
      {"1.5", "1.5 is not an integer"},
      {"-0.25", "-0.25 is not an integer"},
      {"1e300", "number 1e+300 is out of range"},
      {"-1e300", "number -1e+300 is out of range"},
      {"9007199254740992", "is out of range"},
      {"\"1.5\"", "\"1.5\" is not an integer"},
      {"\"\"", "\"\" is not an integer"},
      {"\"   \"", "\"   \" is not an integer"},
      {"\"abc\"", "\"abc\" is not an integer"},
      {"\"12abc\"", "\"12abc\" is not an integer"},
      {"\"0x10\"", "\"0x10\" is not an integer"},
      {"\"1e3\"", "\"1e3\" is not an integer"},
      {"\"+-5\"", "\"+-5\" is not an integer"},
      {"\"++5\"", "\"++5\" is not an integer"},
      {"\"-+5\"", "\"-+5\" is not an integer"},
      {"\"- 5\"", "\"- 5\" is not an integer"},
      {"\"9223372036854775808\"", "\"9223372036854775808\" is out of range for a 64-bit integer"},
      {"\"-9223372036854775809\"", "is out of range for a 64-bit integer"},
      {"\"99999999999999999999999999\"", "is out of range for a 64-bit integer"},
      {"true", "expected an integer or a decimal string, got true"},
      {"[1]", "expected an integer or a decimal string, got an array"},
      {"{}", "expected an integer or a decimal string, got an object"},
  };
  for (const char* key : {"save_interval", "start_step", "end_step", "train.save_interval",
                          "global.end_step"}) {
    for (const auto& [text, tail] : kRejected) {
      SCOPED_TRACE(std::string(key) + " = " + text);
      const std::string msg = ErrorOf(Hook("\"" + std::string(key) + "\": " + text));
      EXPECT_NE(msg.find("HookParameters." + std::string(key) + ": "), std::string::npos) << msg;
      EXPECT_NE(msg.find(tail), std::string::npos) << msg;
      const std::string cmsg = ErrorOf(Coll("\"" + std::string(key) + "\": " + text));
      EXPECT_NE(cmsg.find("CollectionConfigurations[0].CollectionParameters." +
                          std::string(key) + ": "),
                std::string::npos)
          << cmsg;
    }
  }
}

TEST(HookConfigInt, ExactMessages) {
  EXPECT_EQ(ErrorOf(Hook(R"("train.save_interval": "abc")")),
            "debughookconfig.json: HookParameters.train.save_interval: \"abc\" is not an integer");
  EXPECT_EQ(ErrorOf(Coll(R"("end_step": 2.5)")),
            "debughookconfig.json: CollectionConfigurations[0].CollectionParameters.end_step: "
            "2.5 is not an integer");
}

// ---- save_steps ----

TEST(HookConfigSaveSteps, StringAndArrayForms) {
  const std::pair<const char*, Steps> kAccepted[] = {
      {"\"1, 2,3\"", {1, 2, 3}},
      {"\"5\"", {5}},
      {"\" , 4,, 5 ,\"", {4, 5}},
      {"\"\"", {}},
      {"\" \"", {}},
      {"\"3,1,3\"", {3, 1, 3}},
      {"\"-1, +2\"", {-1, 2}},
      {"[1, 2, 3]", {1, 2, 3}},
      {"[1, \"2\", 3.0]", {1, 2, 3}},
      {"[]", {}},
  };
  for (const auto& [text, expected] : kAccepted) {
    SCOPED_TRACE(text);
    const HookConfigSpec s = ParseOk(Hook(std::string("\"save_steps\": ") + text +
                                          ", \"eval.save_steps\": " + text));
    EXPECT_EQ(s.save.generic.save_steps, expected);
    EXPECT_EQ(s.save.per_mode[kEval].save_steps, expected);
  }
}

TEST(HookConfigSaveSteps, Rejected) {
  EXPECT_EQ(ErrorOf(Hook(R"("save_steps": "1, x ,3")")),
            "debughookconfig.json: HookParameters.save_steps: \"1, x ,3\": item \"x\" is not an "
            "integer");
  EXPECT_EQ(ErrorOf(Hook(R"("train.save_steps": [1, 2.5])")),
            "debughookconfig.json: HookParameters.train.save_steps[1]: 2.5 is not an integer");
  EXPECT_NE(ErrorOf(Hook(R"("save_steps": "1.5")")).find("item \"1.5\" is not an integer"),
            std::string::npos);
  EXPECT_NE(ErrorOf(Hook(R"("save_steps": "99999999999999999999")"))
                .find("is out of range for a 64-bit integer"),
            std::string::npos);
  EXPECT_NE(ErrorOf(Hook(R"("save_steps": [1, "x"])")).find("save_steps[1]: \"x\""),
            std::string::npos);
  EXPECT_NE(ErrorOf(Hook(R"("save_steps": [[1]])")).find("save_steps[0]: expected an integer"),
            std::string::npos);
  for (const char* bad : {"5", "true", "{}"}) {
    SCOPED_TRACE(bad);
    const std::string msg = ErrorOf(Coll(std::string("\"predict.save_steps\": ") + bad));
    EXPECT_NE(msg.find("CollectionParameters.predict.save_steps: expected a comma-separated "
                       "string of integers or an array of integers, got"),
              std::string::npos)
        << msg;
  }
}

// ---- mode prefixes ----

TEST(HookConfigModes, PrefixesMapToModeIndex) {
  const HookConfigSpec s = ParseOk(Hook(
      R"("train.save_interval": 1, "eval.save_interval": 2, "predict.save_interval": 3,
         "global.save_interval": 4, "save_interval": 5)"));
  EXPECT_EQ(s.save.per_mode[kTrain].save_interval, 1);
  EXPECT_EQ(s.save.per_mode[kEval].save_interval, 2);
  EXPECT_EQ(s.save.per_mode[kPredict].save_interval, 3);
  EXPECT_EQ(s.save.per_mode[kGlobal].save_interval, 4);
  EXPECT_EQ(s.save.generic.save_interval, 5);
}

TEST(HookConfigModes, UnknownPrefixesAndKeysIgnored) {
  // Case-sensitive prefixes, exact key names; unknown keys are not even type-checked.
  const HookConfigSpec s = ParseOk(Hook(
      R"("TRAIN.save_interval": "x", "Train.save_interval": "x", "training.save_interval": "x",
         "train.foo": "x", "train.": 1, "train": 2, "train.train.save_interval": "x",
         "Save_Interval": "x", "save_interval ": "x", "save_histogram": "x")"));
  EXPECT_FALSE(s.save.generic.any());
  for (const auto& m : s.save.per_mode) EXPECT_FALSE(m.any());
}

// ---- reductions ----

TEST(HookConfigReductions, AbsentReductionsIgnoresFlags) {
  const HookConfigSpec s = ParseOk(Hook(R"("save_raw_tensor": true, "save_shape": "true")"));
  EXPECT_FALSE(s.reduction.has_value());
  const HookConfigSpec c = ParseOk(Coll(R"("save_raw_tensor": true, "save_shape": true)"));
  EXPECT_FALSE(c.collections.at(0).reduction.has_value());
}

TEST(HookConfigReductions, FlagsTypeCheckedWithoutReductions) {
  EXPECT_NE(ErrorOf(Hook(R"("save_raw_tensor": "maybe")"))
                .find("HookParameters.save_raw_tensor: expected true or false"),
            std::string::npos);
  EXPECT_NE(ErrorOf(Coll(R"("save_shape": 1)")).find("CollectionParameters.save_shape: "),
            std::string::npos);
}

TEST(HookConfigReductions, PresentFillsSpec) {
  HookConfigSpec s = ParseOk(Hook(R"("reductions": "min, l2_norm")"));
  ASSERT_TRUE(s.reduction.has_value());
  EXPECT_EQ(s.reduction->reductions, "min, l2_norm");  // unvalidated, as written
  EXPECT_FALSE(s.reduction->save_raw_tensor);
  EXPECT_FALSE(s.reduction->save_shape);

  // Order of keys does not matter.
  s = ParseOk(Hook(R"("save_raw_tensor": "True", "reductions": "median,bogus", "save_shape": true)"));
  ASSERT_TRUE(s.reduction.has_value());
  EXPECT_EQ(s.reduction->reductions, "median,bogus");
  EXPECT_TRUE(s.reduction->save_raw_tensor);
  EXPECT_TRUE(s.reduction->save_shape);

  s = ParseOk(Hook(R"("reductions": "")"));
  ASSERT_TRUE(s.reduction.has_value());
  EXPECT_EQ(s.reduction->reductions, "");

  s = ParseOk(Coll(R"("reductions": "abs_max", "save_raw_tensor": true)"));
  ASSERT_TRUE(s.collections.at(0).reduction.has_value());
  EXPECT_EQ(s.collections[0].reduction->reductions, "abs_max");
  EXPECT_TRUE(s.collections[0].reduction->save_raw_tensor);
  EXPECT_FALSE(s.reduction.has_value());  // hook level untouched
}

TEST(HookConfigReductions, NonStringRejected) {
  EXPECT_EQ(ErrorOf(Hook(R"("reductions": ["min", "max"])")),
            "debughookconfig.json: HookParameters.reductions: expected a string, got an array");
  EXPECT_NE(ErrorOf(Coll(R"("reductions": 3)")).find("reductions: expected a string, got 3"),
            std::string::npos);
}

// ---- strings and regex lists ----

TEST(HookConfigStrings, IncludeRegex) {
  HookConfigSpec s = ParseOk(Hook(R"("include_regex": " a.* ,,b|c , ")"));
  EXPECT_EQ(s.include_regex, Strings({"a.*", "b|c"}));
  s = ParseOk(Hook(R"("include_regex": "")"));
  EXPECT_TRUE(s.include_regex.empty());
  s = ParseOk(Hook(R"("include_regex": ["x{1,2}", " y "])"));
  EXPECT_EQ(s.include_regex, Strings({"x{1,2}", " y "}));  // array items verbatim
  s = ParseOk(Hook(R"("include_regex": "([unbalanced")"));  // not validated here
  EXPECT_EQ(s.include_regex, Strings({"([unbalanced"}));
  s = ParseOk(Coll(R"("include_regex": "w1, w2")"));
  EXPECT_EQ(s.collections.at(0).include_regex, Strings({"w1", "w2"}));

  EXPECT_EQ(ErrorOf(Hook(R"("include_regex": ["a", 1])")),
            "debughookconfig.json: HookParameters.include_regex[1]: expected a string, got 1");
  EXPECT_NE(ErrorOf(Coll(R"("include_regex": true)"))
                .find("CollectionParameters.include_regex: expected a comma-separated string or "
                      "an array of strings, got true"),
            std::string::npos);
}

TEST(HookConfigStrings, WrongTypes) {
  EXPECT_EQ(ErrorOf(Hook(R"("include_workers": 1)")),
            "debughookconfig.json: HookParameters.include_workers: expected a string, got 1");
  EXPECT_EQ(ErrorOf(Hook(R"("tensorboard_dir": false)")),
            "debughookconfig.json: HookParameters.tensorboard_dir: expected a string, got false");
  EXPECT_EQ(ErrorOf(R"({"LocalPath": ["/a"]})"),
            "debughookconfig.json: LocalPath: expected a string, got an array");
}

TEST(HookConfigStrings, PassedThroughAsWritten) {
  const HookConfigSpec s = ParseOk(
      R"({"LocalPath": "/tmp/caf\u00e9 \"q\"", "HookParameters": {"include_workers": "One",
          "tensorboard_dir": ""}})");
  EXPECT_EQ(s.local_path, "/tmp/caf\xc3\xa9 \"q\"");
  EXPECT_EQ(s.include_workers, "One");
  EXPECT_EQ(s.tensorboard_dir, "");
}

// ---- collections ----

TEST(HookConfigCollections, MissingName) {
  EXPECT_EQ(ErrorOf(R"({"CollectionConfigurations": [
                         {"CollectionName": "a"}, {"CollectionName": "b"},
                         {"CollectionParameters": {"save_interval": 1}}]})"),
            "debughookconfig.json: CollectionConfigurations[2]: missing CollectionName");
  EXPECT_EQ(ErrorOf(R"({"CollectionConfigurations": [{}]})"),
            "debughookconfig.json: CollectionConfigurations[0]: missing CollectionName");
}

TEST(HookConfigCollections, BadName) {
  EXPECT_EQ(ErrorOf(R"({"CollectionConfigurations": [{"CollectionName": null}]})"),
            "debughookconfig.json: CollectionConfigurations[0].CollectionName: expected a "
            "string, got null");
  EXPECT_EQ(ErrorOf(R"({"CollectionConfigurations": [{"CollectionName": 7}]})"),
            "debughookconfig.json: CollectionConfigurations[0].CollectionName: expected a "
            "string, got 7");
  EXPECT_EQ(ErrorOf(R"({"CollectionConfigurations": [{"CollectionName": ""}]})"),
            "debughookconfig.json: CollectionConfigurations[0].CollectionName: must not be empty");
}

TEST(HookConfigCollections, WrongEntryAndParameterTypes) {
  EXPECT_EQ(ErrorOf(R"({"CollectionConfigurations": [{"CollectionName": "a"}, "weights"]})"),
            "debughookconfig.json: CollectionConfigurations[1]: expected an object, got "
            "\"weights\"");
  EXPECT_EQ(ErrorOf(R"({"CollectionConfigurations": [null]})"),
            "debughookconfig.json: CollectionConfigurations[0]: expected an object, got null");
  EXPECT_EQ(ErrorOf(R"({"CollectionConfigurations": [[]]})"),
            "debughookconfig.json: CollectionConfigurations[0]: expected an object, got an array");
  EXPECT_EQ(ErrorOf(R"({"CollectionConfigurations": [
                         {"CollectionName": "a", "CollectionParameters": "save_interval=1"}]})"),
            "debughookconfig.json: CollectionConfigurations[0].CollectionParameters: expected an "
            "object, got \"save_interval=1\"");
  EXPECT_EQ(ErrorOf(R"({"CollectionConfigurations": [
                         {"CollectionName": "a", "CollectionParameters": [1]}]})"),
            "debughookconfig.json: CollectionConfigurations[0].CollectionParameters: expected an "
            "object, got an array");
}

// Entries for one collection are merged as smdebug applies them one after the other (its MXNet
// tests name ReluActivation once without parameters, then again with include_regex).
TEST(HookConfigCollections, OrderKeptAndDuplicatesMerged) {
  const HookConfigSpec s = ParseOk(R"({"CollectionConfigurations": [
      {"CollectionName": "z"},
      {"CollectionName": "a", "CollectionParameters": {"save_interval": 1, "include_regex": "x",
                                                      "reductions": "min", "save_histogram": false}},
      {"CollectionName": "b"},
      {"CollectionName": "a", "CollectionParameters": {"save_interval": 2, "include_regex": "y,w"}},
      {"CollectionName": "z", "CollectionParameters": {"include_regex": "relu*"}}]})");
  ASSERT_EQ(s.collections.size(), 3u);
  EXPECT_EQ(s.collections[0].name, "z");
  EXPECT_EQ(s.collections[0].include_regex, std::vector<std::string>{"relu*"});
  EXPECT_FALSE(s.collections[0].save.generic.any());
  EXPECT_EQ(s.collections[1].name, "a");
  EXPECT_EQ(s.collections[1].save.generic.save_interval, 2);  // the later entry's
  EXPECT_EQ(s.collections[1].include_regex, (std::vector<std::string>{"x", "y", "w"}));
  ASSERT_TRUE(s.collections[1].reduction.has_value());  // kept: the later entry has none
  EXPECT_EQ(s.collections[1].reduction->reductions, "min");
  EXPECT_EQ(s.collections[1].save_histogram, std::optional<bool>(false));
  EXPECT_EQ(s.collections[2].name, "b");
  // A later entry without save keys: the hook's configuration again, as in smdebug.
  const HookConfigSpec t = ParseOk(R"({"CollectionConfigurations": [
      {"CollectionName": "a", "CollectionParameters": {"save_interval": 3}},
      {"CollectionName": "a"}]})");
  ASSERT_EQ(t.collections.size(), 1u);
  EXPECT_FALSE(t.collections[0].save.generic.any());
}

TEST(HookConfigCollections, ManyCollections) {
  std::string json = R"({"CollectionConfigurations": [)";
  constexpr int kCount = 20000;
  for (int i = 0; i < kCount; ++i) {
    if (i) json += ",";
    json += R"({"CollectionName": "c)" + std::to_string(i) +
            R"(", "CollectionParameters": {"save_interval": ")" + std::to_string(i + 1) + "\"}}";
  }
  json += "]}";
  const HookConfigSpec s = ParseOk(json);
  ASSERT_EQ(s.collections.size(), static_cast<size_t>(kCount));
  EXPECT_EQ(s.collections[kCount - 1].name, "c" + std::to_string(kCount - 1));
  EXPECT_EQ(s.collections[kCount - 1].save.generic.save_interval, kCount);
}

// ---- document level ----

TEST(HookConfigDocument, WrongTopLevelAndSectionTypes) {
  EXPECT_EQ(ErrorOf("[]"),
            "debughookconfig.json: expected a JSON object at the top level, got an array");
  EXPECT_EQ(ErrorOf(R"("config")"),
            "debughookconfig.json: expected a JSON object at the top level, got a string");
  EXPECT_EQ(ErrorOf("42"),
            "debughookconfig.json: expected a JSON object at the top level, got a number");
  EXPECT_EQ(ErrorOf("null"),
            "debughookconfig.json: expected a JSON object at the top level, got null");
  EXPECT_EQ(ErrorOf(R"({"HookParameters": "save_interval=1"})"),
            "debughookconfig.json: HookParameters: expected an object, got \"save_interval=1\"");
  EXPECT_EQ(ErrorOf(R"({"HookParameters": [{"save_interval": 1}]})"),
            "debughookconfig.json: HookParameters: expected an object, got an array");
  EXPECT_EQ(ErrorOf(R"({"HookParameters": false})"),
            "debughookconfig.json: HookParameters: expected an object, got false");
  EXPECT_EQ(ErrorOf(R"({"CollectionConfigurations": {"CollectionName": "weights"}})"),
            "debughookconfig.json: CollectionConfigurations: expected an array, got an object");
  EXPECT_EQ(ErrorOf(R"({"CollectionConfigurations": "weights"})"),
            "debughookconfig.json: CollectionConfigurations: expected an array, got \"weights\"");
}

TEST(HookConfigDocument, SourceNamesTheFile) {
  Result<HookConfigSpec> r = ParseHookConfig("[1]", "/opt/ml/input/config/x.json");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "/opt/ml/input/config/x.json: expected a JSON object at the top level, got an array");
}

TEST(HookConfigDocument, EmptyInput) {
  EXPECT_EQ(ErrorOf(""), "debughookconfig.json: malformed JSON: the input is empty");
  EXPECT_EQ(ErrorOf(std::string_view()), "debughookconfig.json: malformed JSON: the input is empty");
  EXPECT_EQ(ErrorOf(" \n\t "), "debughookconfig.json: malformed JSON: the input is empty");
}

TEST(HookConfigDocument, MalformedJson) {
  for (const char* bad : {"{", "}", "{\"a\"}", "{\"a\":}", "{\"LocalPath\": \"x\",}",
                          "{'LocalPath': 'x'}", "{\"a\": tru}", "{\"a\": [1,]}", "{\"a\": 01x}",
                          "{\"a\": \"unterminated}", "{\"a\": NaN}", "{\"a\": Infinity}",
                          "\"\\ud800\"", "{\"a\": \"\\x41\"}", "nul"}) {
    SCOPED_TRACE(bad);
    const std::string msg = ErrorOf(bad);
    EXPECT_NE(msg.find("malformed JSON"), std::string::npos) << msg;
  }
}

TEST(HookConfigDocument, MalformedPosition) {
  EXPECT_EQ(ErrorOf("{\n  \"LocalPath\": \"/a\",\n  \"HookParameters\": {\"x\": tru}\n}"),
            "debughookconfig.json: malformed JSON near line 3, column 27 (byte offset 49)");
}

TEST(HookConfigDocument, TrailingData) {
  EXPECT_EQ(ErrorOf("{} x"),
            "debughookconfig.json: malformed JSON: unexpected data after the top-level value at "
            "line 1, column 4 (byte offset 3)");
  EXPECT_NE(ErrorOf("{}{}").find("unexpected data after the top-level value"), std::string::npos);
  EXPECT_EQ(ErrorOf(std::string("{}\0", 3)),
            "debughookconfig.json: malformed JSON: NUL byte at line 1, column 3 (byte offset 2)");
  ParseOk("{} \r\n\t ");
}

TEST(HookConfigDocument, EveryTruncationOfFullConfigFails) {
  const std::string full = kFullConfig;
  // Exact-size heap copies with no terminator, so ASan sees any read past the end.
  for (size_t n = 0; n < full.size(); ++n) {
    std::unique_ptr<char[]> buf(new char[n == 0 ? 1 : n]);
    std::memcpy(buf.get(), full.data(), n);
    Result<HookConfigSpec> r = Parse(std::string_view(buf.get(), n));
    ASSERT_FALSE(r.ok()) << "prefix of length " << n << " parsed";
    EXPECT_NE(r.status().message().find("malformed JSON"), std::string::npos)
        << r.status().message();
  }
  std::unique_ptr<char[]> buf(new char[full.size()]);
  std::memcpy(buf.get(), full.data(), full.size());
  EXPECT_TRUE(Parse(std::string_view(buf.get(), full.size())).ok());
}

TEST(HookConfigDocument, NotNulTerminated) {
  // The view stops before bytes that would make the document invalid.
  const std::string backing = R"({"LocalPath": "/a", "HookParameters": {"save_interval": 12}}tail)";
  const std::string_view view(backing.data(), backing.size() - 4);
  const HookConfigSpec s = ParseOk(view);
  EXPECT_EQ(s.local_path, "/a");
  EXPECT_EQ(s.save.generic.save_interval, 12);

  // Ends in the middle of a number, a string and a literal with valid-looking bytes after.
  for (const std::string& text : {std::string(R"({"a": 123456})"),
                                  std::string(R"({"a": "xyz"})"), std::string(R"({"a": true})")}) {
    const std::string_view cut(text.data(), text.size() - 3);
    EXPECT_NE(ErrorOf(cut).find("malformed JSON"), std::string::npos) << cut;
  }
}

TEST(HookConfigDocument, DeepNesting) {
  // Far beyond cJSON's nesting limit: an error, not a stack overflow.
  const std::string deep = std::string(200000, '[') + std::string(200000, ']');
  EXPECT_NE(ErrorOf(deep).find("nested deeper than"), std::string::npos);
  const std::string deep_obj = std::string(100000, '{');
  EXPECT_NE(ErrorOf(deep_obj).find("malformed JSON"), std::string::npos);

  // Up to the limit (1000 levels counting the top object), unknown nested keys are fine.
  auto nested = [](size_t arrays) {
    return R"({"x": )" + std::string(arrays, '[') + std::string(arrays, ']') + "}";
  };
  ParseOk(nested(999));
  EXPECT_NE(ErrorOf(nested(1000)).find("nested deeper than 1000 levels"), std::string::npos);
}

TEST(HookConfigDocument, HugeValues) {
  const std::string big(8 << 20, 'a');
  HookConfigSpec s = ParseOk(R"({"S3OutputPath": ")" + big + R"(", "LocalPath": ")" + big + "\"}");
  EXPECT_EQ(s.local_path.size(), big.size());

  // A huge bad value is quoted only in part.
  const std::string msg = ErrorOf(Hook(R"("save_interval": ")" + big + "\""));
  EXPECT_LT(msg.size(), 200u) << msg.substr(0, 300);
  EXPECT_NE(msg.find("\"aaaaaaaa"), std::string::npos);
  EXPECT_NE(msg.find("aaaa\"... is not an integer"), std::string::npos) << msg;

  // An overlong number literal is rejected without crashing.
  ErrorOf(Hook("\"save_interval\": " + std::string(5000, '9')));
}

TEST(HookConfigDocument, InvalidUtf8) {
  EXPECT_EQ(ErrorOf("{\"LocalPath\": \"/tmp/\xff\"}"),
            "debughookconfig.json: malformed JSON: the input is not valid UTF-8");
  // An overlong encoding and an encoded surrogate.
  EXPECT_NE(ErrorOf("{\"a\": \"\xc0\xaf\"}").find("not valid UTF-8"), std::string::npos);
  EXPECT_NE(ErrorOf("{\"a\": \"\xed\xa0\x80\"}").find("not valid UTF-8"), std::string::npos);
}

TEST(HookConfigDocument, RawNulByteRejected) {
  // cJSON would read "Local" as the key and "/a" as the value; the document is invalid JSON.
  const std::string json("{\"Local\0Path\": \"/a\0/b\"}", 23);
  EXPECT_EQ(ErrorOf(json),
            "debughookconfig.json: malformed JSON: NUL byte at line 1, column 8 (byte offset 7)");
}

TEST(HookConfigDocument, DuplicateKeysLastWins) {
  const HookConfigSpec s = ParseOk(R"({"LocalPath": "/first", "LocalPath": "/second",
      "HookParameters": {"save_interval": 1, "save_interval": "2", "reductions": "min",
                         "reductions": "max"},
      "HookParameters": {"save_interval": 3}})");
  EXPECT_EQ(s.local_path, "/second");
  EXPECT_EQ(s.save.generic.save_interval, 3);
  EXPECT_FALSE(s.reduction.has_value());

  const HookConfigSpec t = ParseOk(Hook(R"("reductions": "min", "reductions": "max")"));
  ASSERT_TRUE(t.reduction.has_value());
  EXPECT_EQ(t.reduction->reductions, "max");
}

TEST(HookConfigDocument, Utf8BomAccepted) {
  const HookConfigSpec s = ParseOk("\xef\xbb\xbf{\"LocalPath\": \"/bom\"}");
  EXPECT_EQ(s.local_path, "/bom");
}

// ---- DefaultHookConfigPath ----

class HookConfigDefaultPath : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* old = std::getenv("SMDEBUG_CONFIG_FILE_PATH");
    if (old != nullptr) saved_ = old;
  }
  void TearDown() override {
    if (saved_) {
      setenv("SMDEBUG_CONFIG_FILE_PATH", saved_->c_str(), 1);
    } else {
      unsetenv("SMDEBUG_CONFIG_FILE_PATH");
    }
  }
  std::optional<std::string> saved_;
};

TEST_F(HookConfigDefaultPath, WithoutEnv) {
  unsetenv("SMDEBUG_CONFIG_FILE_PATH");
  EXPECT_EQ(DefaultHookConfigPath(), "/opt/ml/input/config/debughookconfig.json");
}

TEST_F(HookConfigDefaultPath, EmptyEnvIgnored) {
  setenv("SMDEBUG_CONFIG_FILE_PATH", "", 1);
  EXPECT_EQ(DefaultHookConfigPath(), "/opt/ml/input/config/debughookconfig.json");
}

TEST_F(HookConfigDefaultPath, WithEnv) {
  setenv("SMDEBUG_CONFIG_FILE_PATH", "/tmp/my hook config.json", 1);
  EXPECT_EQ(DefaultHookConfigPath(), "/tmp/my hook config.json");
}

}  // namespace
}  // namespace smd::io
