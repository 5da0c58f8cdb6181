// A scan of JSON text that cJSON cannot do for its callers.
#pragma once

#include <string_view>

namespace smd {

// Whether a JSON text has a \u0000 escape (a NUL character) inside a string. cJSON ends its C
// string there, so a name or path holding one would silently be cut short; readers of
// configuration files refuse such documents instead.
bool JsonHasNulEscape(std::string_view json);

}  // namespace smd
