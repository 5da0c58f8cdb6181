// The collections file of a trial (FORMAT.md §10): what the hook writes and what a reader takes
// from it.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "impl/core/mode.h"
#include "impl/core/status.h"

namespace smd::trial {

// One mode's save configuration as the collections file holds it (smdebug's SaveConfigMode).
struct SaveConfigModeInfo {
  int64_t save_interval = 500;      // >= 1
  int64_t start_step = 0;
  std::optional<int64_t> end_step;  // exclusive; none: no end
  std::vector<int64_t> save_steps;
};

// Per mode, by kAllModesInOrder (TRAIN, EVAL, PREDICT, GLOBAL); none: the mode is null or missing.
using SaveConfigInfo = std::array<std::optional<SaveConfigModeInfo>, kNumModes>;

struct CollectionInfo {
  std::string name;
  std::vector<std::string> include_regex;  // as stored (order and duplicates kept)
  std::vector<std::string> tensor_names;   // as stored
  bool has_reduction_config = false;
  std::string reductions;                  // smdebug's string form, e.g. "min,l2_norm,abs_mean"
  bool save_raw_tensor = false;
  bool save_shape = false;
  bool save_histogram = true;
  std::optional<SaveConfigInfo> save_config;  // none: "save_config" null or missing
};

struct CollectionsFile {
  std::map<std::string, CollectionInfo> collections;  // by name; a repeated name: the last wins
  // What was ignored, as messages for the trial's warnings: a malformed save_config (the
  // collection then has none; the reader does not need it).
  std::vector<std::string> warnings;
  std::optional<int64_t> num_workers;  // _meta.num_workers; nullopt when missing or not >= 1
};

// Parses the text of a collections file, leniently where smdebug's loader is (null or missing
// keys, other top-level keys) and strictly where smd needs to be (the "collections" object, lists
// of UTF-8 strings). `file` names the file in messages.
// A "save_config" is read as smdebug's SaveConfig.from_dict reads it: an object of mode names
// (TRAIN, EVAL, PREDICT, GLOBAL; another name is malformed) whose values are null (the mode is
// unset) or objects whose null or missing keys take SaveConfigMode's defaults (save_interval 500,
// start_step 0, end_step none, save_steps none) and whose other keys are ignored. save_interval,
// start_step and end_step are integers: a JSON number without a fraction (below 2^53 in
// magnitude) or a decimal string (as Python's int() reads one); save_steps a list of such numbers.
// What smdebug's loader refuses (a save_config or mode that is not an object, a value int()
// cannot convert), and what it takes but smd does not (a boolean, a number with a fraction, a
// save_interval below 1, which smdebug loads and then divides by), leave the collection without a
// save_config and add a message to `warnings` (smdebug refuses the whole trial for the former;
// the reader does not need the save_config); a negative end_step, which smdebug reads as an end
// before step 0, reads as 0 (the same steps are saved: none by the interval).
// Errors: kCorrupt "malformed collections file '<file>': <what>".
Result<CollectionsFile> ParseCollectionsFile(std::string_view text, const std::string& file);

// ---- writing ----

// One collection as the hook writes it. The reduction and save configurations come as the JSON
// values smdebug gives them (ReductionConfig and SaveConfigMode render themselves).
struct CollectionsFileEntry {
  std::string name;
  std::vector<std::string> include_regex;
  std::vector<std::string> tensor_names;
  std::string reduction_config_json;              // an object, or null
  std::string save_config_json[kNumModes];        // by kAllModesInOrder: TRAIN, EVAL, PREDICT, GLOBAL
  bool save_histogram = true;
};

// Serializes the collections file exactly as smdebug's json.dumps does: collections in the given
// order, keys name, include_regex, tensor_names, reduction_config, save_config, save_histogram;
// then "_meta": {"num_workers": n}; ", " and ": " separators; non-ASCII escaped.
std::string BuildCollectionsJson(const std::vector<CollectionsFileEntry>& collections,
                                 int64_t num_workers);

}  // namespace smd::trial
