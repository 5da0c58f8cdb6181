// Rules on tensor values: VanishingGradient, ExplodingTensor, SimilarAcrossRuns,
// WeightUpdateRatio, AllZero, UnchangedTensor, TensorVariance (BEHAVIOR.md A.4-A.9, A.14).
#include <algorithm>
#include <cmath>

#include "impl/rules/builtin.h"
#include "impl/rules/util.h"

namespace smd::rules {

namespace {

constexpr const char* kCollectionsHelp = "collections whose tensors the rule inspects (comma-separated)";
constexpr const char* kRegexHelp = "regular expressions of tensor names to inspect (comma-separated)";

// ---- VanishingGradient (A.4) ----------------------------------------------------------------

class VanishingGradient : public Rule {
 public:
  VanishingGradient(std::vector<TrialPtr> t, double threshold)
      : Rule("VanishingGradient", std::move(t)), threshold_(threshold) {}

  Result<bool> InvokeAtStep(RuleContext& ctx, int64_t step) override {
    SMD_ASSIGN_OR_RETURN(std::vector<std::string> names,
                         SelectTensors(base(), {"gradients"}, {}, step, false));
    bool fired = false;
    for (const std::string& name : names) {
      SMD_ASSIGN_OR_RETURN(std::optional<double> m, ReductionAt(base(), name, step, "abs_mean"));
      if (!m) continue;
      if (*m < threshold_) {  // NaN compares false: no fire
        ctx.Report(name, "mean absolute value " + Num(*m) + " is below the threshold " +
                             Num(threshold_));
        fired = true;
      }
    }
    return fired;
  }

 private:
  double threshold_;
};

// ---- ExplodingTensor (A.5) ------------------------------------------------------------------

class ExplodingTensor : public Rule {
 public:
  ExplodingTensor(std::vector<TrialPtr> t, const Params& p)
      : Rule("ExplodingTensor", std::move(t)),
        collections_(p.List("collection_names")),
        regexes_(p.List("tensor_regex")),
        only_nan_(p.Bool("only_nan")) {}

  Result<bool> InvokeAtStep(RuleContext& ctx, int64_t step) override {
    SMD_ASSIGN_OR_RETURN(std::vector<std::string> names,
                         SelectTensors(base(), collections_, regexes_, step, true));
    bool fired = false;
    for (const std::string& name : names) {
      SMD_ASSIGN_OR_RETURN(ValuePtr v, ValueAt(base(), name, step));
      size_t nans = 0, infs = 0, total = 0;
      if (v) {
        if (!IsNumeric(*v) || !CanBeNonFinite(*v)) continue;
        const std::vector<double> d = ToDoubles(*v);
        total = d.size();
        for (double x : d) {
          if (std::isnan(x)) {
            ++nans;
          } else if (std::isinf(x)) {
            ++infs;
          }
        }
      } else {
        // Only reductions saved at this step: check those.
        SMD_ASSIGN_OR_RETURN(uint32_t id, base().TensorId(name));
        auto reds = base().TensorReductionNames(id, step, Mode::kGlobal, nullptr);
        if (!reds.ok()) continue;
        for (const std::string& r : *reds) {
          SMD_ASSIGN_OR_RETURN(std::optional<double> x, ReductionAt(base(), name, step, r));
          if (!x) continue;
          ++total;
          if (std::isnan(*x)) {
            ++nans;
          } else if (std::isinf(*x)) {
            ++infs;
          }
        }
        if (nans + (only_nan_ ? 0 : infs) > 0) {
          ctx.Report(name, Describe(nans, infs) + " among its " + std::to_string(total) +
                               " saved reductions");
          fired = true;
        }
        continue;
      }
      if (nans + (only_nan_ ? 0 : infs) > 0) {
        ctx.Report(name, Describe(nans, infs) + " among " + std::to_string(total) + " elements");
        fired = true;
      }
    }
    return fired;
  }

 private:
  std::string Describe(size_t nans, size_t infs) const {
    std::string m = std::to_string(nans) + " NaN";
    if (!only_nan_) m += " and " + std::to_string(infs) + " infinite value" + (infs == 1 ? "" : "s");
    return m;
  }
  std::vector<std::string> collections_, regexes_;
  bool only_nan_;
};

// ---- SimilarAcrossRuns (A.6) ----------------------------------------------------------------

class SimilarAcrossRuns : public Rule {
 public:
  SimilarAcrossRuns(std::vector<TrialPtr> t, const Params& p)
      : Rule("SimilarAcrossRuns", std::move(t)),
        collections_(p.List("collection_names")),
        regexes_(p.List("tensor_regex")) {}

