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

// How many of a layer's units are inactive: a unit's activity is the percentage of its batch
// for which `active` holds, over the elements `counts` accepts (the others, e.g. NaN, say nothing
// about the unit and leave its batch); a unit with no such element is not judged.
struct Inactivity {
  size_t inactive = 0;  // judged units whose activity is below threshold_inactivity
  size_t judged = 0;    // units with at least one counted element
  size_t skipped = 0;   // units with none
  // Percentage of the judged units that are inactive (0 when none is judged).
  double percent() const {
    return judged ? 100.0 * static_cast<double>(inactive) / static_cast<double>(judged) : 0.0;
  }
};

template <typename Counts, typename Pred>
Inactivity InactiveUnits(const Layer& l, double threshold_inactivity, Counts counts, Pred active) {
  std::vector<size_t> n_active(l.units, 0), n_counted(l.units, 0);
  for (size_t b = 0; b < l.batch; ++b) {
    const double* row = l.v.data() + b * l.units;
    for (size_t u = 0; u < l.units; ++u) {
      if (!counts(row[u])) continue;
      ++n_counted[u];
      n_active[u] += active(row[u]) ? 1 : 0;
    }
  }
  Inactivity out;
  for (size_t u = 0; u < l.units; ++u) {
    if (n_counted[u] == 0) {
      ++out.skipped;
      continue;
    }
    ++out.judged;
    const double activity =
        100.0 * static_cast<double>(n_active[u]) / static_cast<double>(n_counted[u]);
    if (activity < threshold_inactivity) ++out.inactive;
  }
  return out;
}

// " (N units without a finite value not judged)", or "" when every unit was judged.
std::string SkippedNote(const Inactivity& in, const char* what) {
  if (in.skipped == 0) return std::string();
  return " (" + std::to_string(in.skipped) + " units without " + what + " not judged)";
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
      // A NaN or infinite activation is no evidence of a dead (or live) unit: it leaves the
      // unit's batch; a unit with no finite value, or a layer with no such unit, is not judged.
      const Inactivity in = InactiveUnits(
          l, inactivity_, [](double x) { return std::isfinite(x); }, [](double x) { return x > 0; });
      if (in.judged == 0) continue;
      const double pct = in.percent();
      if (pct > layer_) {
        ctx.Report(name, std::to_string(in.inactive) + " of " + std::to_string(in.judged) +
                             " ReLUs are dead (active for less than " + Num(inactivity_) +
                             "% of a batch of " + std::to_string(l.batch) + "): " + Num(pct) +
                             "% > threshold_layer " + Num(layer_) + "%" +
                             SkippedNote(in, "a finite value"));
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
      // A NaN input says nothing about saturation: it leaves the node's batch (a node with only
      // NaN inputs, or a layer of such nodes, is not judged). An infinite input is in the flat
      // tail of the activation: it counts, as saturated.
      const Inactivity in = InactiveUnits(
          l, inactivity_, [](double x) { return !std::isnan(x); },
          [lo, hi](double x) { return lo < x && x < hi; });
      if (in.judged == 0) continue;
      const double pct = in.percent();
      if (pct > layer_) {
        ctx.Report(name, std::to_string(in.inactive) + " of " + std::to_string(in.judged) + " " +
                             fn + " inputs are saturated (outside (" + Num(lo) + ", " + Num(hi) +
                             ") for more than " + Num(100 - inactivity_) + "% of the batch): " +
                             Num(pct) + "% > threshold_layer " + Num(layer_) + "%" +
                             SkippedNote(in, "a value other than NaN"));
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
      // A NaN loss is no new low (and never the best: a NaN first loss made every later one
      // "not lower", a decreasing loss included); the first number is the first low.
      auto& best = best_.try_emplace(name, std::nan(""), int64_t(0)).first->second;
      if (!std::isnan(x) && (std::isnan(best.first) || x < best.first)) {
        best = {x, 0};
      } else if (++best.second >= patience_) {
        ctx.Report(name, "loss did not reach a new low for " + std::to_string(best.second) +
                             " evaluated steps (best " +
                             (std::isnan(best.first) ? std::string("none yet") : Num(best.first)) +
                             ", patience " + std::to_string(patience_) + ")" +
                             (std::isnan(x) ? "; the loss is NaN" : ""));
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
  // loss -> (lowest number, NaN while none; evaluated steps without a new low)
  std::map<std::string, std::pair<double, int64_t>> best_;
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
