// A small JSON document model for the smd tool, serialized exactly like Python's
// json.dumps(doc, sort_keys=True, indent=2, ensure_ascii=False) (the format
// tests/interop/smdebug_dump.py describes).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace smdtool {

class Json {
 public:
  enum class Kind { kNull, kBool, kInt, kString, kArray, kObject };

  Json() = default;  // null
  static Json Bool(bool b);
  static Json Int(int64_t v);
  static Json Str(std::string s);
  static Json Array();
  static Json Object();

  Kind kind() const { return kind_; }
  // Arrays: appends. Objects: sets a member (keys are kept sorted by their UTF-8 bytes).
  Json& Push(Json v);
  Json& Set(const std::string& key, Json v);
  bool empty() const { return kind_ == Kind::kArray ? items_.empty() : members_.empty(); }

  // The document text, with a final newline.
  std::string Dump() const;
  // Appends the value's text as Dump writes it at nesting depth `indent` (no final newline).
  void Write(std::string* out, int indent) const;

 private:
  Kind kind_ = Kind::kNull;
  bool b_ = false;
  int64_t i_ = 0;
  std::string s_;
  std::vector<Json> items_;
  std::map<std::string, Json> members_;  // std::string compares bytes as unsigned char
};

// Appends s as a JSON string literal: quotes, backslash escapes for '"', '\\' and control
// characters, other bytes (UTF-8 included) as they are.
void AppendJsonString(std::string* out, const std::string& s);

// Python's repr(float(x)) for finite x; "nan", "inf", "-inf" otherwise (DUMP.md's float rule).
std::string PythonFloat(double x);

// Lower-case hex SHA-256 of n bytes.
std::string Sha256Hex(const void* data, size_t n);

// s for a terminal: control characters (C0 and DEL as \xNN, the C1 range as \u00NN; the newline
// kept when keep_newlines) and bytes that are not UTF-8 (\xNN) escaped, so that a name from a trial
// cannot send escape sequences to the terminal. Every human-readable output goes through it.
std::string Printable(const std::string& s, bool keep_newlines = false);

// True if s is valid UTF-8.
bool IsUtf8(const std::string& s);

}  // namespace smdtool
