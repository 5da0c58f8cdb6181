// Rules on labels and predictions: Confusion, ClassImbalance (BEHAVIOR.md A.17, A.18).
#include <algorithm>
#include <cmath>
#include <map>

#include "impl/rules/builtin.h"
#include "impl/rules/util.h"

namespace smd::rules {

namespace {

// Values at `step` of `names`, in smdebug's order (the integer after the last '_'), flattened and
// concatenated. With `argmax`, each tensor of rank >= 2 gives the index of the largest element
// along its last axis per row. Returns false if a tensor holds strings.
Result<bool> Gather(Trial& t, std::vector<std::string> names, int64_t step, bool argmax,
                    std::vector<double>* out) {
  std::stable_sort(names.begin(), names.end(), [](const std::string& a, const std::string& b) {
    return NameIndex(a) < NameIndex(b);
  });
  for (const std::string& n : names) {
    SMD_ASSIGN_OR_RETURN(ValuePtr v, ValueAt(t, n, step));
    if (!v) continue;
    if (!IsNumeric(*v)) return false;
    std::vector<double> d = ToDoubles(*v);
    if (argmax && v->shape().size() >= 2 && v->shape().back() > 0) {
      const size_t k = static_cast<size_t>(v->shape().back());
      for (size_t row = 0; row + k <= d.size(); row += k) {
        out->push_back(static_cast<double>(
            std::max_element(d.begin() + static_cast<ptrdiff_t>(row),
                             d.begin() + static_cast<ptrdiff_t>(row + k)) -
            (d.begin() + static_cast<ptrdiff_t>(row))));
      }
    } else {
      out->insert(out->end(), d.begin(), d.end());
    }
  }
  return true;
}

// numpy astype(int) of a label: truncation toward zero; nullopt for NaN and infinities.
std::optional<int64_t> AsClass(double x) {
  if (!std::isfinite(x) || std::fabs(x) > 9.0e15) return std::nullopt;
  return static_cast<int64_t>(x);
}

// ---- Confusion (A.17) -----------------------------------------------------------------------

class Confusion : public Rule {
 public:
  Confusion(std::vector<TrialPtr> t, const Params& p)
      : Rule("Confusion", std::move(t)),
        category_no_(p.OptInt("category_no")),
        labels_(p.Str("labels")),
        predictions_(p.Str("predictions")),
        labels_collection_(p.Str("labels_collection")),
        predictions_collection_(p.Str("predictions_collection")),
        min_diag_(p.Float("min_diag")),
        max_off_diag_(p.Float("max_off_diag")) {}

  Result<bool> InvokeAtStep(RuleContext& ctx, int64_t step) override {
    SMD_ASSIGN_OR_RETURN(std::vector<std::string> yn, Source(labels_collection_, labels_, step));
    SMD_ASSIGN_OR_RETURN(std::vector<std::string> pn,
                         Source(predictions_collection_, predictions_, step));
    if (yn.empty() || pn.empty()) return false;
    std::vector<double> y, yhat;
    SMD_ASSIGN_OR_RETURN(bool ok1, Gather(base(), yn, step, false, &y));
    SMD_ASSIGN_OR_RETURN(bool ok2, Gather(base(), pn, step, false, &yhat));
    if (!ok1 || !ok2 || y.empty() || y.size() != yhat.size()) return false;
    // K: category_no, else the larger category count of the two vectors.
    int64_t k = 0;
    if (category_no_) {
      k = *category_no_;
    } else {
      for (size_t i = 0; i < y.size(); ++i) {
        auto a = AsClass(y[i]), b = AsClass(yhat[i]);
        if (a) k = std::max(k, *a + 1);
        if (b) k = std::max(k, *b + 1);
      }
    }
    // Column i = predicted class i: its counts per true class.
    std::map<int64_t, std::map<int64_t, int64_t>> cols;
    for (size_t i = 0; i < y.size(); ++i) {
      auto a = AsClass(y[i]), b = AsClass(yhat[i]);
      if (!a || !b || *a < 0 || *b < 0 || *a >= k || *b >= k) continue;  // outside the matrix
      ++cols[*b][*a];
    }
    bool fired = false;
    const std::string& tensor = pn.front();
    for (const auto& col : cols) {
      int64_t total = 0;
      for (const auto& cell : col.second) total += cell.second;
      if (total == 0) continue;
      auto diag_it = col.second.find(col.first);
      const double diag = static_cast<double>(diag_it == col.second.end() ? 0 : diag_it->second) /
                          static_cast<double>(total);
      if (diag < min_diag_) {
        ctx.Report(tensor, "class " + std::to_string(col.first) + ": only " + Num(diag) +
                               " of its predictions are correct (min_diag " + Num(min_diag_) + ")");
        fired = true;
        continue;
      }
      for (const auto& cell : col.second) {
        if (cell.first == col.first) continue;
        const double off = static_cast<double>(cell.second) / static_cast<double>(total);
        if (off > max_off_diag_) {
          ctx.Report(tensor, "class " + std::to_string(col.first) + ": " + Num(off) +
                                 " of its predictions are class " + std::to_string(cell.first) +
                                 " (max_off_diag " + Num(max_off_diag_) + ")");
          fired = true;
          break;
        }
      }
    }
    return fired;
  }

