// The rule invoker (BEHAVIOR.md §9): step loop, skipped steps, NoMoreData, raise_eval_cond,
// cancellation, no_refresh, required tensors, live jobs, actions (stop signal, message file).
#include <sys/stat.h>

#include <atomic>
#include <condition_variable>
#include <fstream>
#include <mutex>
#include <optional>
#include <thread>

#include "gtest/gtest.h"
#include "impl/format/layout.h"
#include "impl/rules/rule.h"
#include "tests/impl/rules/rules_test_util.h"

namespace smd::rules {
namespace {

using testing::Invoke;
using testing::Open;
using testing::RunResult;
using testing::TempDir;
using testing::Writer;

// A rule made of lambdas, recording the steps it was evaluated at.
class LambdaRule : public Rule {
 public:
  using Fn = std::function<Result<bool>(RuleContext&, int64_t)>;
  LambdaRule(std::vector<TrialPtr> trials, Fn fn, Fn required = nullptr)
      : Rule("LambdaRule", std::move(trials)), fn_(std::move(fn)), req_(std::move(required)) {}
  Status SetRequiredTensors(RuleContext& ctx, int64_t step) override {
    if (!req_) return Status::Ok();
    auto r = req_(ctx, step);
    return r.ok() ? Status::Ok() : r.status();
  }
  Result<bool> InvokeAtStep(RuleContext& ctx, int64_t step) override {
    seen.push_back(step);
    return fn_(ctx, step);
  }
  std::vector<int64_t> seen;

