// The one place that reads the process environment: the home folder, the SageMaker paths, the
// launchers' worker rank and count, the SMDEBUG_* variables, and the AWS configuration chain's
// variables (read by impl/storage/s3/config.cc). Everything else asks here, so that no other file
// calls getenv.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "impl/core/status.h"

namespace smd::env {

// Any other variable (the AWS configuration chain's: AWS_PROFILE, AWS_REGION, ...): its value,
// "" when it is unset or empty.
std::string Variable(const char* name);

// $HOME, if set and not empty (for "~" in paths: io::ExpandHome).
std::optional<std::string> HomeDir();

// Running as a SageMaker training job ($TRAINING_JOB_NAME set and not empty).
bool InSageMakerJob();

// This process's rank and the number of workers as the launcher's environment gives them
// (OpenMPI, torch.distributed, Horovod, MPICH/PMI, consulted in that order); nullopt if none
// gives a valid number.
std::optional<int64_t> LauncherRank();
std::optional<int64_t> LauncherWorldSize();

// $SMDEBUG_INCOMPLETE_STEP_WAIT_WINDOW if it is an integer >= 0.
std::optional<int64_t> IncompleteStepWaitWindow();

// The JSON hook configuration: $SMDEBUG_CONFIG_FILE_PATH, else SageMaker's
// /opt/ml/input/config/debughookconfig.json.
std::string HookConfigPath();

// The TensorBoard configuration: $TENSORBOARD_CONFIG_FILE_PATH, else SageMaker's
// /opt/ml/input/config/tensorboardoutputconfig.json.
std::string TensorBoardConfigPath();

// The largest configuration file ReadConfigFile reads (SageMaker's are a few kilobytes).
inline constexpr size_t kMaxConfigFileBytes = 16 << 20;

// The text of a configuration file (the hook or TensorBoard JSON). `what` names it in messages
// ("the hook configuration"). Never blocks on a FIFO or device: only a regular file is read.
// Errors: kNotFound when the path does not exist; kInvalidArgument "<what> '<path>' is a folder"
// (or a FIFO, a device, a socket: not a regular file) or is over kMaxConfigFileBytes; kIO for
// other failures.
Result<std::string> ReadConfigFile(const std::string& what, const std::string& path);

}  // namespace smd::env
