#include "impl/core/status.h"

#include <cstring>

namespace smd {

Status ErrnoStatus(const std::string& what, const std::string& path, int err) {
  Code code = Code::kIO;
  if (err == ENOENT) code = Code::kNotFound;
  if (err == ENOMEM) code = Code::kOutOfMemory;
  if (err == EEXIST) code = Code::kAlreadyExists;
  return Status(code, what + " '" + path + "': " + std::strerror(err));
}

}  // namespace smd
