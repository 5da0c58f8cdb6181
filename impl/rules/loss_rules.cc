// Rules on scalar losses: LossNotDecreasing, Overfit, Overtraining (BEHAVIOR.md A.10, A.15, A.16).
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "impl/rules/builtin.h"
#include "impl/rules/util.h"

namespace smd::rules {

namespace {

// The single element of a one-element numeric value at (step, mode); nullopt otherwise.
Result<std::optional<double>> ScalarAt(Trial& t, const std::string& name, int64_t step, Mode mode) {
  SMD_ASSIGN_OR_RETURN(ValuePtr v, ValueAt(t, name, step, mode));
  if (!v || !IsNumeric(*v) || v->count() != 1) return std::optional<double>();
  return std::optional<double>(ElementAt(*v, 0));
}

// ---- LossNotDecreasing (A.10) ---------------------------------------------------------------

class LossNotDecreasing : public Rule {
 public:
  LossNotDecreasing(std::vector<TrialPtr> t, const Params& p)
      : Rule("LossNotDecreasing", std::move(t)),
        collections_(p.List("collection_names")),
        regexes_(p.List("tensor_regex")),
        use_losses_(p.Bool("use_losses_collection")),
        num_steps_(p.Int("num_steps")),
        diff_percent_(p.Float("diff_percent")),
        increase_percent_(p.Float("increase_threshold_percent")),
        legacy_(p.Bool("legacy_diff_percent")) {
    if (p.Has("mode")) given_mode_ = static_cast<Mode>(p.Mode("mode"));
  }

  Result<bool> InvokeAtStep(RuleContext& ctx, int64_t step) override {
    // The mode: given, else the first of EVAL, TRAIN, GLOBAL with steps. A running job may
    // write its first EVAL (or TRAIN) steps after the baseline was taken in a later-preferred
    // mode: the rule then moves to the preferred mode and takes a new baseline there (the
    // earlier mode's state is dropped), so from then on it judges what a run over the ended job
    // judges. Modes only appear, never go, so this happens at most twice.
    Mode mode = Mode::kGlobal;
    if (given_mode_) {
      mode = *given_mode_;
    } else {
      const std::vector<Mode> modes = base().Modes();
      auto has = [&](Mode m) { return std::find(modes.begin(), modes.end(), m) != modes.end(); };
      mode = has(Mode::kEval) ? Mode::kEval : has(Mode::kTrain) ? Mode::kTrain : Mode::kGlobal;
      if (mode != baseline_mode_) last_.reset();
    }
    int64_t ms = step;
    if (mode != Mode::kGlobal) {
      SMD_ASSIGN_OR_RETURN(auto mo, base().ModeOf(step));
      if (!mo || mo->first != mode) return false;
      ms = mo->second;
    }
    // The losses: the selection, plus collection "losses"; every tensor if both are empty.
    SMD_ASSIGN_OR_RETURN(std::vector<std::string> all,
                         SelectTensors(base(), collections_, regexes_, std::nullopt, false));
    std::set<std::string> names(all.begin(), all.end());
    if (use_losses_) {
      SMD_ASSIGN_OR_RETURN(std::vector<std::string> l,
                           SelectTensors(base(), {"losses"}, {}, std::nullopt, false));
      names.insert(l.begin(), l.end());
    }
    if (names.empty()) {
      SMD_ASSIGN_OR_RETURN(std::vector<std::string> every,
                           SelectTensors(base(), {}, {}, std::nullopt, true));
      names.insert(every.begin(), every.end());
    }
    std::vector<std::pair<std::string, double>> now;
    for (const std::string& n : names) {
      SMD_ASSIGN_OR_RETURN(std::optional<double> x, ScalarAt(base(), n, ms, mode));
      if (x) now.emplace_back(n, *x);
    }
    if (now.empty()) return false;
    if (!last_) {
      last_ = ms;
      baseline_mode_ = mode;
      return false;
    }
    if (ms < *last_ + num_steps_) return false;
    bool fired = false;
    for (const auto& cur : now) {
      SMD_ASSIGN_OR_RETURN(uint32_t id, base().TensorId(cur.first));
      SMD_ASSIGN_OR_RETURN(std::vector<int64_t> steps, base().TensorSteps(id, mode, false));
      auto it = std::upper_bound(steps.begin(), steps.end(), ms - num_steps_);
      if (it == steps.begin()) continue;
      const int64_t p = *(it - 1);
      SMD_ASSIGN_OR_RETURN(std::optional<double> prev, ScalarAt(base(), cur.first, p, mode));
      if (!prev) continue;
      // No decrease can be measured from a NaN or infinite earlier loss: no decision, unless
      // the loss is not finite now either (that fires by itself).
      if (!std::isfinite(*prev) && std::isfinite(cur.second)) continue;
      std::string why;
      if (Fires(*prev, cur.second, &why)) {
        ctx.Report(cur.first, why + " (" + ModeName(mode) + " step " + std::to_string(p) + ": " +
                                  Num(*prev) + ", step " + std::to_string(ms) + ": " +
                                  Num(cur.second) + ")");
        fired = true;
      }
    }
    last_ = ms;
    return fired;
  }

