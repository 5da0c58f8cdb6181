#include "impl/hook/collection.h"

#include <algorithm>

#include "impl/core/text.h"

namespace smd::hook {

Result<bool> Collection::Matches(std::string_view tensor) const {
  if (explicit_names.count(std::string(tensor))) return true;
  for (const auto& r : regexes) {
    Result<bool> m = r->Search(tensor);
    if (!m.ok()) {
      return Status(m.status().code(), "collection '" + name + "': " + m.status().message());
    }
    if (*m) return true;
  }
  return false;
}

Result<bool> Collection::MayMatchNumbered(std::string_view prefix) const {
  for (const std::string& n : explicit_names) {
    if (n.size() > prefix.size() && n.compare(0, prefix.size(), prefix) == 0 &&
        std::all_of(n.begin() + prefix.size(), n.end(), IsAsciiDigit)) {
      return true;
    }
  }
  for (const auto& r : regexes) {
    Result<bool> m = r->MayMatchNumbered(prefix);
    if (!m.ok()) return Status(m.status().code(), "collection '" + name + "': " + m.status().message());
    if (*m) return true;
  }
  return false;
}

bool IsBuiltinCollection(std::string_view n) {
  static const char* const kNames[] = {
      "all", "default", "inputs", "outputs", "weights", "gradients", "losses", "biases", "layers",
      "sm_metrics", "optimizer_variables", "tensorflow_summaries", "metrics", "hyperparameters",
      "predictions", "labels", "feature_importance", "average_shap", "full_shap", "trees"};
  for (const char* k : kNames) {
    if (n == k) return true;
  }
  return false;
}

bool IsScalarCollection(std::string_view n) {
  return n == "losses" || n == "metrics" || n == "feature_importance" || n == "average_shap" ||
         n == "sm_metrics";
}

bool IsNonReductionCollection(std::string_view n) {
  return IsScalarCollection(n) || n == "tensorflow_summaries";
}

bool IsTrainOnlyCollection(std::string_view n) {
  return n == "gradients" || n == "optimizer_variables";
}

const std::vector<BuiltinSeed>& InitialCollections() {
  static const std::vector<BuiltinSeed> kSeeds = {
      {"all", nullptr},
      {"default", nullptr},
      {"weights", "^(?!gradient).*weight"},
      {"biases", "^(?!gradient).*bias"},
      {"gradients", "^gradient"},
      {"losses", "[Ll]oss"},
  };
  return kSeeds;
}

}  // namespace smd::hook
