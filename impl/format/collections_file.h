// The collections file of a trial (FORMAT.md §10): what a reader takes from it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

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

}  // namespace smd::trial
