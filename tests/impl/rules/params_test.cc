// Rule parameters as SageMaker passes them, and creation errors of the built-in rules.
#include "impl/rules/params.h"

#include <cmath>

#include "gtest/gtest.h"
#include "impl/rules/builtin.h"
#include "tests/impl/rules/rules_test_util.h"

namespace smd::rules {
namespace {

using testing::Open;
using testing::TempDir;
using testing::Writer;

const std::vector<ParamSpec> kSpecs = {
    {"threshold", ParamType::kFloat, "0.0000001", ""},
    {"num_steps", ParamType::kInt, "10", ""},
    {"flag", ParamType::kBool, "False", ""},
    {"names", ParamType::kList, nullptr, ""},
    {"regex", ParamType::kRegexList, nullptr, ""},
    {"values", ParamType::kFloatList, "50", ""},
    {"mode", ParamType::kMode, nullptr, ""},
    {"label", ParamType::kString, "labels", ""},
};

Result<Params> P(const ParamList& given) { return Params::Parse("R", kSpecs, given, {{"old", "threshold"}}); }

TEST(Params, DefaultsAndSageMakerStrings) {
  auto p = P({});
  ASSERT_TRUE(p.ok());
  EXPECT_DOUBLE_EQ(p->Float("threshold"), 1e-7);
  EXPECT_EQ(p->Int("num_steps"), 10);
  EXPECT_FALSE(p->Bool("flag"));
  EXPECT_FALSE(p->Has("names"));
  EXPECT_FALSE(p->Given("threshold"));
  EXPECT_EQ(p->Str("label"), "labels");
  EXPECT_EQ(p->Floats("values"), std::vector<double>{50});

  p = P({{"threshold", " 1e-3 "}, {"num_steps", "1_000"}, {"flag", "True"},
         {"names", "loss, losses,,"}, {"regex", ".*relu_output, ^gradient"},
         {"values", "3, 0.5"}, {"mode", "eval"}, {"label", " y "}});
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_DOUBLE_EQ(p->Float("threshold"), 1e-3);
  EXPECT_EQ(p->Int("num_steps"), 1000);
  EXPECT_TRUE(p->Bool("flag"));
  EXPECT_EQ(p->List("names"), (std::vector<std::string>{"loss", "losses"}));
  EXPECT_EQ(p->Regexes("regex").size(), 2u);
  EXPECT_EQ(p->Floats("values"), (std::vector<double>{3, 0.5}));
  EXPECT_EQ(p->Mode("mode"), static_cast<int>(Mode::kEval));
  EXPECT_EQ(p->Str("label"), " y ");
  for (const char* t : {"true", "TRUE", "1"}) EXPECT_TRUE(P({{"flag", t}})->Bool("flag")) << t;
  for (const char* f : {"false", "False", "0"}) EXPECT_FALSE(P({{"flag", f}})->Bool("flag")) << f;
  EXPECT_EQ(P({{"num_steps", "10.0"}})->Int("num_steps"), 10);  // documented as Float
  EXPECT_TRUE(std::isinf(P({{"threshold", "inf"}})->Float("threshold")));
  // An empty value means "not given" (the doc's own "tensor_regex": "").
  p = P({{"names", ""}, {"threshold", ""}});
  ASSERT_TRUE(p.ok());
  EXPECT_FALSE(p->Has("names"));
  EXPECT_DOUBLE_EQ(p->Float("threshold"), 1e-7);
  EXPECT_DOUBLE_EQ(P({{"old", "0.5"}})->Float("threshold"), 0.5);
}

// "\," is a comma inside a list item: a regex's "{1,2}" stays one regex (a Python list's items
// are passed that way); every other backslash is kept.
TEST(Params, AnEscapedCommaStaysInsideItsItem) {
  auto p = P({{"regex", "fc\\d{1\\,2}\\.weight, ^grad"}, {"names", "a\\,b,c\\d, e\\"}});
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->List("regex"), (std::vector<std::string>{"fc\\d{1,2}\\.weight", "^grad"}));
  ASSERT_EQ(p->Regexes("regex").size(), 2u);
  EXPECT_TRUE(p->Regexes("regex")[0]->Search("fc12.weight").value());
  EXPECT_FALSE(p->Regexes("regex")[0]->Search("fc123.weight").value());
  EXPECT_EQ(p->List("names"), (std::vector<std::string>{"a,b", "c\\d", "e\\"}));
}

void ExpectBad(const ParamList& given, const std::vector<std::string>& needles) {
  auto p = P(given);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), Code::kInvalidArgument);
  for (const std::string& n : needles) {
    EXPECT_NE(p.status().message().find(n), std::string::npos)
        << "'" << p.status().message() << "' lacks '" << n << "'";
  }
}

