// Fuzzes the hook's JSON configuration parser (io::ParseHookConfig, FORMAT.md §12).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "impl/format/hook_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  auto spec = smd::io::ParseHookConfig(text, "fuzz.json");
  if (spec.ok()) {
    volatile size_t h = spec->local_path.size() + spec->collections.size() + spec->include_regex.size();
    for (const auto& c : spec->collections) {
      h = h + c.name.size() + c.include_regex.size();
      if (c.save.generic.save_steps) h = h + c.save.generic.save_steps->size();
    }
    (void)h;
  } else if (spec.status().message().find("fuzz.json") == std::string::npos) {
    __builtin_trap();  // every error names the file
  }
  return 0;
}