  Result<bool> InvokeAtStep(RuleContext& ctx, int64_t step) override {
    SMD_ASSIGN_OR_RETURN(std::vector<std::string> names,
                         SelectTensors(base(), collections_, regexes_, step, true));
    bool fired = false;
    for (size_t oi = 1; oi < ctx.trial_count(); ++oi) {
      // The other run may still be writing: wait for the step there too. A step it skipped, or
      // one after its end, has nothing to compare.
      Status w = ctx.WaitForStep(oi, step);
      if (w.code() == Code::kStepUnavailable || w.code() == Code::kNoMoreData) continue;
      Trial& other = ctx.trial(oi);
      if (!w.ok()) return w.WithContext("trial '" + other.path() + "'");
      for (const std::string& name : names) {
        SMD_ASSIGN_OR_RETURN(ValuePtr a, ValueAt(base(), name, step));
        SMD_ASSIGN_OR_RETURN(ValuePtr b, a ? ValueAt(other, name, step) : Result<ValuePtr>(ValuePtr()));
        if (!a || !b) {
          // No raw value on one side: compare the reductions both runs saved.
          SMD_ASSIGN_OR_RETURN(std::string diff, ReductionsDiffer(base(), other, name, step));
          if (!diff.empty()) {
            ctx.Report(name, diff + " from the same tensor of trial '" + other.path() + "'");
            fired = true;
          }
          continue;
        }
        if (ValuesClose(*a, *b, 1e-5, 1e-8, true)) continue;
        std::string why;
        if (a->shape() != b->shape()) {
          why = "shape " + ShapeText(a->shape()) + " differs from " + ShapeText(b->shape());
        } else if (a->is_string() || b->is_string()) {
          why = "string values differ";
        } else {
          const std::vector<double> x = ToDoubles(*a), y = ToDoubles(*b);
          double worst = 0;
          for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
            const double d = std::fabs(x[i] - y[i]);
            if (std::isnan(d) || d > worst) worst = d;
            if (std::isnan(d)) break;
          }
          why = "values differ (largest absolute difference " + Num(worst) + ")";
        }
        ctx.Report(name, why + " from the same tensor of trial '" + other.path() + "'");
        fired = true;
      }
    }
    return fired;
  }

 private:
  // "saved reduction abs_mean differs (0.5 vs 0.25)" for the first reduction both trials saved
  // at `step` with different values; "" if none differs (or nothing to compare).
  static Result<std::string> ReductionsDiffer(Trial& a, Trial& b, const std::string& name,
                                              int64_t step) {
    auto ida = a.TensorId(name);
    auto idb = b.TensorId(name);
    if (!ida.ok() || !idb.ok()) return std::string();
    auto ra = a.TensorReductionNames(*ida, step, Mode::kGlobal, nullptr);
    auto rb = b.TensorReductionNames(*idb, step, Mode::kGlobal, nullptr);
    if (!ra.ok() || !rb.ok()) return std::string();
    for (const std::string& r : *ra) {
      if (!std::binary_search(rb->begin(), rb->end(), r)) continue;
      SMD_ASSIGN_OR_RETURN(std::optional<double> x, ReductionAt(a, name, step, r));
      SMD_ASSIGN_OR_RETURN(std::optional<double> y, ReductionAt(b, name, step, r));
      if (!x || !y || AllClose({*x}, {*y}, 1e-5, 1e-8, true)) continue;
      return "saved reduction " + r + " differs (" + Num(*x) + " vs " + Num(*y) + ")";
    }
    return std::string();
  }
  static std::string ShapeText(const std::vector<int64_t>& s) {
    std::string out = "(";
    for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
    return out + (s.size() == 1 ? ",)" : ")");
  }
  std::vector<std::string> collections_, regexes_;
};

// ---- WeightUpdateRatio (A.7) ----------------------------------------------------------------

class WeightUpdateRatio : public Rule {
 public:
  WeightUpdateRatio(std::vector<TrialPtr> t, const Params& p)
      : Rule("WeightUpdateRatio", std::move(t)),
        num_steps_(p.OptInt("num_steps")),
        large_(p.Float("large_threshold")),
        small_(p.Float("small_threshold")),
        epsilon_(p.Float("epsilon")) {}

