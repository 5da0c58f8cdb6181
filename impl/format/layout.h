// File names inside a trial folder (FORMAT.md §1).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "impl/core/status.h"

namespace smd::io {

constexpr const char* kEndOfJobFile = "training_job_end.ts";
constexpr const char* kClaimFile = "claim.smd";
constexpr const char* kTmpSuffix = ".tmp";
// smd only: written by a rule whose condition was met (StopTraining), polled by the hook.
constexpr const char* kStopTrainingFile = "stop_training.smd";
// smd only: in a job whose workers all write (include_workers all, num_workers > 1), each worker
// leaves "workers_ended/<worker>" at its close, and the one that finds every worker's there
// writes training_job_end.ts (readers stop listing once they see it), then removes the marks.
constexpr const char* kWorkersEndedDir = "workers_ended";

// Python floor division by 1000 (negative steps round down).
int64_t IndexPrefixOf(int64_t step);
// "events/000000000003/000000000003_worker_0.tfevents"
std::string EventFileRelPath(int64_t step, std::string_view worker);
// "index/000000000/000000000003_worker_0.json"
std::string IndexFileRelPath(int64_t step, std::string_view worker);
// "index/000000000/"
std::string IndexDirRelPath(int64_t step);
// "collections/000000000/worker_0_collections.json"
std::string CollectionsFileRelPath(std::string_view worker);
// "collections/000000000": the folder of every worker's collections file
std::string CollectionsDirRelPath();

// Checks a worker name used in file names: non-empty UTF-8, no '/', '\\' or control characters,
// not "." or "..", and not beginning with '_' (smdebug reads such names back as TF device
// strings) nor containing "__". Errors: kInvalidArgument naming the problem.
Status ValidateWorkerName(std::string_view worker);

// Step from an index or event file's basename: the first '_'-separated token, as an integer.
std::optional<int64_t> StepFromFileName(std::string_view basename);
// Worker from an index or event file's basename "<digits>_<worker>.<ext>" (ext json/tfevents).
std::optional<std::string> WorkerFromFileName(std::string_view basename);

}  // namespace smd::io
