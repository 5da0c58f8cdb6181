// TensorBoard export from the hook's writer. The hook decides, under its lock, what a saved tensor
// gets (a histogram under "<collection>/<name>", a scalar summary); the writer's encoder thread
// computes and encodes the records into a RecordBatch (EncodeTensorSummaries) that travels with
// the step's data; its committer thread appends them to the files (TensorBoardSink), which are
// completed when the step is.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "impl/core/dtype.h"
#include "impl/core/mode.h"
#include "impl/core/status.h"
#include "impl/tensorboard/files.h"
#include "impl/tensorboard/summary.h"

namespace smd::tensorboard {

// Encoded records grouped in runs of the same (mode, step), in order.
class RecordBatch {
 public:
  struct Run {
    Mode mode;
    int64_t step;
    double wall_time;  // of the run's first record
    size_t begin, end;  // byte range in bytes()
  };
  bool empty() const { return bytes_.empty(); }
  size_t size() const { return bytes_.size(); }
  const std::string& bytes() const { return bytes_; }
  const std::vector<Run>& runs() const { return runs_; }
  // The buffer to append records of (mode, step) to; call End() after appending.
  std::string* Begin(Mode mode, int64_t step, double wall_time);
  void End();
  void clear() {
    bytes_.clear();
    runs_.clear();
  }

 private:
  std::string bytes_;
  std::vector<Run> runs_;
};

// What to write for one saved tensor.
struct TensorSummaryRequest {
  Mode mode = Mode::kGlobal;
  int64_t step = 0;  // global step (Event.step and the file name)
  double wall_time = 0;
  std::string_view histogram_tag;  // "<collection>/<tensor>" unsanitized; empty: no histogram
  std::string_view scalar_tag;     // the tensor name unsanitized; empty: no scalar summary
  DType dtype = DType::kFloat32;
  const void* data = nullptr;  // may be null when `histogram` is given and no scalar is asked for
  size_t num_elements = 0;
  const Histogram* histogram = nullptr;  // computed by the caller: written as is
};

// Appends the histogram (if asked for and some element falls within the buckets) and then the
// scalar summary (if asked for and the tensor has exactly one element) to *out, with sanitized
// tags. Bool, string and empty tensors get no histogram. Errors: none expected (kInvalidArgument
// for requests the hook never makes, e.g. a string tensor).
Status EncodeTensorSummaries(const TensorSummaryRequest& req, RecordBatch* out);

// The files side: the committer thread's. One thread at a time.
class TensorBoardSink {
 public:
  explicit TensorBoardSink(std::string dir) : files_(std::move(dir)) {}
  // The log folder `prefix` ("" or ending in '/') of a storage.
  TensorBoardSink(std::shared_ptr<io::Storage> storage, std::string prefix)
      : files_(std::move(storage), std::move(prefix)) {}
  const std::string& dir() const { return files_.dir(); }
  // Appends a batch's records to their files. Errors: kIO naming the file (sticky).
  Status Write(const RecordBatch& batch);
  // Completes the files of a step.
  Status FinishStep(int64_t step) { return files_.FinishStep(step); }
  // Writes out what is buffered (the hook's flush), keeping the files open.
  Status Flush() { return files_.Flush(); }
  Status Close() { return files_.Close(); }

 private:
  EventFileSet files_;
};

// The log folder of a hook (FORMAT.md §11): tensorboard_dir if given and not empty (export on
// even without export_tensorboard, as smdebug), else <out_dir>/tensorboard if
// export_tensorboard, else none. A leading "~" is $HOME (io::ExpandHome), in either.
std::optional<std::string> ResolveTensorBoardDir(const std::string& out_dir, bool export_tensorboard,
                                                 const std::optional<std::string>& tensorboard_dir);

// Under SageMaker (TRAINING_JOB_NAME set) a JSON-configured hook ignores export_tensorboard and
// tensorboard_dir and exports iff the TensorBoard configuration file exists
// ($TENSORBOARD_CONFIG_FILE_PATH, else /opt/ml/input/config/tensorboardoutputconfig.json), into
// its "LocalPath". Returns that folder, or none. Errors: kInvalidArgument for a malformed file.
Result<std::optional<std::string>> SageMakerTensorBoardDir();

}  // namespace smd::tensorboard