 private:
  // Whether the loss `now` fires against the earlier `before` (both finite, or `now` not finite).
  bool Fires(double before, double now, std::string* why) const {
    // A loss that became NaN or infinite is not decreasing, whatever diff_percent says (every
    // comparison with NaN is false: it used to pass as fine).
    if (std::isnan(now)) {
      *why = "loss is NaN";
      return true;
    }
    if (std::isinf(now)) {
      *why = "loss is infinite";
      return true;
    }
    if (legacy_) {
      // 2019 behaviour: diff_percent is the largest tolerated increase (A.10 (b)).
      const double inc = before == 0 ? (now >= 0 ? INFINITY : -INFINITY)
                                     : (now - before) / std::fabs(before) * 100.0;
      if (inc >= diff_percent_) {
        *why = "loss changed by " + Num(inc) + "%, not below diff_percent " + Num(diff_percent_) + "%";
        return true;
      }
      return false;
    }
    if (before == 0) {
      if (now >= 0) {
        *why = "loss did not decrease from 0";
        return true;
      }
      return false;
    }
    const double dec = (before - now) / std::fabs(before) * 100.0;
    if (now <= before) {
      if (dec < diff_percent_) {
        *why = "loss decreased by only " + Num(dec) + "%, less than diff_percent " +
               Num(diff_percent_) + "%";
        return true;
      }
      return false;
    }
    if (-dec > increase_percent_) {
      *why = "loss increased by " + Num(-dec) + "%, more than increase_threshold_percent " +
             Num(increase_percent_) + "%";
      return true;
    }
    return false;
  }

