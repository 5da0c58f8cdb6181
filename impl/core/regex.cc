#define PCRE2_CODE_UNIT_WIDTH 8
#include "impl/core/regex.h"

#include <pcre2.h>

#include "impl/core/text.h"

namespace smd {

Result<std::shared_ptr<const Regex>> Regex::Compile(const std::string& pattern) {
  int err = 0;
  PCRE2_SIZE offset = 0;
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                                   PCRE2_UTF | PCRE2_UCP, &err, &offset, nullptr);
  if (code == nullptr) {
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
  PCRE2_UCHAR buf[256];
  pcre2_get_error_message(rc, buf, sizeof buf);
  std::string shown(subject.substr(0, 200));
  if (subject.size() > 200) shown += "...";
  return InvalidArgument("regex '" + pattern_ + "' could not be matched against '" +
                         EscapeControl(shown) + "': " + reinterpret_cast<const char*>(buf) +
                         " (the pattern backtracks too much; whether it matches is unknown, so "
                         "it is not taken as no match: simplify the pattern)");
}

}  // namespace smd
