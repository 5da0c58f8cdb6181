// Fuzzes the collections file parser the reader uses (impl/trial/collections_file).
#include <cstddef>
#include <cstdint>
#include <string>

#include "impl/core/text.h"
#include "impl/format/collections_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  auto parsed = smd::trial::ParseCollectionsFile(text, "fuzz.json");
  if (parsed.ok()) {
    // What the reader hands to callers is UTF-8 (the C API promises it).
    for (const auto& kv : parsed->collections) {
      const smd::trial::CollectionInfo& c = kv.second;
      if (!smd::IsValidUtf8(c.name) || !smd::IsValidUtf8(c.reductions)) __builtin_trap();
      for (const auto& r : c.include_regex) {
        if (!smd::IsValidUtf8(r)) __builtin_trap();
      }
      for (const auto& n : c.tensor_names) {
        if (!smd::IsValidUtf8(n)) __builtin_trap();
      }
    }
    if (parsed->num_workers && *parsed->num_workers < 1) __builtin_trap();
  } else if (parsed.status().message().find("fuzz.json") == std::string::npos) {
    __builtin_trap();  // every error names the file
  }
  return 0;
}
