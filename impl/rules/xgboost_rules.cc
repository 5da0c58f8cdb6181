// XGBoost rules: TreeDepth, FeatureImportanceOverweight (BEHAVIOR.md A.22, A.23).
#include <algorithm>
#include <cmath>

#include "impl/rules/builtin.h"
#include "impl/rules/util.h"

namespace smd::rules {

namespace {

// ---- TreeDepth (A.22) -----------------------------------------------------------------------

class TreeDepth : public Rule {
 public:
  TreeDepth(std::vector<TrialPtr> t, const Params& p)
      : Rule("TreeDepth", std::move(t)), depth_(p.Float("depth")) {}

  Result<bool> InvokeAtStep(RuleContext& ctx, int64_t step) override {
    // The XGBoost hook saves trees_to_dataframe() columns as trees/<column>; "Node" holds the
    // node ids of every tree.
    SMD_ASSIGN_OR_RETURN(std::vector<std::string> names,
                         TensorsMatching(base(), {"(^|/)Node$"}, step));
    bool fired = false;
    for (const std::string& name : names) {
      SMD_ASSIGN_OR_RETURN(ValuePtr v, ValueAt(base(), name, step));
      if (!v || !IsNumeric(*v) || v->count() == 0) continue;
      double top = -INFINITY;
      for (double x : ToDoubles(*v)) {
        if (!std::isnan(x)) top = std::max(top, x);
      }
      if (!(top > 0) || std::isinf(top)) continue;
      const double d = std::floor(std::log2(top));
      if (d > depth_) {
        ctx.Report(name, "tree depth " + Num(d) + " (log2 of the largest node id " + Num(top) +
                             ") is above depth " + Num(depth_));
        fired = true;
      }
    }
    return fired;
  }

 private:
  double depth_;
};

// ---- FeatureImportanceOverweight (A.23) -----------------------------------------------------

class FeatureImportanceOverweight : public Rule {
 public:
  FeatureImportanceOverweight(std::vector<TrialPtr> t, const Params& p)
      : Rule("FeatureImportanceOverweight", std::move(t)),
        threshold_(p.Float("threshold")),
        nfeatures_(static_cast<size_t>(p.Int("nfeatures"))),
        regexes_(p.List("tensor_regex")) {}

  Result<bool> InvokeAtStep(RuleContext& ctx, int64_t step) override {
    SMD_ASSIGN_OR_RETURN(std::vector<std::string> names, TensorsMatching(base(), regexes_, step));
    std::vector<std::pair<double, std::string>> features;
    for (const std::string& name : names) {
      SMD_ASSIGN_OR_RETURN(ValuePtr v, ValueAt(base(), name, step));
      if (!v || !IsNumeric(*v)) continue;
      const std::vector<double> d = ToDoubles(*v);
      for (size_t i = 0; i < d.size(); ++i) {
        if (std::isnan(d[i])) continue;
        features.emplace_back(d[i], d.size() == 1 ? name : name + "[" + std::to_string(i) + "]");
      }
    }
    // With nfeatures features or fewer the top ones always hold everything: no decision.
    if (features.size() <= nfeatures_) return false;
    double total = 0;
    for (const auto& f : features) total += f.first;
    if (!(total > 0) || std::isinf(total)) return false;
    std::stable_sort(features.begin(), features.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    double top = 0;
    std::string which;
    for (size_t i = 0; i < nfeatures_; ++i) {
      top += features[i].first;
      which += (i ? ", " : "") + features[i].second;
    }
    const double share = top / total;
    if (share > threshold_) {
      ctx.Report(features[0].second, "the " + std::to_string(nfeatures_) +
                                         " most important features (" + which + ") hold " +
                                         Num(share) + " of the total importance of " +
                                         std::to_string(features.size()) +
                                         " features (threshold " + Num(threshold_) + ")");
      return true;
    }
    return false;
  }

 private:
  double threshold_;
  size_t nfeatures_;
  std::vector<std::string> regexes_;
};

}  // namespace

void RegisterXgboostRules(std::vector<BuiltinRuleInfo>* out) {
  out->push_back(
      {"TreeDepth",
       "XGBoost trees are deeper than depth (log2 of the largest node id)",
       {{"depth", ParamType::kFloat, "4", "largest tolerated tree depth"}},
       {},
       false,
       [](std::vector<TrialPtr> t, const Params& p) -> Result<std::unique_ptr<Rule>> {
         return std::unique_ptr<Rule>(new TreeDepth(std::move(t), p));
       }});
  out->push_back(
      {"FeatureImportanceOverweight",
       "the nfeatures most important features hold more than threshold of the importance",
       {{"threshold", ParamType::kFloat, "0.8",
         "largest tolerated share of the nfeatures largest importances"},
        {"nfeatures", ParamType::kInt, "3", "number of largest features summed"},
        {"tensor_regex", ParamType::kRegexList, ".*feature_importance/weight",
         "importance tensors (one importance type)"}},
       {},
       false,
       [](std::vector<TrialPtr> t, const Params& p) -> Result<std::unique_ptr<Rule>> {
         if (p.Int("nfeatures") < 1) {
           return Params::Error("FeatureImportanceOverweight", "nfeatures",
                                std::to_string(p.Int("nfeatures")), "must be at least 1");
         }
         return std::unique_ptr<Rule>(new FeatureImportanceOverweight(std::move(t), p));
       }});
}

}  // namespace smd::rules
