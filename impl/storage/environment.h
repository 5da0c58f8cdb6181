// The one place that reads the process environment: the home folder, the SageMaker paths, the
// launchers' worker rank and count, and the SMDEBUG_* variables. Everything else asks here, so
// that what smd takes from the environment is listed in one file.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace smd::env {

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

}  // namespace smd::env
