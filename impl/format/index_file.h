// Index files (FORMAT.md §8): one JSON object per (global step, worker).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "impl/core/mode.h"

namespace smd::io {

struct IndexTensorEntry {
  std::string name;
  uint64_t start = 0;   // offset of the record's first byte in the event file
  uint64_t length = 0;  // the record's size, framing included
};

struct IndexShapeEntry {
  std::string name;
  std::string original_name;
  std::vector<int64_t> shape;
};

struct IndexMeta {
  Mode mode = Mode::kGlobal;
  int64_t mode_step = 0;
  std::optional<std::string> event_file_name;  // absent when the file holds only shapes
};

// Serializes exactly as smdebug's json.dumps does (key order meta, tensor_payload, shape_payload;
// ", " and ": " separators; non-ASCII escaped).
std::string BuildIndexJson(const IndexMeta& meta, const std::vector<IndexTensorEntry>& tensors,
                           const std::vector<IndexShapeEntry>& shapes);

}  // namespace smd::io
