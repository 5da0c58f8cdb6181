// The C glue for rules: custom rules (callbacks), built-in rules, findings, invocation.
#include <algorithm>
#include <cstring>
#include <deque>

#include "capi/src/trial_internal.h"
#include "impl/rules/builtin.h"
#include "impl/rules/rule.h"
#include "smd/rules.h"

using smd::capi::FromStatus;
using smd::capi::MakeError;

struct smd_rule_finding {
  smd::rules::Finding f;
};

struct smd_rule {
  std::unique_ptr<smd::rules::Rule> rule;
  std::vector<std::unique_ptr<smd_trial>> trials;  // handles given to callbacks; [0] the base
  std::deque<smd_rule_finding> findings;           // stable addresses across appends
};

struct smd_rule_context {
  smd::rules::RuleContext* ctx;
  smd_rule* rule;
  smd::Status error;  // set by smd_rule_context_fail*
};

struct smd_rule_invoke_options {
  smd_rule_finding_fn finding_fn = nullptr;
  void* finding_payload = nullptr;
  smd_rule_progress_fn progress_fn = nullptr;
  void* progress_payload = nullptr;
  bool stop_training = false;
  bool stop_at_first = false;
  bool collect = true;
  std::string message_file;
  int64_t timeout_ms = -1;
  int64_t slice_ms = 1000;
};

namespace {

using smd::Code;
using smd::Status;
using smd::rules::Rule;
using smd::rules::RuleContext;
using smd::rules::TrialPtr;

// A rule whose evaluation is a C callback.
class CustomRule : public Rule {
 public:
  CustomRule(std::string name, std::vector<TrialPtr> trials, smd_rule_invoke_fn invoke,
             smd_rule_required_tensors_fn required, void* payload, smd_rule* owner)
      : Rule(std::move(name), std::move(trials)),
        invoke_(invoke),
        required_(required),
        payload_(payload),
        owner_(owner) {}

  Status SetRequiredTensors(RuleContext& ctx, int64_t step) override {
    if (required_ == nullptr) return Status::Ok();
    smd_rule_context c{&ctx, owner_, Status()};
    int rc;
    try {
      rc = required_(&c, step, payload_);
    } catch (...) {
      return smd::Internal("rule " + name() + ": the required-tensors callback threw an exception");
    }
    return rc == 0 ? Status::Ok() : Failure(c, rc, "required-tensors");
  }

  smd::Result<bool> InvokeAtStep(RuleContext& ctx, int64_t step) override {
    smd_rule_context c{&ctx, owner_, Status()};
    bool met = false;
    int rc;
    try {
      rc = invoke_(&c, step, &met, payload_);
    } catch (...) {
      return smd::Internal("rule " + name() + ": the invoke callback threw an exception");
    }
    if (rc != 0) return Failure(c, rc, "invoke");
    return met;
  }