  Result<bool> InvokeAtStep(RuleContext& ctx, int64_t step) override {
    // TRAIN steps if the job saved any, else global steps (A.7 step 1).
    const std::vector<Mode> modes = base().Modes();
    const Mode mode =
        std::find(modes.begin(), modes.end(), Mode::kTrain) != modes.end() ? Mode::kTrain : Mode::kGlobal;
    int64_t ms = step;
    if (mode == Mode::kTrain) {
      SMD_ASSIGN_OR_RETURN(auto mo, base().ModeOf(step));
      if (!mo || mo->first != Mode::kTrain) return false;
      ms = mo->second;
    }
    SMD_ASSIGN_OR_RETURN(std::vector<std::string> names,
                         SelectTensors(base(), {"weights"}, {}, step, false));
    bool fired = false;
    for (const std::string& name : names) {
      SMD_ASSIGN_OR_RETURN(uint32_t id, base().TensorId(name));
      SMD_ASSIGN_OR_RETURN(std::vector<int64_t> steps, base().TensorSteps(id, mode, false));
      auto at = std::lower_bound(steps.begin(), steps.end(), ms);
      if (at == steps.end() || *at != ms || at == steps.begin()) continue;
      int64_t prev;
      if (!num_steps_) {
        prev = *(at - 1);
      } else {
        auto lo = std::lower_bound(steps.begin(), at, ms - *num_steps_);
        if (lo == at) continue;  // nothing saved within num_steps before
        prev = *lo;
      }
      SMD_ASSIGN_OR_RETURN(ValuePtr w, ValueAt(base(), name, ms, mode));
      if (!w || !IsNumeric(*w)) continue;
      SMD_ASSIGN_OR_RETURN(ValuePtr wp, ValueAt(base(), name, prev, mode));
      if (!wp || !IsNumeric(*wp) || wp->shape() != w->shape()) continue;
      const std::vector<double> a = ToDoubles(*w), b = ToDoubles(*wp);
      double upd = 0, norm = 0;
      for (size_t i = 0; i < a.size(); ++i) {
        upd += (a[i] - b[i]) * (a[i] - b[i]);
        norm += b[i] * b[i];
      }
      const double ratio = std::sqrt(upd) / (std::sqrt(norm) + epsilon_);
      const std::string where = std::string(" (") + ModeName(mode) + " steps " +
                                std::to_string(prev) + " to " + std::to_string(ms) + ")";
      if (ratio > large_) {
        ctx.Report(name, "update/weight ratio " + Num(ratio) + " is above large_threshold " +
                             Num(large_) + where);
        fired = true;
      } else if (ratio < small_) {
        ctx.Report(name, "update/weight ratio " + Num(ratio) + " is below small_threshold " +
                             Num(small_) + where);
        fired = true;
      }
    }
    return fired;
  }

 private:
  std::optional<int64_t> num_steps_;
  double large_, small_, epsilon_;
};

// ---- AllZero (A.8) --------------------------------------------------------------------------

class AllZero : public Rule {
 public:
  AllZero(std::vector<TrialPtr> t, const Params& p)
      : Rule("AllZero", std::move(t)),
        collections_(p.List("collection_names")),
        regexes_(p.List("tensor_regex")),
        threshold_(p.Float("threshold")) {}

  Result<bool> InvokeAtStep(RuleContext& ctx, int64_t step) override {
    SMD_ASSIGN_OR_RETURN(std::vector<std::string> names,
                         SelectTensors(base(), collections_, regexes_, step, false));
    bool fired = false;
    for (const std::string& name : names) {
      SMD_ASSIGN_OR_RETURN(ValuePtr v, ValueAt(base(), name, step));
      if (!v || !IsNumeric(*v) || v->count() == 0) continue;
      const std::vector<double> d = ToDoubles(*v);
      size_t zeros = 0;
      for (double x : d) zeros += x == 0.0 ? 1 : 0;
      const double pct = 100.0 * static_cast<double>(zeros) / static_cast<double>(d.size());
      if (pct >= threshold_) {
        ctx.Report(name, std::to_string(zeros) + " of " + std::to_string(d.size()) +
                             " elements are zero (" + Num(pct) + "% >= threshold " +
                             Num(threshold_) + "%)");
        fired = true;
      }
    }
    return fired;
  }

