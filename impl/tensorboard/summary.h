// TensorBoard summaries as smdebug writes them (FORMAT.md §11): tag sanitization, histograms over
// TensorFlow's default bucket edges, and the Event records (real masked CRC32C footers) holding a
// scalar (Summary.Value.simple_value), a histogram (Summary.Value.histo) or the file version.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "impl/core/dtype.h"
#include "impl/core/status.h"

namespace smd::tensorboard {

// TensorFlow's clean_tag as smdebug applies it: every character outside [-/\w.] (Python `re`
// Unicode semantics: \w is a letter, a digit or '_') becomes '_', then leading '/' are removed.
// Bytes that are not valid UTF-8 count as characters outside the set.
std::string SanitizeTag(std::string_view name);

// The default bucket edges (smdebug's port of TensorFlow's InitDefaultBucketsInner, without its
// ±DBL_MAX ends): -p[K-1] .. -p[0], 0, p[0] .. p[K-1], where p[0] = 1e-12 and each next edge is
// the previous one times 1.1 (repeated double multiplication) while it stays below 1e20.
// K = 774, so 1549 edges and 1548 buckets. Computed once; thread-safe.
const std::vector<double>& DefaultBucketEdges();

// A histogram as TensorBoard's HistogramProto holds it.
struct Histogram {
  double min = 0, max = 0, num = 0, sum = 0, sum_squares = 0;
  std::vector<double> bucket_limit;  // right edge of each bucket
  std::vector<double> bucket;        // element count of each bucket
};

// The histogram smdebug writes for a tensor: the elements, converted to double (complex: the real
// part, as numpy's astype(float)), counted over DefaultBucketEdges() as numpy.histogram does
// (buckets [e_i, e_i+1), the last one closed; NaN, infinities and values beyond ±1e20 are not
// counted), then trimmed to the buckets from the first to the last non-empty one plus one empty
// bucket on the left. min, max, sum and sum_squares are over all elements (NaN propagates); num is
// the element count. O(n), a table lookup and one comparison per element.
// Returns false, leaving *out unspecified, when no element falls within the edges (smdebug then
// writes no histogram). Errors: kInvalidArgument for string tensors or n == 0.
Result<bool> ComputeHistogram(DType dtype, const void* data, size_t n, Histogram* out);

// The same histogram from counts the caller made over DefaultBucketEdges(): counts[i] elements
// in bucket i (n_counts == DefaultBucketEdges().size() - 1), num elements in all, and the
// statistics of all of them. Trimmed as ComputeHistogram trims. Returns false when every count is
// 0. Errors: kInvalidArgument when n_counts is not the number of buckets or the counts add up to
// more than num.
Result<bool> HistogramFromCounts(const uint64_t* counts, size_t n_counts, uint64_t num, double min,
                                 double max, double sum, double sum_squares, Histogram* out);

// The value of a one-element tensor as a double (what smdebug's float(value) gives: complex: the
// real part; bool: 0/1). Errors: kInvalidArgument for strings or n != 1.
Result<double> ScalarValue(DType dtype, const void* data, size_t n);

// Records. Each appends one complete TFRecord to *out: the payload framed with its length, the
// masked CRC32C of the length and the masked CRC32C of the payload. Tags are written as given.
// Event{wall_time, step, summary{value{tag, simple_value}}}; the value is written even if 0.
void AppendScalarRecord(std::string* out, double wall_time, int64_t step, std::string_view tag,
                        float value);
// Event{wall_time, step, summary{value{tag, histo{min, max, num, sum, sum_squares, bucket_limit,
// bucket}}}}.
void AppendHistogramRecord(std::string* out, double wall_time, int64_t step, std::string_view tag,
                           const Histogram& h);
// Event{wall_time, file_version: "brain.Event:2"}, what TensorFlow's writers put first in a file.
void AppendFileVersionRecord(std::string* out, double wall_time);

}  // namespace smd::tensorboard
