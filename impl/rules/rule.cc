// The rule invoker (BEHAVIOR.md §9.1-9.3) and the stop-training signal.
#include "impl/rules/rule.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <optional>

#include "impl/core/text.h"
#include "impl/format/layout.h"
#include "impl/storage/open.h"
#include "impl/storage/storage.h"

namespace smd::rules {

int64_t SteadyNowMs() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(steady_clock::now().time_since_epoch()).count();
}

Status RuleConditionMetError(const std::string& rule, int64_t step, const std::string& detail) {
  std::string m = "Evaluation of the rule " + rule + " at step " + std::to_string(step) +
                  " resulted in the condition being met";
  if (!detail.empty()) m += ": " + detail;
  return Status(Code::kRuleConditionMet, std::move(m));
}

// ---------------------------------------------------------------------------------------------
// Rule, RuleContext

Rule::Rule(std::string name, std::vector<TrialPtr> trials)
    : name_(std::move(name)), trials_(std::move(trials)) {}
Rule::~Rule() = default;

Status Rule::SetRequiredTensors(RuleContext&, int64_t) { return Status::Ok(); }
Result<bool> Rule::OnWait(RuleContext&, int64_t) { return false; }

void RuleContext::Report(std::string tensor, std::string message, size_t trial) {
  reports_.emplace_back(trial, std::make_pair(std::move(tensor), std::move(message)));
}

Status RuleContext::Require(size_t trial_index, const std::string& name, bool regex,
                            std::vector<int64_t> steps) {
  if (!requiring_) {
    return InvalidArgument("rule " + rule_name() +
                           ": required tensors can only be declared while the rule declares "
                           "its required tensors");
  }
  if (trial_index >= trial_count()) {
    return InvalidArgument("rule " + rule_name() + ": trial index " + std::to_string(trial_index) +
                           " out of range (the rule has " + std::to_string(trial_count()) +
                           " trial(s))");
  }
  Trial& t = trial(trial_index);
  if (regex) {
    trial::TensorFilter f;
    f.regexes.push_back(name);
    SMD_ASSIGN_OR_RETURN(std::vector<std::string> names, t.TensorNames(f));
    for (const std::string& n : names) {
      SMD_ASSIGN_OR_RETURN(uint32_t id, t.TensorId(n));
      required_.push_back({trial_index, id, steps});
    }
    return Status::Ok();
  }
  SMD_ASSIGN_OR_RETURN(uint32_t id, t.TensorId(name));
  required_.push_back({trial_index, id, std::move(steps)});
  return Status::Ok();
}

// ---------------------------------------------------------------------------------------------
// Invoker

bool SkipsStep(Code c) {
  return c == Code::kTensorUnavailableForStep || c == Code::kStepUnavailable ||
         c == Code::kTensorUnavailable;
}

namespace {

// smdebug's no_refresh while a step is evaluated: on this thread only, so that a rule does not
// stop the refreshes of another thread reading the same trial.
class NoRefresh {
 public:
  explicit NoRefresh(const std::vector<TrialPtr>& trials) {
    scopes_.reserve(trials.size());  // one allocation per step evaluated
    for (const TrialPtr& t : trials) scopes_.emplace_back(t.get(), false);
  }
  NoRefresh(const NoRefresh&) = delete;
  NoRefresh& operator=(const NoRefresh&) = delete;

 private:
  std::vector<Trial::RefreshOverride> scopes_;  // ended in any order (each by its own id)
};

std::string ValidUtf8(const std::string& s) {
  if (IsValidUtf8(s)) return s;
  std::string out;
  for (unsigned char c : s) out.push_back(c < 0x80 ? static_cast<char>(c) : '?');
  return out;
}

std::string FindingLine(const Finding& f) {
  std::string line = "SMDebugRule:" + f.rule + " fired. step " + std::to_string(f.step);
  if (!f.tensor.empty()) line += ", tensor '" + f.tensor + "'";
  if (f.trial > 0) line += " (other trial " + std::to_string(f.trial - 1) + ")";
  line += ": " + f.message;
  for (char& c : line) {
    if (c == '\n' || c == '\r') c = ' ';  // one line per finding
  }
  return line;
}

}  // namespace