 private:
  Status Failure(const smd_rule_context& c, int rc, const char* which) const {
    if (!c.error.ok()) return c.error;
    return Status(Code::kCancelled, std::string("the ") + which + " callback returned " +
                                        std::to_string(rc));
  }
  smd_rule_invoke_fn invoke_;
  smd_rule_required_tensors_fn required_;
  void* payload_;
  smd_rule* owner_;
};

// Builds the trial list (base first) and the handles callbacks get.
smd_error* CollectTrials(smd_trial* base, smd_trial* const* others, size_t n_others,
                         std::vector<TrialPtr>* trials, smd_rule* owner) {
  SMD_CHECK_ARG(base != nullptr, "base trial is NULL");
  SMD_CHECK_ARG(others != nullptr || n_others == 0, "others is NULL but n_others is not 0");
  trials->push_back(base->trial);
  for (size_t i = 0; i < n_others; ++i) {
    SMD_CHECK_ARG(others[i] != nullptr, "other trial " + std::to_string(i) + " is NULL");
    trials->push_back(others[i]->trial);
  }
  for (const TrialPtr& t : *trials) owner->trials.push_back(std::unique_ptr<smd_trial>(new smd_trial{t}));
  return nullptr;
}

smd_rule* FindOwner(const std::vector<smd_rule*>& rules, const Rule* r) {
  for (smd_rule* s : rules) {
    if (s->rule.get() == r) return s;
  }
  return nullptr;
}

smd_error* Invoke(smd_rule* const* rules, size_t n, int64_t start, int64_t end, bool raise,
                  const smd_rule_invoke_options* options) {
  SMD_CHECK_ARG(rules != nullptr && n > 0, "no rules to invoke");
  std::vector<smd_rule*> owners;
  std::vector<Rule*> impl;
  for (size_t i = 0; i < n; ++i) {
    SMD_CHECK_ARG(rules[i] != nullptr, "rule " + std::to_string(i) + " is NULL");
    for (smd_rule* seen : owners) {
      SMD_CHECK_ARG(seen != rules[i], "rule '" + rules[i]->rule->name() + "' is given twice");
    }
    owners.push_back(rules[i]);
    impl.push_back(rules[i]->rule.get());
  }
  static const smd_rule_invoke_options kDefaults;
  const smd_rule_invoke_options& o = options ? *options : kDefaults;
  smd::rules::InvokeOptions io;
  io.stop_training = o.stop_training;
  io.stop_at_first_condition = o.stop_at_first;
  io.collect_findings = false;  // kept here, as smd_rule_finding objects
  io.message_file = o.message_file;
  io.wait_timeout_ms = o.timeout_ms;
  io.wait_slice_ms = o.slice_ms;
  io.on_finding = [&](const Rule& r, const smd::rules::Finding& f) -> int {
    smd_rule* owner = FindOwner(owners, &r);
    const smd_rule_finding* shown;
    smd_rule_finding temp;
    if (o.collect) {
      owner->findings.push_back(smd_rule_finding{f});
      shown = &owner->findings.back();
    } else {
      temp.f = f;
      shown = &temp;
    }
    return o.finding_fn ? o.finding_fn(owner, shown, o.finding_payload) : 0;
  };
  if (o.progress_fn != nullptr) {
    io.on_progress = [&](const Rule* r, int64_t step, smd::rules::Outcome out) -> int {
      return o.progress_fn(r ? FindOwner(owners, r) : nullptr, step,
                           static_cast<smd_rule_outcome>(out), o.progress_payload);
    };
  }
  return FromStatus(smd::rules::InvokeRules(impl, start, end, raise, io));
}

}  // namespace

extern "C" {

// ---- custom rules -----------------------------------------------------------------------------

smd_error* smd_rule_create(const char* name, smd_trial* base, smd_trial* const* others,
                           size_t n_others, smd_rule_invoke_fn invoke,
                           smd_rule_required_tensors_fn required, void* payload,
                           smd_rule** out) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(name != nullptr && name[0] != '\0', "rule name is NULL or empty");
  SMD_CHECK_ARG(invoke != nullptr, "invoke callback is NULL");
  SMD_CHECK_ARG(out != nullptr, "out is NULL");
  std::unique_ptr<smd_rule> r(new smd_rule());
  std::vector<TrialPtr> trials;
  if (smd_error* e = CollectTrials(base, others, n_others, &trials, r.get())) return e;
  r->rule.reset(new CustomRule(name, std::move(trials), invoke, required, payload, r.get()));
  *out = r.release();
  return nullptr;
  SMD_CAPI_END
}

const char* smd_rule_context_rule_name(const smd_rule_context* ctx) noexcept {
  return ctx ? ctx->ctx->rule_name().c_str() : nullptr;
}

size_t smd_rule_context_trial_count(const smd_rule_context* ctx) noexcept {
  return ctx ? ctx->rule->trials.size() : 0;
}

smd_trial* smd_rule_context_trial(const smd_rule_context* ctx, size_t index) noexcept {
  if (ctx == nullptr || index >= ctx->rule->trials.size()) return nullptr;
  return ctx->rule->trials[index].get();
}

