#define PCRE2_CODE_UNIT_WIDTH 8
#include "impl/core/regex.h"

#include <pcre2.h>

#include <vector>

#include "impl/core/text.h"

namespace smd {
namespace {

// The pattern in PCRE2's syntax where Python's re reads the same text otherwise: \Z (the end of
// the subject only; PCRE2's \Z also matches before a final newline) becomes \z, and the
// quantifiers "{,n}" and "{,}" (lower bound 0; PCRE2 before 10.43 reads them as literal text)
// become "{0,n}" and "{0,}". Escapes and character classes are copied as they are. orig[i]: the
// offset in `pattern` of the translation's offset i (compile errors name the user's offsets).
std::string FromPythonSyntax(const std::string& pattern, std::vector<size_t>* orig) {
  std::string out;
  out.reserve(pattern.size() + 4);
  orig->clear();
  auto put = [&](char c, size_t from) {
    out.push_back(c);
    orig->push_back(from);
  };
  const size_t n = pattern.size();
  bool in_class = false;
  for (size_t i = 0; i < n;) {
    const char c = pattern[i];
    if (c == '\\' && i + 1 < n) {
      put('\\', i);
      put(pattern[i + 1] == 'Z' && !in_class ? 'z' : pattern[i + 1], i + 1);
      i += 2;
      continue;
    }
    if (in_class) {
      if (c == ']') in_class = false;
      put(c, i++);
      continue;
    }
    if (c == '[') {
      in_class = true;
      put(c, i++);
      if (i < n && pattern[i] == '^') {
        put('^', i);
        ++i;
      }
      if (i < n && pattern[i] == ']') {  // a ']' first is literal
        put(']', i);
        ++i;
      }
      continue;
    }
    if (c == '{' && i + 1 < n && pattern[i + 1] == ',') {
      size_t k = i + 2;
      while (k < n && pattern[k] >= '0' && pattern[k] <= '9') ++k;
      if (k < n && pattern[k] == '}') {
        put('{', i);
        put('0', i + 1);
        ++i;
        continue;
      }
    }
    put(c, i++);
  }
  orig->push_back(n);
  return out;
}

}  // namespace

Result<std::shared_ptr<const Regex>> Regex::Compile(const std::string& pattern) {
  int err = 0;
  PCRE2_SIZE at = 0;
  std::vector<size_t> orig;
  const std::string translated = FromPythonSyntax(pattern, &orig);
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(translated.data()),
                                   translated.size(), PCRE2_UTF | PCRE2_UCP, &err, &at, nullptr);
  if (code == nullptr) {
    const size_t offset = at < orig.size() ? orig[at] : pattern.size();
    PCRE2_UCHAR buf[256];
    pcre2_get_error_message(err, buf, sizeof buf);
    // Escaped: the pattern may be invalid UTF-8 (the very error), and messages are UTF-8.
    return InvalidArgument("invalid regex '" + EscapeControl(pattern) + "' at offset " +
                           std::to_string(offset) + ": " + reinterpret_cast<const char*>(buf));
  }
  pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);  // optional speed-up; failure is harmless
  std::shared_ptr<Regex> r(new Regex());
  r->pattern_ = pattern;
  r->code_ = code;
  return std::shared_ptr<const Regex>(std::move(r));
}

Regex::~Regex() { pcre2_code_free(static_cast<pcre2_code*>(code_)); }

Result<bool> Regex::Search(std::string_view subject) const {
  pcre2_code* code = static_cast<pcre2_code*>(code_);
  pcre2_match_data* md = pcre2_match_data_create_from_pattern(code, nullptr);
  if (md == nullptr) return Status(Code::kOutOfMemory, "out of memory matching regex '" + pattern_ + "'");
  int rc = pcre2_match(code, reinterpret_cast<PCRE2_SPTR>(subject.data()), subject.size(), 0,
                       PCRE2_NO_UTF_CHECK, md, nullptr);
  pcre2_match_data_free(md);
  if (rc >= 0) return true;
  if (rc == PCRE2_ERROR_NOMATCH) return false;
  return MatchError(rc, subject);
}

Status Regex::MatchError(int rc, std::string_view subject) const {
  PCRE2_UCHAR buf[256];
  pcre2_get_error_message(rc, buf, sizeof buf);
  std::string shown(subject.substr(0, 200));
  if (subject.size() > 200) shown += "...";
  return InvalidArgument("regex '" + pattern_ + "' could not be matched against '" +
                         EscapeControl(shown) + "': " + reinterpret_cast<const char*>(buf) +
                         " (the pattern backtracks too much; whether it matches is unknown, so "
                         "it is not taken as no match: simplify the pattern)");
}

Result<bool> Regex::MayMatchNumbered(std::string_view prefix) const {
  pcre2_code* code = static_cast<pcre2_code*>(code_);
  uint32_t empty = 1;
  if (pcre2_pattern_info(code, PCRE2_INFO_MATCHEMPTY, &empty) != 0 || empty) return true;

  // A match that starts at or after the end of the prefix starts with a digit of the index.
  bool index_start = true;
  uint32_t options = 0, first_type = 0;
  pcre2_pattern_info(code, PCRE2_INFO_ALLOPTIONS, &options);
  if ((options & PCRE2_ANCHORED) != 0 && !prefix.empty()) {
    index_start = false;  // anchored: every match starts at offset 0, inside the prefix
  } else if (pcre2_pattern_info(code, PCRE2_INFO_FIRSTCODETYPE, &first_type) == 0) {
    if (first_type == 1) {  // a fixed first code unit
      uint32_t unit = 0;
      pcre2_pattern_info(code, PCRE2_INFO_FIRSTCODEUNIT, &unit);
      index_start = unit >= '0' && unit <= '9';
    } else if (first_type == 2) {  // at the start of the subject or after a newline only
      index_start = prefix.empty() || prefix.back() == '\n';
    } else {
      const uint8_t* bitmap = nullptr;  // the possible first bytes, when PCRE2 knows them
      if (pcre2_pattern_info(code, PCRE2_INFO_FIRSTBITMAP, &bitmap) == 0 && bitmap != nullptr) {
        index_start = false;
        for (int c = '0'; c <= '9'; ++c) index_start = index_start || (bitmap[c / 8] >> (c % 8)) & 1;
      }
    }
  }
  if (index_start) return true;

  // A match that starts inside the prefix: PCRE2's hard partial matching reports one that is
  // complete there, or one that reached the end of the prefix and could go on into any text.
  pcre2_match_data* md = pcre2_match_data_create_from_pattern(code, nullptr);
  if (md == nullptr) return Status(Code::kOutOfMemory, "out of memory matching regex '" + pattern_ + "'");
  int rc = pcre2_match(code, reinterpret_cast<PCRE2_SPTR>(prefix.data()), prefix.size(), 0,
                       PCRE2_NO_UTF_CHECK | PCRE2_PARTIAL_HARD, md, nullptr);
  pcre2_match_data_free(md);
  if (rc >= 0 || rc == PCRE2_ERROR_PARTIAL) return true;
  if (rc == PCRE2_ERROR_NOMATCH) return false;
  return MatchError(rc, prefix);
}

}  // namespace smd