class Invoker {
 public:
  Invoker(const std::vector<Rule*>& rules, const InvokeOptions& o, bool raise)
      : all_(rules), opts_(o), raise_(raise) {
    clock_ = opts_.clock ? opts_.clock : Clock(SteadyNowMs);
  }
  ~Invoker() {
    if (message_file_) (void)message_file_->Close();
  }

  Status Run(int64_t start, int64_t end);
  Status Wait(Trial& t, const std::vector<int64_t>& steps, bool main_loop, int64_t step);

 private:
  Status Evaluate(Rule* r, int64_t step);
  Status HandleMet(Rule* r, int64_t step, const RuleContext& ctx);
  Status Fetch(RuleContext& ctx);
  Status Progress(const Rule* r, int64_t step, Outcome o) {
    if (opts_.on_progress) {
      int rc = opts_.on_progress(r, step, o);
      if (rc != 0) {
        return Status(Code::kCancelled,
                      "the progress callback returned " + std::to_string(rc) + " at step " +
                          std::to_string(step));
      }
    }
    return Status::Ok();
  }
  // Ends an active rule for `why`; one already ended keeps its reason (a rule that asks for no
  // more steps at the step its condition stopped it stays "condition met").
  void Deactivate(Rule* r, EndReason why) {
    auto it = std::find(active_.begin(), active_.end(), r);
    if (it == active_.end()) return;
    r->state().end = why;
    active_.erase(it);
  }
  void EndAll(EndReason why) {
    for (Rule* r : active_) r->state().end = why;
    active_.clear();
  }
  // Ends every active rule as stopped, then marks `failed` (those still active among them) as
  // failed at `step` with st, unless st stops them for a reason that is not theirs (a
  // cancellation, or a wait that timed out on a running job).
  void FailAndStop(const std::vector<Rule*>& failed, const Status& st, int64_t step) {
    std::vector<Rule*> was_active = active_;
    EndAll(EndReason::kStopped);
    if (st.ok() || st.code() == Code::kCancelled || st.code() == Code::kStepNotYetAvailable) return;
    for (Rule* r : failed) {
      if (std::find(was_active.begin(), was_active.end(), r) == was_active.end()) continue;
      r->state().end = EndReason::kError;
      r->state().failed_step = step;
    }
  }
  Status AppendMessage(const std::string& line);

  std::vector<Rule*> all_;
  std::vector<Rule*> active_;
  const InvokeOptions& opts_;
  bool raise_;
  Clock clock_;
  std::unique_ptr<io::Storage> message_storage_;  // the message file's folder
  std::unique_ptr<io::AppendFile> message_file_;  // opened at the first message
  std::optional<std::vector<int64_t>> ended_steps_;  // the base trial's steps once it ended
  Status waiting_;  // the first rule stopped waiting for another trial's step
};

