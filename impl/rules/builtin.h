// The built-in rules of SageMaker Debugger (BEHAVIOR.md Appendix A), created by name with string
// parameters as SageMaker passes them. docs/rules.md describes each one and the choices made.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "impl/core/status.h"
#include "impl/rules/params.h"
#include "impl/rules/rule.h"

namespace smd::rules {

using ParamList = std::vector<std::pair<std::string, std::string>>;

struct BuiltinRuleInfo {
  const char* name;     // the class name SageMaker uses ("VanishingGradient")
  const char* summary;  // one line
  std::vector<ParamSpec> params;
  ParamList aliases;     // old parameter name -> current name
  bool compares_trials;  // needs at least one other trial
  // Checks parameter combinations and builds the rule; trials[0] is the base trial.
  std::function<Result<std::unique_ptr<Rule>>(std::vector<TrialPtr> trials, const Params& p)> create;
};

// Every built-in rule, in a fixed order.
const std::vector<BuiltinRuleInfo>& BuiltinRules();
// Case-insensitive lookup; nullptr if unknown.
const BuiltinRuleInfo* FindBuiltinRule(std::string_view name);

// Creates built-in rule `name` (case-insensitive) on `base` and `others`. Besides the rule's own
// parameters, `params` may hold SageMaker's plumbing keys: rule_to_invoke (must name this rule),
// action_json (smdebug's action list; "stoptraining" turns the stop-training signal on, email and
// sms are accepted and not performed), other_trial_0, other_trial_1, ... and the 2019
// other_trials (comma-separated), which name trial folders to open with `open_options` when no
// other trials are passed. Errors (kInvalidArgument, naming the rule, parameter and value): an
// unknown rule or parameter, a value that does not parse, a missing required parameter or
// trial, bad combinations; plus the errors of opening the other trials.
Result<std::unique_ptr<Rule>> CreateBuiltinRule(const std::string& name, TrialPtr base,
                                                std::vector<TrialPtr> others,
                                                const ParamList& params,
                                                const trial::TrialOptions& open_options = {});

// Registration, one per source file.
void RegisterTensorRules(std::vector<BuiltinRuleInfo>* out);
void RegisterActivationRules(std::vector<BuiltinRuleInfo>* out);
void RegisterLossRules(std::vector<BuiltinRuleInfo>* out);
void RegisterClassificationRules(std::vector<BuiltinRuleInfo>* out);
void RegisterInputRules(std::vector<BuiltinRuleInfo>* out);
void RegisterXgboostRules(std::vector<BuiltinRuleInfo>* out);
void RegisterStalledTrainingRule(std::vector<BuiltinRuleInfo>* out);

}  // namespace smd::rules
