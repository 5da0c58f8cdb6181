// Small text helpers: UTF-8 validation, Python-compatible JSON string escaping, number parsing.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace smd {

bool IsValidUtf8(std::string_view s);

// Text for a terminal: control characters (C0, DEL, and the C1 range U+0080..U+009F, which
// terminals take for escape sequences) as \xNN or \u00NN, and bytes that are not valid UTF-8 as
// \xNN; everything else unchanged. Names from a trial go through it before they are printed.
std::string EscapeControl(std::string_view s);

// Appends s as a JSON string literal the way Python's json.dumps (ensure_ascii=True) writes it:
// \" \\ \n \r \t \b \f, every other byte outside 0x20..0x7e as \uXXXX (lower-case hex, UTF-16
// surrogate pairs above U+FFFF). s must be valid UTF-8.
void AppendJsonStringAscii(std::string* out, std::string_view s);

// Appends s as a JSON string literal with only the mandatory escapes (json.dumps with
// ensure_ascii=False): non-ASCII stays raw UTF-8; control characters as \u00xx.
void AppendJsonStringUtf8(std::string* out, std::string_view s);

// Python's repr(float(x)): shortest round-trip digits, fixed notation for exponents -4..15,
// otherwise d.ddde+XX; "nan", "inf", "-inf".
std::string PythonFloatRepr(double x);

// Strict decimal integer parsing, surrounding ASCII whitespace allowed (Python int()).
std::optional<int64_t> ParseInt64(std::string_view s);
// Strict floating-point parsing (Python float()): decimal/exponent forms, inf, nan.
std::optional<double> ParseDouble(std::string_view s);

// Splits on `sep`, strips ASCII whitespace from each piece, drops empty pieces.
std::vector<std::string> SplitAndStrip(std::string_view s, char sep);
std::string_view StripAscii(std::string_view s);

// ASCII character classes and case mapping. Not <cctype>'s: those follow the locale the host
// program sets (in tr_TR.UTF-8 toupper('i') is 'i', so "train" would not read as TRAIN, and an S3
// header name would not be lower-cased as its signature requires). Bytes above 0x7f are neither
// changed nor classified.
constexpr bool IsAsciiDigit(char c) { return c >= '0' && c <= '9'; }
constexpr bool IsAsciiAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
constexpr bool IsAsciiAlnum(char c) { return IsAsciiDigit(c) || IsAsciiAlpha(c); }
// isspace() of the "C" locale: space, \t, \n, \v, \f, \r.
constexpr bool IsAsciiSpace(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }
constexpr char AsciiLower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }
constexpr char AsciiUpper(char c) { return c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c; }
std::string AsciiLower(std::string_view s);

// "%012lld" (C/Python formatting of a possibly negative step padded to `width`).
std::string ZeroPad(int64_t v, int width);

}  // namespace smd
