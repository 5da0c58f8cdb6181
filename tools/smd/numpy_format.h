// Text of a value the way numpy prints arrays: np.array2string(a, separator=', ') with numpy 1.26's
// defaults (8 digits of precision, values shown in their shortest unique form, arrays of more than
// 1000 elements summarized with 3 items at each edge and "...", lines wrapped at 75 columns).
// bfloat16 (which numpy itself does not have) is printed like the other floats, with digits that
// identify a bfloat16 uniquely; strings like Python's repr.
#pragma once

#include <string>

#include "smd/smd.h"

namespace smdtool {

// full: never summarize (numpy's threshold=sys.maxsize).
std::string FormatValue(const smd_value* value, bool full);

// Python's repr() of a str holding these UTF-8 bytes (bytes that are not UTF-8 appear as \xNN).
std::string PythonStrRepr(const char* s, size_t n);

// A shape as Python prints a tuple-free list: "[2, 3]", "[]".
std::string ShapeText(const int64_t* dims, size_t ndim);

}  // namespace smdtool