smd_error* smd_rule_context_report(smd_rule_context* ctx, size_t trial_index, const char* tensor,
                                   const char* message) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(ctx != nullptr, "ctx is NULL");
  SMD_CHECK_ARG(message != nullptr, "message is NULL");
  SMD_CHECK_ARG(trial_index < ctx->rule->trials.size(),
                "trial index " + std::to_string(trial_index) + " out of range");
  ctx->ctx->Report(tensor ? tensor : "", message, trial_index);
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_rule_context_require_tensor(smd_rule_context* ctx, size_t trial_index,
                                           const char* name, bool regex, const int64_t* steps,
                                           size_t n_steps) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(ctx != nullptr, "ctx is NULL");
  SMD_CHECK_ARG(name != nullptr, "name is NULL");
  SMD_CHECK_ARG(steps != nullptr || n_steps == 0, "steps is NULL but n_steps is not 0");
  std::vector<int64_t> s(steps, steps + n_steps);
  SMD_RETURN_STATUS(ctx->ctx->Require(trial_index, name, regex, std::move(s)));
  return nullptr;
  SMD_CAPI_END
}

void smd_rule_context_end_rule(smd_rule_context* ctx) noexcept {
  if (ctx != nullptr) ctx->ctx->EndRule();
}

int smd_rule_context_fail(smd_rule_context* ctx, smd_error* err) noexcept {
  if (err == nullptr) return 0;
  smd_rule_context_fail_with(ctx, err->code, err->message.c_str());
  smd_error_free(err);
  return 1;
}

int smd_rule_context_fail_with(smd_rule_context* ctx, smd_code code, const char* message) noexcept {
  if (ctx != nullptr) {
    try {
      // SMD_OK, or a value that is no smd_code, would reach the caller as an error code it cannot
      // name: both are SMD_E_INTERNAL.
      const bool known = code != SMD_OK && smd_code_name(code) != nullptr;
      ctx->error = Status(static_cast<Code>(known ? code : SMD_E_INTERNAL), message ? message : "");
    } catch (...) {
      ctx->error = Status(Code::kOutOfMemory, std::string());
    }
  }
  return 1;
}

bool smd_code_skips_rule_step(smd_code code) noexcept {
  return code != SMD_OK && smd::rules::SkipsStep(static_cast<Code>(code));
}

// ---- built-in rules ---------------------------------------------------------------------------

smd_error* smd_rule_create_builtin(const char* name, smd_trial* base, smd_trial* const* others,
                                   size_t n_others, const char* const* keys,
                                   const char* const* values, size_t n_params,
                                   smd_rule** out) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(name != nullptr, "rule name is NULL");
  SMD_CHECK_ARG(out != nullptr, "out is NULL");
  SMD_CHECK_ARG(n_params == 0 || (keys != nullptr && values != nullptr),
                "keys or values is NULL but n_params is not 0");
  smd::rules::ParamList params;
  for (size_t i = 0; i < n_params; ++i) {
    SMD_CHECK_ARG(keys[i] != nullptr, "parameter name " + std::to_string(i) + " is NULL");
    SMD_CHECK_ARG(values[i] != nullptr,
                  "value of parameter '" + std::string(keys[i]) + "' is NULL");
    params.emplace_back(keys[i], values[i]);
  }
  std::unique_ptr<smd_rule> r(new smd_rule());
  std::vector<TrialPtr> trials;
  if (smd_error* e = CollectTrials(base, others, n_others, &trials, r.get())) return e;
  TrialPtr b = trials[0];
  std::vector<TrialPtr> rest(trials.begin() + 1, trials.end());
  // Trials named by other_trial_N are opened as the base trial was (its S3 settings, collection
  // wait, cache, range): an s3:// trial beside the base one is reached at the same endpoint.
  const smd::trial::TrialOptions open_options = b->options();
  auto rule = smd::rules::CreateBuiltinRule(name, std::move(b), std::move(rest), params, open_options);
  if (!rule.ok()) return FromStatus(rule.status());
  r->rule = std::move(rule).value();
  // Other trials opened from other_trial_N parameters: give callbacks handles on them too.
  for (size_t i = r->trials.size(); i < r->rule->trials().size(); ++i) {
    r->trials.push_back(std::unique_ptr<smd_trial>(new smd_trial{r->rule->trials()[i]}));
  }
  *out = r.release();
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_rule_builtin_names(smd_strarray* out) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(out != nullptr, "out is NULL");
  std::vector<std::string> names;
  for (const auto& r : smd::rules::BuiltinRules()) names.emplace_back(r.name);
  smd::capi::FillStrArray(names, out);
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_rule_builtin_params(const char* name, smd_strarray* out) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(name != nullptr, "rule name is NULL");
  SMD_CHECK_ARG(out != nullptr, "out is NULL");
  const smd::rules::BuiltinRuleInfo* info = smd::rules::FindBuiltinRule(name);
  SMD_CHECK_ARG(info != nullptr, std::string("unknown built-in rule '") + name + "'");
  std::vector<std::string> names;
  for (const auto& p : info->params) names.emplace_back(p.name);
  smd::capi::FillStrArray(names, out);
  return nullptr;
  SMD_CAPI_END
}

