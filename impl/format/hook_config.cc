// Parser for smdebug's hook JSON configuration (FORMAT.md §12).
//
// Value rules (a superset of what smdebug accepts, see DESIGN.md):
// * A key whose value is JSON null is treated as absent (smdebug's parse_bool maps None to the
//   default; null HookParameters / CollectionParameters / CollectionConfigurations mean "none").
// * Integers: a JSON number without a fractional part (|v| < 2^53, beyond which a double is no
//   longer exact), or a decimal string as Python's int() reads it (full int64 range).
// * save_steps: a comma-separated string of integers (empty pieces ignored) or a JSON array of
//   integers.
// * Booleans: JSON true/false or the strings true/True/TRUE/false/False/FALSE.
// * include_regex: a comma-separated string (pieces stripped, empty pieces dropped) or a JSON
//   array of strings (taken verbatim).
// * Duplicate keys: the last one wins, as with Python's json module.
#include "impl/format/hook_config.h"

#include <cjson/cJSON.h>

#include <cmath>
#include <cstdlib>
#include <memory>
#include <unordered_map>
#include <utility>

#include "impl/core/mode.h"
#include "impl/core/json_scan.h"
#include "impl/core/text.h"
#include "impl/core/environment.h"
#include "impl/format/json_int.h"

namespace smd::io {
namespace {

using format::IntFromJsonNumber;
using format::IntFromText;
using format::JsonInt;
using format::kMaxExactJsonInteger;

// Longest piece of a string value quoted in an error message.
constexpr size_t kMaxQuotedBytes = 64;

struct CJsonDeleter {
  void operator()(cJSON* p) const { cJSON_Delete(p); }
};
using CJsonPtr = std::unique_ptr<cJSON, CJsonDeleter>;

// ---- describing values in error messages ----

const char* TypeName(const cJSON* v) {
  if (cJSON_IsString(v)) return "a string";
  if (cJSON_IsNumber(v)) return "a number";
  if (cJSON_IsBool(v)) return "a boolean";
  if (cJSON_IsNull(v)) return "null";
  if (cJSON_IsArray(v)) return "an array";
  if (cJSON_IsObject(v)) return "an object";
  return "an invalid value";
}

// s as a double-quoted JSON literal, cut to kMaxQuotedBytes (at a UTF-8 boundary) with "...".
std::string Quote(std::string_view s) {
  bool cut = false;
  if (s.size() > kMaxQuotedBytes) {
    size_t n = kMaxQuotedBytes;
    while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xc0) == 0x80) --n;
    s = s.substr(0, n);
    cut = true;
  }
  std::string out;
  if (IsValidUtf8(s)) {
    AppendJsonStringUtf8(&out, s);
  } else {
    // Not reachable for parsed input (validated up front); kept so a message never lies.
    out.push_back('"');
    for (char ch : s) {
      const auto c = static_cast<unsigned char>(ch);
      if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
        out.push_back(static_cast<char>(c));
      } else {
        static const char kHex[] = "0123456789abcdef";
        out.append("\\x");
        out.push_back(kHex[c >> 4]);
        out.push_back(kHex[c & 0xf]);
      }
    }
    out.push_back('"');
  }
  if (cut) out.append("...");
  return out;
}

// The value as it would read in the file (containers only by type).
std::string Describe(const cJSON* v) {
  if (cJSON_IsString(v)) return Quote(v->valuestring);
  if (cJSON_IsNumber(v)) {
    const double d = v->valuedouble;
    if (std::isfinite(d) && std::trunc(d) == d && std::fabs(d) < kMaxExactJsonInteger) {
      return std::to_string(static_cast<int64_t>(d));
    }
    return PythonFloatRepr(d);
  }
  if (cJSON_IsTrue(v)) return "true";
  if (cJSON_IsFalse(v)) return "false";
  return TypeName(v);
}

// ---- error context ----

// Builds "<source>: <path>: <what>" messages.
class Errors {
 public:
  explicit Errors(const std::string& source) : source_(source) {}

