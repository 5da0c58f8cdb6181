#include "impl/rules/params.h"

#include <cmath>

#include "impl/core/mode.h"
#include "impl/core/text.h"

namespace smd::rules {

namespace {

// Python accepts '_' between digits in numbers ("1_000"); nothing else.
std::optional<std::string> DropDigitUnderscores(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '_') {
      if (i == 0 || i + 1 == s.size() || !IsAsciiDigit(s[i - 1]) || !IsAsciiDigit(s[i + 1])) {
        return std::nullopt;
      }
      continue;
    }
    out.push_back(s[i]);
  }
  return out;
}

// A list parameter: comma-separated, items stripped, empty ones dropped; "\," is a comma inside
// an item (a regex's "{1,2}"), every other backslash is kept as it is.
std::vector<std::string> SplitList(std::string_view s) {
  std::vector<std::string> out;
  std::string item;
  auto finish = [&] {
    std::string_view piece = StripAscii(item);
    if (!piece.empty()) out.emplace_back(piece);
    item.clear();
  };
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 1 < s.size() && s[i + 1] == ',') {
      item.push_back(',');
      ++i;
    } else if (s[i] == ',') {
      finish();
    } else {
      item.push_back(s[i]);
    }
  }
  finish();
  return out;
}

std::optional<double> ParseNumber(const std::string& s) {
  auto clean = DropDigitUnderscores(std::string(StripAscii(s)));
  if (!clean) return std::nullopt;
  // strtod also takes "nan(...)" and "infinity"; Python float() takes "nan", "inf", "infinity".
  if (clean->find('(') != std::string::npos) return std::nullopt;
  return ParseDouble(*clean);
}

std::optional<int64_t> ParseInteger(const std::string& s) {
  auto clean = DropDigitUnderscores(std::string(StripAscii(s)));
  if (!clean) return std::nullopt;
  if (auto i = ParseInt64(*clean)) return i;
  // SageMaker documents some counts as Float ("steps"): accept integral numbers.
  auto d = ParseNumber(*clean);
  if (!d || !std::isfinite(*d) || std::floor(*d) != *d || std::fabs(*d) > 9.0e15) return std::nullopt;
  return static_cast<int64_t>(*d);
}

}  // namespace

std::optional<bool> ParseBool(const std::string& s) {
  std::string v = AsciiLower(StripAscii(s));
  if (v == "true" || v == "1") return true;
  if (v == "false" || v == "0") return false;
  return std::nullopt;
}

Status Params::Error(const std::string& rule, const std::string& name, const std::string& value,
                     const std::string& why) {
  return InvalidArgument("rule " + rule + ": parameter '" + name + "' = '" + value + "': " + why);
}

Status Params::ParseValue(const std::string& rule, const std::string& name, Value* v) {
  const std::string& raw = v->raw;
  auto bad = [&](const std::string& why) { return Error(rule, name, raw, why); };
  switch (v->type) {
    case ParamType::kFloat: {
      auto d = ParseNumber(raw);
      if (!d) return bad("not a number");
      v->f = *d;
      break;
    }
    case ParamType::kInt: {
      auto i = ParseInteger(raw);
      if (!i) return bad("not an integer");
      v->i = *i;
      v->f = static_cast<double>(*i);
      break;
    }
    case ParamType::kBool: {
      auto b = ParseBool(raw);
      if (!b) return bad("not a boolean (use True or False)");
      v->b = *b;
      break;
    }
    case ParamType::kString:
      break;
    case ParamType::kRegex: {
      auto re = Regex::Compile(std::string(StripAscii(raw)));
      if (!re.ok()) return bad(re.status().message());
      v->regexes.push_back(std::move(re).value());
      v->list.push_back(std::string(StripAscii(raw)));
      break;
    }
    case ParamType::kRegexList:
    case ParamType::kList: {
      v->list = SplitList(raw);
      if (v->type == ParamType::kRegexList) {
        for (const std::string& p : v->list) {
          auto re = Regex::Compile(p);
          if (!re.ok()) return bad(re.status().message());
          v->regexes.push_back(std::move(re).value());
        }
      }
      break;
    }
    case ParamType::kFloatList: {
      for (const std::string& p : SplitAndStrip(raw, ',')) {
        auto d = ParseNumber(p);
        if (!d) return bad("'" + p + "' is not a number");
        v->floats.push_back(*d);
      }
      if (v->floats.empty()) return bad("no numbers");
      break;
    }
    case ParamType::kMode: {
      auto m = ParseMode(StripAscii(raw));
      if (!m) return bad("not a mode (use TRAIN, EVAL, PREDICT or GLOBAL)");
      v->mode = static_cast<int>(*m);
      break;
    }
  }
  return Status::Ok();
}

