// Every built-in rule (BEHAVIOR.md Appendix A) on a trial built to trigger it (asserting the
// step and tensor) and on one built not to; the deleted smdebug tests (A.25) ported where they
// exist.
#include <cmath>
#include <condition_variable>
#include <mutex>
#include <numeric>
#include <random>
#include <thread>

#include "gtest/gtest.h"
#include "impl/format/layout.h"
#include "impl/rules/util.h"
#include "tests/impl/rules/rules_test_util.h"

namespace smd::rules {
namespace {

using testing::AnyFindingOn;
using testing::Builtin;
using testing::FirstFire;
using testing::Invoke;
using testing::Open;
using testing::RunResult;
using testing::TempDir;
using testing::Writer;

std::vector<float> Filled(size_t n, float v) { return std::vector<float>(n, v); }

// A new trial folder, written by `fill` with a fresh hook (then closed: training ended).
template <typename F>
TrialPtr Make(const std::string& name, F fill,
              const std::function<void(hook::HookOptions&)>& tweak = nullptr) {
  std::string dir = TempDir(name);
  {
    Writer w(dir, tweak);
    fill(w);
    w.Close();
  }
  return Open(dir);
}

// ---- VanishingGradient ----------------------------------------------------------------------

TrialPtr Gradients(const std::string& name, float fc2_late) {
  return Make(name, [&](Writer& w) {
    for (int s = 0; s < 6; ++s) {
      w.Step();
      w.Save<float>("gradient/fc1", {0.1f, -0.2f, 0.3f});
      w.Save<float>("gradient/fc2", Filled(4, s >= 3 ? fc2_late : 0.05f));
      w.Save<float>("fc1.weight", {1, 2, 3});  // not a gradient
    }
  });
}

TEST(VanishingGradient, FiresOnTheFirstVanishingGradient) {
  auto rule = Builtin("VanishingGradient", Gradients("vg", 1e-9f));
  RunResult r = Invoke(*rule);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  ASSERT_FALSE(r.met_steps.empty());
  EXPECT_EQ(r.met_steps.front(), 3);
  EXPECT_EQ(r.findings.front().tensor, "gradient/fc2");
  EXPECT_NE(r.findings.front().message.find("below the threshold 1e-07"), std::string::npos)
      << r.findings.front().message;
  EXPECT_EQ(r.met_steps, (std::vector<int64_t>{3, 4, 5}));
}

TEST(VanishingGradient, QuietOnHealthyGradients) {
  auto rule = Builtin("VanishingGradient", Gradients("vg", 0.05f));
  EXPECT_EQ(FirstFire(*rule), -1);
  EXPECT_EQ(rule->state().evaluated, 6);
}

TEST(VanishingGradient, ThresholdAsSageMakerPassesIt) {
  TrialPtr t = Gradients("vg", 0.0005f);
  EXPECT_EQ(FirstFire(*Builtin("VanishingGradient", t)), -1);
  EXPECT_EQ(FirstFire(*Builtin("VanishingGradient", t, {{"threshold", "0.001"}})), 3);
}

TEST(VanishingGradient, UsesSavedAbsMeanReductions) {
  auto fill = [](float late) {
    return [late](Writer& w) {
      w.Reductions("gradients", "abs_mean");  // no raw values
      for (int s = 0; s < 5; ++s) {
        w.Step();
        w.Save<float>("gradient/w", Filled(8, s >= 2 ? late : 0.01f));
      }
    };
  };
  auto opts = [](hook::HookOptions& o) {
    o.save_all = false;
    o.include_collections = {"gradients"};
  };
  TrialPtr t = Make("vgr", fill(1e-10f), opts);
  auto id = t->TensorId("gradient/w");
  ASSERT_TRUE(id.ok());
  EXPECT_EQ(t->TensorValue(*id, 0, Mode::kGlobal, nullptr).status().code(),
            Code::kTensorUnavailableForStep);  // really only the reduction
  auto rule = Builtin("VanishingGradient", t);
  RunResult r = Invoke(*rule);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.met_steps, (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(FirstFire(*Builtin("VanishingGradient", Make("vgr2", fill(0.02f), opts))), -1);
}

TEST(VanishingGradient, NaNDoesNotFire) {
  // The deleted CLI test: NaN at steps 0 and 2, 1.0 at step 1.
  TrialPtr t = Make("vgnan", [](Writer& w) {
    for (int s = 0; s < 3; ++s) {
      w.Step();
      for (int i = 0; i < 3; ++i) {
        w.Save<float>("gradient_" + std::to_string(i), {s == 1 ? 1.0f : NAN}, {1});
      }
    }
  });
  EXPECT_EQ(FirstFire(*Builtin("VanishingGradient", t)), -1);
  EXPECT_EQ(FirstFire(*Builtin("VanishingGradient", t, {{"threshold", "0.001"}})), -1);
}

// ---- ExplodingTensor ------------------------------------------------------------------------

TrialPtr NanOneNan(const std::string& name, float bad) {
  return Make(name, [bad](Writer& w) {
    for (int s = 0; s < 3; ++s) {
      w.Step();
      for (int i = 0; i < 3; ++i) {
        w.Save<float>("foo_" + std::to_string(i), {s == 1 ? 1.0f : bad}, {1}, {"gradients"});
      }
    }
  });
}

TEST(ExplodingTensor, DeletedTestTwoFiresFromOneObject) {
  TrialPtr t = NanOneNan("et", NAN);
  auto rule = Builtin("ExplodingTensor", t, {{"collection_names", "gradients,weights"}});
  RunResult r = Invoke(*rule, 0, 3, true);
  EXPECT_EQ(r.status.code(), Code::kRuleConditionMet);
  EXPECT_NE(r.status.message().find("at step 0"), std::string::npos) << r.status.message();
  r = Invoke(*rule, 1, 3, true);
  EXPECT_EQ(r.status.code(), Code::kRuleConditionMet);
  EXPECT_NE(r.status.message().find("at step 2"), std::string::npos);
  ASSERT_FALSE(r.findings.empty());
  EXPECT_EQ(r.findings.front().tensor, "foo_0");
  EXPECT_EQ(r.findings.front().message, "1 NaN and 0 infinite values among 1 elements");
}

TEST(ExplodingTensor, QuietOnFiniteValues) {
  TrialPtr t = NanOneNan("et", 2.0f);
  EXPECT_EQ(FirstFire(*Builtin("ExplodingTensor", t)), -1);
  EXPECT_EQ(FirstFire(*Builtin("ExplodingTensor", t, {{"collection_names", "gradients"}})), -1);
}

TEST(ExplodingTensor, InfinitiesUnlessOnlyNan) {
  TrialPtr t = NanOneNan("etinf", INFINITY);
  EXPECT_EQ(FirstFire(*Builtin("ExplodingTensor", t, {{"tensor_regex", "foo_1"}})), 0);
  EXPECT_EQ(FirstFire(*Builtin("ExplodingTensor", t, {{"only_nan", "True"}})), -1);
  EXPECT_EQ(FirstFire(*Builtin("ExplodingTensor", t, {{"only_nan", "false"}})), 0);
  // A selection that matches nothing (a missing collection is not an error).
  EXPECT_EQ(FirstFire(*Builtin("ExplodingTensor", t, {{"collection_names", "weights"}})), -1);
}

TEST(ExplodingTensor, ChecksSavedReductionsWhenThereIsNoRawValue) {
  TrialPtr t = Make(
      "etred",
      [](Writer& w) {
        w.Reductions("gradients", "max,abs_mean");
        for (int s = 0; s < 3; ++s) {
          w.Step();
          w.Save<float>("gradient/x", {1.0f, s == 2 ? NAN : 3.0f});
        }
      },
      [](hook::HookOptions& o) {
        o.save_all = false;
        o.include_collections = {"gradients"};
      });
  RunResult r = Invoke(*Builtin("ExplodingTensor", t));
  EXPECT_EQ(r.met_steps, (std::vector<int64_t>{2}));
  EXPECT_NE(r.findings.front().message.find("saved reductions"), std::string::npos);
}

// ---- SimilarAcrossRuns ----------------------------------------------------------------------

TrialPtr Run2(const std::string& name, int diverge_at, int steps = 4) {
  return Make(name, [=](Writer& w) {
    for (int s = 0; s < steps; ++s) {
      w.Step();
      w.Save<float>("fc.weight", {1.0f * s, 2.0f, s >= diverge_at ? 9.0f : 3.0f});
      w.Save<float>("loss", {0.5f}, {1});
    }
  });
}

TEST(SimilarAcrossRuns, FiresWhereTheRunsDiverge) {
  TrialPtr a = Run2("a", 99), b = Run2("b", 2);
  auto rule = Builtin("SimilarAcrossRuns", a, {}, {b});
  RunResult r = Invoke(*rule);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.met_steps, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(r.findings.front().tensor, "fc.weight");
  EXPECT_NE(r.findings.front().message.find("largest absolute difference 6.0"), std::string::npos)
      << r.findings.front().message;
  // Restricted to the loss, nothing differs.
  EXPECT_EQ(FirstFire(*Builtin("SimilarAcrossRuns", a, {{"tensor_regex", "loss"}}, {b})), -1);
}

TEST(SimilarAcrossRuns, QuietOnIdenticalRunsAndPastTheOtherRunsEnd) {
  TrialPtr a = Run2("a", 99), b = Run2("b", 99), shorter = Run2("c", 99, 2);
  EXPECT_EQ(FirstFire(*Builtin("SimilarAcrossRuns", a, {}, {b})), -1);
  auto rule = Builtin("SimilarAcrossRuns", a, {}, {shorter});
  EXPECT_EQ(FirstFire(*rule), -1);
  EXPECT_EQ(rule->state().evaluated, 4);  // steps 2, 3: nothing to compare, still evaluated
}

TEST(SimilarAcrossRuns, ComparesSavedReductionsWhenThereAreNoRawValues) {
  auto run = [](const std::string& name, float late) {
    return Make(
        name,
        [late](Writer& w) {
          w.Reductions("gradients", "abs_mean,max");
          for (int s = 0; s < 4; ++s) {
            w.Step();
            w.Save<float>("gradient/w", Filled(6, s >= 2 ? late : 0.5f));
          }
        },
        [](hook::HookOptions& o) {
          o.save_all = false;
          o.include_collections = {"gradients"};
        });
  };
  TrialPtr a = run("ra", 0.5f), b = run("rb", 0.25f), c = run("rc", 0.5f);
  RunResult r = Invoke(*Builtin("SimilarAcrossRuns", a, {}, {b}));
  EXPECT_EQ(r.met_steps, (std::vector<int64_t>{2, 3}));
  EXPECT_NE(r.findings.front().message.find("saved reduction abs_mean differs (0.5 vs 0.25)"),
            std::string::npos)
      << r.findings.front().message;
  EXPECT_EQ(FirstFire(*Builtin("SimilarAcrossRuns", a, {}, {c})), -1);
}

TEST(SimilarAcrossRuns, OtherTrialsAsSageMakerParameters) {
  TrialPtr a = Run2("a", 99), b = Run2("b", 1);
  auto rule = Builtin("SimilarAcrossRuns", a, {{"other_trial_0", b->path()}});
  EXPECT_EQ(FirstFire(*rule), 1);
  auto legacy = Builtin("SimilarAcrossRuns", a, {{"other_trials", b->path()}, {"include_regex", "fc"}});
  EXPECT_EQ(FirstFire(*legacy), 1);
}

// ---- WeightUpdateRatio ----------------------------------------------------------------------

TrialPtr Weights(const std::string& name, const std::function<float(int)>& scale) {
  return Make(name, [&](Writer& w) {
    for (int s = 0; s < 6; ++s) {
      w.Step(Mode::kTrain);
      std::vector<float> v(10);
      for (int i = 0; i < 10; ++i) v[i] = (1.0f + 0.1f * i) * scale(s);
      w.Save<float>("fc.weight", v);
    }
  });
}

TEST(WeightUpdateRatio, FiresOnFrozenAndOnExplodingWeights) {
  // Frozen from step 3 on: ratio 0 < small_threshold.
  TrialPtr frozen = Weights("wf", [](int s) { return 1.0f + 0.01f * std::min(s, 2); });
  RunResult r = Invoke(*Builtin("WeightUpdateRatio", frozen));
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.met_steps.front(), 3);
  EXPECT_EQ(r.findings.front().tensor, "fc.weight");
  EXPECT_NE(r.findings.front().message.find("below small_threshold"), std::string::npos);
  // A jump at step 4: ratio 99 > large_threshold.
  TrialPtr jump = Weights("wj", [](int s) { return s == 4 ? 100.0f : 1.0f + 0.01f * s; });
  r = Invoke(*Builtin("WeightUpdateRatio", jump));
  EXPECT_EQ(r.met_steps.front(), 4);
  EXPECT_NE(r.findings.front().message.find("above large_threshold"), std::string::npos);
}

TEST(WeightUpdateRatio, QuietOnSteadyUpdatesAndNumSteps) {
  TrialPtr steady = Weights("ws", [](int s) { return 1.0f + 0.01f * s; });
  EXPECT_EQ(FirstFire(*Builtin("WeightUpdateRatio", steady)), -1);
  // Compared with the step num_steps back, a 1%/step drift stays within the thresholds too,
  // while a small large_threshold fires from the first comparison (step 1).
  EXPECT_EQ(FirstFire(*Builtin("WeightUpdateRatio", steady, {{"num_steps", "3"}})), -1);
  EXPECT_EQ(FirstFire(*Builtin("WeightUpdateRatio", steady,
                               {{"num_steps", "2"}, {"large_threshold", "0.001"}})),
            1);
}

// ---- AllZero --------------------------------------------------------------------------------

TrialPtr Activations(const std::string& name, int zero_from, float zero_share) {
  return Make(name, [=](Writer& w) {
    for (int s = 0; s < 4; ++s) {
      w.Step();
      std::vector<float> v(20, 0.5f);
      if (s >= zero_from) {
        for (size_t i = 0; i < v.size() * zero_share; ++i) v[i] = 0;
      }
      w.Save<float>("dense_relu_output", v, {4, 5}, {"ReluActivation"});
      w.Save<float>("other", {1, 2, 3});
    }
  });
}

TEST(AllZero, FiresWhenATensorIsAllZero) {
  TrialPtr t = Activations("az", 2, 1.0f);
  RunResult r = Invoke(*Builtin("AllZero", t, {{"collection_names", "ReluActivation"}}));
  EXPECT_EQ(r.met_steps, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(r.findings.front().tensor, "dense_relu_output");
  EXPECT_EQ(FirstFire(*Builtin("AllZero", t, {{"tensor_regex", "relu"}})), 2);
}

TEST(AllZero, QuietOnPartlyZeroTensorsUnlessThresholdAllows) {
  TrialPtr t = Activations("az", 2, 0.5f);
  EXPECT_EQ(FirstFire(*Builtin("AllZero", t, {{"tensor_regex", ".*"}})), -1);
  EXPECT_EQ(FirstFire(*Builtin("AllZero", t, {{"tensor_regex", ".*"}, {"threshold", "50"}})), 2);
}

// ---- UnchangedTensor (deleted test_unchanged.py) --------------------------------------------

TrialPtr UnchangedFixture(const std::string& name, bool changing) {
  return Make(name, [=](Writer& w) {
    for (int s = 0; s < 6; ++s) {
      w.Step();
      if (s <= 2) {
        for (int i = 0; i < 3; ++i) {
          w.Save<float>("foo_" + std::to_string(i), Filled(60, changing ? 1.0f + s : 1.0f),
                        {10, 3, 2});
        }
      }
      if (s == 5) {
        for (int i = 0; i < 3; ++i) w.Save<float>("boo_" + std::to_string(i), Filled(60, 1.0f), {10, 3, 2});
      }
    }
  });
}

TEST(UnchangedTensor, DeletedTestWindows) {
  TrialPtr t = UnchangedFixture("ut", false);
  auto rule = Builtin("UnchangedTensor", t, {{"tensor_regex", ".*"}});
  EXPECT_EQ(FirstFire(*rule, 0, 2), -1);  // at most 2 saved steps
  RunResult r = Invoke(*rule, 0, 3, true);
  EXPECT_EQ(r.status.code(), Code::kRuleConditionMet);
  EXPECT_NE(r.status.message().find("at step 2"), std::string::npos);
  EXPECT_EQ(r.findings.front().tensor, "foo_0");
  EXPECT_EQ(r.findings.front().message, "unchanged over the last 3 saved steps (0, 1, 2)");
  r = Invoke(*rule, 2, 3, true);  // the window looks back: no state needed
  EXPECT_EQ(r.status.code(), Code::kRuleConditionMet);
  EXPECT_EQ(FirstFire(*rule, 3, 6), -1);  // boo_* has one step; foo_* is not at step 5
}

TEST(UnchangedTensor, QuietOnChangingTensors) {
  TrialPtr t = UnchangedFixture("ut", true);
  EXPECT_EQ(FirstFire(*Builtin("UnchangedTensor", t, {{"tensor_regex", "foo"}})), -1);
  // Generous tolerances make them "unchanged".
  EXPECT_EQ(FirstFire(*Builtin("UnchangedTensor", t, {{"tensor_regex", "foo"}, {"atol", "5"}})), 2);
  EXPECT_EQ(FirstFire(*Builtin("UnchangedTensor", t,
                               {{"tensor_regex", "foo"}, {"num_steps", "2"}, {"rtol", "0.6"}})),
            1);
}

// ---- LossNotDecreasing (deleted test_loss_not_decreasing.py) --------------------------------

TrialPtr Losses(const std::string& name, const std::vector<double>& values) {
  return Make(name, [&](Writer& w) {
    for (size_t i = 0; i < values.size() * 4; ++i) {
      w.Step();
      if (i % 4 != 0) continue;
      for (int k = 0; k < 2; ++k) w.Scalar("loss_" + std::to_string(k), values[i / 4], {"default"});
    }
  });
}

TEST(LossNotDecreasing, DeletedTestDefault) {
  TrialPtr t = Losses("lnd", {0.3, 0.33, 0.31, 0.30, 0.28});
  for (ParamList p : {ParamList{{"tensor_regex", "loss, losses"}},
                      ParamList{{"collection_names", "default"}}, ParamList{}}) {
    auto rule = Builtin("LossNotDecreasing", t, p);
    RunResult r = Invoke(*rule, 0, 17);
    ASSERT_TRUE(r.status.ok());
    ASSERT_FALSE(r.met_steps.empty());
    EXPECT_EQ(r.met_steps.front(), 12);
    EXPECT_TRUE(AnyFindingOn(r, "loss_0"));
    EXPECT_NE(r.findings.front().message.find("decreased by only 0.0%"), std::string::npos)
        << r.findings.front().message;
    EXPECT_EQ(FirstFire(*rule, 13, 17), -1);  // the next comparison is due at step >= 22
  }
}

TEST(LossNotDecreasing, DeletedTestMinDiffUnderTheDocAndTheLegacySwitch) {
  TrialPtr t = Losses("lnd", {0.3, 0.33, 0.31, 0.30, 0.28, 0.2, 0.42});
  // The documented reading (A.26 #1): 0.30 vs 0.3 did not decrease by 20% -> step 12.
  EXPECT_EQ(FirstFire(*Builtin("LossNotDecreasing", t, {{"diff_percent", "20"}}), 0, 25), 12);
  // 2019 semantics: fires on a 40% increase at step 24 (0.42 vs 0.30 at step 12).
  auto legacy = Builtin("LossNotDecreasing", t, {{"min_difference", "20"}, {"legacy_diff_percent", "True"}});
  EXPECT_EQ(FirstFire(*legacy, 0, 25), 24);
}

TEST(LossNotDecreasing, QuietWhileTheLossDecreases) {
  TrialPtr t = Losses("lnd", {1.0, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4});
  EXPECT_EQ(FirstFire(*Builtin("LossNotDecreasing", t)), -1);
  // An increase within increase_threshold_percent is tolerated; a larger one fires.
  TrialPtr up = Losses("lndup", {1.0, 1.0, 1.0, 1.02, 1.02, 1.02, 1.2});
  auto rule = Builtin("LossNotDecreasing", up, {{"diff_percent", "0"}});
  RunResult r = Invoke(*rule);
  EXPECT_EQ(r.met_steps, (std::vector<int64_t>{24}));
  EXPECT_NE(r.findings.front().message.find("increased by"), std::string::npos);
}

TEST(LossNotDecreasing, PrefersEvalStepsUnlessModeIsGiven) {
  TrialPtr t = Make("lndm", [](Writer& w) {
    double train = 1.0;
    for (int s = 0; s < 48; ++s) {
      const bool eval = s % 4 == 3;
      w.Step(eval ? Mode::kEval : Mode::kTrain);
      w.Scalar("loss", eval ? 0.5 : (train *= 0.9));
    }
  });
  // EVAL steps are global 3, 7, 11, ...; the EVAL loss is flat: baseline at EVAL step 0, first
  // comparison at EVAL step 10 = global step 43.
  RunResult r = Invoke(*Builtin("LossNotDecreasing", t));
  ASSERT_FALSE(r.met_steps.empty());
  EXPECT_EQ(r.met_steps.front(), 43);
  EXPECT_NE(r.findings.front().message.find("EVAL step 0"), std::string::npos)
      << r.findings.front().message;
  // The TRAIN loss keeps falling.
  EXPECT_EQ(FirstFire(*Builtin("LossNotDecreasing", t, {{"mode", "TRAIN"}})), -1);
  EXPECT_EQ(FirstFire(*Builtin("LossNotDecreasing", t, {{"mode", "eval"}})), 43);
}

// A loss that became NaN or infinite is the clearest sign it is not decreasing: it fires at the
// comparison, under both readings of diff_percent (every comparison with NaN was false, so it was
// reported as fine). A comparison with a non-finite earlier loss gives no decision.
TEST(LossNotDecreasing, FiresOnANaNOrInfiniteLoss) {
  int k = 0;
  for (double bad : {std::nan(""), double(INFINITY), -double(INFINITY)}) {
    // Steps 0, 4, ..., 24: baseline 0, comparisons at 12 (vs 0) and 24 (vs 12).
    TrialPtr t = Losses("lndnan" + std::to_string(k++), {1.0, 0.9, 0.8, bad, 0.6, 0.5, 0.4});
    for (ParamList p : {ParamList{}, ParamList{{"legacy_diff_percent", "True"}}}) {
      RunResult r = Invoke(*Builtin("LossNotDecreasing", t, p));
      ASSERT_TRUE(r.status.ok()) << r.status.message();
      // Step 24 compares 0.4 with the non-finite loss of step 12: no decision there.
      EXPECT_EQ(r.met_steps, (std::vector<int64_t>{12})) << Num(bad);
      ASSERT_FALSE(r.findings.empty());
      const std::string& m = r.findings.front().message;
      EXPECT_NE(m.find(std::isnan(bad) ? "loss is NaN" : "loss is infinite"), std::string::npos) << m;
      EXPECT_NE(m.find("(GLOBAL step 0: 1.0, step 12: " + Num(bad) + ")"), std::string::npos) << m;
    }
  }
  // A NaN at the baseline: the first comparison (0.7 at 12 vs NaN at 0) decides nothing; the
  // next (0.4 at 24 vs 0.7 at 12) sees a decrease.
  TrialPtr first = Losses("lndnanfirst", {std::nan(""), 0.9, 0.8, 0.7, 0.6, 0.5, 0.4});
  EXPECT_EQ(FirstFire(*Builtin("LossNotDecreasing", first)), -1);
  EXPECT_EQ(FirstFire(*Builtin("LossNotDecreasing", first, {{"legacy_diff_percent", "True"}})), -1);
}

// Under `smd rules --follow` the baseline may be taken while only TRAIN steps exist. When EVAL
// steps appear the rule moves to EVAL (a new baseline there), so from then on the live run judges
// what a run after the job ends judges (it stayed on TRAIN for good).
TEST(LossNotDecreasing, MovesToEvalStepsThatAppearWhileTheJobRuns) {
  std::string dir = TempDir("lndlive");
  Writer w(dir);
  // Global steps 0-11 TRAIN; from 12 on every 4th step (15, 19, ..., 59) is EVAL. The TRAIN
  // loss falls 10% a step; the EVAL loss is flat.
  int64_t train_step = 0;
  auto write = [&](int64_t s) {
    const bool eval = s >= 12 && (s - 12) % 4 == 3;
    w.Step(eval ? Mode::kEval : Mode::kTrain);
    w.Scalar("loss", eval ? 0.5 : std::pow(0.9, static_cast<double>(train_step++)));
  };
  for (int64_t s = 0; s <= 12; ++s) write(s);
  w.Flush();  // steps 0-11 complete, TRAIN only
  TrialPtr t = Open(dir);
  auto live = Builtin("LossNotDecreasing", t);
  auto live_train = Builtin("LossNotDecreasing", t, {{"mode", "TRAIN"}});
  RunResult r = Invoke(*live, 0, 12);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_TRUE(r.met_steps.empty());  // baseline on TRAIN step 0, the TRAIN loss falls
  EXPECT_EQ(FirstFire(*live_train, 0, 12), -1);
  for (int64_t s = 13; s < 60; ++s) write(s);
  w.Close();
  r = Invoke(*live, 12);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  // EVAL baseline at EVAL step 0 (global 15), first comparison at EVAL step 10 (global 55).
  EXPECT_EQ(r.met_steps, (std::vector<int64_t>{55}));
  ASSERT_FALSE(r.findings.empty());
  EXPECT_NE(r.findings.front().message.find("(EVAL step 0: 0.5, step 10: 0.5)"), std::string::npos)
      << r.findings.front().message;
  // The same as a run over the ended job; a given mode stays.
  EXPECT_EQ(FirstFire(*Builtin("LossNotDecreasing", Open(dir))), 55);
  EXPECT_EQ(FirstFire(*live_train, 12), -1);
}

// ---- DeadRelu -------------------------------------------------------------------------------

TrialPtr Relus(const std::string& name, int dead_from) {
  return Make(name, [=](Writer& w) {
    std::mt19937 rng(1);
    std::normal_distribution<float> n(0, 1);
    for (int s = 0; s < 4; ++s) {
      w.Step();
      std::vector<float> v(8 * 16);
      for (size_t b = 0; b < 8; ++b) {
        for (size_t u = 0; u < 16; ++u) {
          float x = std::fabs(n(rng)) + 0.1f;
          if (s >= dead_from && u < 12) x = 0;  // 12 of 16 units never fire
          v[b * 16 + u] = x;
        }
      }
      w.Save<float>("block0_relu_output", v, {8, 16});
    }
  });
}

TEST(DeadRelu, FiresWhenMostUnitsAreDead) {
  RunResult r = Invoke(*Builtin("DeadRelu", Relus("dr", 2)));
  EXPECT_EQ(r.met_steps, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(r.findings.front().tensor, "block0_relu_output");
  EXPECT_NE(r.findings.front().message.find("12 of 16 ReLUs are dead"), std::string::npos)
      << r.findings.front().message;
}

TEST(DeadRelu, QuietOnLiveUnitsAndBelowThresholdLayer) {
  EXPECT_EQ(FirstFire(*Builtin("DeadRelu", Relus("dr", 99))), -1);
  EXPECT_EQ(FirstFire(*Builtin("DeadRelu", Relus("dr2", 2), {{"threshold_layer", "80"}})), -1);
}

// One step of a layer "block0_relu_output" of 8 samples x 16 units, element (b, u) = f(b, u).
TrialPtr ReluLayer(const std::string& name, const std::function<float(size_t, size_t)>& f) {
  return Make(name, [&](Writer& w) {
    w.Step();
    std::vector<float> v(8 * 16);
    for (size_t b = 0; b < 8; ++b) {
      for (size_t u = 0; u < 16; ++u) v[b * 16 + u] = f(b, u);
    }
    w.Save<float>("block0_relu_output", v, {8, 16});
  });
}

// A NaN (or infinite) activation is no evidence that a unit is dead: such elements leave the
// unit's batch, a unit with none left is not judged, nor is a layer with no unit left (NaN was
// "not > 0", so NaN units counted as dead).
TEST(DeadRelu, NonFiniteActivationsAreLeftOut) {
  const float nan = std::nanf(""), inf = INFINITY;
  // Units 0-3 dead, 4-7 NaN, 8-11 infinite, 12-15 alive: 4 of the 8 judged units are dead.
  auto mixed = [=](size_t, size_t u) { return u < 4 ? 0.0f : u < 8 ? nan : u < 12 ? inf : 1.0f; };
  EXPECT_EQ(FirstFire(*Builtin("DeadRelu", ReluLayer("drnan", mixed))), -1);  // 50%, not > 50%
  RunResult r = Invoke(*Builtin("DeadRelu", ReluLayer("drnan2", mixed), {{"threshold_layer", "40"}}));
  EXPECT_EQ(r.met_steps, (std::vector<int64_t>{0}));
  ASSERT_FALSE(r.findings.empty());
  EXPECT_NE(r.findings.front().message.find("4 of 8 ReLUs are dead"), std::string::npos)
      << r.findings.front().message;
  EXPECT_NE(r.findings.front().message.find("8 units without a finite value not judged"),
            std::string::npos)
      << r.findings.front().message;
  // Every value NaN: the layer is not judged.
  EXPECT_EQ(FirstFire(*Builtin("DeadRelu", ReluLayer("drallnan", [=](size_t, size_t) { return nan; }))), -1);
  // NaN samples leave the batch: 3 positive of 3 finite samples is an active unit (it was 3 of 8,
  // 37.5% < threshold_inactivity 50).
  TrialPtr part = ReluLayer("drpart", [=](size_t b, size_t) { return b < 3 ? 1.0f : nan; });
  EXPECT_EQ(FirstFire(*Builtin("DeadRelu", part, {{"threshold_inactivity", "50"}})), -1);
}

// ---- PoorWeightInitialization ---------------------------------------------------------------

TEST(PoorWeightInitialization, FiresOnVarianceSpreadGradientWidthAndStalledLoss) {
  TrialPtr t = Make("pwi", [](Writer& w) {
    for (int s = 0; s < 3; ++s) {
      w.Step();
      w.Save<float>("l1_relu_input", {-1, 1, -1, 1});      // variance 1
      w.Save<float>("l2_relu_input", {-10, 10, -10, 10});  // variance 100
    }
  });
  RunResult r = Invoke(*Builtin("PoorWeightInitialization", t));
  EXPECT_EQ(r.met_steps.front(), 0);
  EXPECT_EQ(r.findings.front().tensor, "l1_relu_input");
  EXPECT_NE(r.findings.front().message.find("ratio 100.0"), std::string::npos)
      << r.findings.front().message;

  TrialPtr narrow = Make("pwig", [](Writer& w) {
    for (int s = 0; s < 3; ++s) {
      w.Step();
      w.Save<float>("gradient/a", {0.1f, -0.3f, 0.2f, 0.5f});
      w.Save<float>("gradient/b", Filled(16, 1e-5f));
    }
  });
  r = Invoke(*Builtin("PoorWeightInitialization", narrow));
  EXPECT_EQ(r.met_steps.front(), 0);
  EXPECT_EQ(r.findings.front().tensor, "gradient/b");

  TrialPtr flat = Make("pwil", [](Writer& w) {
    for (int s = 0; s < 10; ++s) {
      w.Step();
      w.Scalar("loss", s < 2 ? 1.0 - 0.1 * s : 0.95);
    }
  });
  // best 0.9 at step 1; steps 2..6 bring no new low -> patience 5 reached at step 6.
  EXPECT_EQ(FirstFire(*Builtin("PoorWeightInitialization", flat)), 6);
  EXPECT_EQ(FirstFire(*Builtin("PoorWeightInitialization", flat, {{"patience", "7"}})), 8);
}

TEST(PoorWeightInitialization, QuietOnAGoodStartAndStopsAfterSteps) {
  TrialPtr t = Make("pwiq", [](Writer& w) {
    for (int s = 0; s < 14; ++s) {
      w.Step();
      w.Save<float>("l1_relu_input", {-1, 1, -1, 1});
      w.Save<float>("l2_relu_input", {-2, 2, -2, 2});
      w.Save<float>("gradient/a", {0.1f, -0.3f, 0.2f, 0.5f});
      w.Scalar("loss", 1.0 / (s + 1));
    }
  });
  auto rule = Builtin("PoorWeightInitialization", t);
  EXPECT_EQ(FirstFire(*rule), -1);
  EXPECT_EQ(rule->state().end, EndReason::kEndOfRule);
  EXPECT_EQ(rule->state().evaluated, 10);  // the first 10 steps, then the rule ends itself
  EXPECT_EQ(rule->state().last_step, 9);
  auto few = Builtin("PoorWeightInitialization", t, {{"steps", "3"}});
  EXPECT_EQ(FirstFire(*few), -1);
  EXPECT_EQ(few->state().last_step, 2);
}

// A NaN loss is no new low and never the lowest: a NaN first loss made every later loss "not
// lower", so a falling loss fired at step 5.
TEST(PoorWeightInitialization, ANaNLossIsNoNewLow) {
  TrialPtr first = Make("pwinan", [](Writer& w) {
    for (int s = 0; s < 10; ++s) {
      w.Step();
      w.Scalar("loss", s == 0 ? std::nan("") : 1.0 - 0.05 * s);
    }
  });
  EXPECT_EQ(FirstFire(*Builtin("PoorWeightInitialization", first)), -1);
  TrialPtr later = Make("pwinan2", [](Writer& w) {
    for (int s = 0; s < 10; ++s) {
      w.Step();
      w.Scalar("loss", s < 2 ? 1.0 - 0.1 * s : std::nan(""));
    }
  });
  RunResult r = Invoke(*Builtin("PoorWeightInitialization", later));
  ASSERT_FALSE(r.met_steps.empty());
  EXPECT_EQ(r.met_steps.front(), 6);  // steps 2..6 without a new low
  EXPECT_NE(r.findings.front().message.find("(best 0.9, patience 5); the loss is NaN"),
            std::string::npos)
      << r.findings.front().message;
}

// ---- SaturatedActivation --------------------------------------------------------------------

TEST(SaturatedActivation, FiresOnSaturatedTanhAndSigmoidInputs) {
  TrialPtr t = Make("sa", [](Writer& w) {
    for (int s = 0; s < 3; ++s) {
      w.Step();
      w.Save<float>("l1_tanh_input", {0.5f, s >= 1 ? 20.0f : 0.1f, s >= 1 ? -15.0f : 0.2f},
                    {1, 3});
      w.Save<float>("l2_sigmoid_input", {s >= 2 ? -30.0f : 0.0f, s >= 2 ? 17.5f : 1.0f}, {1, 2});
    }
  });
  RunResult r = Invoke(*Builtin("SaturatedActivation", t));
  EXPECT_EQ(r.met_steps, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(r.findings.front().tensor, "l1_tanh_input");
  EXPECT_TRUE(AnyFindingOn(r, "l2_sigmoid_input"));
  // The 2020 tuple form widens the tanh range: only the sigmoid fires.
  EXPECT_EQ(FirstFire(*Builtin("SaturatedActivation", t, {{"threshold_tanh", "(-25, 25)"}})), 2);
}

TEST(SaturatedActivation, QuietInTheActiveRange) {
  TrialPtr t = Make("saq", [](Writer& w) {
    for (int s = 0; s < 3; ++s) {
      w.Step();
      w.Save<float>("l1_tanh_input", {0.5f, -9.0f, 9.0f}, {1, 3});
      w.Save<float>("l2_sigmoid_input", {-22.0f, 16.0f}, {1, 2});
      w.Save<float>("other_input", {100.0f});  // neither tanh nor sigmoid
    }
  });
  EXPECT_EQ(FirstFire(*Builtin("SaturatedActivation", t, {{"tensor_regex", ".*input"}})), -1);
}

// A NaN input says nothing about saturation and leaves the node's batch (it was "outside the
// range", so saturated); an infinite input is in the flat tail and counts as saturated.
TEST(SaturatedActivation, NaNInputsAreLeftOutInfiniteOnesSaturate) {
  const float nan = std::nanf(""), inf = INFINITY;
  TrialPtr t = Make("sanan", [=](Writer& w) {
    w.Step();  // nodes 0-2 NaN, node 3 active
    w.Save<float>("l1_tanh_input", {nan, nan, nan, 0.5f, nan, nan, nan, 0.1f}, {2, 4});
    w.Step();  // nodes 0-1 infinite, node 2 NaN, node 3 active: 2 of 3 saturated
    w.Save<float>("l1_tanh_input", {inf, -inf, nan, 0.5f, inf, -inf, nan, 0.1f}, {2, 4});
  });
  RunResult r = Invoke(*Builtin("SaturatedActivation", t));
  EXPECT_EQ(r.met_steps, (std::vector<int64_t>{1}));
  ASSERT_FALSE(r.findings.empty());
  EXPECT_NE(r.findings.front().message.find("2 of 3 tanh inputs are saturated"), std::string::npos)
      << r.findings.front().message;
}

// ---- TensorVariance -------------------------------------------------------------------------

TrialPtr Variances(const std::string& name, float big_at_3) {
  return Make(name, [=](Writer& w) {
    for (int s = 0; s < 5; ++s) {
      w.Step();
      const float a = s == 3 ? big_at_3 : 1.0f;
      w.Save<float>("fc.weight", {-a, a, -a, a});
    }
  });
}

TEST(TensorVariance, FiresAboveMaxAndBelowMin) {
  TrialPtr t = Variances("tv", 10.0f);  // variance 100 at step 3
  ParamList p = {{"collection_names", "weights"}, {"max_threshold", "10"}, {"min_threshold", "0.00001"}};
  RunResult r = Invoke(*Builtin("TensorVariance", t, p));
  EXPECT_EQ(r.met_steps, (std::vector<int64_t>{3}));
  EXPECT_NE(r.findings.front().message.find("variance 100.0 is above max_threshold 10.0"),
            std::string::npos);
  TrialPtr small = Variances("tv2", 0.001f);  // variance 1e-6
  EXPECT_EQ(FirstFire(*Builtin("TensorVariance", small, p)), 3);
}

TEST(TensorVariance, QuietWithinBoundsOrWithoutThresholds) {
  ParamList p = {{"collection_names", "weights"}, {"max_threshold", "10"}, {"min_threshold", "0.00001"}};
  EXPECT_EQ(FirstFire(*Builtin("TensorVariance", Variances("tv", 2.0f), p)), -1);
  EXPECT_EQ(FirstFire(*Builtin("TensorVariance", Variances("tv2", 10.0f), {{"tensor_regex", "fc"}})), -1);
}

// ---- Overfit / Overtraining -----------------------------------------------------------------

// TRAIN steps with loss `train`, one EVAL step after every 3 with loss `eval(k)`.
TrialPtr TrainEval(const std::string& name, const std::function<double(int)>& train,
                   const std::function<double(int)>& eval, int rounds = 6) {
  return Make(name, [&](Writer& w) {
    int t = 0;
    for (int k = 0; k < rounds; ++k) {
      for (int i = 0; i < 3; ++i, ++t) {
        w.Step(Mode::kTrain);
        w.Scalar("loss", train(t));
      }
      w.Step(Mode::kEval);
      w.Scalar("loss", eval(k));
    }
  });
}

TEST(Overfit, FiresWhenValidationLossPullsAway) {
  // Global steps: TRAIN 0-2, EVAL 3, TRAIN 4-6, EVAL 7, ...; validation 1.0, 1.0, 1.6, ...
  TrialPtr t = TrainEval("of", [](int) { return 1.0; }, [](int k) { return k < 2 ? 1.0 : 2.0; });
  RunResult r = Invoke(*Builtin("Overfit", t));
  ASSERT_FALSE(r.met_steps.empty());
  // At EVAL step 11 the mean validation loss is (1+1+2)/3 = 1.33 vs 1.0: ratio 0.33 > 0.1.
  EXPECT_EQ(r.met_steps.front(), 11);
  EXPECT_EQ(r.findings.front().tensor, "loss");
  // patience 2: the second consecutive validation step above the ratio (global 15).
  EXPECT_EQ(FirstFire(*Builtin("Overfit", t, {{"patience", "2"}})), 15);
}

TEST(Overfit, QuietWhenTheLossesAgreeAndForXgboostMetrics) {
  TrialPtr t = TrainEval("ofq", [](int) { return 1.0; }, [](int) { return 1.05; });
  EXPECT_EQ(FirstFire(*Builtin("Overfit", t)), -1);
  TrialPtr x = Make("ofx", [](Writer& w) {
    for (int s = 0; s < 6; ++s) {
      w.Step();
      w.Scalar("train-rmse", 1.0 - 0.1 * s, {"losses"});
      w.Scalar("validation-rmse", s < 3 ? 1.0 - 0.1 * s : 1.0, {"losses"});
    }
  });
  // Means up to step 4: train 0.8, validation 0.94 (ratio 0.175); step 5: 0.75, 0.95 (0.267).
  RunResult r = Invoke(*Builtin("Overfit", x));
  EXPECT_EQ(r.met_steps, (std::vector<int64_t>{4, 5}));
  EXPECT_EQ(r.findings.front().tensor, "validation-rmse");
  EXPECT_EQ(FirstFire(*Builtin("Overfit", x, {{"ratio_threshold", "0.2"}})), 5);
  EXPECT_EQ(FirstFire(*Builtin("Overfit", x, {{"ratio_threshold", "0.3"}})), -1);
}

TEST(Overtraining, FiresWhenALossStopsImproving) {
  // Training loss improves until TRAIN step 5 (global 6), then flat.
  TrialPtr t = TrainEval(
      "ot", [](int i) { return i <= 5 ? 1.0 - 0.1 * i : 0.5; }, [](int k) { return 1.0 - 0.1 * k; });
  RunResult r = Invoke(*Builtin("Overtraining", t));
  ASSERT_FALSE(r.met_steps.empty());
  // TRAIN steps 6..10 (global 8, 9, 10, 12, 13) bring no improvement: patience 5 at global 13.
  EXPECT_EQ(r.met_steps.front(), 13);
  EXPECT_NE(r.findings.front().message.find("training loss"), std::string::npos);
  // Validation: flat from the start, patience_validation 3 -> the 4th EVAL step (global 15).
  TrialPtr v = TrainEval("otv", [](int i) { return 1.0 - 0.05 * i; }, [](int) { return 0.7; });
  RunResult rv = Invoke(*Builtin("Overtraining", v, {{"patience_validation", "3"}}));
  EXPECT_EQ(rv.met_steps.front(), 15);
  EXPECT_NE(rv.findings.front().message.find("validation loss"), std::string::npos);
}

TEST(Overtraining, QuietWhileBothImprove) {
  TrialPtr t = TrainEval(
      "otq", [](int i) { return 2.0 - 0.1 * i; }, [](int k) { return 2.0 - 0.1 * k; });
  EXPECT_EQ(FirstFire(*Builtin("Overtraining", t)), -1);
  // A delta larger than the improvements makes every step "no improvement".
  EXPECT_EQ(FirstFire(*Builtin("Overtraining", t, {{"delta", "0.5"}})), 6);
}

// A NaN loss made every later mean NaN, and Overfit skipped every step from then on. Non-finite
// losses are left out of the means; a step whose validation loss is not finite is not judged.
TEST(Overfit, NonFiniteLossesAreLeftOutOfTheMeans) {
  TrialPtr t = TrainEval(
      "ofnan", [](int i) { return i == 1 ? std::nan("") : 1.0; },
      [](int k) { return k == 0 ? double(INFINITY) : k < 2 ? 1.0 : 2.0; });
  // Step 3 (validation inf) not judged; step 7: 1.0 vs 1.0; step 11: (1+2)/2 = 1.5 vs 1.0.
  RunResult r = Invoke(*Builtin("Overfit", t));
  ASSERT_TRUE(r.status.ok());
  ASSERT_FALSE(r.met_steps.empty());
  EXPECT_EQ(r.met_steps.front(), 11);
  EXPECT_NE(r.findings.front().message.find("mean validation loss 1.5 exceeds mean training loss 1.0"),
            std::string::npos)
      << r.findings.front().message;
}

// A NaN loss is no improvement (it was skipped, so a loss that turned NaN for good never fired).
TEST(Overtraining, ANaNLossIsNoImprovement) {
  // TRAIN losses 1.0, 0.9, 0.8, then NaN from TRAIN step 3 (global 4) on.
  TrialPtr t = TrainEval(
      "otnan", [](int i) { return i < 3 ? 1.0 - 0.1 * i : std::nan(""); },
      [](int k) { return 1.0 - 0.1 * k; });
  RunResult r = Invoke(*Builtin("Overtraining", t, {{"patience_train", "3"}}));
  ASSERT_FALSE(r.met_steps.empty());
  EXPECT_EQ(r.met_steps.front(), 6);  // TRAIN steps 3, 4, 5 = global 4, 5, 6
  EXPECT_NE(r.findings.front().message.find("training loss"), std::string::npos);
  EXPECT_NE(r.findings.front().message.find("NaN"), std::string::npos) << r.findings.front().message;
  // NaN before the first number: the first number is the first optimum; the NaN steps count.
  TrialPtr late = TrainEval(
      "otnan2", [](int i) { return i < 2 ? std::nan("") : 2.0 - 0.1 * i; },
      [](int k) { return 1.0 - 0.1 * k; });
  EXPECT_EQ(FirstFire(*Builtin("Overtraining", late, {{"patience_train", "3"}})), -1);
  EXPECT_EQ(FirstFire(*Builtin("Overtraining", late, {{"patience_train", "2"}})), 1);
}

// ---- Confusion (deleted test_confusion.py) --------------------------------------------------

TrialPtr LabelsTrial(const std::string& name, const std::vector<int64_t>& y,
                     const std::vector<int64_t>& yhat, const std::string& yname,
                     const std::string& pname, const std::vector<std::string>& ycoll = {},
                     const std::vector<std::string>& pcoll = {}, int step = 0) {
  return Make(name, [&](Writer& w) {
    for (int s = 0; s <= step; ++s) {
      w.Step();
      if (s != step) continue;
      w.Save<int64_t>(yname, y, {}, ycoll);
      w.Save<int64_t>(pname, yhat, {}, pcoll);
    }
  });
}

TEST(Confusion, DeletedTestsQuietOnCorrectPredictions) {
  // Test 1: found through the collections; test 4: through the default tensor names.
  std::mt19937 rng(3);
  std::vector<int64_t> y(100);
  for (auto& v : y) v = static_cast<int64_t>(rng() % 10);
  TrialPtr t1 = LabelsTrial("c1", y, y, "y", "y_hat", {"labels"}, {"preds"});
  EXPECT_EQ(FirstFire(*Builtin("Confusion", t1, {{"labels_collection", "labels"},
                                                  {"predictions_collection", "preds"}})),
            -1);
  std::vector<int64_t> ten(10);
  std::iota(ten.begin(), ten.end(), 0);
  TrialPtr t4 = LabelsTrial("c4", ten, ten, "labels", "predictions");
  EXPECT_EQ(FirstFire(*Builtin("Confusion", t4)), -1);
}

TEST(Confusion, DeletedTestsFireOnAMisprediction) {
  // Tests 2 and 3: y = 0..9, predictions equal except 4 -> 7, tensors foo / bar at step 1.
  std::vector<int64_t> ten(10), off(10);
  std::iota(ten.begin(), ten.end(), 0);
  off = ten;
  off[4] = 7;
  TrialPtr t2 = LabelsTrial("c2", ten, off, "foo", "bar", {}, {}, 1);
  RunResult r = Invoke(*Builtin("Confusion", t2, {{"category_no", "10"}, {"labels", "foo"}, {"predictions", "bar"}}));
  EXPECT_EQ(r.met_steps, (std::vector<int64_t>{1}));
  EXPECT_EQ(r.findings.front().tensor, "bar");
  EXPECT_NE(r.findings.front().message.find("class 7: only 0.5"), std::string::npos)
      << r.findings.front().message;
  r = Invoke(*Builtin("Confusion", t2, {{"category_no", "10"}, {"labels", "foo"}, {"predictions", "bar"},
                                        {"min_diag", "0.0"}, {"max_off_diag", "0.01"}}));
  EXPECT_EQ(r.met_steps, (std::vector<int64_t>{1}));
  EXPECT_NE(r.findings.front().message.find("are class 4"), std::string::npos);
}

// ---- ClassImbalance (deleted test_class_imbalance.py) ---------------------------------------

TEST(ClassImbalance, DeletedTestFiresAtStep3) {
  TrialPtr t = Make("ci", [](Writer& w) {
    for (int s = 0; s < 4; ++s) {
      w.Step();
      if (s < 3) {
        w.Scalar("loss", 1.0);
        continue;
      }
      std::vector<double> v(1000, 0.0);
      for (int i = 990; i < 1000; ++i) v[i] = 1.0;
      w.Save<double>("labels_0", v);
    }
  });
  auto rule = Builtin("ClassImbalance", t, {{"labels_regex", "labels_0"}, {"predictions_regex", "labels_0"}});
  RunResult r = Invoke(*rule, 0, -1, true);
  EXPECT_EQ(r.status.code(), Code::kRuleConditionMet);
  EXPECT_NE(r.status.message().find("at step 3"), std::string::npos);
  EXPECT_EQ(r.findings.front().tensor, "labels_0");
  EXPECT_NE(r.findings.front().message.find("ratio 99.0"), std::string::npos);
}

TEST(ClassImbalance, QuietOnBalancedClassesAndAccumulatesSamples) {
  auto trial = [](const std::string& name, bool mispredict) {
    return Make(name, [=](Writer& w) {
      for (int s = 0; s < 4; ++s) {
        w.Step();
        std::vector<int64_t> y(200), p(200);
        for (int i = 0; i < 200; ++i) {
          y[i] = i % 2;
          p[i] = mispredict ? 0 : y[i];
        }
        w.Save<int64_t>("val_labels", y);
        w.Save<int64_t>("val_predictions", p);
      }
    });
  };
  EXPECT_EQ(FirstFire(*Builtin("ClassImbalance", trial("ciq", false))), -1);
  // Class 1 is always mispredicted; 500 samples are reached at step 2 (3 x 200).
  RunResult r = Invoke(*Builtin("ClassImbalance", trial("cim", true)));
  EXPECT_EQ(r.met_steps.front(), 2);
  EXPECT_EQ(r.findings.front().tensor, "val_predictions");
  EXPECT_NE(r.findings.front().message.find("class 1: 1.0 of its 300 samples"), std::string::npos)
      << r.findings.front().message;
}

TEST(ClassImbalance, ArgmaxOfProbabilities) {
  TrialPtr t = Make("cia", [](Writer& w) {
    w.Step();
    std::vector<int64_t> y(600);
    std::vector<float> p(600 * 2);
    for (int i = 0; i < 600; ++i) {
      y[i] = i % 2;
      p[2 * i] = y[i] == 0 ? 0.9f : 0.2f;
      p[2 * i + 1] = 1 - p[2 * i];
    }
    w.Save<int64_t>("labels", y);
    w.Save<float>("predictions", p, {600, 2});
  });
  EXPECT_EQ(FirstFire(*Builtin("ClassImbalance", t, {{"argmax", "True"}})), -1);
  // Without argmax the flattened probabilities do not line up with the labels: no decision.
  EXPECT_EQ(FirstFire(*Builtin("ClassImbalance", t)), -1);
}

// ---- CheckInputImages -----------------------------------------------------------------------

TrialPtr Images(const std::string& name, float mean) {
  return Make(name, [=](Writer& w) {
    std::mt19937 rng(5);
    std::normal_distribution<float> n(mean, 0.3f);
    for (int s = 0; s < 6; ++s) {
      w.Step();
      std::vector<float> v(100 * 3 * 4 * 4);
      for (float& x : v) x = n(rng);
      w.Save<float>("hybridsequential0_input_0", v, {100, 3, 4, 4});
    }
  });
}

TEST(CheckInputImages, FiresOnUnnormalizedInputsOnceEnoughImagesAreSeen) {
  RunResult r = Invoke(*Builtin("CheckInputImages", Images("cii", 0.5f)));
  EXPECT_EQ(r.met_steps.front(), 4);  // 500 images after 5 steps of 100
  EXPECT_EQ(r.findings.front().tensor, "hybridsequential0_input_0");
  EXPECT_NE(r.findings.front().message.find("channel 0 has mean 0."), std::string::npos)
      << r.findings.front().message;
  EXPECT_NE(r.findings.front().message.find("over 500 images, more than threshold_mean 0.2"),
            std::string::npos);
  EXPECT_EQ(FirstFire(*Builtin("CheckInputImages", Images("cii2", 0.5f), {{"threshold_samples", "100"}})), 0);
}

TEST(CheckInputImages, QuietOnNormalizedInputs) {
  EXPECT_EQ(FirstFire(*Builtin("CheckInputImages", Images("ciq", 0.0f))), -1);
  // Means near 0.5 are within a threshold_mean of 0.6.
  EXPECT_EQ(FirstFire(*Builtin("CheckInputImages", Images("ciq2", 0.5f), {{"threshold_mean", "0.6"}})), -1);
}

// ---- NLPSequenceRatio -----------------------------------------------------------------------

TrialPtr Sequences(const std::string& name, int pad_percent) {
  return Make(name, [=](Writer& w) {
    for (int s = 0; s < 3; ++s) {
      w.Step();
      std::vector<int64_t> v(100, 7);
      for (int i = 0; i < pad_percent; ++i) v[i] = 0;
      for (int i = 0; i < 20; ++i) v[99 - i] = 3;  // 20% unknown-word tokens
      w.Save<int64_t>("embedding0_input_0", v, {4, 25});
    }
  });
}

TEST(NLPSequenceRatio, FiresOnTooMuchPadding) {
  RunResult r = Invoke(*Builtin("NLPSequenceRatio", Sequences("nlp", 60)));
  EXPECT_EQ(r.met_steps.front(), 0);
  EXPECT_EQ(r.findings.front().tensor, "embedding0_input_0");
  EXPECT_NE(r.findings.front().message.find("token 0.0 makes up 60.0%"), std::string::npos)
      << r.findings.front().message;
  EXPECT_EQ(FirstFire(*Builtin("NLPSequenceRatio", Sequences("nlp2", 10),
                               {{"token_values", "3, 0"}, {"token_thresholds_percent", "15,50"}})),
            0);
}

TEST(NLPSequenceRatio, QuietBelowTheThresholds) {
  EXPECT_EQ(FirstFire(*Builtin("NLPSequenceRatio", Sequences("nlpq", 40))), -1);
  EXPECT_EQ(FirstFire(*Builtin("NLPSequenceRatio", Sequences("nlpq2", 10),
                               {{"token_values", "3,0"}, {"token_thresholds_percent", "25"}})),
            -1);
}

// ---- TreeDepth / FeatureImportanceOverweight ------------------------------------------------

TrialPtr Trees(const std::string& name, int max_node) {
  return Make(name, [=](Writer& w) {
    for (int s = 0; s < 3; ++s) {
      w.Step();
      std::vector<int64_t> nodes;
      for (int i = 0; i <= std::min(max_node, 6 + 20 * s); ++i) nodes.push_back(i);
      w.Save<int64_t>("trees/Node", nodes, {}, {"trees"});
    }
  });
}

TEST(TreeDepth, FiresOnDeepTrees) {
  // Largest node ids 6, 26, 40 -> depths floor(log2): 2, 4, 5.
  RunResult r = Invoke(*Builtin("TreeDepth", Trees("td", 40)));
  EXPECT_EQ(r.met_steps, (std::vector<int64_t>{2}));
  EXPECT_EQ(r.findings.front().tensor, "trees/Node");
  EXPECT_EQ(FirstFire(*Builtin("TreeDepth", Trees("td2", 40), {{"depth", "3"}})), 1);
}

TEST(TreeDepth, QuietOnShallowTrees) {
  EXPECT_EQ(FirstFire(*Builtin("TreeDepth", Trees("tdq", 30))), -1);  // floor(log2(30)) = 4
}

TrialPtr Importance(const std::string& name, const std::vector<double>& w8) {
  return Make(name, [&](Writer& w) {
    for (int s = 0; s < 2; ++s) {
      w.Step();
      for (size_t i = 0; i < w8.size(); ++i) {
        w.Scalar("feature_importance/weight/f" + std::to_string(i), w8[i], {"feature_importance"});
        w.Scalar("feature_importance/gain/f" + std::to_string(i), 1.0 / w8.size(), {"feature_importance"});
      }
    }
  });
}

TEST(FeatureImportanceOverweight, FiresWhenFewFeaturesDominate) {
  RunResult r = Invoke(*Builtin("FeatureImportanceOverweight",
                                Importance("fi", {0.5, 0.3, 0.1, 0.05, 0.03, 0.02})));
  EXPECT_EQ(r.met_steps, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(r.findings.front().tensor, "feature_importance/weight/f0");
  EXPECT_NE(r.findings.front().message.find(
                "3 most important features (feature_importance/weight/f0, "
                "feature_importance/weight/f1, feature_importance/weight/f2) hold 0.9"),
            std::string::npos)
      << r.findings.front().message;
}

TEST(FeatureImportanceOverweight, QuietOnSpreadImportanceOrTooFewFeatures) {
  TrialPtr even = Importance("fiq", {1, 1, 1, 1, 1, 1});
  EXPECT_EQ(FirstFire(*Builtin("FeatureImportanceOverweight", even)), -1);
  EXPECT_EQ(FirstFire(*Builtin("FeatureImportanceOverweight", even, {{"nfeatures", "5"}})), 0);
  EXPECT_EQ(FirstFire(*Builtin("FeatureImportanceOverweight", Importance("fi3", {0.9, 0.05, 0.05}))), -1);
}

// ---- StalledTrainingRule --------------------------------------------------------------------

struct FakeClock {
  int64_t now = 0;
  int64_t step_ms;
  Clock fn() {
    return [this] { return now += step_ms; };
  }
};

TEST(StalledTrainingRule, FiresWhileWaitingForAStalledJob) {
  std::string dir = TempDir("stall");
  Writer w(dir);
  for (int s = 0; s < 3; ++s) {
    w.Step();
    w.Scalar("loss", s);
  }
  w.Step();
  w.Flush();
  TrialPtr t = Open(dir);
  auto rule = Builtin("StalledTrainingRule", t, {{"threshold", "60"}, {"stop_training_on_fire", "True"}});
  FakeClock clock{0, 20000};  // every look at the clock: 20 s later
  InvokeOptions o;
  o.clock = clock.fn();
  o.wait_slice_ms = 1;
  RunResult r = Invoke(*rule, 0, -1, true, o);
  EXPECT_EQ(r.status.code(), Code::kRuleConditionMet);
  EXPECT_NE(r.status.message().find("at step 3"), std::string::npos) << r.status.message();
  ASSERT_EQ(r.findings.size(), 1u);
  EXPECT_EQ(r.findings[0].tensor, "");
  EXPECT_NE(r.findings[0].message.find("last step seen: 2"), std::string::npos) << r.findings[0].message;
  EXPECT_TRUE(rule->stop_training());
  EXPECT_NE(trial::testing::ReadFile(dir + "/" + io::kStopTrainingFile).find("StalledTrainingRule"),
            std::string::npos);
  w.Close();
}

TEST(StalledTrainingRule, QuietWhileTheJobWritesAndOnceItEnded) {
  std::string dir = TempDir("busy");
  Writer w(dir);
  w.Step();
  w.Scalar("loss", 0);
  w.Step();
  w.Flush();
  TrialPtr t = Open(dir);
  auto rule = Builtin("StalledTrainingRule", t, {{"threshold", "60"}});
  FakeClock clock{0, 1000};  // 1 s per look: never 60 s without data
  std::mutex mu;
  std::condition_variable cv;
  int64_t waiting_for = -1;
  bool stop = false;
  std::thread writer([&] {
    for (int64_t s = 1; s < 5; ++s) {
      {
        std::unique_lock<std::mutex> lock(mu);
        cv.wait(lock, [&] { return waiting_for >= s || stop; });
        if (stop) break;
      }
      w.Scalar("loss", s);
      if (s < 4) {
        w.Step();
      } else {
        w.Close();
      }
    }
  });
  InvokeOptions o;
  o.clock = clock.fn();
  o.wait_slice_ms = 5;
  o.on_progress = [&](const Rule*, int64_t step, Outcome out) {
    if (out == Outcome::kWaiting) {
      std::lock_guard<std::mutex> lock(mu);
      waiting_for = std::max(waiting_for, step);
      cv.notify_all();
    }
    return 0;
  };
  RunResult r = Invoke(*rule, 0, -1, true, o);
  {
    std::lock_guard<std::mutex> lock(mu);
    stop = true;
    cv.notify_all();
  }
  writer.join();
  EXPECT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_TRUE(r.findings.empty());
  EXPECT_EQ(rule->state().end, EndReason::kNoMoreData);
  EXPECT_EQ(rule->state().evaluated, 5);
}

}  // namespace
}  // namespace smd::rules
