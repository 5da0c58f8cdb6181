// Rules on model inputs: CheckInputImages, NLPSequenceRatio (BEHAVIOR.md A.19, A.20).
#include <cmath>
#include <map>

#include "impl/rules/builtin.h"
#include "impl/rules/util.h"

namespace smd::rules {

namespace {

// ---- CheckInputImages (A.19) ----------------------------------------------------------------

class CheckInputImages : public Rule {
 public:
  CheckInputImages(std::vector<TrialPtr> t, const Params& p)
      : Rule("CheckInputImages", std::move(t)),
        threshold_mean_(p.Float("threshold_mean")),
        threshold_samples_(p.Int("threshold_samples")),
        regexes_(p.List("regex")),
        channel_(static_cast<size_t>(p.Int("channel"))) {}

  Result<bool> InvokeAtStep(RuleContext& ctx, int64_t step) override {
    SMD_ASSIGN_OR_RETURN(std::vector<std::string> names, TensorsMatching(base(), regexes_, step));
    bool fired = false;
    for (const std::string& name : names) {
      SMD_ASSIGN_OR_RETURN(ValuePtr v, ValueAt(base(), name, step));
      if (!v || !IsNumeric(*v) || v->count() == 0) continue;
      const auto& shape = v->shape();
      if (shape.size() <= channel_) continue;  // no channel axis
      const size_t channels = static_cast<size_t>(shape[channel_]);
      size_t inner = 1;
      for (size_t a = channel_ + 1; a < shape.size(); ++a) inner *= static_cast<size_t>(shape[a]);
      if (channels == 0 || inner == 0) continue;
      Acc& acc = acc_[name];
      if (acc.sum.size() != channels) {
        acc.sum.assign(channels, 0.0);
        acc.count.assign(channels, 0);
        acc.images = 0;
      }
      const std::vector<double> d = ToDoubles(*v);
      for (size_t i = 0; i < d.size(); ++i) {
        const size_t c = (i / inner) % channels;
        acc.sum[c] += d[i];
        ++acc.count[c];
      }
      acc.images += shape[0];
      if (acc.images < threshold_samples_) continue;
      for (size_t c = 0; c < channels; ++c) {
        if (acc.count[c] == 0) continue;
        const double mean = acc.sum[c] / static_cast<double>(acc.count[c]);
        if (std::fabs(mean) > threshold_mean_) {
          ctx.Report(name, "channel " + std::to_string(c) + " has mean " + Num(mean) + " over " +
                               std::to_string(acc.images) + " images, more than threshold_mean " +
                               Num(threshold_mean_) + " from 0 (inputs not normalized)");
          fired = true;
          break;
        }
      }
    }
    return fired;
  }

 private:
  struct Acc {
    std::vector<double> sum;
    std::vector<int64_t> count;
    int64_t images = 0;
  };
  double threshold_mean_;
  int64_t threshold_samples_;
  std::vector<std::string> regexes_;
  size_t channel_;
  std::map<std::string, Acc> acc_;
};

// ---- NLPSequenceRatio (A.20) ----------------------------------------------------------------

class NLPSequenceRatio : public Rule {
 public:
  NLPSequenceRatio(std::vector<TrialPtr> t, const Params& p, std::vector<double> thresholds)
      : Rule("NLPSequenceRatio", std::move(t)),
        regexes_(p.List("tensor_regex")),
        tokens_(p.Floats("token_values")),
        thresholds_(std::move(thresholds)) {}

  Result<bool> InvokeAtStep(RuleContext& ctx, int64_t step) override {
    SMD_ASSIGN_OR_RETURN(std::vector<std::string> names, TensorsMatching(base(), regexes_, step));
    bool fired = false;
    for (const std::string& name : names) {
      SMD_ASSIGN_OR_RETURN(ValuePtr v, ValueAt(base(), name, step));
      if (!v || !IsNumeric(*v) || v->count() == 0) continue;
      const std::vector<double> d = ToDoubles(*v);
      for (size_t k = 0; k < tokens_.size(); ++k) {
        size_t n = 0;
        for (double x : d) n += x == tokens_[k] ? 1 : 0;
        const double pct = 100.0 * static_cast<double>(n) / static_cast<double>(d.size());
        if (pct > thresholds_[k]) {
          ctx.Report(name, "token " + Num(tokens_[k]) + " makes up " + Num(pct) + "% of " +
                               std::to_string(d.size()) + " tokens (threshold " +
                               Num(thresholds_[k]) + "%)");
          fired = true;
        }
      }
    }
    return fired;
  }

 private:
  std::vector<std::string> regexes_;
  std::vector<double> tokens_, thresholds_;
};

}  // namespace

void RegisterInputRules(std::vector<BuiltinRuleInfo>* out) {
  out->push_back(
      {"CheckInputImages",
       "input images are not normalized (a channel mean far from 0)",
       {{"threshold_mean", ParamType::kFloat, "0.2", "allowed distance of a channel mean from 0"},
        {"threshold_samples", ParamType::kInt, "500", "images to accumulate before evaluating"},
        {"regex", ParamType::kRegexList, ".*hybridsequential0_input_0", "input image tensors"},
        {"channel", ParamType::kInt, "1", "axis of the colour channel (axis 0 is the batch)"}},
       {},
       false,
       [](std::vector<TrialPtr> t, const Params& p) -> Result<std::unique_ptr<Rule>> {
         if (p.Int("channel") < 1) {
           return Params::Error("CheckInputImages", "channel", std::to_string(p.Int("channel")),
                                "must be at least 1 (axis 0 is the batch)");
         }
         return std::unique_ptr<Rule>(new CheckInputImages(std::move(t), p));
       }});
  out->push_back(
      {"NLPSequenceRatio",
       "given token ids (padding, unknown words) make up too much of the input sequences",
       {{"tensor_regex", ParamType::kRegexList, ".*embedding0_input_0", "input sequence tensors"},
        {"token_values", ParamType::kFloatList, "0", "token ids to count (comma-separated)"},
        {"token_thresholds_percent", ParamType::kFloatList, "50",
         "maximum percentage per token (one value for all, or one per token)"}},
       {},
       false,
       [](std::vector<TrialPtr> t, const Params& p) -> Result<std::unique_ptr<Rule>> {
         std::vector<double> thr = p.Floats("token_thresholds_percent");
         const size_t n = p.Floats("token_values").size();
         if (thr.size() == 1) {
           thr.assign(n, thr[0]);
         } else if (thr.size() != n) {
           return Params::Error("NLPSequenceRatio", "token_thresholds_percent",
                                p.Str("token_thresholds_percent"),
                                "needs one threshold, or one per token value (" +
                                    std::to_string(n) + ")");
         }
         return std::unique_ptr<Rule>(new NLPSequenceRatio(std::move(t), p, std::move(thr)));
       }});
}

}  // namespace smd::rules