 private:
  // The tensors of `collection` saved at `step` if the collection has any, else `name`.
  Result<std::vector<std::string>> Source(const std::string& collection, const std::string& name,
                                          int64_t step) {
    if (!collection.empty()) {
      SMD_ASSIGN_OR_RETURN(std::vector<std::string> c,
                           SelectTensors(base(), {collection}, {}, step, false));
      if (!c.empty()) return c;
    }
    if (name.empty()) return std::vector<std::string>();
    SMD_ASSIGN_OR_RETURN(bool has, base().HasTensor(name));
    if (!has) return std::vector<std::string>();
    return std::vector<std::string>{name};
  }

  std::optional<int64_t> category_no_;
  std::string labels_, predictions_, labels_collection_, predictions_collection_;
  double min_diag_, max_off_diag_;
};

// ---- ClassImbalance (A.18) ------------------------------------------------------------------

class ClassImbalance : public Rule {
 public:
  ClassImbalance(std::vector<TrialPtr> t, const Params& p)
      : Rule("ClassImbalance", std::move(t)),
        imbalance_(p.Float("threshold_imbalance")),
        misprediction_(p.Float("threshold_misprediction")),
        samples_(p.Int("samples")),
        argmax_(p.Bool("argmax")),
        labels_re_(p.List("labels_regex")),
        predictions_re_(p.List("predictions_regex")) {}

  Result<bool> InvokeAtStep(RuleContext& ctx, int64_t step) override {
    SMD_ASSIGN_OR_RETURN(std::vector<std::string> ln, TensorsMatching(base(), labels_re_, step));
    SMD_ASSIGN_OR_RETURN(std::vector<std::string> pn,
                         TensorsMatching(base(), predictions_re_, step));
    if (ln.empty() || pn.empty()) return false;
    std::vector<double> y, yhat;
    SMD_ASSIGN_OR_RETURN(bool ok1, Gather(base(), ln, step, false, &y));
    SMD_ASSIGN_OR_RETURN(bool ok2, Gather(base(), pn, step, argmax_, &yhat));
    if (!ok1 || !ok2 || y.empty() || y.size() != yhat.size()) return false;
    for (size_t i = 0; i < y.size(); ++i) {
      auto c = AsClass(y[i]);
      if (!c) continue;
      Count& k = counts_[*c];
      ++k.n;
      auto p = AsClass(yhat[i]);
      if (!p || *p != *c) ++k.wrong;
      ++total_;
    }
    if (total_ < samples_) return false;
    bool fired = false;
    const Count* most = nullptr;
    const Count* least = nullptr;
    int64_t most_c = 0, least_c = 0;
    for (const auto& kv : counts_) {
      if (kv.second.n == 0) continue;
      if (!most || kv.second.n > most->n) most = &kv.second, most_c = kv.first;
      if (!least || kv.second.n < least->n) least = &kv.second, least_c = kv.first;
    }
    if (most && least) {
      const double ratio = static_cast<double>(most->n) / static_cast<double>(least->n);
      if (ratio > imbalance_) {
        ctx.Report(ln.front(), "class " + std::to_string(most_c) + " has " +
                                   std::to_string(most->n) + " samples and class " +
                                   std::to_string(least_c) + " only " + std::to_string(least->n) +
                                   " (ratio " + Num(ratio) + " > threshold_imbalance " +
                                   Num(imbalance_) + ", " + std::to_string(total_) +
                                   " samples so far)");
        fired = true;
      }
    }
    for (const auto& kv : counts_) {
      if (kv.second.n == 0) continue;
      const double f = static_cast<double>(kv.second.wrong) / static_cast<double>(kv.second.n);
      if (f > misprediction_) {
        ctx.Report(pn.front(), "class " + std::to_string(kv.first) + ": " + Num(f) +
                                   " of its " + std::to_string(kv.second.n) +
                                   " samples are mispredicted (threshold_misprediction " +
                                   Num(misprediction_) + ")");
        fired = true;
      }
    }
    return fired;
  }