namespace {

const smd::rules::ParamSpec* FindBuiltinParam(const char* rule, const char* param) {
  if (rule == nullptr || param == nullptr) return nullptr;
  const smd::rules::BuiltinRuleInfo* info = smd::rules::FindBuiltinRule(rule);
  if (info == nullptr) return nullptr;
  for (const auto& p : info->params) {
    if (std::strcmp(p.name, param) == 0) return &p;
  }
  return nullptr;
}

}  // namespace

const char* smd_rule_builtin_param_default(const char* rule, const char* param) noexcept {
  const smd::rules::ParamSpec* p = FindBuiltinParam(rule, param);
  if (p == nullptr) return nullptr;
  return p->default_value ? p->default_value : "";
}

const char* smd_rule_builtin_param_help(const char* rule, const char* param) noexcept {
  const smd::rules::ParamSpec* p = FindBuiltinParam(rule, param);
  return p ? p->help : nullptr;
}

const char* smd_rule_builtin_summary(const char* name) noexcept {
  if (name == nullptr) return nullptr;
  const smd::rules::BuiltinRuleInfo* info = smd::rules::FindBuiltinRule(name);
  return info ? info->summary : nullptr;
}

// ---- rules ------------------------------------------------------------------------------------

void smd_rule_free(smd_rule* rule) noexcept { delete rule; }

const char* smd_rule_name(const smd_rule* rule) noexcept {
  return rule ? rule->rule->name().c_str() : nullptr;
}

bool smd_rule_stop_training(const smd_rule* rule) noexcept {
  return rule != nullptr && rule->rule->stop_training();
}

smd_error* smd_rule_set_stop_training(smd_rule* rule, bool on) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(rule != nullptr, "rule is NULL");
  rule->rule->set_stop_training(on);
  return nullptr;
  SMD_CAPI_END
}

const char* smd_rule_finding_rule(const smd_rule_finding* f) noexcept {
  return f ? f->f.rule.c_str() : nullptr;
}
int64_t smd_rule_finding_step(const smd_rule_finding* f) noexcept { return f ? f->f.step : -1; }
const char* smd_rule_finding_tensor(const smd_rule_finding* f) noexcept {
  return f ? f->f.tensor.c_str() : nullptr;
}
size_t smd_rule_finding_trial(const smd_rule_finding* f) noexcept { return f ? f->f.trial : 0; }
const char* smd_rule_finding_message(const smd_rule_finding* f) noexcept {
  return f ? f->f.message.c_str() : nullptr;
}
const char* smd_rule_finding_line(const smd_rule_finding* f) noexcept {
  return f ? f->f.line.c_str() : nullptr;
}

size_t smd_rule_findings_count(const smd_rule* rule) noexcept {
  return rule ? rule->findings.size() : 0;
}

const smd_rule_finding* smd_rule_findings_at(const smd_rule* rule, size_t i) noexcept {
  if (rule == nullptr || i >= rule->findings.size()) return nullptr;
  return &rule->findings[i];
}

void smd_rule_findings_clear(smd_rule* rule) noexcept {
  if (rule != nullptr) rule->findings.clear();
}

