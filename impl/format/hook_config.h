// smdebug's JSON hook configuration (FORMAT.md §12): the file SageMaker writes for the hook.
// Parsing only; the hook resolves precedence and builds its configuration from this.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "impl/core/status.h"

namespace smd::io {

// SaveConfig keys as found in one object (hook or collection parameters). A field is set only if
// its key was present.
struct SaveConfigModeSpec {
  std::optional<int64_t> save_interval;
  std::optional<int64_t> start_step;
  std::optional<int64_t> end_step;
  std::optional<std::vector<int64_t>> save_steps;
  bool any() const { return save_interval || start_step || end_step || save_steps; }
};

struct SaveConfigSpec {
  SaveConfigModeSpec generic;                    // "save_interval", ...
  std::array<SaveConfigModeSpec, 4> per_mode;   // "train.save_interval", ... indexed by Mode - 1
};

// Present only when the "reductions" key was present (as in smdebug).
struct ReductionSpec {
  std::string reductions;  // comma-separated, unvalidated
  bool save_raw_tensor = false;
  bool save_shape = false;
};

struct CollectionSpec {
  std::string name;
  std::vector<std::string> include_regex;  // unvalidated
  SaveConfigSpec save;
  std::optional<ReductionSpec> reduction;
  std::optional<bool> save_histogram;
};

struct HookConfigSpec {
  std::string local_path = "/opt/ml/output/tensors";
  SaveConfigSpec save;
  std::optional<ReductionSpec> reduction;
  std::optional<bool> save_all;
  std::vector<std::string> include_regex;
  std::optional<std::string> include_workers;  // "one" or "all" as written
  std::optional<bool> export_tensorboard;
  std::optional<std::string> tensorboard_dir;
  std::optional<bool> dry_run;
  // One entry per collection, in the order of their first entries; several entries for one
  // collection are merged (regexes add up, later save configuration, reductions and
  // save_histogram win), as smdebug applies them one after the other.
  std::vector<CollectionSpec> collections;
};

// Parses the JSON text. `source` names the file in messages.
// Errors: kInvalidArgument "<source>: <what>" for malformed JSON, a wrong type, an unparsable
// number, a collection without CollectionName, a non-object top level.
Result<HookConfigSpec> ParseHookConfig(std::string_view json, const std::string& source);

// The file to read when none is named: $SMDEBUG_CONFIG_FILE_PATH, else
// /opt/ml/input/config/debughookconfig.json.
std::string DefaultHookConfigPath();

}  // namespace smd::io
