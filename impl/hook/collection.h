// Collections: named groups of tensors with their own save and reduction configuration.
#pragma once

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "impl/core/regex.h"
#include "impl/hook/config.h"

namespace smd::hook {

struct Collection {
  std::string name;
  std::vector<std::shared_ptr<const Regex>> regexes;
  std::set<std::string> explicit_names;  // added by name
  std::set<std::string> tensor_names;    // explicit + matched so far (what the file lists)
  std::optional<SaveConfig> save_config;
  std::optional<ReductionConfig> reduction_config;
  bool save_histogram = true;

  // Errors: a regex that PCRE2 gave up on for this name (Regex::Search), naming both.
  Result<bool> Matches(std::string_view tensor) const;
  // Whether some name made of `prefix` and a decimal index may match (a name of its own, or a
  // regex: Regex::MayMatchNumbered). False only when none can. Errors: as Matches.
  Result<bool> MayMatchNumbered(std::string_view prefix) const;
};

// The names seed 002 lists as built in.
bool IsBuiltinCollection(std::string_view name);
// losses, metrics, feature_importance, average_shap, sm_metrics: raw values only, no reductions,
// TensorBoard scalars, no histograms.
bool IsScalarCollection(std::string_view name);
// The scalar collections and tensorflow_summaries: reduction config forced to raw-only,
// save_histogram forced false.
bool IsNonReductionCollection(std::string_view name);
// gradients and optimizer_variables are never saved in EVAL or PREDICT mode.
bool IsTrainOnlyCollection(std::string_view name);

// The collections a new hook starts with, in order, with their regexes:
// all, default, weights, biases, gradients, losses.
struct BuiltinSeed {
  const char* name;
  const char* regex;  // nullptr for none
};
const std::vector<BuiltinSeed>& InitialCollections();

}  // namespace smd::hook
