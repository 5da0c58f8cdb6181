// Rules on activations and initialisation: DeadRelu, SaturatedActivation,
// PoorWeightInitialization (BEHAVIOR.md A.11-A.13).
#include <algorithm>
#include <cmath>
#include <map>

#include "impl/core/text.h"
#include "impl/rules/builtin.h"
#include "impl/rules/util.h"

namespace smd::rules {

namespace {

// A layer's value as (batch B, units U): rank >= 2 splits off axis 0 as the batch; rank <= 1
// makes every element a unit of a batch of one.
struct Layer {
  size_t batch = 1;
  size_t units = 0;
  std::vector<double> v;  // B x U, row-major
};

Layer AsLayer(const trial::Value& value) {
  Layer l;
  l.v = ToDoubles(value);
  const auto& shape = value.shape();
  if (shape.size() >= 2 && shape[0] > 0) {
    l.batch = static_cast<size_t>(shape[0]);
    l.units = l.v.size() / l.batch;
  } else {
    l.batch = 1;
    l.units = l.v.size();
  }
  return l;
}

// Percentage of the layer's units whose activity (percentage of the batch for which `active`
// holds) is below threshold_inactivity.
template <typename Pred>
double InactivePercent(const Layer& l, double threshold_inactivity, Pred active, size_t* inactive) {
  std::vector<size_t> counts(l.units, 0);
  for (size_t b = 0; b < l.batch; ++b) {
    const double* row = l.v.data() + b * l.units;
    for (size_t u = 0; u < l.units; ++u) counts[u] += active(row[u]) ? 1 : 0;
  }
  size_t n = 0;
  for (size_t u = 0; u < l.units; ++u) {
    const double activity = 100.0 * static_cast<double>(counts[u]) / static_cast<double>(l.batch);
    if (activity < threshold_inactivity) ++n;
  }
  *inactive = n;
  return 100.0 * static_cast<double>(n) / static_cast<double>(l.units);
}

bool ContainsNoCase(const std::string& s, const char* needle) {
  return AsciiLower(s).find(needle) != std::string::npos;
}

// ---- DeadRelu (A.11) ------------------------------------------------------------------------

class DeadRelu : public Rule {
 public:
  DeadRelu(std::vector<TrialPtr> t, const Params& p)
      : Rule("DeadRelu", std::move(t)),
        regexes_(p.List("tensor_regex")),
        inactivity_(p.Float("threshold_inactivity")),
        layer_(p.Float("threshold_layer")) {}

  Result<bool> InvokeAtStep(RuleContext& ctx, int64_t step) override {
    SMD_ASSIGN_OR_RETURN(std::vector<std::string> names, TensorsMatching(base(), regexes_, step));
    bool fired = false;
    for (const std::string& name : names) {
      SMD_ASSIGN_OR_RETURN(ValuePtr v, ValueAt(base(), name, step));
      if (!v || !IsNumeric(*v) || v->count() == 0) continue;
      const Layer l = AsLayer(*v);
      if (l.units == 0) continue;
      size_t dead = 0;
      const double pct = InactivePercent(l, inactivity_, [](double x) { return x > 0; }, &dead);
      if (pct > layer_) {
        ctx.Report(name, std::to_string(dead) + " of " + std::to_string(l.units) +
                             " ReLUs are dead (active for less than " + Num(inactivity_) +
                             "% of a batch of " + std::to_string(l.batch) + "): " + Num(pct) +
                             "% > threshold_layer " + Num(layer_) + "%");
        fired = true;
      }
    }
    return fired;
  }

 private:
  std::vector<std::string> regexes_;
  double inactivity_, layer_;
};

// ---- SaturatedActivation (A.13) -------------------------------------------------------------

class SaturatedActivation : public Rule {
 public:
  SaturatedActivation(std::vector<TrialPtr> t, const Params& p, double tmin, double tmax,
                      double smin, double smax)
      : Rule("SaturatedActivation", std::move(t)),
        collections_(p.List("collection_names")),
        regexes_(p.List("tensor_regex")),
        tanh_min_(tmin),
        tanh_max_(tmax),
        sig_min_(smin),
        sig_max_(smax),
        inactivity_(p.Float("threshold_inactivity")),
        layer_(p.Float("threshold_layer")) {}