  Status At(const std::string& path, const std::string& what) const {
    return InvalidArgument(source_ + ": " + path + ": " + what);
  }
  Status Doc(const std::string& what) const { return InvalidArgument(source_ + ": " + what); }
  Status WrongType(const std::string& path, const char* expected, const cJSON* got) const {
    // Scalars are shown by value, containers and null by their type.
    return At(path, std::string("expected ") + expected + ", got " + Describe(got));
  }

 private:
  const std::string& source_;
};

// ---- scalar conversions ----

// Python int(s) on a str, restricted to int64 (no underscores, ASCII digits only).
Result<int64_t> IntFromString(const Errors& err, const std::string& path, std::string_view text,
                              std::string_view what_prefix = {}) {
  int64_t v = 0;
  const JsonInt r = IntFromText(text, &v);
  if (r == JsonInt::kOk) return v;
  std::string what(what_prefix);
  what += Quote(text);
  what += r == JsonInt::kStringOutOfRange ? " is out of range for a 64-bit integer" : " is not an integer";
  return err.At(path, what);
}

Result<int64_t> IntFromNumber(const Errors& err, const std::string& path, const cJSON* v) {
  int64_t out = 0;
  switch (IntFromJsonNumber(v, &out)) {
    case JsonInt::kOk:
      return out;
    case JsonInt::kFraction:
      return err.At(path, Describe(v) + " is not an integer");
    default:
      return err.At(path, "number " + Describe(v) + " is out of range (magnitude 2^53 or more)");
  }
}

Result<int64_t> ToInt(const Errors& err, const std::string& path, const cJSON* v) {
  if (cJSON_IsNumber(v)) return IntFromNumber(err, path, v);
  if (cJSON_IsString(v)) return IntFromString(err, path, v->valuestring);
  return err.WrongType(path, "an integer or a decimal string", v);
}

Result<std::vector<int64_t>> ToSteps(const Errors& err, const std::string& path, const cJSON* v) {
  std::vector<int64_t> steps;
  if (cJSON_IsString(v)) {
    const std::string whole = Quote(v->valuestring);
    for (const std::string& piece : SplitAndStrip(v->valuestring, ',')) {
      SMD_ASSIGN_OR_RETURN(int64_t step,
                           IntFromString(err, path, piece, whole + ": item "));
      steps.push_back(step);
    }
    return steps;
  }
  if (cJSON_IsArray(v)) {
    int i = 0;
    for (const cJSON* item = v->child; item != nullptr; item = item->next, ++i) {
      SMD_ASSIGN_OR_RETURN(int64_t step, ToInt(err, path + "[" + std::to_string(i) + "]", item));
      steps.push_back(step);
    }
    return steps;
  }
  return err.WrongType(path, "a comma-separated string of integers or an array of integers", v);
}

Result<bool> ToBool(const Errors& err, const std::string& path, const cJSON* v) {
  if (cJSON_IsBool(v)) return static_cast<bool>(cJSON_IsTrue(v));
  if (cJSON_IsString(v)) {
    const std::string_view s = v->valuestring;
    if (s == "true" || s == "True" || s == "TRUE") return true;
    if (s == "false" || s == "False" || s == "FALSE") return false;
  }
  return err.WrongType(path, "true or false (a JSON boolean or the string \"true\"/\"false\")",
                       v);
}

Result<std::string> ToString(const Errors& err, const std::string& path, const cJSON* v) {
  if (cJSON_IsString(v)) return std::string(v->valuestring);
  return err.WrongType(path, "a string", v);
}

Result<std::vector<std::string>> ToRegexList(const Errors& err, const std::string& path,
                                             const cJSON* v) {
  if (cJSON_IsString(v)) return SplitAndStrip(v->valuestring, ',');
  if (cJSON_IsArray(v)) {
    std::vector<std::string> out;
    int i = 0;
    for (const cJSON* item = v->child; item != nullptr; item = item->next, ++i) {
      SMD_ASSIGN_OR_RETURN(std::string s,
                           ToString(err, path + "[" + std::to_string(i) + "]", item));
      out.push_back(std::move(s));
    }
    return out;
  }
  return err.WrongType(path, "a comma-separated string or an array of strings", v);
}