TEST(Params, BadValuesAreClearErrors) {
  ExpectBad({{"threshold", "abc"}}, {"rule R", "'threshold'", "'abc'", "not a number"});
  ExpectBad({{"threshold", "1e"}}, {"'1e'"});
  ExpectBad({{"threshold", "0x10"}}, {"'0x10'"});
  ExpectBad({{"threshold", "1__0"}}, {"'1__0'"});
  ExpectBad({{"threshold", "nan(1)"}}, {"nan(1)"});
  ExpectBad({{"num_steps", "1.5"}}, {"'num_steps'", "not an integer"});
  ExpectBad({{"num_steps", "ten"}}, {"'ten'"});
  ExpectBad({{"flag", "yes"}}, {"'flag'", "True or False"});
  ExpectBad({{"regex", "a(b"}}, {"'regex'", "a(b"});
  ExpectBad({{"values", "1,x"}}, {"'x' is not a number"});
  ExpectBad({{"mode", "TEST"}}, {"'mode'", "TRAIN, EVAL"});
  ExpectBad({{"treshold", "1"}}, {"unknown parameter 'treshold'", "accepted: threshold, num_steps"});
  ExpectBad({{"threshold", "1"}, {"threshold", "2"}}, {"'threshold' is given twice"});
  ExpectBad({{"threshold", "1"}, {"old", "2"}}, {"given twice (also as 'old')"});
}

// ---- creation of built-in rules -------------------------------------------------------------

TrialPtr SmallTrial() {
  static std::string dir;
  if (dir.empty()) {
    dir = TempDir("small");
    Writer w(dir);
    w.Step();
    w.Scalar("loss", 1);
    w.Close();
  }
  return Open(dir);
}

Status Create(const std::string& name, const ParamList& p, std::vector<TrialPtr> others = {}) {
  auto r = CreateBuiltinRule(name, SmallTrial(), std::move(others), p);
  return r.ok() ? Status::Ok() : r.status();
}

void ExpectCreateError(const std::string& name, const ParamList& p,
                       const std::vector<std::string>& needles, std::vector<TrialPtr> others = {}) {
  Status st = Create(name, p, std::move(others));
  EXPECT_EQ(st.code(), Code::kInvalidArgument) << name << ": " << st.message();
  for (const std::string& n : needles) {
    EXPECT_NE(st.message().find(n), std::string::npos) << "'" << st.message() << "' lacks '" << n << "'";
  }
}

TEST(BuiltinRules, EveryRuleIsRegisteredAndCreatableWithItsDefaults) {
  const std::vector<std::string> want = {
      "VanishingGradient", "ExplodingTensor", "SimilarAcrossRuns", "WeightUpdateRatio",
      "AllZero", "UnchangedTensor", "TensorVariance", "DeadRelu", "PoorWeightInitialization",
      "SaturatedActivation", "LossNotDecreasing", "Overfit", "Overtraining", "Confusion",
      "ClassImbalance", "CheckInputImages", "NLPSequenceRatio", "StalledTrainingRule",
      "TreeDepth", "FeatureImportanceOverweight"};
  EXPECT_EQ(BuiltinRules().size(), want.size());
  for (const std::string& n : want) {
    const BuiltinRuleInfo* info = FindBuiltinRule(n);
    ASSERT_NE(info, nullptr) << n;
    ParamList p;
    std::vector<TrialPtr> others;
    if (n == "AllZero" || n == "UnchangedTensor" || n == "TensorVariance") p = {{"tensor_regex", "x"}};
    if (info->compares_trials) others.push_back(SmallTrial());
    auto r = CreateBuiltinRule(n, SmallTrial(), others, p);
    ASSERT_TRUE(r.ok()) << n << ": " << r.status().message();
    EXPECT_EQ(r.value()->name(), n);
    EXPECT_NE(std::string(info->summary), "");
    for (const ParamSpec& s : info->params) EXPECT_NE(std::string(s.help), "") << n << "." << s.name;
  }
  EXPECT_NE(FindBuiltinRule("vanishinggradient"), nullptr);  // case-insensitive, like the 2019 CLI
  EXPECT_EQ(FindBuiltinRule("CreateXgboostReport"), nullptr);
}