  std::vector<std::string> collections_, regexes_;
  bool use_losses_;
  int64_t num_steps_;
  double diff_percent_, increase_percent_;
  bool legacy_;
  std::optional<Mode> given_mode_;  // the mode parameter
  Mode baseline_mode_ = Mode::kGlobal;  // the mode of last_
  std::optional<int64_t> last_;  // mode step of the last comparison (or the baseline)
};

// ---- Overfit / Overtraining: loss series (A.15, A.16) ---------------------------------------

// The loss tensors: tensor_regex matches, else collection "losses", else every tensor (scalar
// ones are kept when values are read).
Result<std::vector<std::string>> LossSources(Trial& t, const std::vector<std::string>& regexes) {
  if (!regexes.empty()) return TensorsMatching(t, regexes, std::nullopt);
  SMD_ASSIGN_OR_RETURN(std::vector<std::string> l, SelectTensors(t, {"losses"}, {}, std::nullopt, false));
  if (!l.empty()) return l;
  return SelectTensors(t, {}, {}, std::nullopt, true);
}

bool StartsWith(const std::string& s, const char* p) { return s.rfind(p, 0) == 0; }

// XGBoost metrics carry no mode: "train-rmse" is paired with "validation-rmse" (or "eval-").
std::optional<std::string> MetricOf(const std::string& name, bool* train) {
  for (const char* p : {"train-", "validation-", "eval-"}) {
    if (StartsWith(name, p) && name.size() > std::string(p).size()) {
      *train = std::string(p) == "train-";
      return name.substr(std::string(p).size());
    }
  }
  return std::nullopt;
}

// Scalar values of one tensor in one mode, by global step, read once each.
class SeriesCache {
 public:
  // Values of (name, mode) at global steps <= upto (GLOBAL: every mode).
  using Values = std::map<int64_t, double>;
  Result<const Values*> Get(Trial& t, const std::string& name, Mode mode,
                                               int64_t upto) {
    Entry& e = entries_[{name, static_cast<int>(mode)}];
    SMD_ASSIGN_OR_RETURN(uint32_t id, t.TensorId(name));
    SMD_ASSIGN_OR_RETURN(std::vector<int64_t> steps, t.TensorSteps(id, mode, false));
    for (int64_t ms : steps) {
      if (e.done.count(ms)) continue;
      int64_t g = ms;
      if (mode != Mode::kGlobal) {
        SMD_ASSIGN_OR_RETURN(std::optional<int64_t> gs, t.GlobalStep(mode, ms));
        if (!gs) continue;
        g = *gs;
      }
      if (g > upto) break;
      e.done.insert(ms);
      SMD_ASSIGN_OR_RETURN(std::optional<double> x, ScalarAt(t, name, ms, mode));
      if (x) e.by_global[g] = *x;
    }
    return &e.by_global;
  }

 private:
  struct Entry {
    std::set<int64_t> done;
    std::map<int64_t, double> by_global;
  };
  std::map<std::pair<std::string, int>, Entry> entries_;
};

// The mean of the finite values at steps in [lo, hi]: a NaN or infinite loss would make every
// later mean NaN (or infinite) and silence the comparison for the rest of the run.
double MeanIn(const std::map<int64_t, double>& m, int64_t lo, int64_t hi, size_t* n) {
  double sum = 0;
  *n = 0;
  for (auto it = m.lower_bound(lo); it != m.end() && it->first <= hi; ++it) {
    if (!std::isfinite(it->second)) continue;
    sum += it->second;
    ++*n;
  }
  return *n ? sum / static_cast<double>(*n) : NAN;
}

class Overfit : public Rule {
 public:
  Overfit(std::vector<TrialPtr> t, const Params& p)
      : Rule("Overfit", std::move(t)),
        regexes_(p.List("tensor_regex")),
        start_step_(p.Int("start_step")),
        patience_(p.Int("patience")),
        ratio_(p.Float("ratio_threshold")) {}