// ---- parameter objects ----

// If `key` is a SaveConfig key ("save_interval", "train.save_steps", ...), stores its value in
// `save` and sets *handled.
Status ParseSaveConfigKey(const Errors& err, const std::string& path, std::string_view key,
                          const cJSON* v, SaveConfigSpec* save, bool* handled) {
  static constexpr std::pair<std::string_view, Mode> kPrefixes[] = {
      {"train.", Mode::kTrain},
      {"eval.", Mode::kEval},
      {"predict.", Mode::kPredict},
      {"global.", Mode::kGlobal},
  };
  SaveConfigModeSpec* target = &save->generic;
  for (const auto& [prefix, mode] : kPrefixes) {
    if (key.substr(0, prefix.size()) == prefix) {
      target = &save->per_mode[static_cast<size_t>(ModeIndex(mode))];
      key.remove_prefix(prefix.size());
      break;
    }
  }
  *handled = true;
  if (key == "save_interval") {
    SMD_ASSIGN_OR_RETURN(target->save_interval, ToInt(err, path, v));
  } else if (key == "start_step") {
    SMD_ASSIGN_OR_RETURN(target->start_step, ToInt(err, path, v));
  } else if (key == "end_step") {
    SMD_ASSIGN_OR_RETURN(target->end_step, ToInt(err, path, v));
  } else if (key == "save_steps") {
    SMD_ASSIGN_OR_RETURN(target->save_steps, ToSteps(err, path, v));
  } else {
    *handled = false;
  }
  return Status::Ok();
}

// "reductions", "save_raw_tensor", "save_shape" as read from one parameter object. The flags are
// type-checked even when "reductions" is absent, but only used when it is present.
struct ReductionKeys {
  std::optional<std::string> reductions;
  std::optional<bool> save_raw_tensor;
  std::optional<bool> save_shape;

  Status Parse(const Errors& err, const std::string& path, std::string_view key, const cJSON* v,
               bool* handled) {
    *handled = true;
    if (key == "reductions") {
      SMD_ASSIGN_OR_RETURN(reductions, ToString(err, path, v));
    } else if (key == "save_raw_tensor") {
      SMD_ASSIGN_OR_RETURN(save_raw_tensor, ToBool(err, path, v));
    } else if (key == "save_shape") {
      SMD_ASSIGN_OR_RETURN(save_shape, ToBool(err, path, v));
    } else {
      *handled = false;
    }
    return Status::Ok();
  }

  std::optional<ReductionSpec> Build() const {
    if (!reductions) return std::nullopt;
    ReductionSpec spec;
    spec.reductions = *reductions;
    spec.save_raw_tensor = save_raw_tensor.value_or(false);
    spec.save_shape = save_shape.value_or(false);
    return spec;
  }
};

Status ParseHookParameters(const Errors& err, const cJSON* obj, HookConfigSpec* out) {
  ReductionKeys red;
  for (const cJSON* v = obj->child; v != nullptr; v = v->next) {
    if (v->string == nullptr || cJSON_IsNull(v)) continue;
    const std::string_view key = v->string;
    const std::string path = "HookParameters." + std::string(key);
    bool handled = false;
    SMD_RETURN_IF_ERROR(ParseSaveConfigKey(err, path, key, v, &out->save, &handled));
    if (handled) continue;
    SMD_RETURN_IF_ERROR(red.Parse(err, path, key, v, &handled));
    if (handled) continue;
    if (key == "save_all") {
      SMD_ASSIGN_OR_RETURN(out->save_all, ToBool(err, path, v));
    } else if (key == "include_regex") {
      SMD_ASSIGN_OR_RETURN(out->include_regex, ToRegexList(err, path, v));
    } else if (key == "include_workers") {
      SMD_ASSIGN_OR_RETURN(out->include_workers, ToString(err, path, v));
    } else if (key == "export_tensorboard") {
      SMD_ASSIGN_OR_RETURN(out->export_tensorboard, ToBool(err, path, v));
    } else if (key == "tensorboard_dir") {
      SMD_ASSIGN_OR_RETURN(out->tensorboard_dir, ToString(err, path, v));
    } else if (key == "dry_run") {
      SMD_ASSIGN_OR_RETURN(out->dry_run, ToBool(err, path, v));
    }
    // Anything else (e.g. save_histogram at hook level) is ignored, as in smdebug.
  }
  out->reduction = red.Build();
  return Status::Ok();
}

