// Rules (BEHAVIOR.md §9): a Rule is evaluated step after step on a base trial (and optionally
// other trials); the invoker waits for each step of a live job, skips steps the job will never
// have, turns automatic refresh off while a rule looks at a step, and reports each met condition
// as findings (rule, step, tensor, message) to callbacks, a message file and a stop signal.
//
// Thread safety: a Rule is used by one thread at a time (InvokeRules included). Rules sharing a
// trial must be invoked by one InvokeRules call (or one after the other): a rule's evaluation
// switches the shared trial's automatic refresh off and back on.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "impl/core/status.h"
#include "impl/trial/trial.h"

namespace smd::rules {

using trial::Trial;
using TrialPtr = std::shared_ptr<Trial>;

// One reason a rule's condition was met at a step.
struct Finding {
  std::string rule;
  int64_t step = -1;   // global step
  size_t trial = 0;    // 0: the base trial; i >= 1: other trial i - 1
  std::string tensor;  // the tensor that triggered it; empty when no single tensor did
  std::string message;
  // "SMDebugRule:<rule> fired. step <s>, tensor '<t>': <message>" (smdebug's SNS text, local).
  std::string line;
};

// How one step ended for one rule, as progress callbacks see it.
enum class Outcome : int { kNotMet = 0, kConditionMet = 1, kSkipped = 2, kWaiting = 3 };

// Why the last InvokeRules call stopped evaluating a rule.
enum class EndReason : int {
  kNone = 0,          // not invoked yet
  kEndStep = 1,       // reached end_step
  kNoMoreData = 2,    // the job ended: no step at or after the next one
  kEndOfRule = 3,     // the rule said it needs no more steps
  kConditionMet = 4,  // the condition was met and raised, or stop_at_first_condition
  kError = 5,         // the rule failed: the invocation's error is its own (or its trial's)
  kStopped = 6,       // stopped unfinished: another rule failed or raised its condition, a
                      // callback cancelled, or a wait for a running job timed out
};

// Milliseconds on a monotonic clock (tests inject a fake one).
using Clock = std::function<int64_t()>;
int64_t SteadyNowMs();

class Invoker;
class RuleContext;

// What InvokeRules keeps per rule across calls.
struct RuleState {
  std::vector<Finding> findings;  // collected findings, oldest first
  int64_t evaluated = 0;          // steps evaluated (condition met or not)
  int64_t skipped = 0;            // steps skipped (unavailable step or tensor)
  int64_t met = 0;                // steps at which the condition was met
  int64_t last_step = -1;         // last step evaluated or skipped
  EndReason end = EndReason::kNone;
  // The step at which the rule failed (end == kError), or -1. The error itself is what the
  // invocation returned: errors are per call, never kept in the rule.
  int64_t failed_step = -1;
};

class Rule {
 public:
  // trials[0] is the base trial; the others follow. Errors are checked by CheckTrials().
  Rule(std::string name, std::vector<TrialPtr> trials);
  virtual ~Rule();
  Rule(const Rule&) = delete;
  Rule& operator=(const Rule&) = delete;

  const std::string& name() const { return name_; }
  const std::vector<TrialPtr>& trials() const { return trials_; }
  Trial& base() const { return *trials_[0]; }

  // smdebug's set_required_tensors: declare tensors through ctx.Require(); the invoker waits
  // for their steps and reads their values before InvokeAtStep. Default: none.
  virtual Status SetRequiredTensors(RuleContext& ctx, int64_t step);
  // smdebug's invoke_at_step: true when the condition is met at global step `step`; explain it
  // with ctx.Report(). Errors TensorUnavailableForStep, StepUnavailable and TensorUnavailable
  // make the invoker skip the step.
  virtual Result<bool> InvokeAtStep(RuleContext& ctx, int64_t step) = 0;
  // Called while the invoker waits for `next_step` of a live job (at least once per wait
  // slice). Time-based rules fire here. Default: false.
  virtual Result<bool> OnWait(RuleContext& ctx, int64_t next_step);

  // Write the stop-training signal when this rule's condition is met (smdebug's StopTraining
  // action, or a rule parameter), whatever the invoke options say.
  bool stop_training() const { return stop_training_; }
  void set_stop_training(bool on) { stop_training_ = on; }

  RuleState& state() { return state_; }
  const RuleState& state() const { return state_; }

 private:
  std::string name_;
  std::vector<TrialPtr> trials_;
  bool stop_training_ = false;
  RuleState state_;
};

// What a rule sees while it evaluates a step. Valid only during the call it is passed to.
class RuleContext {
 public:
  const std::string& rule_name() const { return rule_->name(); }
  int64_t step() const { return step_; }
  size_t trial_count() const { return rule_->trials().size(); }
  Trial& trial(size_t i) const { return *rule_->trials()[i]; }
  const TrialPtr& trial_ptr(size_t i) const { return rule_->trials()[i]; }
  Trial& base() const { return rule_->base(); }
  int64_t NowMs() const { return clock_(); }