Status Invoker::Run(int64_t start, int64_t end) {
  if (all_.empty()) return InvalidArgument("no rules to invoke");
  for (Rule* r : all_) {
    if (r == nullptr) return InvalidArgument("a rule to invoke is NULL");
    if (&r->base() != &all_[0]->base()) {
      return InvalidArgument("rules invoked together must share their base trial (" + r->name() +
                             " reads " + r->base().path() + ", " + all_[0]->name() + " reads " +
                             all_[0]->base().path() + ")");
    }
  }
  for (Rule* r : all_) {
    r->state().end = EndReason::kNone;
    r->state().failed_step = -1;
  }
  active_ = all_;
  Trial& base = all_[0]->base();
  int64_t step = start < 0 ? 0 : start;
  while (!active_.empty()) {
    if (end >= 0 && step >= end) {
      EndAll(EndReason::kEndStep);
      break;
    }
    Status st = Wait(base, {step}, true, step);
    if (!st.ok()) {
      if (SkipsStep(st.code())) {
        // A step the job will never have. Every step up to the next known one is just as
        // unavailable (BEHAVIOR.md §6.10): skip them all at once.
        int64_t stop = step + 1;
        auto steps = base.Steps(Mode::kGlobal, true);
        if (steps.ok()) {
          auto it = std::upper_bound(steps->begin(), steps->end(), step);
          if (it != steps->end()) stop = *it;
        }
        if (end >= 0) stop = std::min(stop, end);
        std::vector<Rule*> rules = active_;
        for (Rule* r : rules) {
          r->state().skipped += stop - step;
          r->state().last_step = stop - 1;
          Status p = Progress(r, step, Outcome::kSkipped);
          if (!p.ok()) {
            FailAndStop({}, p, step);
            return p;
          }
        }
        step = stop;
        continue;
      }
      if (st.code() == Code::kNoMoreData) {
        EndAll(EndReason::kNoMoreData);
        return waiting_;
      }
      FailAndStop(active_, st, step);  // the trial failed every rule
      return st;
    }
    if (active_.empty()) break;  // every rule ended while waiting (a time-based one fired)
    std::vector<Rule*> rules = active_;
    for (Rule* r : rules) {
      Status e = Evaluate(r, step);
      if (e.code() == Code::kStepNotYetAvailable) {
        // The rule waited for another trial that has not reached this step (it is still
        // running). Only this rule stops there; the others go on, and the invocation says so
        // once they have ended (the base trial's own live edge stops every rule as before).
        Deactivate(r, EndReason::kStopped);
        r->state().last_step = step - 1;  // this step was not evaluated
        if (waiting_.ok()) waiting_ = e;
        continue;
      }
      if (!e.ok()) {
        if (e.code() == Code::kRuleConditionMet) {
          EndAll(EndReason::kStopped);
          r->state().end = EndReason::kConditionMet;
        } else {
          FailAndStop({r}, e, step);
        }
        return e;
      }
    }
    if (step == INT64_MAX) {
      // The largest step a file name can give: no step can follow it (step + 1 would wrap).
      EndAll(EndReason::kNoMoreData);
      break;
    }
    ++step;
  }
  return waiting_;
}

Status Invoker::Wait(Trial& t, const std::vector<int64_t>& steps, bool main_loop, int64_t step) {
  if (main_loop && t.loaded_all_steps()) {
    // The job ended and everything is loaded: no step can appear any more, so answer from the
    // step list (what wait_for_steps would answer, without re-listing the steps every step).
    if (!ended_steps_) {
      SMD_ASSIGN_OR_RETURN(std::vector<int64_t> all, t.Steps(Mode::kGlobal, true));
      ended_steps_ = std::move(all);
    }
    const std::vector<int64_t>& all = *ended_steps_;
    for (int64_t s : steps) {
      if (std::binary_search(all.begin(), all.end(), s)) continue;
      const int64_t last = all.empty() ? -1 : all.back();
      if (s < last) return trial::StepUnavailableError(s, Mode::kGlobal);
      return trial::NoMoreDataError(s, Mode::kGlobal, last);
    }
    return Status::Ok();
  }
  const int64_t timeout = opts_.wait_timeout_ms;
  const int64_t slice = std::max<int64_t>(1, opts_.wait_slice_ms);
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    int64_t this_slice = slice;
    if (timeout >= 0) {
      const int64_t spent = std::chrono::duration_cast<std::chrono::milliseconds>(
                                std::chrono::steady_clock::now() - start)
                                .count();
      this_slice = std::max<int64_t>(0, std::min(slice, timeout - spent));
    }
    Status st = t.WaitForSteps(steps, Mode::kGlobal, this_slice);
    if (st.code() != Code::kStepNotYetAvailable) return st;
    if (timeout >= 0 && std::chrono::steady_clock::now() - start >= std::chrono::milliseconds(timeout)) {
      Status nya = trial::StepNotYetAvailableError(step, Mode::kGlobal);
      return Status(nya.code(), nya.message() + " (the job is still running; waited " +
                                    std::to_string(timeout) + " ms)");
    }
    SMD_RETURN_IF_ERROR(Progress(nullptr, step, Outcome::kWaiting));
    if (!main_loop) continue;
    std::vector<Rule*> rules = active_;
    for (Rule* r : rules) {
      RuleContext ctx(r, step, clock_, this);
      auto fired = r->OnWait(ctx, step);
      if (!fired.ok()) {
        FailAndStop({r}, fired.status(), step);
        return fired.status();
      }
      if (*fired) {
        Status e = HandleMet(r, step, ctx);
        if (!e.ok()) {
          if (e.code() == Code::kRuleConditionMet) {
            EndAll(EndReason::kStopped);
            r->state().end = EndReason::kConditionMet;
          } else {
            FailAndStop({r}, e, step);
          }
          return e;
        }
      }
      if (ctx.end_rule_) Deactivate(r, EndReason::kEndOfRule);
    }
    if (active_.empty()) return Status::Ok();
  }
}