 private:
  std::vector<std::string> collections_, regexes_;
  double threshold_;
};

// ---- UnchangedTensor (A.9) ------------------------------------------------------------------

class UnchangedTensor : public Rule {
 public:
  UnchangedTensor(std::vector<TrialPtr> t, const Params& p)
      : Rule("UnchangedTensor", std::move(t)),
        collections_(p.List("collection_names")),
        regexes_(p.List("tensor_regex")),
        num_steps_(p.Int("num_steps")),
        rtol_(p.Float("rtol")),
        atol_(p.Float("atol")),
        equal_nan_(p.Bool("equal_nan")) {}

  Result<bool> InvokeAtStep(RuleContext& ctx, int64_t step) override {
    SMD_ASSIGN_OR_RETURN(std::vector<std::string> names,
                         SelectTensors(base(), collections_, regexes_, step, false));
    bool fired = false;
    for (const std::string& name : names) {
      SMD_ASSIGN_OR_RETURN(ValuePtr now, ValueAt(base(), name, step));
      if (!now) continue;
      SMD_ASSIGN_OR_RETURN(uint32_t id, base().TensorId(name));
      SMD_ASSIGN_OR_RETURN(std::vector<int64_t> window,
                           base().TensorPrevSteps(id, step, static_cast<size_t>(num_steps_),
                                                  Mode::kGlobal));
      if (static_cast<int64_t>(window.size()) < num_steps_) continue;
      bool unchanged = true;
      for (int64_t p : window) {
        if (p == step) continue;
        SMD_ASSIGN_OR_RETURN(ValuePtr old, ValueAt(base(), name, p));
        if (!old || !ValuesClose(*old, *now, rtol_, atol_, equal_nan_)) {
          unchanged = false;
          break;
        }
      }
      if (unchanged) {
        std::string steps;
        for (int64_t p : window) steps += (steps.empty() ? "" : ", ") + std::to_string(p);
        ctx.Report(name, "unchanged over the last " + std::to_string(num_steps_) +
                             " saved steps (" + steps + ")");
        fired = true;
      }
    }
    return fired;
  }

 private:
  std::vector<std::string> collections_, regexes_;
  int64_t num_steps_;
  double rtol_, atol_;
  bool equal_nan_;
};

// ---- TensorVariance (A.14) ------------------------------------------------------------------

class TensorVariance : public Rule {
 public:
  TensorVariance(std::vector<TrialPtr> t, const Params& p)
      : Rule("TensorVariance", std::move(t)),
        collections_(p.List("collection_names")),
        regexes_(p.List("tensor_regex")),
        max_(p.OptFloat("max_threshold")),
        min_(p.OptFloat("min_threshold")) {}

  Result<bool> InvokeAtStep(RuleContext& ctx, int64_t step) override {
    if (!max_ && !min_) return false;
    SMD_ASSIGN_OR_RETURN(std::vector<std::string> names,
                         SelectTensors(base(), collections_, regexes_, step, false));
    bool fired = false;
    for (const std::string& name : names) {
      SMD_ASSIGN_OR_RETURN(std::optional<double> var, ReductionAt(base(), name, step, "variance"));
      if (!var) continue;
      if (max_ && *var > *max_) {
        ctx.Report(name, "variance " + Num(*var) + " is above max_threshold " + Num(*max_));
        fired = true;
      } else if (min_ && *var < *min_) {
        ctx.Report(name, "variance " + Num(*var) + " is below min_threshold " + Num(*min_));
        fired = true;
      }
    }
    return fired;
  }

 private:
  std::vector<std::string> collections_, regexes_;
  std::optional<double> max_, min_;
};

Status NeedSelection(const char* rule, const Params& p) {
  if (p.List("collection_names").empty() && p.List("tensor_regex").empty()) {
    return InsufficientInformation(rule, "one of collection_names or tensor_regex is required");
  }
  return Status::Ok();
}

template <typename R>
Result<std::unique_ptr<Rule>> Make(std::vector<TrialPtr> t, const Params& p) {
  return std::unique_ptr<Rule>(new R(std::move(t), p));
}

}  // namespace