  Result<bool> InvokeAtStep(RuleContext& ctx, int64_t step) override {
    if (step < start_step_) return false;
    SMD_ASSIGN_OR_RETURN(std::vector<std::string> sources, LossSources(base(), regexes_));
    SMD_ASSIGN_OR_RETURN(auto mo, base().ModeOf(step));
    // (training series, validation series) pairs whose validation value is saved at `step`.
    struct Pair {
      std::string train, valid;
      Mode train_mode, valid_mode;
    };
    std::vector<Pair> pairs;
    std::set<std::string> names(sources.begin(), sources.end());
    for (const std::string& n : sources) {
      bool is_train = false;
      if (auto metric = MetricOf(n, &is_train)) {
        if (is_train) continue;
        const std::string tr = "train-" + *metric;
        if (names.count(tr)) pairs.push_back({tr, n, Mode::kGlobal, Mode::kGlobal});
      } else if (mo && mo->first == Mode::kEval) {
        pairs.push_back({n, n, Mode::kTrain, Mode::kEval});
      }
    }
    bool fired = false;
    for (const Pair& pr : pairs) {
      SMD_ASSIGN_OR_RETURN(std::optional<double> v, ScalarAt(base(), pr.valid, step, Mode::kGlobal));
      if (!v || !std::isfinite(*v)) continue;  // a non-finite validation loss: not judged here
      SMD_ASSIGN_OR_RETURN(const SeriesCache::Values* tr,
                           cache_.Get(base(), pr.train, pr.train_mode, step));
      size_t nt = 0, nv = 0;
      const double mt = MeanIn(*tr, start_step_, step, &nt);
      SMD_ASSIGN_OR_RETURN(const SeriesCache::Values* va,
                           cache_.Get(base(), pr.valid, pr.valid_mode, step));
      const double mv = MeanIn(*va, start_step_, step, &nv);
      if (nt == 0 || nv == 0 || mt == 0 || std::isnan(mt) || std::isnan(mv)) continue;
      const double r = (mv - mt) / mt;
      int64_t& count = counters_[pr.valid];
      count = r > ratio_ ? count + 1 : 0;
      if (count >= patience_) {
        ctx.Report(pr.valid, "mean validation loss " + Num(mv) + " exceeds mean training loss " +
                                 Num(mt) + " ('" + pr.train + "') by " + Num(r * 100) +
                                 "% (ratio_threshold " + Num(ratio_) + ") at " +
                                 std::to_string(count) + " consecutive validation step(s)");
        fired = true;
      }
    }
    return fired;
  }

 private:
  std::vector<std::string> regexes_;
  int64_t start_step_, patience_;
  double ratio_;
  SeriesCache cache_;
  std::map<std::string, int64_t> counters_;
};

class Overtraining : public Rule {
 public:
  Overtraining(std::vector<TrialPtr> t, const Params& p)
      : Rule("Overtraining", std::move(t)),
        regexes_(p.List("tensor_regex")),
        patience_train_(p.Int("patience_train")),
        patience_valid_(p.Int("patience_validation")),
        delta_(p.Float("delta")) {}

  Result<bool> InvokeAtStep(RuleContext& ctx, int64_t step) override {
    SMD_ASSIGN_OR_RETURN(std::vector<std::string> sources, LossSources(base(), regexes_));
    SMD_ASSIGN_OR_RETURN(auto mo, base().ModeOf(step));
    if (!mo) return false;
    bool fired = false;
    for (const std::string& n : sources) {
      bool is_train = false;
      if (MetricOf(n, &is_train)) {
        // the name says which series it is
      } else if (mo->first == Mode::kTrain || mo->first == Mode::kGlobal) {
        is_train = true;
      } else if (mo->first == Mode::kEval) {
        is_train = false;
      } else {
        continue;  // PREDICT
      }
      SMD_ASSIGN_OR_RETURN(std::optional<double> v, ScalarAt(base(), n, step, Mode::kGlobal));
      if (!v) continue;
      Series& s = series_[{n, is_train}];
      // A NaN is no improvement: it counts as a step without one (it was skipped, so a loss
      // that turned NaN for good never fired). The first number is the first optimum.
      if (!std::isnan(*v)) {
        if (!s.best) {
          s.best = *v;
          s.waited = 0;
          continue;
        }
        if (*v < *s.best - delta_) {
          s.best = *v;
          s.waited = 0;
          continue;
        }
      }
      ++s.waited;
      const int64_t patience = is_train ? patience_train_ : patience_valid_;
      if (s.waited >= patience) {
        ctx.Report(n, std::string(is_train ? "training" : "validation") +
                          " loss has not improved by more than delta " + Num(delta_) + " for " +
                          std::to_string(s.waited) + " saved steps (best " +
                          (s.best ? Num(*s.best) : std::string("none yet")) + ", patience_" +
                          (is_train ? "train " : "validation ") + std::to_string(patience) + ")" +
                          (std::isnan(*v) ? "; the loss is NaN" : ""));
        fired = true;
      }
    }
    return fired;
  }

