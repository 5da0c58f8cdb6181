// Regular expressions with Python `re` semantics as far as smdebug uses them: PCRE2 (look-ahead and
// look-behind included), Unicode, and *search* matching (the pattern may match anywhere). Where
// PCRE2 reads Python's syntax otherwise (\Z, and the quantifiers {,n} and {,}), the pattern is
// translated first, so that it means what it means to Python.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "impl/core/status.h"

namespace smd {

class Regex {
 public:
  // Errors: kInvalidArgument naming the pattern, the offset and PCRE2's reason.
  static Result<std::shared_ptr<const Regex>> Compile(const std::string& pattern);
  ~Regex();
  Regex(const Regex&) = delete;
  Regex& operator=(const Regex&) = delete;

  // True if the pattern matches anywhere in `subject` (Python re.search). Thread-safe.
  // `subject` must be valid UTF-8 (PCRE2 is told not to check it again): the hook refuses other
  // names, and the trial's index parser other strings.
  // Errors: kInvalidArgument when PCRE2 gives up (its match or depth limit: a pattern that
  // backtracks catastrophically on this subject, such as "(x+x+)+y"): the answer is then
  // unknown, and Python's re may well find a match, so it is never reported as "no match".
  Result<bool> Search(std::string_view subject) const;
  // Whether the pattern may match (search) some subject made of `prefix` followed by a decimal
  // index, one or more ASCII digits ("conv1_output_" + "0", "1", "17", ...). False only when no
  // such subject can match; true when one does or when PCRE2 cannot tell (the answer errs on the
  // side of a match). A match that starts inside the prefix is decided by partial matching; one
  // that starts inside the index needs a first character that can be a digit. Thread-safe;
  // `prefix` must be valid UTF-8. Errors: as Search (the caller takes them as "may match").
  Result<bool> MayMatchNumbered(std::string_view prefix) const;
  const std::string& pattern() const { return pattern_; }

 private:
  Regex() = default;
  Status MatchError(int rc, std::string_view subject) const;
  std::string pattern_;
  void* code_ = nullptr;  // pcre2_code_8*
};

}  // namespace smd