Status ParseCollectionParameters(const Errors& err, const std::string& base, const cJSON* obj,
                                 CollectionSpec* out) {
  ReductionKeys red;
  for (const cJSON* v = obj->child; v != nullptr; v = v->next) {
    if (v->string == nullptr || cJSON_IsNull(v)) continue;
    const std::string_view key = v->string;
    const std::string path = base + "." + std::string(key);
    bool handled = false;
    SMD_RETURN_IF_ERROR(ParseSaveConfigKey(err, path, key, v, &out->save, &handled));
    if (handled) continue;
    SMD_RETURN_IF_ERROR(red.Parse(err, path, key, v, &handled));
    if (handled) continue;
    if (key == "include_regex") {
      SMD_ASSIGN_OR_RETURN(out->include_regex, ToRegexList(err, path, v));
    } else if (key == "save_histogram") {
      SMD_ASSIGN_OR_RETURN(out->save_histogram, ToBool(err, path, v));
    }
  }
  out->reduction = red.Build();
  return Status::Ok();
}

Result<CollectionSpec> ParseCollection(const Errors& err, const std::string& path,
                                       const cJSON* entry) {
  if (!cJSON_IsObject(entry)) return err.WrongType(path, "an object", entry);
  const cJSON* name = nullptr;
  const cJSON* params = nullptr;
  for (const cJSON* v = entry->child; v != nullptr; v = v->next) {
    if (v->string == nullptr) continue;
    const std::string_view key = v->string;
    if (key == "CollectionName") name = v;
    if (key == "CollectionParameters") params = v;
  }
  if (name == nullptr) return err.At(path, "missing CollectionName");
  CollectionSpec spec;
  SMD_ASSIGN_OR_RETURN(spec.name, ToString(err, path + ".CollectionName", name));
  if (spec.name.empty()) return err.At(path + ".CollectionName", "must not be empty");
  if (params != nullptr && !cJSON_IsNull(params)) {
    const std::string params_path = path + ".CollectionParameters";
    if (!cJSON_IsObject(params)) return err.WrongType(params_path, "an object", params);
    SMD_RETURN_IF_ERROR(ParseCollectionParameters(err, params_path, params, &spec));
  }
  return spec;
}

// ---- document level ----

// 1-based line and column of byte `offset`.
std::string DescribePosition(std::string_view text, size_t offset) {
  size_t line = 1, col = 1;
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return "line " + std::to_string(line) + ", column " + std::to_string(col) + " (byte offset " +
         std::to_string(offset) + ")";
}

// Deepest array/object nesting outside strings, to explain cJSON's nesting limit.
size_t MaxNesting(std::string_view text) {
  size_t depth = 0, max_depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      max_depth = std::max(max_depth, ++depth);
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return max_depth;
}

bool IsJsonWhitespace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

