// The registry of built-in rules and the SageMaker plumbing keys every one accepts.
#include "impl/rules/builtin.h"

#include <cjson/cJSON.h>

#include <algorithm>

#include "impl/core/text.h"

namespace smd::rules {

namespace {

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (AsciiLower(a[i]) != AsciiLower(b[i])) {
      return false;
    }
  }
  return true;
}

std::vector<BuiltinRuleInfo> MakeRegistry() {
  std::vector<BuiltinRuleInfo> v;
  RegisterTensorRules(&v);
  RegisterActivationRules(&v);
  RegisterLossRules(&v);
  RegisterClassificationRules(&v);
  RegisterInputRules(&v);
  RegisterStalledTrainingRule(&v);
  RegisterXgboostRules(&v);
  return v;
}

// smdebug's action_json (BEHAVIOR.md §9.4, A.1.2): a JSON object or a list of them, lower-cased
// before parsing, possibly with backslash-escaped quotes. Returns whether a "stoptraining" action
// is present. Unknown or incomplete entries are skipped, as smdebug does.
Result<bool> ParseActions(const std::string& rule, const std::string& text) {
  std::string s;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 1 < text.size() && text[i + 1] == '"') continue;
    s.push_back(AsciiLower(text[i]));
  }
  if (StripAscii(s).empty()) return false;
  cJSON* root = cJSON_ParseWithLength(s.data(), s.size());
  if (root == nullptr) {
    return Params::Error(rule, "action_json", text, "not valid JSON");
  }
  bool stop = false;
  bool ok = true;
  auto one = [&](const cJSON* a) {
    if (!cJSON_IsObject(a)) {
      ok = false;
      return;
    }
    const cJSON* name = cJSON_GetObjectItemCaseSensitive(a, "name");
    if (cJSON_IsString(name) && std::string(name->valuestring) == "stoptraining") stop = true;
  };
  if (cJSON_IsArray(root)) {
    const cJSON* a;
    cJSON_ArrayForEach(a, root) one(a);
  } else {
    one(root);
  }
  cJSON_Delete(root);
  if (!ok) return Params::Error(rule, "action_json", text, "expected an object or a list of objects");
  return stop;
}

}  // namespace

const std::vector<BuiltinRuleInfo>& BuiltinRules() {
  static const std::vector<BuiltinRuleInfo> kRules = MakeRegistry();
  return kRules;
}

const BuiltinRuleInfo* FindBuiltinRule(std::string_view name) {
  for (const BuiltinRuleInfo& r : BuiltinRules()) {
    if (EqualsIgnoreCase(r.name, name)) return &r;
  }
  return nullptr;
}

Result<std::unique_ptr<Rule>> CreateBuiltinRule(const std::string& name, TrialPtr base,
                                                std::vector<TrialPtr> others,
                                                const ParamList& params,
                                                const trial::TrialOptions& open_options) {
  const BuiltinRuleInfo* info = FindBuiltinRule(name);
  if (info == nullptr) {
    std::string known;
    for (const BuiltinRuleInfo& r : BuiltinRules()) known += (known.empty() ? "" : ", ") + std::string(r.name);
    return InvalidArgument("unknown built-in rule '" + name + "' (known: " + known + ")");
  }
  const std::string rule = info->name;
  if (!base) return InvalidArgument("rule " + rule + ": no base trial");
  for (const TrialPtr& t : others) {
    if (!t) return InvalidArgument("rule " + rule + ": an other trial is NULL");
  }
  ParamList own;
  bool stop_training = false;
  // ((0 for other_trials' items, 1 for other_trial_N; the item or N), path): sorted, the order
  // the trials are opened in.
  std::vector<std::pair<std::pair<int, int64_t>, std::string>> other_paths;
  for (const auto& kv : params) {
    const std::string& k = kv.first;
    if (k == "rule_to_invoke") {
      if (!EqualsIgnoreCase(StripAscii(kv.second), rule)) {
        return Params::Error(rule, k, kv.second, "names another rule");
      }
    } else if (k == "action_json") {
      SMD_ASSIGN_OR_RETURN(bool stop, ParseActions(rule, kv.second));
      stop_training = stop_training || stop;
    } else if (k == "other_trials") {
      int64_t i = 0;
      for (const std::string& p : SplitAndStrip(kv.second, ',')) other_paths.push_back({{0, i++}, p});
    } else if (k.compare(0, 12, "other_trial_") == 0 && k.size() > 12) {
      auto idx = ParseInt64(std::string_view(k).substr(12));
      if (!idx || *idx < 0) {
        return InvalidArgument("rule " + rule + ": unknown parameter '" + k + "'");
      }
      std::string p(StripAscii(kv.second));
      if (!p.empty()) other_paths.push_back({{1, *idx}, p});
    } else {
      own.push_back(kv);
    }
  }
  if (!other_paths.empty()) {
    if (!others.empty()) {
      return InvalidArgument("rule " + rule +
                             ": other trials are given both as trials and as parameters");
    }
    std::sort(other_paths.begin(), other_paths.end());
    for (const auto& ip : other_paths) {
      auto t = Trial::Open(ip.second, open_options);
      if (!t.ok()) {
        return t.status().WithContext("rule " + rule + ": opening the other trial '" + ip.second + "'");
      }
      others.push_back(std::move(t).value());
    }
  }
  if (info->compares_trials && others.empty()) {
    return InvalidArgument("rule " + rule +
                           ": needs another trial to compare with (other_trials / --other)");
  }
  SMD_ASSIGN_OR_RETURN(Params p, Params::Parse(rule, info->params, own, info->aliases));
  std::vector<TrialPtr> trials;
  trials.push_back(std::move(base));
  for (TrialPtr& t : others) trials.push_back(std::move(t));
  SMD_ASSIGN_OR_RETURN(std::unique_ptr<Rule> r, info->create(std::move(trials), p));
  if (stop_training) r->set_stop_training(true);
  return r;
}

}  // namespace smd::rules