void RegisterTensorRules(std::vector<BuiltinRuleInfo>* out) {
  out->push_back(
      {"VanishingGradient",
       "a gradient's mean absolute value falls below a threshold (collection gradients)",
       {{"threshold", ParamType::kFloat, "0.0000001",
         "fire when a gradient's mean absolute value is below this"}},
       {},
       false,
       [](std::vector<TrialPtr> t, const Params& p) -> Result<std::unique_ptr<Rule>> {
         return std::unique_ptr<Rule>(new VanishingGradient(std::move(t), p.Float("threshold")));
       }});
  out->push_back(
      {"ExplodingTensor",
       "a tensor holds NaN or infinite values",
       {{"collection_names", ParamType::kList, nullptr, kCollectionsHelp},
        {"tensor_regex", ParamType::kRegexList, nullptr,
         "regular expressions of tensor names to inspect (default: every tensor)"},
        {"only_nan", ParamType::kBool, "False", "True: only NaN counts, not infinities"}},
       {},
       false,
       Make<ExplodingTensor>});
  out->push_back(
      {"SimilarAcrossRuns",
       "a tensor differs from the same tensor of another run at the same step",
       {{"collection_names", ParamType::kList, nullptr, kCollectionsHelp},
        {"tensor_regex", ParamType::kRegexList, nullptr,
         "regular expressions of tensor names to compare (default: every tensor)"}},
       {{"include_regex", "tensor_regex"}, {"include", "tensor_regex"}},
       true,
       Make<SimilarAcrossRuns>});
  out->push_back(
      {"WeightUpdateRatio",
       "the ratio of a weight update to the weight is too large or too small (collection weights)",
       {{"num_steps", ParamType::kInt, nullptr,
         "compare with a step at least this far back (default: the previous saved step)"},
        {"large_threshold", ParamType::kFloat, "10.0", "fire when the ratio is above this"},
        {"small_threshold", ParamType::kFloat, "0.00000001", "fire when the ratio is below this"},
        {"epsilon", ParamType::kFloat, "0.000000001", "added to the weight norm in the ratio"}},
       {},
       false,
       [](std::vector<TrialPtr> t, const Params& p) -> Result<std::unique_ptr<Rule>> {
         if (p.Has("num_steps") && p.Int("num_steps") < 1) {
           return Params::Error("WeightUpdateRatio", "num_steps", std::to_string(p.Int("num_steps")),
                                "must be at least 1");
         }
         return std::unique_ptr<Rule>(new WeightUpdateRatio(std::move(t), p));
       }});
  out->push_back(
      {"AllZero",
       "a tensor's share of zero elements reaches a threshold",
       {{"collection_names", ParamType::kList, nullptr, kCollectionsHelp},
        {"tensor_regex", ParamType::kRegexList, nullptr, kRegexHelp},
        {"threshold", ParamType::kFloat, "100", "percentage of zero elements that fires"}},
       {},
       false,
       [](std::vector<TrialPtr> t, const Params& p) -> Result<std::unique_ptr<Rule>> {
         SMD_RETURN_IF_ERROR(NeedSelection("AllZero", p));
         return Make<AllZero>(std::move(t), p);
       }});
  out->push_back(
      {"UnchangedTensor",
       "a tensor stays the same over its last num_steps saved steps",
       {{"collection_names", ParamType::kList, nullptr, kCollectionsHelp},
        {"tensor_regex", ParamType::kRegexList, nullptr, kRegexHelp},
        {"num_steps", ParamType::kInt, "3", "number of most recent saved steps compared"},
        {"rtol", ParamType::kFloat, "1e-05", "numpy.allclose relative tolerance"},
        {"atol", ParamType::kFloat, "1e-08", "numpy.allclose absolute tolerance"},
        {"equal_nan", ParamType::kBool, "False", "NaN counts as equal to NaN"}},
       {},
       false,
       [](std::vector<TrialPtr> t, const Params& p) -> Result<std::unique_ptr<Rule>> {
         SMD_RETURN_IF_ERROR(NeedSelection("UnchangedTensor", p));
         if (p.Int("num_steps") < 2) {
           return Params::Error("UnchangedTensor", "num_steps", std::to_string(p.Int("num_steps")),
                                "must be at least 2 (a tensor is compared across steps)");
         }
         return Make<UnchangedTensor>(std::move(t), p);
       }});
  out->push_back(
      {"TensorVariance",
       "a tensor's variance is above max_threshold or below min_threshold",
       {{"collection_names", ParamType::kList, nullptr, kCollectionsHelp},
        {"tensor_regex", ParamType::kRegexList, nullptr, kRegexHelp},
        {"max_threshold", ParamType::kFloat, nullptr, "fire when the variance is above this"},
        {"min_threshold", ParamType::kFloat, nullptr, "fire when the variance is below this"}},
       {},
       false,
       [](std::vector<TrialPtr> t, const Params& p) -> Result<std::unique_ptr<Rule>> {
         SMD_RETURN_IF_ERROR(NeedSelection("TensorVariance", p));
         return Make<TensorVariance>(std::move(t), p);
       }});
}

}  // namespace smd::rules
