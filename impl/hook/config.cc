#include "impl/hook/config.h"

#include <algorithm>

#include "impl/core/text.h"

namespace smd::hook {

bool SaveConfigMode::ShouldSave(int64_t s) const {
  if (!save_steps.empty() &&
      std::find(save_steps.begin(), save_steps.end(), s) != save_steps.end()) {
    return true;
  }
  if (s < 0 || s < start_step) return false;
  if (end_step && s >= *end_step) return false;
  return save_interval > 0 && s % save_interval == 0;
}

void SaveConfigMode::AppendJson(std::string* out) const {
  *out += "{\"save_interval\": ";
  *out += std::to_string(save_interval);
  *out += ", \"save_steps\": [";
  for (size_t i = 0; i < save_steps.size(); ++i) {
    if (i) *out += ", ";
    *out += std::to_string(save_steps[i]);
  }
  *out += "], \"start_step\": ";
  *out += std::to_string(start_step);
  *out += ", \"end_step\": ";
  *out += end_step ? std::to_string(*end_step) : "null";
  *out += '}';
}

SaveConfigMode SaveConfig::Effective(Mode m, const SaveConfig* fallback) const {
  if (mode(m)) return *mode(m);
  if (fallback && fallback->mode(m)) return *fallback->mode(m);
  return SaveConfigMode();
}

Result<ReductionConfig> ReductionConfig::Parse(std::string_view spec) {
  ReductionConfig rc;
  for (const std::string& item : SplitAndStrip(spec, ',')) SMD_RETURN_IF_ERROR(rc.Add(item));
  return rc;
}

Status ReductionConfig::Add(std::string_view name) {
  SMD_ASSIGN_OR_RETURN(ReductionName r, ParseReductionName(name));
  Add(r.op, r.abs);
  return Status::Ok();
}

void ReductionConfig::Add(ReductionOp op, bool abs) {
  std::vector<ReductionOp>* list = IsNorm(op) ? (abs ? &abs_norms_ : &norms_)
                                              : (abs ? &abs_reductions_ : &reductions_);
  if (std::find(list->begin(), list->end(), op) == list->end()) list->push_back(op);
}

std::string ReductionConfig::ToString(bool with_median) const {
  std::string out;
  auto add = [&](const std::string& s) {
    if (!out.empty()) out += ',';
    out += s;
  };
  for (ReductionOp op : reductions_) {
    if (op != ReductionOp::kMedian || with_median) add(ReductionOpName(op));
  }
  for (ReductionOp op : norms_) add(std::string(ReductionOpName(op)) + "_norm");
  for (ReductionOp op : abs_reductions_) {
    if (op != ReductionOp::kMedian || with_median) add(std::string("abs_") + ReductionOpName(op));
  }
  for (ReductionOp op : abs_norms_) add(std::string("abs_") + ReductionOpName(op) + "_norm");
  return out;
}

void ReductionConfig::AppendJson(std::string* out) const {
  *out += "{\"save_raw_tensor\": ";
  *out += save_raw_tensor ? "true" : "false";
  *out += ", \"reductions\": ";
  AppendJsonStringAscii(out, ToString(/*with_median=*/false));
  *out += ", \"save_shape\": ";
  *out += save_shape ? "true" : "false";
  *out += '}';
}

}  // namespace smd::hook