  // Adds a finding about `tensor` (of trial `trial`), delivered if the rule answers "met".
  void Report(std::string tensor, std::string message, size_t trial = 0);
  // smdebug's RequiredTensors.add: `name` is a tensor name (kTensorUnavailable if trial `trial`
  // has none such) or, with `regex`, a pattern (search semantics; matching nothing is fine).
  // Only from SetRequiredTensors. Errors: kInvalidArgument (bad trial index, bad regex, called
  // outside SetRequiredTensors), kTensorUnavailable.
  Status Require(size_t trial, const std::string& name, bool regex, std::vector<int64_t> steps);
  // The rule needs no more steps: the invoker stops evaluating it after this one.
  void EndRule() { end_rule_ = true; }
  // Waits until trial `trial` has `step` the way the invoker waits for the base trial (in
  // slices, cancellable through the progress callback; refresh on during the wait).
  // Errors: those of Trial::WaitForSteps, kCancelled.
  Status WaitForStep(size_t trial, int64_t step);

 private:
  friend class Invoker;
  struct Required {
    size_t trial;
    uint32_t id;
    std::vector<int64_t> steps;
  };
  RuleContext(Rule* rule, int64_t step, const Clock& clock, Invoker* invoker)
      : rule_(rule), step_(step), clock_(clock), invoker_(invoker) {}

  Rule* rule_;
  int64_t step_;
  const Clock& clock_;
  Invoker* invoker_;
  bool requiring_ = false;
  bool end_rule_ = false;
  std::vector<Required> required_;
  std::vector<std::pair<size_t, std::pair<std::string, std::string>>> reports_;
};

struct InvokeOptions {
  // Called for every finding of a met condition, in order; non-zero cancels (kCancelled).
  std::function<int(const Rule&, const Finding&)> on_finding;
  // Called after each step of each rule (kNotMet, kConditionMet, kSkipped: once per run of steps
  // the job never had, with its first step, and once per step whose tensors were missing) and
  // with rule == nullptr and kWaiting once per wait slice while waiting for a step of a live
  // job. Non-zero cancels (kCancelled).
  std::function<int(const Rule*, int64_t step, Outcome)> on_progress;
  // Write the stop-training signal into the base trial's folder when a condition is met.
  bool stop_training = false;
  // Stop evaluating a rule once its condition was met (SageMaker ends a rule job there).
  bool stop_at_first_condition = false;
  // Keep findings in the rule's state (RuleState::findings).
  bool collect_findings = true;
  // Append each finding's line to this file ("" = none).
  std::string message_file;
  // Longest wait for one step of a live job, in ms; -1: as long as it takes; 0: no wait. A
  // timeout fails with kStepNotYetAvailable.
  int64_t wait_timeout_ms = -1;
  // How often waits wake up to call on_progress(kWaiting) and Rule::OnWait.
  int64_t wait_slice_ms = 1000;
  // The clock rules read (ctx.NowMs()); default SteadyNowMs.
  Clock clock;
};

// smdebug's invoke_rule for several rules that share one base trial (BEHAVIOR.md §9.3): for each
// global step start <= s < end (end < 0: open-ended), wait for s on the base trial, then evaluate
// every rule still running at s. Steps the trial will never have are skipped; NoMoreData ends the
// loop normally (Status OK, EndReason kNoMoreData: smdebug raises it instead). When a rule's
// condition is met its findings go to the callbacks, the message file and (if asked) the stop
// signal; with raise_eval_cond the call then fails with kRuleConditionMet naming the rule and
// step, otherwise it goes on. Errors: kInvalidArgument (no rules, rules with different base
// trials), kRuleConditionMet, kCancelled, kStepNotYetAvailable (wait timeout), and any other
// error of a rule or of reading the trials.
Status InvokeRules(const std::vector<Rule*>& rules, int64_t start_step, int64_t end_step,
                   bool raise_eval_cond, const InvokeOptions& options);

// The stop-training signal: a small JSON file in the trial folder that the hook's
// StopRequested() looks for. Writes (replaces) it with the finding.
Status WriteStopSignal(const Trial& trial, const Finding& finding);

// "Evaluation of the rule <rule> at step <step> resulted in the condition being met".
Status RuleConditionMetError(const std::string& rule, int64_t step, const std::string& detail);

// Whether a rule failing with this code skips the step instead of ending the invocation
// (smdebug's TensorUnavailableForStep, TensorUnavailable, StepUnavailable): the data is absent.
bool SkipsStep(Code c);

}  // namespace smd::rules