 private:
  struct Series {
    std::optional<double> best;  // the lowest number so far (NaN values never are)
    int64_t waited = 0;          // saved steps since the last improvement (or the start)
  };
  std::vector<std::string> regexes_;
  int64_t patience_train_, patience_valid_;
  double delta_;
  std::map<std::pair<std::string, bool>, Series> series_;
};

Status AtLeast(const char* rule, const Params& p, const char* name, int64_t min) {
  if (p.Int(name) < min) {
    return Params::Error(rule, name, std::to_string(p.Int(name)),
                         "must be at least " + std::to_string(min));
  }
  return Status::Ok();
}

}  // namespace

void RegisterLossRules(std::vector<BuiltinRuleInfo>* out) {
  out->push_back(
      {"LossNotDecreasing",
       "a scalar loss does not decrease by diff_percent over num_steps steps",
       {{"collection_names", ParamType::kList, nullptr, "collections holding the losses"},
        {"tensor_regex", ParamType::kRegexList, nullptr, "regular expressions of loss tensors"},
        {"use_losses_collection", ParamType::kBool, "True", "also use collection losses"},
        {"num_steps", ParamType::kInt, "10", "minimum distance in steps between compared losses"},
        {"diff_percent", ParamType::kFloat, "0.1",
         "minimum percentage by which the loss must have decreased"},
        {"increase_threshold_percent", ParamType::kFloat, "5",
         "largest tolerated percentage increase"},
        {"mode", ParamType::kMode, nullptr, "mode whose steps are used (default: EVAL, TRAIN, GLOBAL)"},
        {"legacy_diff_percent", ParamType::kBool, "False",
         "smd extension: 2019 semantics, fire when the loss rose by diff_percent or more"}},
       {{"min_difference", "diff_percent"}},
       false,
       [](std::vector<TrialPtr> t, const Params& p) -> Result<std::unique_ptr<Rule>> {
         SMD_RETURN_IF_ERROR(AtLeast("LossNotDecreasing", p, "num_steps", 1));
         return std::unique_ptr<Rule>(new LossNotDecreasing(std::move(t), p));
       }});
  out->push_back(
      {"Overfit",
       "the mean validation loss exceeds the mean training loss by ratio_threshold",
       {{"tensor_regex", ParamType::kRegexList, nullptr,
         "loss tensors (default: collection losses, else every scalar tensor)"},
        {"start_step", ParamType::kInt, "0", "first global step compared"},
        {"patience", ParamType::kInt, "1", "consecutive validation steps above the ratio that fire"},
        {"ratio_threshold", ParamType::kFloat, "0.1",
         "largest tolerated (validation - training) / training of the mean losses"}},
       {},
       false,
       [](std::vector<TrialPtr> t, const Params& p) -> Result<std::unique_ptr<Rule>> {
         SMD_RETURN_IF_ERROR(AtLeast("Overfit", p, "patience", 1));
         SMD_RETURN_IF_ERROR(AtLeast("Overfit", p, "start_step", 0));
         return std::unique_ptr<Rule>(new Overfit(std::move(t), p));
       }});
  out->push_back(
      {"Overtraining",
       "the training or validation loss stopped improving (where early stopping would apply)",
       {{"tensor_regex", ParamType::kRegexList, nullptr,
         "loss tensors (default: collection losses, else every scalar tensor)"},
        {"patience_train", ParamType::kInt, "5",
         "saved training steps without improvement that fire"},
        {"patience_validation", ParamType::kInt, "10",
         "saved validation steps without improvement that fire"},
        {"delta", ParamType::kFloat, "0.01", "minimum decrease that counts as an improvement"}},
       {},
       false,
       [](std::vector<TrialPtr> t, const Params& p) -> Result<std::unique_ptr<Rule>> {
         SMD_RETURN_IF_ERROR(AtLeast("Overtraining", p, "patience_train", 1));
         SMD_RETURN_IF_ERROR(AtLeast("Overtraining", p, "patience_validation", 1));
         return std::unique_ptr<Rule>(new Overtraining(std::move(t), p));
       }});
}

}  // namespace smd::rules
