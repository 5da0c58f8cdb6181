// A fast, strict parser for smdebug index files (FORMAT.md §8): one JSON object per
// (global step, worker) listing the records of the step's event file and the saved shapes.
//
// The files are machine-written, so the parser is schema-driven and allocation-light: names are
// views into the file's text unless they hold escapes, numbers are read in place. It is strict
// where smdebug's reader would fail or misread (not JSON, invalid UTF-8, a missing meta section, a
// non-integer offset) and lenient where Python's json is (unknown keys are skipped, a duplicate
// key's last value wins, whitespace anywhere JSON allows it).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "impl/core/mode.h"
#include "impl/core/status.h"

namespace smd::trial {

struct IndexTensorRef {
  std::string_view name;  // the record's tag: tensor name, reduction tag or scalar/<name>
  uint64_t start = 0;     // offset of the record's first byte in the event file
  uint64_t length = 0;    // the record's size, framing included
};

struct IndexShapeRef {
  std::string_view name;
  std::string_view original_name;  // == name when the file has no "originalname"
  uint32_t dims_begin = 0;         // into ParsedIndex::dims
  uint32_t ndim = 0;
};

// One parsed index file. Views point into the parsed text or into `unescaped`; reuse one object
// for many files (Clear keeps the capacity).
struct ParsedIndex {
  Mode mode = Mode::kGlobal;
  int64_t mode_step = 0;
  bool has_event_file_name = false;
  std::string_view event_file_name;
  std::vector<IndexTensorRef> tensors;
  std::vector<IndexShapeRef> shapes;
  std::vector<int64_t> dims;
  std::vector<std::unique_ptr<std::string>> unescaped;  // strings that held escapes, decoded

  void Clear();
};

// Parses the text of one index file. `text` must outlive the views in *out.
// Errors: kCorrupt with the reason and the byte offset (the caller adds the file name).
// fast_path false: only the general parser (the fuzzer checks that both give the same answer).
Status ParseIndexFile(std::string_view text, ParsedIndex* out, bool fast_path = true);

}  // namespace smd::trial
