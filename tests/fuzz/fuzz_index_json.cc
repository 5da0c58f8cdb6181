// Fuzzes the index file parser (impl/trial/index_parser): any bytes, as the reader reads them
// from index/<folder>/<step>_<worker>.json.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "impl/trial/index_parser.h"

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
  // Parsing again into the same object (the reader reuses one) must give the same answer.
  parsed.Clear();
  smd::trial::ParsedIndex again;
  const bool ok1 = smd::trial::ParseIndexFile(text, &parsed).ok();
  const bool ok2 = smd::trial::ParseIndexFile(text, &again).ok();
  if (ok1 != ok2 || (ok1 && parsed.tensors.size() != again.tensors.size())) __builtin_trap();
  return 0;
}
