// Values as numpy .npy files (format version 1.0; 2.0 only for a header beyond 64 KiB).
#pragma once

#include <string>

#include "smd/smd.h"

namespace smdtool {

// Writes `value` to `path` ("-": standard output). Every dtype maps to its numpy dtype; strings
// become '<U<n>' (or '|S<n>' bytes when one is not UTF-8). bfloat16, which numpy does not have,
// is written as float32, an exact widening, and *note says so. Returns false with *error set
// when the file cannot be written (a partly written file is removed).
bool WriteNpy(const smd_value* value, const std::string& path, std::string* note,
              std::string* error);

}  // namespace smdtool