Result<CJsonPtr> ParseDocument(const Errors& err, std::string_view json) {
  if (StripAscii(json).empty()) return err.Doc("malformed JSON: the input is empty");
  if (!IsValidUtf8(json)) return err.Doc("malformed JSON: the input is not valid UTF-8");
  // cJSON would silently cut a string or key at a raw NUL byte; JSON allows none.
  if (const size_t nul = json.find('\0'); nul != std::string_view::npos) {
    return err.Doc("malformed JSON: NUL byte at " + DescribePosition(json, nul));
  }
  // Nor at a \u0000 escape: a name or path holding it would be cut there.
  if (JsonHasNulEscape(json)) {
    return err.Doc("a string holds \\u0000 (a NUL character), which no name or path can hold");
  }
  const char* end = nullptr;
  // Note: cJSON also records failures in a process-wide variable; we never read it.
  CJsonPtr root(cJSON_ParseWithLengthOpts(json.data(), json.size(), &end,
                                          /*require_null_terminated=*/0));
  // cJSON points `end` at the failure on error and just past the value on success.
  size_t pos = json.size();
  if (end != nullptr && end >= json.data() && end <= json.data() + json.size()) {
    pos = static_cast<size_t>(end - json.data());
  }
  if (root == nullptr) {
    if (MaxNesting(json) > CJSON_NESTING_LIMIT) {
      return err.Doc("malformed JSON: arrays/objects nested deeper than " +
                     std::to_string(CJSON_NESTING_LIMIT) + " levels are not supported");
    }
    return err.Doc("malformed JSON near " + DescribePosition(json, pos));
  }
  while (pos < json.size() && IsJsonWhitespace(json[pos])) ++pos;
  if (pos < json.size()) {
    return err.Doc("malformed JSON: unexpected data after the top-level value at " +
                   DescribePosition(json, pos));
  }
  return root;
}

}  // namespace

Result<HookConfigSpec> ParseHookConfig(std::string_view json, const std::string& source) {
  const Errors err(source);
  SMD_ASSIGN_OR_RETURN(CJsonPtr root, ParseDocument(err, json));
  if (!cJSON_IsObject(root.get())) {
    return err.Doc(std::string("expected a JSON object at the top level, got ") +
                   TypeName(root.get()));
  }

  HookConfigSpec spec;
  const cJSON* hook_params = nullptr;
  const cJSON* collections = nullptr;
  for (const cJSON* v = root->child; v != nullptr; v = v->next) {
    if (v->string == nullptr || cJSON_IsNull(v)) continue;
    const std::string_view key = v->string;
    if (key == "LocalPath") {
      SMD_ASSIGN_OR_RETURN(spec.local_path, ToString(err, "LocalPath", v));
    } else if (key == "HookParameters") {
      hook_params = v;
    } else if (key == "CollectionConfigurations") {
      collections = v;
    }
    // S3OutputPath and anything else: ignored (SageMaker uploads LocalPath itself).
  }

  if (hook_params != nullptr) {
    if (!cJSON_IsObject(hook_params)) {
      return err.WrongType("HookParameters", "an object", hook_params);
    }
    SMD_RETURN_IF_ERROR(ParseHookParameters(err, hook_params, &spec));
  }

  if (collections != nullptr) {
    if (!cJSON_IsArray(collections)) {
      return err.WrongType("CollectionConfigurations", "an array", collections);
    }
    int i = 0;
    std::unordered_map<std::string, size_t> index_of;  // collection name -> its entry
    for (const cJSON* entry = collections->child; entry != nullptr; entry = entry->next, ++i) {
      const std::string path = "CollectionConfigurations[" + std::to_string(i) + "]";
      SMD_ASSIGN_OR_RETURN(CollectionSpec coll, ParseCollection(err, path, entry));
      // Several entries for one collection apply in order to that collection, as smdebug applies
      // them: regexes add up; a later entry's save configuration replaces the earlier one (an
      // entry without save keys means the hook's); its reductions and save_histogram, when
      // present, replace the earlier ones.
      auto [at, first] = index_of.try_emplace(coll.name, spec.collections.size());
      if (first) {
        spec.collections.push_back(std::move(coll));
        continue;
      }
      CollectionSpec* same = &spec.collections[at->second];
      for (std::string& r : coll.include_regex) same->include_regex.push_back(std::move(r));
      same->save = coll.save;
      if (coll.reduction) same->reduction = std::move(coll.reduction);
      if (coll.save_histogram) same->save_histogram = coll.save_histogram;
    }
  }
  return spec;
}

std::string DefaultHookConfigPath() { return env::HookConfigPath(); }

}  // namespace smd::io