Status Invoker::Fetch(RuleContext& ctx) {
  // smdebug's RequiredTensors.fetch(): per trial, wait for the union of the steps, then read
  // every (tensor, step) value (kept in the trial's value cache for the rule).
  for (size_t ti = 0; ti < ctx.trial_count(); ++ti) {
    std::vector<int64_t> steps;
    for (const auto& req : ctx.required_) {
      if (req.trial == ti) steps.insert(steps.end(), req.steps.begin(), req.steps.end());
    }
    if (steps.empty()) continue;
    std::sort(steps.begin(), steps.end());
    steps.erase(std::unique(steps.begin(), steps.end()), steps.end());
    Trial& t = ctx.trial(ti);
    SMD_RETURN_IF_ERROR(Wait(t, steps, false, ctx.step()));
    for (const auto& req : ctx.required_) {
      if (req.trial != ti) continue;
      for (int64_t s : req.steps) {
        auto v = t.TensorValue(req.id, s, Mode::kGlobal, nullptr);
        if (!v.ok()) return v.status();
      }
    }
  }
  return Status::Ok();
}

Status Invoker::Evaluate(Rule* r, int64_t step) {
  RuleContext ctx(r, step, clock_, this);
  Result<bool> res = false;
  {
    NoRefresh guard(r->trials());
    ctx.requiring_ = true;
    Status st = r->SetRequiredTensors(ctx, step);
    ctx.requiring_ = false;
    if (st.ok()) st = Fetch(ctx);
    if (st.ok()) {
      res = r->InvokeAtStep(ctx, step);
    } else {
      res = st;
    }
  }
  RuleState& s = r->state();
  s.last_step = step;
  if (!res.ok()) {
    if (SkipsStep(res.status().code())) {
      ++s.skipped;
      return Progress(r, step, Outcome::kSkipped);
    }
    if (res.status().code() == Code::kNoMoreData) {
      Deactivate(r, EndReason::kNoMoreData);
      return Status::Ok();
    }
    Status st = res.status();
    return Status(st.code(), "rule " + r->name() + " at step " + std::to_string(step) + ": " +
                                 st.message());
  }
  ++s.evaluated;
  if (*res) {
    SMD_RETURN_IF_ERROR(HandleMet(r, step, ctx));
  } else {
    SMD_RETURN_IF_ERROR(Progress(r, step, Outcome::kNotMet));
  }
  if (ctx.end_rule_) Deactivate(r, EndReason::kEndOfRule);
  return Status::Ok();
}

Status Invoker::AppendMessage(const std::string& line) {
  if (opts_.message_file.empty()) return Status::Ok();
  if (!message_file_) {
    // Through a storage of its folder, like every file smd writes.
    auto [dir, name] = io::SplitFilePath(opts_.message_file);
    auto opened = io::OpenStorage(dir);
    if (!opened.ok()) return opened.status().WithContext("the message file '" + opts_.message_file + "'");
    message_storage_ = std::move(opened).value();
    auto file = message_storage_->OpenForAppend(name);
    if (!file.ok()) return file.status().WithContext("the message file");
    message_file_ = std::move(file).value();
  }
  Status st = message_file_->Append(line + "\n");
  if (!st.ok()) return st.WithContext("the message file");
  return Status::Ok();
}