  Result<bool> InvokeAtStep(RuleContext& ctx, int64_t step) override {
    SMD_ASSIGN_OR_RETURN(std::vector<std::string> names,
                         SelectTensors(base(), collections_, regexes_, step, false));
    bool fired = false;
    for (const std::string& name : names) {
      double lo, hi;
      const char* fn;
      if (ContainsNoCase(name, "tanh")) {
        lo = tanh_min_, hi = tanh_max_, fn = "tanh";
      } else if (ContainsNoCase(name, "sigmoid")) {
        lo = sig_min_, hi = sig_max_, fn = "sigmoid";
      } else {
        continue;
      }
      SMD_ASSIGN_OR_RETURN(ValuePtr v, ValueAt(base(), name, step));
      if (!v || !IsNumeric(*v) || v->count() == 0) continue;
      const Layer l = AsLayer(*v);
      if (l.units == 0) continue;
      size_t saturated = 0;
      const double pct = InactivePercent(
          l, inactivity_, [lo, hi](double x) { return lo < x && x < hi; }, &saturated);
      if (pct > layer_) {
        ctx.Report(name, std::to_string(saturated) + " of " + std::to_string(l.units) + " " + fn +
                             " inputs are saturated (outside (" + Num(lo) + ", " + Num(hi) +
                             ") for more than " + Num(100 - inactivity_) + "% of the batch): " +
                             Num(pct) + "% > threshold_layer " + Num(layer_) + "%");
        fired = true;
      }
    }
    return fired;
  }

 private:
  std::vector<std::string> collections_, regexes_;
  double tanh_min_, tanh_max_, sig_min_, sig_max_, inactivity_, layer_;
};

// ---- PoorWeightInitialization (A.12) --------------------------------------------------------

class PoorWeightInitialization : public Rule {
 public:
  PoorWeightInitialization(std::vector<TrialPtr> t, const Params& p)
      : Rule("PoorWeightInitialization", std::move(t)),
        regexes_(p.List("activation_inputs_regex")),
        threshold_(p.Float("threshold")),
        range_(p.Float("distribution_range")),
        patience_(p.Int("patience")),
        steps_(p.Int("steps")) {}

  Result<bool> InvokeAtStep(RuleContext& ctx, int64_t step) override {
    if (evaluated_ >= steps_) {
      ctx.EndRule();
      return false;
    }
    bool fired = false, any = false;
    // 1. Spread of the per-layer variances of the activation inputs.
    SMD_ASSIGN_OR_RETURN(std::vector<std::string> layers, TensorsMatching(base(), regexes_, step));
    std::vector<std::pair<double, std::string>> vars;
    for (const std::string& name : layers) {
      SMD_ASSIGN_OR_RETURN(std::optional<double> var, ReductionAt(base(), name, step, "variance"));
      if (var && !std::isnan(*var)) vars.emplace_back(*var, name);
    }
    if (!vars.empty()) any = true;
    if (vars.size() >= 2) {
      const auto mm = std::minmax_element(vars.begin(), vars.end());
      const double lo = mm.first->first, hi = mm.second->first;
      if (lo == 0 || hi / lo > threshold_) {
        ctx.Report(mm.first->second,
                   "activation-input variances differ too much across " +
                       std::to_string(vars.size()) + " layers: largest " + Num(hi) + " ('" +
                       mm.second->second + "'), smallest " + Num(lo) + " (ratio " +
                       (lo == 0 ? std::string("inf") : Num(hi / lo)) + " > threshold " +
                       Num(threshold_) + ")");
        fired = true;
      }
    }
    // 2. Width of the gradient distributions.
    SMD_ASSIGN_OR_RETURN(std::vector<std::string> grads,
                         SelectTensors(base(), {"gradients"}, {}, step, false));
    double narrowest = INFINITY;
    std::string narrowest_name;
    for (const std::string& name : grads) {
      SMD_ASSIGN_OR_RETURN(ValuePtr v, ValueAt(base(), name, step));
      if (!v || !IsNumeric(*v) || v->count() == 0) continue;
      any = true;
      std::vector<double> d = ToDoubles(*v);
      const double spread = Percentile(d, 95) - Percentile(d, 5);
      if (spread < narrowest) {
        narrowest = spread;
        narrowest_name = name;
      }
    }
    if (!narrowest_name.empty() && narrowest < range_) {
      ctx.Report(narrowest_name, "gradient distribution is too narrow: 5th-95th percentile spread " +
                                     Num(narrowest) + " < distribution_range " + Num(range_));
      fired = true;
    }
    // 3. Whether the loss still improves.
    SMD_ASSIGN_OR_RETURN(std::vector<std::string> losses,
                         SelectTensors(base(), {"losses"}, {}, step, false));
    for (const std::string& name : losses) {
      SMD_ASSIGN_OR_RETURN(ValuePtr v, ValueAt(base(), name, step));
      if (!v || !IsNumeric(*v) || v->count() != 1) continue;
      any = true;
      const double x = ElementAt(*v, 0);
      auto it = best_.find(name);
      if (it == best_.end()) {
        best_.emplace(name, std::make_pair(x, int64_t(0)));
        continue;
      }
      if (x < it->second.first) {
        it->second = {x, 0};
      } else if (++it->second.second >= patience_) {
        ctx.Report(name, "loss did not reach a new low for " + std::to_string(it->second.second) +
                             " evaluated steps (best " + Num(it->second.first) + ", patience " +
                             std::to_string(patience_) + ")");
        fired = true;
      }
    }
    if (any && ++evaluated_ >= steps_) ctx.EndRule();
    return fired;
  }

