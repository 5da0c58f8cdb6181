// StalledTrainingRule (BEHAVIOR.md A.21): time-based. It notes when the job last produced data
// (a step evaluated, or new index files seen while the invoker waits) and fires while waiting
// for the next step once nothing new has appeared for `threshold` seconds. It fires once per
// stall; new data re-arms it. A job that ended is not stalled (the invoker stops at NoMoreData).
#include "impl/rules/builtin.h"
#include "impl/rules/util.h"

namespace smd::rules {

namespace {

class StalledTrainingRule : public Rule {
 public:
  StalledTrainingRule(std::vector<TrialPtr> t, const Params& p)
      : Rule("StalledTrainingRule", std::move(t)), threshold_s_(p.Float("threshold")) {
    set_stop_training(p.Bool("stop_training_on_fire"));
  }

  Result<bool> InvokeAtStep(RuleContext& ctx, int64_t step) override {
    Grew(ctx);
    files_ = base().GetStats().index_files_read;
    last_step_ = step;
    return false;
  }

  Result<bool> OnWait(RuleContext& ctx, int64_t next_step) override {
    const uint64_t files = base().GetStats().index_files_read;
    if (!seen_ || files != files_) {
      files_ = files;
      Grew(ctx);
      return false;
    }
    const int64_t idle_ms = ctx.NowMs() - last_growth_ms_;
    if (fired_ || static_cast<double>(idle_ms) <= threshold_s_ * 1000.0) return false;
    fired_ = true;
    ctx.Report("", "no new data for " + Num(static_cast<double>(idle_ms) / 1000.0) +
                       " s while waiting for step " + std::to_string(next_step) +
                       (last_step_ >= 0 ? " (last step seen: " + std::to_string(last_step_) + ")"
                                        : std::string()) +
                       "; threshold " + Num(threshold_s_) + " s");
    return true;
  }

 private:
  void Grew(RuleContext& ctx) {
    seen_ = true;
    fired_ = false;
    last_growth_ms_ = ctx.NowMs();
  }

  double threshold_s_;
  bool seen_ = false;
  bool fired_ = false;
  uint64_t files_ = 0;
  int64_t last_growth_ms_ = 0;
  int64_t last_step_ = -1;
};

}  // namespace

void RegisterStalledTrainingRule(std::vector<BuiltinRuleInfo>* out) {
  out->push_back(
      {"StalledTrainingRule",
       "the job has written nothing new for threshold seconds (needs a live job: --follow)",
       {{"threshold", ParamType::kFloat, "1800", "seconds without new data that fire"},
        {"stop_training_on_fire", ParamType::kBool, "False",
         "also raise the stop-training signal when firing"},
        {"training_job_name_prefix", ParamType::kString, nullptr,
         "SageMaker job to stop (accepted; smd stops through the local signal instead)"}},
       {},
       false,
       [](std::vector<TrialPtr> t, const Params& p) -> Result<std::unique_ptr<Rule>> {
         if (!(p.Float("threshold") >= 0)) {
           return Params::Error("StalledTrainingRule", "threshold", p.Str("threshold"),
                                "must be a number of seconds >= 0");
         }
         return std::unique_ptr<Rule>(new StalledTrainingRule(std::move(t), p));
       }});
}

}  // namespace smd::rules