Result<Params> Params::Parse(const std::string& rule, const std::vector<ParamSpec>& specs,
                             const std::vector<std::pair<std::string, std::string>>& given,
                             const std::vector<std::pair<std::string, std::string>>& aliases) {
  Params p;
  for (const ParamSpec& s : specs) {
    Value v;
    v.type = s.type;
    if (s.default_value != nullptr) {
      v.present = true;
      v.raw = s.default_value;
    }
    p.values_.emplace(s.name, std::move(v));
  }
  for (const auto& kv : given) {
    std::string name = kv.first;
    for (const auto& a : aliases) {
      if (a.first == name) name = a.second;
    }
    auto it = p.values_.find(name);
    if (it == p.values_.end()) {
      std::string known;
      for (const ParamSpec& s : specs) known += (known.empty() ? "" : ", ") + std::string(s.name);
      return InvalidArgument("rule " + rule + ": unknown parameter '" + kv.first + "' = '" +
                             kv.second + "' (" +
                             (known.empty() ? "the rule takes no parameters"
                                            : "accepted: " + known) +
                             ")");
    }
    if (it->second.given) {
      return InvalidArgument("rule " + rule + ": parameter '" + name + "' is given twice" +
                             (name != kv.first ? " (also as '" + kv.first + "')" : ""));
    }
    it->second.given = true;
    // An empty value means "not given" (SageMaker examples pass "tensor_regex": "").
    if (StripAscii(kv.second).empty()) {
      const ParamSpec* spec = nullptr;
      for (const ParamSpec& s : specs) {
        if (name == s.name) spec = &s;
      }
      it->second.present = spec->default_value != nullptr;
      it->second.raw = spec->default_value ? spec->default_value : "";
      continue;
    }
    it->second.present = true;
    it->second.raw = kv.second;
  }
  for (auto& kv : p.values_) {
    if (!kv.second.present) continue;
    Status st = ParseValue(rule, kv.first, &kv.second);
    if (!st.ok()) {
      // A default that does not parse is a bug in the table, not the caller's error.
      if (!kv.second.given) return Internal("rule " + rule + ": bad default: " + st.message());
      return st;
    }
  }
  return p;
}

const Params::Value* Params::Find(const std::string& name) const {
  auto it = values_.find(name);
  return it == values_.end() ? nullptr : &it->second;
}

bool Params::Has(const std::string& name) const {
  const Value* v = Find(name);
  return v != nullptr && v->present;
}

bool Params::Given(const std::string& name) const {
  const Value* v = Find(name);
  return v != nullptr && v->given && v->present;
}

double Params::Float(const std::string& name) const {
  const Value* v = Find(name);
  return v && v->present ? v->f : 0.0;
}

std::optional<double> Params::OptFloat(const std::string& name) const {
  if (!Has(name)) return std::nullopt;
  return Float(name);
}

int64_t Params::Int(const std::string& name) const {
  const Value* v = Find(name);
  return v && v->present ? v->i : 0;
}

std::optional<int64_t> Params::OptInt(const std::string& name) const {
  if (!Has(name)) return std::nullopt;
  return Int(name);
}

bool Params::Bool(const std::string& name) const {
  const Value* v = Find(name);
  return v && v->present && v->b;
}

const std::string& Params::Str(const std::string& name) const {
  static const std::string kEmpty;
  const Value* v = Find(name);
  return v && v->present ? v->raw : kEmpty;
}

const std::vector<std::string>& Params::List(const std::string& name) const {
  static const std::vector<std::string> kEmpty;
  const Value* v = Find(name);
  return v && v->present ? v->list : kEmpty;
}

const std::vector<double>& Params::Floats(const std::string& name) const {
  static const std::vector<double> kEmpty;
  const Value* v = Find(name);
  return v && v->present ? v->floats : kEmpty;
}

std::vector<std::shared_ptr<const Regex>> Params::Regexes(const std::string& name) const {
  const Value* v = Find(name);
  if (v == nullptr || !v->present) return {};
  return v->regexes;
}

int Params::Mode(const std::string& name) const {
  const Value* v = Find(name);
  return v && v->present ? v->mode : 0;
}

}  // namespace smd::rules