TEST(BuiltinRules, CreationErrorsNameRuleParameterAndValue) {
  ExpectCreateError("NoSuchRule", {}, {"unknown built-in rule 'NoSuchRule'", "VanishingGradient"});
  ExpectCreateError("VanishingGradient", {{"threshold", "0.0.1"}},
                    {"rule VanishingGradient", "parameter 'threshold'", "'0.0.1'"});
  ExpectCreateError("VanishingGradient", {{"collection_names", "gradients"}},
                    {"unknown parameter 'collection_names'", "accepted: threshold"});
  ExpectCreateError("ExplodingTensor", {{"only_nan", "maybe"}}, {"'only_nan'", "'maybe'"});
  ExpectCreateError("AllZero", {}, {"Insufficient information to invoke rule AllZero",
                                    "collection_names or tensor_regex"});
  ExpectCreateError("UnchangedTensor", {{"tensor_regex", ""}}, {"Insufficient information"});
  ExpectCreateError("TensorVariance", {{"collection_names", " "}}, {"Insufficient information"});
  ExpectCreateError("UnchangedTensor", {{"tensor_regex", "x"}, {"num_steps", "1"}},
                    {"'num_steps' = '1'", "at least 2"});
  ExpectCreateError("SimilarAcrossRuns", {}, {"needs another trial"});
  ExpectCreateError("NLPSequenceRatio", {{"token_values", "1,2,3"}, {"token_thresholds_percent", "5,6"}},
                    {"'token_thresholds_percent'", "one per token value (3)"});
  ExpectCreateError("Confusion", {{"category_no", "1"}}, {"'category_no'", "at least 2"});
  ExpectCreateError("LossNotDecreasing", {{"mode", "TRAINING"}}, {"'mode'", "'TRAINING'"});
  ExpectCreateError("LossNotDecreasing", {{"diff_percent", "1"}, {"min_difference", "2"}},
                    {"given twice"});
  ExpectCreateError("SaturatedActivation", {{"threshold_tanh", "(1)"}}, {"expected (min, max)"});
  ExpectCreateError("SaturatedActivation", {{"threshold_tanh_min", "5"}, {"threshold_tanh_max", "1"}},
                    {"must be below"});
  ExpectCreateError("DeadRelu", {{"tensor_regex", "(?<"}}, {"'tensor_regex'"});
  ExpectCreateError("CheckInputImages", {{"channel", "0"}}, {"'channel'", "at least 1"});
  ExpectCreateError("StalledTrainingRule", {{"threshold", "-5"}}, {"'threshold'"});
  ExpectCreateError("VanishingGradient", {{"rule_to_invoke", "ExplodingTensor"}},
                    {"'rule_to_invoke'", "names another rule"});
  ExpectCreateError("VanishingGradient", {{"action_json", "{not json"}}, {"'action_json'", "not valid JSON"});
  ExpectCreateError("VanishingGradient", {{"other_trial_x", "/tmp"}}, {"unknown parameter 'other_trial_x'"});
  ExpectCreateError("SimilarAcrossRuns", {{"other_trial_0", SmallTrial()->path()}},
                    {"both as trials and as parameters"}, {SmallTrial()});
  Status st = Create("SimilarAcrossRuns", {{"other_trial_0", "/nonexistent/trial"}});
  EXPECT_EQ(st.code(), Code::kNotFound) << st.message();
  EXPECT_NE(st.message().find("/nonexistent/trial"), std::string::npos);
}

TEST(BuiltinRules, SageMakerPlumbingKeys) {
  ParamList p = {{"rule_to_invoke", "vanishinggradient"},
                 {"action_json",
                  "[{\\\"name\\\": \\\"StopTraining\\\", \\\"training_job_prefix\\\": \\\"job\\\"},"
                  " {\\\"name\\\": \\\"email\\\", \\\"endpoint\\\": \\\"a@b.c\\\"}]"}};
  auto r = CreateBuiltinRule("VanishingGradient", SmallTrial(), {}, p);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r.value()->stop_training());
  r = CreateBuiltinRule("VanishingGradient", SmallTrial(), {},
                        {{"action_json", "{\"name\": \"sms\", \"endpoint\": \"+1\"}"}});
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r.value()->stop_training());
  r = CreateBuiltinRule("SimilarAcrossRuns", SmallTrial(), {},
                        {{"other_trial_1", SmallTrial()->path()}, {"other_trial_0", SmallTrial()->path()}});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r.value()->trials().size(), 3u);
}

}  // namespace
}  // namespace smd::rules
