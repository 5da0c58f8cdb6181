// Rule parameters the way SageMaker passes them: a string -> string map ("threshold" =
// "0.0000001", "collection_names" = "gradients,weights", booleans "True"/"False"), parsed once at
// rule creation against the rule's parameter table. A bad parameter is an error naming the rule,
// the parameter and the value.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "impl/core/regex.h"
#include "impl/core/status.h"

namespace smd::rules {

enum class ParamType : int {
  kFloat,      // Python float(): "0.0000001", "1e-7", " 10 ", "inf"
  kInt,        // Python int(), plus integral floats ("10.0", "1e3")
  kBool,       // "True"/"False" (any case), "1"/"0"
  kString,     // taken as is
  kRegex,      // one regular expression (Python re syntax), compiled at creation
  kRegexList,  // comma-separated regular expressions, items stripped, empty ones dropped
  kList,       // comma-separated names, items stripped, empty ones dropped
  kFloatList,  // comma-separated numbers
  kMode,       // TRAIN, EVAL, PREDICT, GLOBAL (any case)
};

struct ParamSpec {
  const char* name;
  ParamType type;
  const char* default_value;  // nullptr: no default (the parameter is absent unless given)
  const char* help;           // one line for docs and `smd rules --list`
};

// The parsed parameters of one rule.
class Params {
 public:
  // Parses `given` against `specs`. An empty value means "not given" (the default applies).
  // `aliases` maps accepted old names to current ones. Errors (kInvalidArgument): an unknown
  // name (listing the accepted ones), a value that does not parse as the parameter's type, a
  // parameter given twice (also through an alias).
  static Result<Params> Parse(const std::string& rule, const std::vector<ParamSpec>& specs,
                              const std::vector<std::pair<std::string, std::string>>& given,
                              const std::vector<std::pair<std::string, std::string>>& aliases = {});

  // Whether the parameter has a value (given, or a default).
  bool Has(const std::string& name) const;
  // Whether the caller gave it (not just a default).
  bool Given(const std::string& name) const;
  // The accessors return the parsed value; the parameter must exist in the spec table and Has()
  // must be true (else they return a zero value).
  double Float(const std::string& name) const;
  std::optional<double> OptFloat(const std::string& name) const;
  int64_t Int(const std::string& name) const;
  std::optional<int64_t> OptInt(const std::string& name) const;
  bool Bool(const std::string& name) const;
  const std::string& Str(const std::string& name) const;
  const std::vector<std::string>& List(const std::string& name) const;  // kList / kRegexList
  const std::vector<double>& Floats(const std::string& name) const;
  // kRegex: one compiled pattern; kRegexList: all of them.
  std::vector<std::shared_ptr<const Regex>> Regexes(const std::string& name) const;
  int Mode(const std::string& name) const;  // smd::Mode value, 0 if absent

  // A parameter error: "rule R: parameter 'p' = 'v': <why>".
  static Status Error(const std::string& rule, const std::string& name, const std::string& value,
                      const std::string& why);

 private:
  struct Value {
    ParamType type;
    bool present = false;
    bool given = false;
    std::string raw;
    double f = 0;
    int64_t i = 0;
    bool b = false;
    int mode = 0;
    std::vector<std::string> list;
    std::vector<double> floats;
    std::vector<std::shared_ptr<const Regex>> regexes;
  };
  static Status ParseValue(const std::string& rule, const std::string& name, Value* v);
  const Value* Find(const std::string& name) const;

  std::map<std::string, Value> values_;
};

// Parses a Python-style boolean. nullopt if not one.
std::optional<bool> ParseBool(const std::string& s);

}  // namespace smd::rules
