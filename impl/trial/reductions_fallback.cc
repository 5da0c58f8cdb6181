// TEMPORARY: a minimal stand-in for the two functions of impl/core/reductions.h the reader uses,
// compiled only while the real impl/core/reductions.cc is not in the tree (impl/CMakeLists.txt
// defines SMD_REDUCTIONS_FALLBACK then). Delete this file once the reductions branch is merged.
#ifdef SMD_REDUCTIONS_FALLBACK

#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <string>

#include "impl/core/reductions.h"

namespace smd {

Result<ReductionName> ParseReductionName(std::string_view name) {
  bool abs = false;
  std::string_view n = name;
  if (n.size() > 4 && n.compare(0, 4, "abs_") == 0) {
    abs = true;
    n.remove_prefix(4);
  }
  if (n == "l1_norm") n = "l1";
  if (n == "l2_norm") n = "l2";
  static const char* kNames[] = {"min", "max", "mean", "std", "variance",
                                 "sum", "prod", "median", "l1", "l2"};
  for (int i = 0; i < kNumReductionOps; ++i) {
    if (n == kNames[i]) return ReductionName{static_cast<ReductionOp>(i), abs};
  }
  return InvalidArgument("unknown reduction '" + std::string(name) + "'");
}

Result<ReductionValue> ComputeReduction(ReductionOp op, bool abs, DType t, const void* data,
                                        size_t n) {
  if (t == DType::kString) return Unsupported("reductions of strings");
  double acc = 0, lo = std::numeric_limits<double>::infinity(), hi = -lo, prod = 1, sq = 0;
  bool nan = false;
  for (size_t i = 0; i < n; ++i) {
    double x = LoadAsDouble(t, data, i);
    if (abs) x = std::fabs(x);
    if (std::isnan(x)) nan = true;
    acc += x;
    sq += x * x;
    prod *= x;
    lo = std::min(lo, x);
    hi = std::max(hi, x);
  }
  double r = 0;
  const double mean = n ? acc / static_cast<double>(n) : std::nan("");
  switch (op) {
    case ReductionOp::kMin: r = lo; break;
    case ReductionOp::kMax: r = hi; break;
    case ReductionOp::kMean: r = mean; break;
    case ReductionOp::kSum: r = acc; break;
    case ReductionOp::kProd: r = prod; break;
    case ReductionOp::kVariance:
    case ReductionOp::kStd: {
      double v = 0;
      for (size_t i = 0; i < n; ++i) {
        double x = LoadAsDouble(t, data, i);
        if (abs) x = std::fabs(x);
        v += (x - mean) * (x - mean);
      }
      v = n ? v / static_cast<double>(n) : std::nan("");
      r = op == ReductionOp::kStd ? std::sqrt(v) : v;
      break;
    }
    case ReductionOp::kL1: {
      double s = 0;
      for (size_t i = 0; i < n; ++i) s += std::fabs(LoadAsDouble(t, data, i));
      r = s;
      break;
    }
    case ReductionOp::kL2: r = std::sqrt(sq); break;
    case ReductionOp::kMedian: return Unsupported("median (fallback)");
  }
  if ((op == ReductionOp::kMin || op == ReductionOp::kMax) && n == 0) {
    return InvalidArgument("zero-size array to reduction operation");
  }
  if (nan && (op == ReductionOp::kMin || op == ReductionOp::kMax)) r = std::nan("");
  ReductionValue v;
  v.dtype = DType::kFloat64;
  std::memcpy(v.bytes, &r, 8);
  return v;
}

}  // namespace smd

#endif  // SMD_REDUCTIONS_FALLBACK