 private:
  Fn fn_, req_;
};

// Steps 0, 3, 6, 9 (save_interval 3 over 10 steps), tensor "loss" = step, ended.
std::string EveryThird(const std::string& name = "t") {
  std::string dir = TempDir(name);
  Writer w(dir, [](hook::HookOptions& o) {
    hook::SaveConfigMode m;
    m.save_interval = 3;
    o.save_config.SetAll(m);
  });
  for (int s = 0; s < 10; ++s) {
    w.Step();
    w.Scalar("loss", s);
  }
  w.Close();
  return dir;
}

TEST(Invoker, SkipsUnsavedStepsAndEndsWithNoMoreData) {
  TrialPtr t = Open(EveryThird());
  LambdaRule r({t}, [](RuleContext&, int64_t) { return false; });
  RunResult run = Invoke(r);
  ASSERT_TRUE(run.status.ok()) << run.status.message();
  EXPECT_EQ(r.seen, (std::vector<int64_t>{0, 3, 6, 9}));
  EXPECT_EQ(r.state().evaluated, 4);
  EXPECT_EQ(r.state().skipped, 6);  // 1, 2, 4, 5, 7, 8
  EXPECT_EQ(r.state().end, EndReason::kNoMoreData);
  EXPECT_EQ(r.state().last_step, 9);
}

TEST(Invoker, EndStepIsExclusiveAndStartStepIsHonored) {
  TrialPtr t = Open(EveryThird());
  LambdaRule r({t}, [](RuleContext&, int64_t) { return false; });
  RunResult run = Invoke(r, 3, 9);
  ASSERT_TRUE(run.status.ok());
  EXPECT_EQ(r.seen, (std::vector<int64_t>{3, 6}));
  EXPECT_EQ(r.state().end, EndReason::kEndStep);
  EXPECT_EQ(r.state().last_step, 8);
  // A bounded range past the end of the job also ends normally.
  LambdaRule r2({t}, [](RuleContext&, int64_t) { return false; });
  ASSERT_TRUE(Invoke(r2, 5, 100).status.ok());
  EXPECT_EQ(r2.seen, (std::vector<int64_t>{6, 9}));
  EXPECT_EQ(r2.state().end, EndReason::kNoMoreData);
}

TEST(Invoker, RaiseEvalCondBothWays) {
  TrialPtr t = Open(EveryThird());
  auto fires_at_3_and_9 = [](RuleContext& ctx, int64_t s) -> Result<bool> {
    if (s != 3 && s != 9) return false;
    ctx.Report("loss", "step " + std::to_string(s));
    return true;
  };
  LambdaRule quiet({t}, fires_at_3_and_9);
  RunResult run = Invoke(quiet, 0, -1, false);
  ASSERT_TRUE(run.status.ok());
  EXPECT_EQ(run.met_steps, (std::vector<int64_t>{3, 9}));
  EXPECT_EQ(quiet.state().met, 2);
  ASSERT_EQ(quiet.state().findings.size(), 2u);
  EXPECT_EQ(quiet.state().findings[0].tensor, "loss");
  EXPECT_EQ(quiet.state().findings[0].line,
            "SMDebugRule:LambdaRule fired. step 3, tensor 'loss': step 3");

  LambdaRule loud({t}, fires_at_3_and_9);
  run = Invoke(loud, 0, -1, true);
  EXPECT_EQ(run.status.code(), Code::kRuleConditionMet);
  EXPECT_NE(run.status.message().find(
                "Evaluation of the rule LambdaRule at step 3 resulted in the condition being met"),
            std::string::npos)
      << run.status.message();
  EXPECT_EQ(loud.seen, (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(loud.state().end, EndReason::kConditionMet);
  // Invoked again from the next step, the same object fires at 9 (smdebug's test pattern).
  run = Invoke(loud, 4, -1, true);
  EXPECT_EQ(run.status.code(), Code::kRuleConditionMet);
  EXPECT_NE(run.status.message().find("at step 9"), std::string::npos);
}

TEST(Invoker, FindingWithoutReportGetsAGenericMessage) {
  TrialPtr t = Open(EveryThird());
  LambdaRule r({t}, [](RuleContext&, int64_t s) -> Result<bool> { return s == 6; });
  RunResult run = Invoke(r);
  ASSERT_EQ(run.findings.size(), 1u);
  EXPECT_EQ(run.findings[0].step, 6);
  EXPECT_EQ(run.findings[0].tensor, "");
  EXPECT_EQ(run.findings[0].line, "SMDebugRule:LambdaRule fired. step 6: the rule's condition was met");
}

TEST(Invoker, CallbacksReturningNonZeroCancel) {
  TrialPtr t = Open(EveryThird());
  LambdaRule r({t}, [](RuleContext&, int64_t s) -> Result<bool> { return s == 3; });
  InvokeOptions o;
  o.on_finding = [](const Rule&, const Finding&) { return 7; };
  RunResult run = Invoke(r, 0, -1, false, o);
  EXPECT_EQ(run.status.code(), Code::kCancelled);
  EXPECT_NE(run.status.message().find("returned 7"), std::string::npos);
  EXPECT_EQ(r.seen, (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(r.state().end, EndReason::kStopped);  // a cancellation is not the rule's failure
  EXPECT_EQ(r.state().failed_step, -1);

  LambdaRule r2({t}, [](RuleContext&, int64_t) { return false; });
  InvokeOptions o2;
  o2.on_progress = [](const Rule*, int64_t step, Outcome) { return step >= 6 ? 1 : 0; };
  run = Invoke(r2, 0, -1, false, o2);
  EXPECT_EQ(run.status.code(), Code::kCancelled);
  EXPECT_EQ(r2.seen, (std::vector<int64_t>{0, 3, 6}));
}

TEST(Invoker, ProgressReportsEachStepAndSkippedRunsOnce) {
  TrialPtr t = Open(EveryThird());
  LambdaRule r({t}, [](RuleContext&, int64_t s) -> Result<bool> { return s == 6; });
  std::vector<std::pair<int64_t, Outcome>> seen;
  InvokeOptions o;
  o.on_progress = [&](const Rule* rule, int64_t step, Outcome out) {
    EXPECT_EQ(rule, &r);
    seen.emplace_back(step, out);
    return 0;
  };
  ASSERT_TRUE(Invoke(r, 0, -1, false, o).status.ok());
  std::vector<std::pair<int64_t, Outcome>> want = {
      {0, Outcome::kNotMet}, {1, Outcome::kSkipped},      {3, Outcome::kNotMet},
      {4, Outcome::kSkipped}, {6, Outcome::kConditionMet}, {7, Outcome::kSkipped},
      {9, Outcome::kNotMet}};
  EXPECT_EQ(seen, want);
}

TEST(Invoker, ErrorsThatSkipAStepAndErrorsThatEndTheLoop) {
  TrialPtr t = Open(EveryThird());
  LambdaRule r({t}, [](RuleContext&, int64_t s) -> Result<bool> {
    if (s == 3) return trial::TensorUnavailableForStepError("x", s, Mode::kGlobal);
    if (s == 6) return trial::TensorUnavailableError("y");
    return false;
  });
  RunResult run = Invoke(r);
  ASSERT_TRUE(run.status.ok()) << run.status.message();
  EXPECT_EQ(r.seen, (std::vector<int64_t>{0, 3, 6, 9}));
  EXPECT_EQ(r.state().evaluated, 2);
  EXPECT_EQ(r.state().skipped, 8);

  LambdaRule bad({t}, [](RuleContext&, int64_t s) -> Result<bool> {
    if (s == 3) return Status(Code::kCorrupt, "broken");
    return false;
  });
  run = Invoke(bad);
  EXPECT_EQ(run.status.code(), Code::kCorrupt);
  EXPECT_NE(run.status.message().find("rule LambdaRule at step 3: broken"), std::string::npos);
  EXPECT_EQ(bad.state().end, EndReason::kError);
}

TEST(Invoker, RefreshIsOffWhileARuleEvaluatesAndRestoredAfterwards) {
  TrialPtr t = Open(EveryThird());
  TrialPtr other = Open(EveryThird("other"));
  std::vector<bool> during;
  LambdaRule r({t, other}, [&](RuleContext& ctx, int64_t s) -> Result<bool> {
    during.push_back(ctx.trial(0).auto_refresh());
    during.push_back(ctx.trial(1).auto_refresh());
    if (s == 6) return Status(Code::kInternal, "fail");
    return false;
  });
  std::optional<Trial::RefreshOverride> outer;
  outer.emplace(other.get(), false);
  RunResult run = Invoke(r);
  EXPECT_EQ(run.status.code(), Code::kInternal);
  for (bool on : during) EXPECT_FALSE(on);
  EXPECT_EQ(during.size(), 6u);
  // Restored even though the rule failed (smdebug leaves it off): the caller's own scope stays.
  EXPECT_TRUE(t->auto_refresh());
  EXPECT_FALSE(other->auto_refresh());
  outer.reset();
  EXPECT_TRUE(other->auto_refresh());
  EXPECT_EQ(r.state().end, EndReason::kError);
  EXPECT_EQ(r.state().failed_step, 6);
}

TEST(Invoker, RefreshIsOffOnlyOnTheInvokingThread) {
  TrialPtr t = Open(EveryThird());
  bool elsewhere = false, here = true;
  LambdaRule r({t}, [&](RuleContext& ctx, int64_t) -> Result<bool> {
    here = ctx.trial(0).auto_refresh();
    std::thread other([&] { elsewhere = ctx.trial(0).auto_refresh(); });
    other.join();
    return false;
  });
  RunResult run = Invoke(r);
  EXPECT_TRUE(run.status.ok()) << run.status.message();
  EXPECT_FALSE(here);
  EXPECT_TRUE(elsewhere);  // another thread reading the trial keeps refreshing
}

TEST(Invoker, RequiredTensorsAreFetchedOrSkipTheStep) {
  TrialPtr t = Open(EveryThird());
  uint64_t reads_before = 0;
  LambdaRule r(
      {t},
      [&](RuleContext& ctx, int64_t s) -> Result<bool> {
        // The required value was read before the rule looks at it.
        EXPECT_GT(ctx.base().GetStats().records_read, reads_before);
        return false;
      },
      [&](RuleContext& ctx, int64_t s) -> Result<bool> {
        reads_before = ctx.base().GetStats().records_read;
        if (s == 6) {
          SMD_RETURN_IF_ERROR(ctx.Require(0, "nope", false, {s}));  // TensorUnavailable
        }
        SMD_RETURN_IF_ERROR(ctx.Require(0, "lo.s", true, {s}));     // regex
        SMD_RETURN_IF_ERROR(ctx.Require(0, "nothing-matches", true, {s}));
        if (s == 9) SMD_RETURN_IF_ERROR(ctx.Require(0, "loss", false, {4}));  // step 4 skipped
        return true;
      });
  RunResult run = Invoke(r);
  ASSERT_TRUE(run.status.ok()) << run.status.message();
  EXPECT_EQ(r.seen, (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(r.state().skipped, 8);  // 6 (TensorUnavailable) and 9 (StepUnavailable of step 4)

  LambdaRule wrong({t}, [](RuleContext& ctx, int64_t s) -> Result<bool> {
    SMD_RETURN_IF_ERROR(ctx.Require(0, "loss", false, {s}));
    return false;
  });
  run = Invoke(wrong);
  EXPECT_EQ(run.status.code(), Code::kInvalidArgument);
}

TEST(Invoker, EndOfRuleAndStopAtFirst) {
  TrialPtr t = Open(EveryThird());
  LambdaRule r({t}, [](RuleContext& ctx, int64_t s) -> Result<bool> {
    if (s == 3) ctx.EndRule();
    return false;
  });
  ASSERT_TRUE(Invoke(r).status.ok());
  EXPECT_EQ(r.seen, (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(r.state().end, EndReason::kEndOfRule);

  LambdaRule f({t}, [](RuleContext&, int64_t s) -> Result<bool> { return s >= 3; });
  InvokeOptions o;
  o.stop_at_first_condition = true;
  RunResult run = Invoke(f, 0, -1, false, o);
  ASSERT_TRUE(run.status.ok());
  EXPECT_EQ(run.met_steps, (std::vector<int64_t>{3}));
  EXPECT_EQ(f.state().end, EndReason::kConditionMet);
}

TEST(Invoker, SeveralRulesShareOneStepLoop) {
  TrialPtr t = Open(EveryThird());
  LambdaRule a({t}, [](RuleContext&, int64_t s) -> Result<bool> { return s == 3; });
  LambdaRule b({t}, [](RuleContext& ctx, int64_t s) -> Result<bool> {
    if (s == 6) ctx.EndRule();
    return false;
  });
  InvokeOptions o;
  o.stop_at_first_condition = true;
  ASSERT_TRUE(InvokeRules({&a, &b}, 0, -1, false, o).ok());
  EXPECT_EQ(a.seen, (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(b.seen, (std::vector<int64_t>{0, 3, 6}));
  EXPECT_EQ(a.state().end, EndReason::kConditionMet);
  EXPECT_EQ(b.state().end, EndReason::kEndOfRule);

  TrialPtr other = Open(EveryThird("other"));
  LambdaRule c({other}, [](RuleContext&, int64_t) { return false; });
  Status st = InvokeRules({&a, &c}, 0, -1, false, InvokeOptions());
  EXPECT_EQ(st.code(), Code::kInvalidArgument);
  EXPECT_EQ(InvokeRules({}, 0, -1, false, InvokeOptions()).code(), Code::kInvalidArgument);
}

TEST(Invoker, StopSignalAndMessageFile) {
  std::string dir = EveryThird();
  TrialPtr t = Open(dir);
  LambdaRule r({t}, [](RuleContext& ctx, int64_t s) -> Result<bool> {
    if (s != 6) return false;
    ctx.Report("loss", "too \"high\"\nreally");
    ctx.Report("", "second");
    return true;
  });
  InvokeOptions o;
  o.stop_training = true;
  o.message_file = dir + "/../messages.txt";
  std::remove(o.message_file.c_str());
  ASSERT_TRUE(Invoke(r, 0, -1, false, o).status.ok());
  std::string signal = trial::testing::ReadFile(dir + "/" + io::kStopTrainingFile);
  EXPECT_NE(signal.find("\"rule\": \"LambdaRule\""), std::string::npos) << signal;
  EXPECT_NE(signal.find("\"step\": 6"), std::string::npos);
  EXPECT_NE(signal.find("\"tensor\": \"loss\""), std::string::npos);
  EXPECT_NE(signal.find("too \\\"high\\\"\\nreally"), std::string::npos) << signal;
  std::string lines = trial::testing::ReadFile(o.message_file);
  EXPECT_EQ(lines,
            "SMDebugRule:LambdaRule fired. step 6, tensor 'loss': too \"high\" really\n"
            "SMDebugRule:LambdaRule fired. step 6: second\n");
  // A rule's own stop flag works without the option.
  std::remove((dir + "/" + io::kStopTrainingFile).c_str());
  LambdaRule s({t}, [](RuleContext&, int64_t st) -> Result<bool> { return st == 9; });
  s.set_stop_training(true);
  ASSERT_TRUE(Invoke(s).status.ok());
  EXPECT_NE(trial::testing::ReadFile(dir + "/" + io::kStopTrainingFile).find("\"step\": 9"),
            std::string::npos);
}

// A live job: the writer writes step s only once the invoker is waiting for it, so every step
// is waited for.
TEST(Invoker, WaitsForTheStepsOfALiveJob) {
  std::string dir = TempDir("live");
  Writer w(dir);
  w.Step();
  w.Scalar("loss", 0);
  w.Step();  // step 0 complete, collections file written
  w.Flush();
  TrialPtr t = Open(dir);

  std::mutex mu;
  std::condition_variable cv;
  int64_t waiting_for = -1;
  bool stop = false;
  std::thread writer([&] {
    for (int64_t s = 1; s < 6; ++s) {
      {
        std::unique_lock<std::mutex> lock(mu);
        cv.wait(lock, [&] { return waiting_for >= s || stop; });
        if (stop) break;
      }
      w.Scalar("loss", s == 4 ? 100.0 : static_cast<double>(s));
      if (s < 5) {
        w.Step();
      } else {
        w.Close();
      }
    }
  });
  LambdaRule r({t}, [](RuleContext& ctx, int64_t s) -> Result<bool> {
    SMD_ASSIGN_OR_RETURN(uint32_t id, ctx.base().TensorId("loss"));
    SMD_ASSIGN_OR_RETURN(trial::ValuePtr v, ctx.base().TensorValue(id, s, Mode::kGlobal, nullptr));
    const double x = static_cast<const double*>(v->data())[0];
    if (x > 50) ctx.Report("loss", "spike");
    return x > 50;
  });
  InvokeOptions o;
  o.wait_slice_ms = 10;
  int waits = 0;
  o.on_progress = [&](const Rule*, int64_t step, Outcome out) {
    if (out == Outcome::kWaiting) {
      ++waits;
      std::lock_guard<std::mutex> lock(mu);
      waiting_for = std::max(waiting_for, step);
      cv.notify_all();
    }
    return 0;
  };
  RunResult run = Invoke(r, 0, -1, false, o);
  {
    std::lock_guard<std::mutex> lock(mu);
    stop = true;
    cv.notify_all();
  }
  writer.join();
  ASSERT_TRUE(run.status.ok()) << run.status.message();
  EXPECT_EQ(r.seen, (std::vector<int64_t>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(run.met_steps, (std::vector<int64_t>{4}));
  EXPECT_GE(waits, 5);
  EXPECT_EQ(r.state().end, EndReason::kNoMoreData);
}

TEST(Invoker, WaitTimeoutOnALiveJob) {
  std::string dir = TempDir("live");
  Writer w(dir);
  for (int s = 0; s < 3; ++s) {
    w.Step();
    w.Scalar("loss", s);
  }
  w.Step();  // steps 0-2 complete; the job goes on
  w.Flush();
  TrialPtr t = Open(dir);
  LambdaRule r({t}, [](RuleContext&, int64_t) { return false; });
  InvokeOptions o;
  o.wait_timeout_ms = 0;
  RunResult run = Invoke(r, 0, -1, false, o);
  EXPECT_EQ(run.status.code(), Code::kStepNotYetAvailable);
  EXPECT_NE(run.status.message().find("Step 3"), std::string::npos) << run.status.message();
  EXPECT_EQ(r.seen, (std::vector<int64_t>{0, 1, 2}));
  o.wait_timeout_ms = 30;
  auto t0 = std::chrono::steady_clock::now();
  run = Invoke(r, 3, -1, false, o);
  EXPECT_EQ(run.status.code(), Code::kStepNotYetAvailable);
  EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(30));
}

// A rule that waits for another trial which has not reached the step (it is still running)
// stops there alone: the other rules of the invocation run to the base trial's end, and the
// invocation then says which trial stopped it.
TEST(Invoker, ARuleWaitingForAnotherRunningTrialStopsAlone) {
  TrialPtr base = Open(EveryThird());  // ended: steps 0, 3, 6, 9
  std::string live = TempDir("other-live");
  Writer w(live);
  for (int s = 0; s < 4; ++s) {
    w.Step();
    w.Scalar("loss", s);
  }
  w.Step();  // steps 0-3 complete; the job goes on
  w.Flush();
  TrialPtr other = Open(live);
  LambdaRule compare({base, other}, [](RuleContext& ctx, int64_t s) -> Result<bool> {
    SMD_RETURN_IF_ERROR(ctx.WaitForStep(1, s));
    return false;
  });
  LambdaRule fires({base}, [](RuleContext&, int64_t s) -> Result<bool> { return s == 9; });
  InvokeOptions o;
  o.wait_timeout_ms = 0;
  std::vector<int64_t> met;
  o.on_finding = [&](const Rule&, const Finding& f) {
    met.push_back(f.step);
    return 0;
  };
  Status st = InvokeRules({&compare, &fires}, 0, -1, false, o);
  EXPECT_EQ(st.code(), Code::kStepNotYetAvailable) << st.message();
  EXPECT_NE(st.message().find("Step 6"), std::string::npos) << st.message();
  EXPECT_EQ(compare.seen, (std::vector<int64_t>{0, 3, 6}));
  EXPECT_EQ(compare.state().end, EndReason::kStopped);
  EXPECT_EQ(compare.state().last_step, 5);  // step 6 was not evaluated
  EXPECT_EQ(fires.seen, (std::vector<int64_t>{0, 3, 6, 9}));
  EXPECT_EQ(met, (std::vector<int64_t>{9}));
  EXPECT_EQ(fires.state().end, EndReason::kNoMoreData);
  w.Close();
}

// The findings reach the caller even when the message file cannot be written; the rule then
// fails with the file's error.
TEST(Invoker, AFindingIsReportedWhenTheMessageFileCannotBeWritten) {
  std::string dir = EveryThird();
  TrialPtr t = Open(dir);
  LambdaRule r({t}, [](RuleContext& ctx, int64_t s) -> Result<bool> {
    if (s != 3) return false;
    ctx.Report("loss", "spike");
    return true;
  });
  InvokeOptions o;
  o.message_file = dir + "/" + io::kEndOfJobFile + "/messages.txt";  // a file as its folder
  RunResult run = Invoke(r, 0, -1, false, o);
  EXPECT_EQ(run.status.code(), Code::kIO) << run.status.message();
  EXPECT_NE(run.status.message().find("the message file"), std::string::npos) << run.status.message();
  EXPECT_EQ(run.met_steps, (std::vector<int64_t>{3}));
  ASSERT_EQ(run.findings.size(), 1u);
  EXPECT_EQ(run.findings[0].tensor, "loss");
  EXPECT_EQ(r.state().end, EndReason::kError);
}

// A rule that ends itself at the step where stop_at_first stops it keeps "condition met".
TEST(Invoker, ConditionMetIsKeptWhenTheRuleAlsoEndsItself) {
  TrialPtr t = Open(EveryThird());
  LambdaRule r({t}, [](RuleContext& ctx, int64_t s) -> Result<bool> {
    if (s != 3) return false;
    ctx.EndRule();
    return true;
  });
  InvokeOptions o;
  o.stop_at_first_condition = true;
  RunResult run = Invoke(r, 0, -1, false, o);
  ASSERT_TRUE(run.status.ok()) << run.status.message();
  EXPECT_EQ(run.met_steps, (std::vector<int64_t>{3}));
  EXPECT_EQ(r.state().end, EndReason::kConditionMet);
}

// An index file named for step INT64_MAX: the loop evaluates it and ends (step + 1 wrapped, and
// the loop went on forever, counting a negative number of skipped steps), also with a wait
// timeout.
TEST(Invoker, StepInt64MaxEndsTheLoop) {
  std::string dir = TempDir("maxstep");
  trial::testing::TrialBuilder b(dir);
  b.WriteCollections({"worker_0"}, 1);
  b.SimpleStep(0, {"loss"});
  b.SimpleStep(INT64_MAX, {"loss"});
  b.End();
  for (int64_t timeout : {int64_t(-1), int64_t(2000)}) {
    TrialPtr t = Open(dir);
    ASSERT_TRUE(t);
    LambdaRule r({t}, [](RuleContext&, int64_t) { return false; });
    InvokeOptions o;
    o.wait_timeout_ms = timeout;
    int64_t evaluations = 0;
    o.on_progress = [&](const Rule*, int64_t, Outcome out) {
      // A guard, so that the old behaviour fails the test instead of hanging it.
      return out == Outcome::kNotMet && ++evaluations > 10 ? 1 : 0;
    };
    RunResult run = Invoke(r, 0, -1, false, o);
    ASSERT_TRUE(run.status.ok()) << run.status.message();
    EXPECT_EQ(r.seen, (std::vector<int64_t>{0, INT64_MAX}));
    EXPECT_EQ(r.state().evaluated, 2);
    EXPECT_EQ(r.state().skipped, INT64_MAX - 1);
    EXPECT_EQ(r.state().last_step, INT64_MAX);
    EXPECT_EQ(r.state().end, EndReason::kNoMoreData);
  }
}

}  // namespace
}  // namespace smd::rules

namespace smd::rules {
namespace {

// The hook sees the stop-training signal a rule raises in its out_dir; a stale one from an
// earlier run is removed when a hook is created there.
TEST(StopSignal, HookSeesItAndNewHooksDropStaleOnes) {
  std::string dir = TempDir("stop");
  testing::Writer w(dir);
  w.Step();
  w.Scalar("loss", 1);
  w.Step();
  w.Scalar("loss", 2);
  w.Step();
  w.Flush();
  ASSERT_TRUE(w.hook().StopRequested().ok());
  EXPECT_FALSE(w.hook().StopRequested().value());
  TrialPtr t = testing::Open(dir);
  auto rule = testing::Builtin("LossNotDecreasing", t, {{"num_steps", "1"}, {"diff_percent", "100"}});
  InvokeOptions o;
  o.stop_training = true;
  o.wait_timeout_ms = 0;
  auto run = testing::Invoke(*rule, 0, 2, false, o);
  ASSERT_TRUE(run.status.ok()) << run.status.message();
  EXPECT_EQ(run.met_steps, (std::vector<int64_t>{1}));
  EXPECT_TRUE(w.hook().StopRequested().value());
  w.Close();  // no end marker check here: the run was stopped, as a training loop would

  // The folder of a run that did not finish (no training_job_end.ts) reused by a new hook.
  std::string dir2 = TempDir("stale");
  trial::testing::WriteFile(dir2 + "/" + io::kStopTrainingFile, "{}");
  testing::Writer w2(dir2);
  EXPECT_FALSE(w2.hook().StopRequested().value());
  struct stat st;
  EXPECT_NE(::stat((dir2 + "/" + io::kStopTrainingFile).c_str(), &st), 0);
  // A dry run never reports a stop.
  testing::Writer w3(dir, [](hook::HookOptions& opts) { opts.dry_run = true; });
  EXPECT_FALSE(w3.hook().StopRequested().value());
}

}  // namespace
}  // namespace smd::rules