 private:
  std::vector<std::string> regexes_;
  double threshold_, range_;
  int64_t patience_, steps_;
  int64_t evaluated_ = 0;
  std::map<std::string, std::pair<double, int64_t>> best_;  // loss -> (best, steps without one)
};

// "(-9.4999, 9.4999)" or "-9.4999, 9.4999" (the 2020 tuple-valued parameters).
Status ParseRange(const char* rule, const char* name, const std::string& raw, double* lo, double* hi) {
  std::string s(StripAscii(raw));
  if (!s.empty() && (s.front() == '(' || s.front() == '[')) s.erase(0, 1);
  if (!s.empty() && (s.back() == ')' || s.back() == ']')) s.pop_back();
  std::vector<std::string> parts = SplitAndStrip(s, ',');
  if (parts.size() != 2) return Params::Error(rule, name, raw, "expected (min, max)");
  auto a = ParseDouble(parts[0]), b = ParseDouble(parts[1]);
  if (!a || !b) return Params::Error(rule, name, raw, "expected two numbers (min, max)");
  *lo = *a;
  *hi = *b;
  return Status::Ok();
}

}  // namespace

void RegisterActivationRules(std::vector<BuiltinRuleInfo>* out) {
  out->push_back(
      {"DeadRelu",
       "most ReLUs of a layer are inactive",
       {{"tensor_regex", ParamType::kRegexList, ".*relu_output",
         "ReLU output tensors, one per layer"},
        {"threshold_inactivity", ParamType::kFloat, "1.0",
         "a ReLU active for less than this percentage of the batch is dead"},
        {"threshold_layer", ParamType::kFloat, "50.0",
         "fire when more than this percentage of a layer's ReLUs are dead"}},
       {},
       false,
       [](std::vector<TrialPtr> t, const Params& p) -> Result<std::unique_ptr<Rule>> {
         return std::unique_ptr<Rule>(new DeadRelu(std::move(t), p));
       }});
  out->push_back(
      {"PoorWeightInitialization",
       "early steps show poor initialisation (layer variances, gradient spread, stalled loss)",
       {{"activation_inputs_regex", ParamType::kRegexList, ".*relu_input",
         "activation-input tensors, one per layer"},
        {"threshold", ParamType::kFloat, "10.0",
         "fire when the largest/smallest per-layer variance ratio exceeds this"},
        {"distribution_range", ParamType::kFloat, "0.001",
         "fire when a gradient's 5th-95th percentile spread is below this"},
        {"patience", ParamType::kInt, "5", "evaluated steps without a new lowest loss that fire"},
        {"steps", ParamType::kInt, "10", "number of initial evaluated steps analysed"}},
       {},
       false,
       [](std::vector<TrialPtr> t, const Params& p) -> Result<std::unique_ptr<Rule>> {
         if (p.Int("patience") < 1) {
           return Params::Error("PoorWeightInitialization", "patience",
                                std::to_string(p.Int("patience")), "must be at least 1");
         }
         if (p.Int("steps") < 1) {
           return Params::Error("PoorWeightInitialization", "steps",
                                std::to_string(p.Int("steps")), "must be at least 1");
         }
         return std::unique_ptr<Rule>(new PoorWeightInitialization(std::move(t), p));
       }});
  out->push_back(
      {"SaturatedActivation",
       "most tanh/sigmoid inputs of a layer sit in the flat tails of the activation",
       {{"collection_names", ParamType::kList, nullptr, "extra collections to inspect"},
        {"tensor_regex", ParamType::kRegexList, ".*tanh_input|.*sigmoid_input",
         "activation-input tensors (tanh or sigmoid in the name)"},
        {"threshold_tanh_min", ParamType::kFloat, "-9.4999", "lower end of the active tanh input range"},
        {"threshold_tanh_max", ParamType::kFloat, "9.4999", "upper end of the active tanh input range"},
        {"threshold_sigmoid_min", ParamType::kFloat, "-23", "lower end of the active sigmoid input range"},
        {"threshold_sigmoid_max", ParamType::kFloat, "16.99999",
         "upper end of the active sigmoid input range"},
        {"threshold_inactivity", ParamType::kFloat, "1.0",
         "a node active for less than this percentage of the batch is saturated"},
        {"threshold_layer", ParamType::kFloat, "50.0",
         "fire when more than this percentage of a layer's nodes are saturated"},
        {"threshold_tanh", ParamType::kString, nullptr, "2020 form: (min, max) for tanh"},
        {"threshold_sigmoid", ParamType::kString, nullptr, "2020 form: (min, max) for sigmoid"}},
       {},
       false,
       [](std::vector<TrialPtr> t, const Params& p) -> Result<std::unique_ptr<Rule>> {
         const char* r = "SaturatedActivation";
         double tmin = p.Float("threshold_tanh_min"), tmax = p.Float("threshold_tanh_max");
         double smin = p.Float("threshold_sigmoid_min"), smax = p.Float("threshold_sigmoid_max");
         if (p.Has("threshold_tanh")) {
           if (p.Given("threshold_tanh_min") || p.Given("threshold_tanh_max")) {
             return Params::Error(r, "threshold_tanh", p.Str("threshold_tanh"),
                                  "give either threshold_tanh or threshold_tanh_min/max");
           }
           SMD_RETURN_IF_ERROR(ParseRange(r, "threshold_tanh", p.Str("threshold_tanh"), &tmin, &tmax));
         }
         if (p.Has("threshold_sigmoid")) {
           if (p.Given("threshold_sigmoid_min") || p.Given("threshold_sigmoid_max")) {
             return Params::Error(r, "threshold_sigmoid", p.Str("threshold_sigmoid"),
                                  "give either threshold_sigmoid or threshold_sigmoid_min/max");
           }
           SMD_RETURN_IF_ERROR(
               ParseRange(r, "threshold_sigmoid", p.Str("threshold_sigmoid"), &smin, &smax));
         }
         if (!(tmin < tmax)) {
           return Params::Error(r, "threshold_tanh_min", Num(tmin), "must be below threshold_tanh_max");
         }
         if (!(smin < smax)) {
           return Params::Error(r, "threshold_sigmoid_min", Num(smin),
                                "must be below threshold_sigmoid_max");
         }
         return std::unique_ptr<Rule>(new SaturatedActivation(std::move(t), p, tmin, tmax, smin, smax));
       }});
}

}  // namespace smd::rules