Status Invoker::HandleMet(Rule* r, int64_t step, const RuleContext& ctx) {
  RuleState& s = r->state();
  ++s.met;
  std::vector<Finding> found;
  for (const auto& rep : ctx.reports_) {
    Finding f;
    f.rule = r->name();
    f.step = step;
    f.trial = rep.first;
    f.tensor = ValidUtf8(rep.second.first);
    f.message = ValidUtf8(rep.second.second);
    found.push_back(std::move(f));
  }
  if (found.empty()) {
    Finding f;
    f.rule = r->name();
    f.step = step;
    f.message = "the rule's condition was met";
    found.push_back(std::move(f));
  }
  for (Finding& f : found) f.line = FindingLine(f);
  // The findings reach the caller first: a stop signal or message file that cannot be written
  // fails the rule after that, never instead of reporting what it found.
  Status first;
  for (const Finding& f : found) {
    if (opts_.collect_findings) s.findings.push_back(f);
    if (opts_.on_finding && first.ok()) {
      int rc = opts_.on_finding(*r, f);
      if (rc != 0) {
        first = Status(Code::kCancelled, "the finding callback returned " + std::to_string(rc) +
                                             " (rule " + r->name() + ", step " +
                                             std::to_string(step) + ")");
      }
    }
  }
  if (opts_.stop_training || r->stop_training()) {
    Status st = WriteStopSignal(r->base(), found.front());
    if (first.ok()) first = st;
  }
  for (const Finding& f : found) {
    Status st = AppendMessage(f.line);
    if (!st.ok()) {
      if (first.ok()) first = st;
      break;
    }
  }
  SMD_RETURN_IF_ERROR(first);
  SMD_RETURN_IF_ERROR(Progress(r, step, Outcome::kConditionMet));
  if (raise_) {
    const Finding& f = found.front();
    std::string detail = f.tensor.empty() ? f.message : "tensor '" + f.tensor + "': " + f.message;
    if (found.size() > 1) detail += " (and " + std::to_string(found.size() - 1) + " more)";
    return RuleConditionMetError(r->name(), step, detail);
  }
  if (opts_.stop_at_first_condition) Deactivate(r, EndReason::kConditionMet);
  return Status::Ok();
}

Status RuleContext::WaitForStep(size_t trial_index, int64_t step) {
  if (trial_index >= trial_count()) {
    return InvalidArgument("rule " + rule_name() + ": trial index " + std::to_string(trial_index) +
                           " out of range");
  }
  if (invoker_ == nullptr) return trial(trial_index).WaitForSteps({step}, Mode::kGlobal, -1);
  return invoker_->Wait(trial(trial_index), {step}, false, step);
}

Status InvokeRules(const std::vector<Rule*>& rules, int64_t start_step, int64_t end_step,
                   bool raise_eval_cond, const InvokeOptions& options) {
  Invoker inv(rules, options, raise_eval_cond);
  return inv.Run(start_step, end_step);
}

// ---------------------------------------------------------------------------------------------
// Stop signal

Status WriteStopSignal(const Trial& trial, const Finding& finding) {
  io::Storage* storage = trial.storage();
  std::string json = "{\"rule\": ";
  AppendJsonStringUtf8(&json, ValidUtf8(finding.rule));
  json += ", \"step\": " + std::to_string(finding.step) + ", \"tensor\": ";
  AppendJsonStringUtf8(&json, ValidUtf8(finding.tensor));
  json += ", \"message\": ";
  AppendJsonStringUtf8(&json, ValidUtf8(finding.message));
  json += ", \"time\": " + std::to_string(static_cast<long long>(std::time(nullptr))) + "}\n";
  Status st = storage->WriteAtomic(io::kStopTrainingFile, json);
  if (!st.ok()) return st.WithContext("writing the stop-training signal");
  return Status::Ok();
}

}  // namespace smd::rules
