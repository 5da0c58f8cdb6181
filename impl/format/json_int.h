// Integers in the JSON files smdebug reads with Python's int() (the hook configuration, the
// collections file): a JSON number without a fraction, or a decimal string. Each caller words its
// own messages from the outcome.
#pragma once

#include <cjson/cJSON.h>

#include <cmath>
#include <cstdint>
#include <optional>
#include <string_view>

#include "impl/core/text.h"

namespace smd::format {

// JSON numbers are doubles in cJSON: integers are taken only below 2^53 in magnitude, where a
// double still tells every integer apart (2^53 + 1 would silently read as 2^53).
constexpr double kMaxExactJsonInteger = 9007199254740992.0;  // 2^53, exclusive

enum class JsonInt {
  kOk,
  kWrongType,         // neither a number nor a string
  kFraction,          // a number with a fractional part
  kNumberOutOfRange,  // a number of magnitude 2^53 or more (or not finite)
  kStringNotInteger,  // a string int() refuses
  kStringOutOfRange,  // a string of decimal digits beyond int64
};

// Whether `s` is an optional sign and one or more ASCII digits.
inline bool IsDecimalDigits(std::string_view s) {
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) s.remove_prefix(1);
  if (s.empty()) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

// Python int(s) on a str, restricted to int64 (surrounding ASCII space allowed; no underscores,
// ASCII digits only).
inline JsonInt IntFromText(std::string_view text, int64_t* out) {
  const std::string_view s = StripAscii(text);
  // ParseInt64 drops one leading '+' and lets from_chars read the rest, so "+-5" would pass.
  const bool sign_after_plus = s.size() >= 2 && s[0] == '+' && (s[1] == '-' || s[1] == '+');
  std::optional<int64_t> v;
  if (!sign_after_plus) v = ParseInt64(s);
  if (v) {
    *out = *v;
    return JsonInt::kOk;
  }
  return !sign_after_plus && IsDecimalDigits(s) ? JsonInt::kStringOutOfRange
                                                : JsonInt::kStringNotInteger;
}

// A JSON number without a fraction, below 2^53 in magnitude.
inline JsonInt IntFromJsonNumber(const cJSON* v, int64_t* out) {
  const double d = v->valuedouble;
  if (!std::isfinite(d) || std::fabs(d) >= kMaxExactJsonInteger) return JsonInt::kNumberOutOfRange;
  if (std::trunc(d) != d) return JsonInt::kFraction;
  *out = static_cast<int64_t>(d);
  return JsonInt::kOk;
}

// Either of the two.
inline JsonInt IntFromJson(const cJSON* v, int64_t* out) {
  if (cJSON_IsNumber(v)) return IntFromJsonNumber(v, out);
  if (cJSON_IsString(v)) return IntFromText(v->valuestring, out);
  return JsonInt::kWrongType;
}

}  // namespace smd::format
