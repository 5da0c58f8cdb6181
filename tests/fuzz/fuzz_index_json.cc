// Fuzzes the index file parser (impl/trial/index_parser): any bytes, as the reader reads them
// from index/<folder>/<step>_<worker>.json, and as such a file's name; the fast path for smdebug's exact layout must agree
// with the general parser on every input.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "impl/format/index_parser.h"
#include "impl/format/layout.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // A copy of exactly `size` bytes: a read past the end is caught by the sanitizer.
  std::string text(reinterpret_cast<const char*>(data), size);
  smd::trial::ParsedIndex parsed;
  if (smd::trial::ParseIndexFile(text, &parsed).ok()) {
    volatile size_t h = parsed.event_file_name.size();
    for (const auto& t : parsed.tensors) {
      for (char c : t.name) h = h + static_cast<unsigned char>(c);
      h = h + t.start + t.length;
    }
    for (const auto& s : parsed.shapes) {
      for (char c : s.name) h = h + static_cast<unsigned char>(c);
      for (char c : s.original_name) h = h + static_cast<unsigned char>(c);
      for (uint32_t i = 0; i < s.ndim; ++i) h = h + static_cast<size_t>(parsed.dims.at(s.dims_begin + i));
    }
    (void)h;
  }
  // The same bytes as an index file's name: the step (int64 edges, signs) and the worker, and the
  // paths the reader rebuilds for a step it accepts (steps below 0 are skipped).
  const std::string_view base(text.data(), text.size() < 256 ? text.size() : 256);
  if (std::optional<int64_t> step = smd::io::StepFromFileName(base)) {
    std::optional<std::string> worker = smd::io::WorkerFromFileName(base);
    if (*step >= 0 && worker) {
      volatile size_t h = smd::io::IndexFileRelPath(*step, *worker).size() +
                          smd::io::EventFileRelPath(*step, *worker).size();
      (void)h;
    }
  }
  // Parsing again into the same object (the reader reuses one) gives the same answer, and so does
  // the general parser alone (without the fast path for smdebug's exact layout).
  parsed.Clear();
  smd::trial::ParsedIndex general;
  const smd::Status st1 = smd::trial::ParseIndexFile(text, &parsed);
  const smd::Status st2 = smd::trial::ParseIndexFile(text, &general, /*fast_path=*/false);
  if (st1.ok() != st2.ok() || st1.message() != st2.message()) __builtin_trap();
  if (st1.ok()) {
    if (parsed.tensors.size() != general.tensors.size() || parsed.mode != general.mode ||
        parsed.mode_step != general.mode_step ||
        parsed.event_file_name != general.event_file_name) {
      __builtin_trap();
    }
    for (size_t i = 0; i < parsed.tensors.size(); ++i) {
      const auto& a = parsed.tensors[i];
      const auto& b = general.tensors[i];
      if (a.name != b.name || a.start != b.start || a.length != b.length) __builtin_trap();
    }
  }
  return 0;
}
