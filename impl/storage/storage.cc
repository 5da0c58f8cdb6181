// What every storage shares.
#include "impl/storage/storage.h"

#include <algorithm>

namespace smd::io {

Result<std::vector<std::string>> Storage::List(const std::string& rel_dir, std::string_view from) {
  SMD_ASSIGN_OR_RETURN(std::vector<std::string> names, ListDir(rel_dir));
  if (!from.empty()) {
    names.erase(std::remove_if(names.begin(), names.end(),
                               [&](const std::string& n) { return std::string_view(n) < from; }),
                names.end());
  }
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace smd::io
