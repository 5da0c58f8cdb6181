// The errors a trial returns, with smdebug's messages (BEHAVIOR.md §8).
#include "impl/trial/trial.h"

namespace smd::trial {

Status TensorUnavailableForStepError(const std::string& tensor, int64_t step, Mode mode,
                                     bool has_reductions) {
  std::string m = "Value for tensor " + tensor + " is not available for step " +
                  std::to_string(step) + " with mode " + ModeName(mode) + " as it was not saved.";
  if (has_reductions) {
    m += " This tensor has reductions saved for this step. You might want to query for the "
         "reductions.";
  }
  return Status(Code::kTensorUnavailableForStep, m);
}
Status TensorUnavailableError(const std::string& tensor) {
  return Status(Code::kTensorUnavailable, "Tensor " + tensor + " was not saved.");
}
Status StepUnavailableError(int64_t step, Mode mode) {
  return Status(Code::kStepUnavailable, "Step " + std::to_string(step) + " of mode " +
                                            ModeName(mode) + " is not available as it was not saved");
}
Status StepNotYetAvailableError(int64_t step, Mode mode) {
  return Status(Code::kStepNotYetAvailable,
                "Step " + std::to_string(step) + " of mode " + ModeName(mode) + " not yet available");
}
Status NoMoreDataError(int64_t step, Mode mode, int64_t last_step) {
  return Status(Code::kNoMoreData, "Looking for step " + std::to_string(step) + " of mode " +
                                       ModeName(mode) +
                                       " and reached end of training. Max step available is " +
                                       std::to_string(last_step));
}
Status ShapeUnavailableForStepError(const std::string& tensor, int64_t step, Mode mode) {
  return Status(Code::kShapeUnavailableForStep,
                "Shape for tensor " + tensor + " is not available for step " + std::to_string(step) +
                    " with mode " + ModeName(mode) + " as it was not saved.");
}
Status InvalidWorkerError(const std::string& worker) {
  return Status(Code::kInvalidWorker, "Invalid Worker: " + worker);
}
Status MissingCollectionFilesError(const std::string& detail) {
  return Status(Code::kMissingCollectionFiles,
                "Training job has ended. All the collection files could not be loaded" +
                    (detail.empty() ? std::string() : " (" + detail + ")"));
}

}  // namespace smd::trial
