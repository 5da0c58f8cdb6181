// Helpers shared by the built-in rules: tensor selection (collection_names / tensor_regex),
// values at a step as doubles, numpy-style comparisons, number formatting for messages.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "impl/core/mode.h"
#include "impl/core/regex.h"
#include "impl/core/status.h"
#include "impl/trial/trial.h"
#include "impl/trial/value.h"

namespace smd::rules {

using trial::Trial;
using trial::ValuePtr;

// The tensors of `collections` (each: its tensor_names plus its regex matches; an unknown
// collection adds nothing) united with those any of `regexes` matches, sorted. With `step`, only
// tensors saved at that global step. With neither collections nor regexes: every tensor if
// `all_if_none`, else nothing.
Result<std::vector<std::string>> SelectTensors(Trial& t, const std::vector<std::string>& collections,
                                               const std::vector<std::string>& regexes,
                                               std::optional<int64_t> step, bool all_if_none);

// Names of tensors any of `regexes` matches (search), sorted; with `step` only those saved at
// that global step.
Result<std::vector<std::string>> TensorsMatching(Trial& t, const std::vector<std::string>& regexes,
                                                 std::optional<int64_t> step);

// The raw value of `name` at `step` of `mode`; nullptr when it was not saved there
// (TensorUnavailable, TensorUnavailableForStep, StepUnavailable). Other errors pass.
Result<ValuePtr> ValueAt(Trial& t, const std::string& name, int64_t step, Mode mode = Mode::kGlobal);

// A reduction ("abs_mean", "variance", ...) at `step`: saved, or computed from the raw value;
// nullopt when neither exists there.
Result<std::optional<double>> ReductionAt(Trial& t, const std::string& name, int64_t step,
                                          const std::string& reduction, Mode mode = Mode::kGlobal);

// smdebug's InsufficientInformationForRuleInvocation, as kInvalidArgument:
// "Insufficient information to invoke rule <rule>: <message>".
Status InsufficientInformation(const std::string& rule, const std::string& message);

// Whether a value holds numbers (not strings).
inline bool IsNumeric(const trial::Value& v) { return !v.is_string(); }
// All elements as doubles (complex: the real part; bool: 0/1). Strings: empty.
std::vector<double> ToDoubles(const trial::Value& v);
// One element value as a double (0 for strings).
double ElementAt(const trial::Value& v, size_t i);
// Whether the dtype can hold NaN or infinity.
bool CanBeNonFinite(const trial::Value& v);

// numpy.allclose(a, b, rtol, atol, equal_nan) for equal-length arrays:
// |a - b| <= atol + rtol * |b| elementwise; equal infinities are close; NaN only with equal_nan.
bool AllClose(const std::vector<double>& a, const std::vector<double>& b, double rtol, double atol,
              bool equal_nan);
// Same shapes and allclose; string values: equal strings.
bool ValuesClose(const trial::Value& a, const trial::Value& b, double rtol, double atol,
                 bool equal_nan);

// numpy.percentile with linear interpolation of a copy of `v` (q in [0, 100]); NaN if empty.
double Percentile(std::vector<double> v, double q);

// Python's repr of a float, for messages ("1e-07", "0.25", "nan").
std::string Num(double x);

// The integer after the last '_' of a name (0 without one): smdebug's order of inputs/labels.
int64_t NameIndex(const std::string& name);

}  // namespace smd::rules
