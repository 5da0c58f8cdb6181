#include "impl/storage/environment.h"

#include <cstdlib>

#include "impl/core/text.h"

namespace smd::env {
namespace {

// A variable's value, or nullptr when it is unset or empty.
const char* Get(const char* name) {
  const char* v = std::getenv(name);
  return (v != nullptr && *v != '\0') ? v : nullptr;
}

// (rank variable, size variable) pairs, in the order they are consulted.
const char* const kLauncherVars[][2] = {
    {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},  // OpenMPI (mpirun)
    {"RANK", "WORLD_SIZE"},                            // torch.distributed (torchrun)
    {"HOROVOD_RANK", "HOROVOD_SIZE"},                  // Horovod (horovodrun)
    {"PMI_RANK", "PMI_SIZE"},                          // MPICH / Intel MPI
};

}  // namespace

std::optional<std::string> HomeDir() {
  const char* home = Get("HOME");
  if (home == nullptr) return std::nullopt;
  return std::string(home);
}

bool InSageMakerJob() { return Get("TRAINING_JOB_NAME") != nullptr; }

std::optional<int64_t> LauncherRank() {
  for (const auto& vars : kLauncherVars) {
    if (const char* r = Get(vars[0])) {
      if (auto rank = ParseInt64(r)) return rank;
    }
  }
  return std::nullopt;
}

std::optional<int64_t> LauncherWorldSize() {
  for (const auto& vars : kLauncherVars) {
    if (const char* s = Get(vars[1])) {
      if (auto n = ParseInt64(s); n && *n >= 1) return n;
    }
  }
  return std::nullopt;
}

std::optional<int64_t> IncompleteStepWaitWindow() {
  const char* v = std::getenv("SMDEBUG_INCOMPLETE_STEP_WAIT_WINDOW");
  if (v != nullptr) {
    std::optional<int64_t> n = ParseInt64(v);
    if (n && *n >= 0) return n;
  }
  return std::nullopt;
}

std::string HookConfigPath() {
  const char* v = Get("SMDEBUG_CONFIG_FILE_PATH");
  return v != nullptr ? v : "/opt/ml/input/config/debughookconfig.json";
}

std::string TensorBoardConfigPath() {
  const char* v = Get("TENSORBOARD_CONFIG_FILE_PATH");
  return v != nullptr ? v : "/opt/ml/input/config/tensorboardoutputconfig.json";
}

}  // namespace smd::env