int64_t smd_rule_steps_evaluated(const smd_rule* rule) noexcept {
  return rule ? rule->rule->state().evaluated : 0;
}
int64_t smd_rule_steps_skipped(const smd_rule* rule) noexcept {
  return rule ? rule->rule->state().skipped : 0;
}
int64_t smd_rule_conditions_met(const smd_rule* rule) noexcept {
  return rule ? rule->rule->state().met : 0;
}
int64_t smd_rule_last_step(const smd_rule* rule) noexcept {
  return rule ? rule->rule->state().last_step : -1;
}
smd_rule_end smd_rule_end_reason(const smd_rule* rule) noexcept {
  return rule ? static_cast<smd_rule_end>(rule->rule->state().end) : SMD_RULE_END_NONE;
}
int64_t smd_rule_failed_step(const smd_rule* rule) noexcept {
  return rule ? rule->rule->state().failed_step : -1;
}

// ---- invocation -------------------------------------------------------------------------------

smd_error* smd_rule_invoke_options_create(smd_rule_invoke_options** out) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(out != nullptr, "out is NULL");
  *out = new smd_rule_invoke_options();
  return nullptr;
  SMD_CAPI_END
}

void smd_rule_invoke_options_free(smd_rule_invoke_options* options) noexcept { delete options; }

smd_error* smd_rule_invoke_options_set_finding_callback(smd_rule_invoke_options* options,
                                                        smd_rule_finding_fn fn,
                                                        void* payload) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(options != nullptr, "options is NULL");
  options->finding_fn = fn;
  options->finding_payload = payload;
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_rule_invoke_options_set_progress_callback(smd_rule_invoke_options* options,
                                                         smd_rule_progress_fn fn,
                                                         void* payload) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(options != nullptr, "options is NULL");
  options->progress_fn = fn;
  options->progress_payload = payload;
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_rule_invoke_options_set_stop_training(smd_rule_invoke_options* options,
                                                     bool on) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(options != nullptr, "options is NULL");
  options->stop_training = on;
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_rule_invoke_options_set_stop_at_first(smd_rule_invoke_options* options,
                                                     bool on) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(options != nullptr, "options is NULL");
  options->stop_at_first = on;
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_rule_invoke_options_set_collect_findings(smd_rule_invoke_options* options,
                                                        bool on) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(options != nullptr, "options is NULL");
  options->collect = on;
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_rule_invoke_options_set_message_file(smd_rule_invoke_options* options,
                                                    const char* path) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(options != nullptr, "options is NULL");
  options->message_file = path ? path : "";
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_rule_invoke_options_set_wait_timeout_ms(smd_rule_invoke_options* options,
                                                       int64_t timeout_ms) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(options != nullptr, "options is NULL");
  SMD_CHECK_ARG(timeout_ms >= -1, "wait timeout must be >= 0, or -1 for no limit, got " +
                                      std::to_string(timeout_ms));
  options->timeout_ms = timeout_ms;
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_rule_invoke_options_set_wait_slice_ms(smd_rule_invoke_options* options,
                                                     int64_t slice_ms) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(options != nullptr, "options is NULL");
  SMD_CHECK_ARG(slice_ms >= 1, "wait slice must be >= 1 ms, got " + std::to_string(slice_ms));
  options->slice_ms = slice_ms;
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_rule_invoke(smd_rule* rule, int64_t start_step, int64_t end_step,
                           bool raise_eval_cond, const smd_rule_invoke_options* options) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(rule != nullptr, "rule is NULL");
  return Invoke(&rule, 1, start_step, end_step, raise_eval_cond, options);
  SMD_CAPI_END
}

smd_error* smd_rule_invoke_many(smd_rule* const* rules, size_t n, int64_t start_step,
                                int64_t end_step, bool raise_eval_cond,
                                const smd_rule_invoke_options* options) noexcept {
  SMD_CAPI_BEGIN
  return Invoke(rules, n, start_step, end_step, raise_eval_cond, options);
  SMD_CAPI_END
}

}  // extern "C"
