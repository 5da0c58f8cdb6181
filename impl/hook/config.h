// SaveConfig (when to save, per mode) and ReductionConfig (what to save of a tensor), with the
// serialized forms of smdebug's collections file.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "impl/core/mode.h"
#include "impl/core/reductions.h"
#include "impl/core/status.h"

namespace smd::hook {

constexpr int64_t kDefaultSaveInterval = 500;

struct SaveConfigMode {
  int64_t save_interval = kDefaultSaveInterval;
  int64_t start_step = 0;
  std::optional<int64_t> end_step;  // exclusive; none = no end
  std::vector<int64_t> save_steps;

  // BEHAVIOR.md §2.1: listed steps, or start <= s < end and s % interval == 0.
  bool ShouldSave(int64_t mode_step) const;
  // {"save_interval": 500, "save_steps": [], "start_step": 0, "end_step": null}
  void AppendJson(std::string* out) const;
  bool operator==(const SaveConfigMode& o) const {
    return save_interval == o.save_interval && start_step == o.start_step &&
           end_step == o.end_step && save_steps == o.save_steps;
  }
};

// A SaveConfigMode or "unset" per mode, indexed by ModeIndex().
class SaveConfig {
 public:
  const std::optional<SaveConfigMode>& mode(Mode m) const { return modes_[ModeIndex(m)]; }
  std::optional<SaveConfigMode>& mode(Mode m) { return modes_[ModeIndex(m)]; }
  void SetAll(const SaveConfigMode& c) {
    for (auto& m : modes_) m = c;
  }
  // The mode's setting, or `fallback`'s, or the defaults.
  SaveConfigMode Effective(Mode m, const SaveConfig* fallback) const;
  bool operator==(const SaveConfig& o) const { return modes_ == o.modes_; }

 private:
  std::array<std::optional<SaveConfigMode>, kNumModes> modes_;
};

class ReductionConfig {
 public:
  // Parses "min, abs_mean, l2_norm" (items stripped, empty ones ignored).
  static Result<ReductionConfig> Parse(std::string_view spec);

  // Adds a reduction by any accepted name; duplicates are ignored.
  Status Add(std::string_view name);
  void Add(ReductionOp op, bool abs);

  bool save_raw_tensor = false;
  bool save_shape = false;

  // The lists as smdebug keeps them: plain reductions, norms, abs reductions, abs norms.
  const std::vector<ReductionOp>& reductions() const { return reductions_; }
  const std::vector<ReductionOp>& norms() const { return norms_; }
  const std::vector<ReductionOp>& abs_reductions() const { return abs_reductions_; }
  const std::vector<ReductionOp>& abs_norms() const { return abs_norms_; }
  bool empty() const {
    return reductions_.empty() && norms_.empty() && abs_reductions_.empty() && abs_norms_.empty();
  }

  // smdebug's string: reductions, then "<n>_norm"s, then "abs_<r>"s, then "abs_<n>_norm"s.
  // Without `with_median`, median and abs_median are left out: smdebug's reader validates the
  // collections file's reductions and refuses the whole trial over a name it does not know.
  std::string ToString(bool with_median = true) const;
  // {"save_raw_tensor": true, "reductions": "...", "save_shape": false}, as the collections file
  // holds it (without median).
  void AppendJson(std::string* out) const;
  bool operator==(const ReductionConfig& o) const {
    return save_raw_tensor == o.save_raw_tensor && save_shape == o.save_shape &&
           reductions_ == o.reductions_ && norms_ == o.norms_ &&
           abs_reductions_ == o.abs_reductions_ && abs_norms_ == o.abs_norms_;
  }

 private:
  std::vector<ReductionOp> reductions_, norms_, abs_reductions_, abs_norms_;
};

}  // namespace smd::hook
