// The collections file of a trial (FORMAT.md §10): what the hook writes and what a reader takes
// from it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "impl/core/mode.h"
#include "impl/core/status.h"

namespace smd::trial {

struct CollectionInfo {
  std::string name;
  std::vector<std::string> include_regex;  // as stored (order and duplicates kept)
  std::vector<std::string> tensor_names;   // as stored
  bool has_reduction_config = false;
  std::string reductions;                  // smdebug's string form, e.g. "min,l2_norm,abs_mean"
  bool save_raw_tensor = false;
  bool save_shape = false;
  bool save_histogram = true;
};

struct CollectionsFile {
  std::map<std::string, CollectionInfo> collections;  // by name; a repeated name: the last wins
  std::optional<int64_t> num_workers;  // _meta.num_workers; nullopt when missing or not >= 1
};

// Parses the text of a collections file, leniently where smdebug's loader is (null or missing
// keys, other top-level keys) and strictly where smd needs to be (the "collections" object, lists
// of UTF-8 strings). `file` names the file in messages.
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