 private:
  struct Count {
    int64_t n = 0;
    int64_t wrong = 0;
  };
  double imbalance_, misprediction_;
  int64_t samples_;
  bool argmax_;
  std::vector<std::string> labels_re_, predictions_re_;
  std::map<int64_t, Count> counts_;
  int64_t total_ = 0;
};

}  // namespace

void RegisterClassificationRules(std::vector<BuiltinRuleInfo>* out) {
  out->push_back(
      {"Confusion",
       "the confusion matrix of labels and predictions has a weak diagonal",
       {{"category_no", ParamType::kInt, nullptr,
         "number of classes (default: the largest class in the data + 1)"},
        {"labels", ParamType::kString, "labels", "tensor of the true labels"},
        {"predictions", ParamType::kString, "predictions", "tensor of the predicted labels"},
        {"labels_collection", ParamType::kString, "labels",
         "collection of the label tensors (used when it has tensors at the step)"},
        {"predictions_collection", ParamType::kString, "predictions",
         "collection of the prediction tensors (used when it has tensors at the step)"},
        {"min_diag", ParamType::kFloat, "0.9",
         "minimum share of a predicted class that is correct"},
        {"max_off_diag", ParamType::kFloat, "0.1",
         "maximum share of a predicted class that is one other true class"}},
       {},
       false,
       [](std::vector<TrialPtr> t, const Params& p) -> Result<std::unique_ptr<Rule>> {
         if (p.Has("category_no") && p.Int("category_no") < 2) {
           return Params::Error("Confusion", "category_no", std::to_string(p.Int("category_no")),
                                "must be at least 2");
         }
         return std::unique_ptr<Rule>(new Confusion(std::move(t), p));
       }});
  out->push_back(
      {"ClassImbalance",
       "class frequencies are imbalanced or a class is mostly mispredicted",
       {{"threshold_imbalance", ParamType::kFloat, "10",
         "fire when the largest / smallest class count exceeds this"},
        {"threshold_misprediction", ParamType::kFloat, "0.7",
         "fire when a class's misprediction fraction exceeds this"},
        {"samples", ParamType::kInt, "500", "labels to accumulate before evaluating"},
        {"argmax", ParamType::kBool, "False",
         "take the argmax of the predictions over their last axis"},
        {"labels_regex", ParamType::kRegexList, ".*labels", "label tensors"},
        {"predictions_regex", ParamType::kRegexList, ".*predictions", "prediction tensors"}},
       {},
       false,
       [](std::vector<TrialPtr> t, const Params& p) -> Result<std::unique_ptr<Rule>> {
         if (p.Int("samples") < 1) {
           return Params::Error("ClassImbalance", "samples", std::to_string(p.Int("samples")),
                                "must be at least 1");
         }
         return std::unique_ptr<Rule>(new ClassImbalance(std::move(t), p));
       }});
}

}  // namespace smd::rules
