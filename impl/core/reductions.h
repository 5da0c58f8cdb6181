// Reductions of a tensor to one value: min, max, mean, std, variance, sum, prod, median, l1, l2,
// optionally over absolute values. The result's dtype follows numpy's for the same input (what
// smdebug writes); the arithmetic is smd's: over all elements, vector norms, population
// std/variance, accumulated in double (or 64-bit integers) for accuracy.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "impl/core/dtype.h"
#include "impl/core/status.h"

namespace smd {

enum class ReductionOp : int { kMin, kMax, kMean, kStd, kVariance, kSum, kProd, kMedian, kL1, kL2 };

constexpr int kNumReductionOps = 10;

// "min", "max", "mean", "std", "variance", "sum", "prod", "median", "l1", "l2".
const char* ReductionOpName(ReductionOp op);
bool IsNorm(ReductionOp op);  // l1, l2
// Parses a short name ("mean", "l1"); does not accept abs_ or _norm forms.
std::optional<ReductionOp> ParseReductionOp(std::string_view name);

// One reduction as a spec names it.
struct ReductionName {
  ReductionOp op;
  bool abs;
};
// The names ParseReductionName accepts, without the optional "abs_" prefix: each op's short name
// in ReductionOp order, then the "_norm" spelling of each norm ("l1_norm", "l2_norm").
std::vector<std::string> ReductionSpellings();
// Parses every accepted spelling: "min", "abs_mean", "l1", "l1_norm", "abs_l2", "abs_l2_norm",
// "median", "abs_median". Errors: kInvalidArgument naming the name and the accepted ones.
Result<ReductionName> ParseReductionName(std::string_view name);

// The single value of a reduction, stored in `dtype` in little-endian bytes.
struct ReductionValue {
  DType dtype = DType::kFloat64;
  unsigned char bytes[16] = {0};  // one element of dtype (complex128 uses all 16)
  double AsDouble() const;        // complex: the real part; bool: 0/1
};

// numpy's result dtype for `op` over `input` (after abs, if abs): e.g. mean of int32 is float64,
// sum of int8 is int64, min of float16 is float16, l2 of int64 is float64, abs of complex64 is
// float32. Errors: kUnsupported for strings.
Result<DType> ReductionResultDType(ReductionOp op, bool abs, DType input);

// Computes op over the n elements at data (C-contiguous, dtype t). NaNs propagate (min/max/
// median of data holding a NaN are NaN). Empty input: min, max are errors (kInvalidArgument, as
// numpy raises); mean, std, variance, median are NaN; sum is 0; prod is 1; l1, l2 are 0.
// Errors: kUnsupported for strings.
Result<ReductionValue> ComputeReduction(ReductionOp op, bool abs, DType t, const void* data,
                                        size_t n);

// A reduction's value computed elsewhere (e.g. on a GPU) as a double, stored in `result` (the dtype
// ReductionResultDType gives) exactly as ComputeReduction stores its own double result: floating
// types are rounded to nearest (float16/bfloat16 through round-to-odd float, as there), integers
// must be whole numbers within the type's range (kInvalidArgument otherwise; NaN and infinities
// too), bool is value != 0. Complex results are refused (kUnsupported).
Result<ReductionValue> ReductionValueFromDouble(DType result, double value);

// The tag smdebug stores a reduction under: "smdebug/reductions/[abs_]<op>/<tensor>", where
// every ":<digits>" is removed from "<op>/<tensor>" (smdebug does this for all frameworks but TF:
// keep_colon_index keeps the name as it is, as smdebug's TensorFlow hooks do).
std::string ReductionTag(std::string_view tensor_name, ReductionOp op, bool abs,
                         bool keep_colon_index = false);

}  // namespace smd
