// Handle structs of the trial and tensor modules, shared by capi/src/trial.cc and tensor.cc.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "capi/src/capi_internal.h"
#include "impl/trial/trial.h"

struct smd_trial_options {
  smd::trial::TrialOptions options;
};

struct smd_trial {
  std::shared_ptr<smd::trial::Trial> trial;
};

struct smd_tensor {
  std::shared_ptr<smd::trial::Trial> trial;  // keeps the trial's tables alive
  uint32_t id;
  std::string name;
};

struct smd_value {
  smd::trial::ValuePtr value;
};

namespace smd::capi {

inline bool ValidMode(smd_mode m) { return IsValidMode(static_cast<int>(m)); }
inline Mode ToMode(smd_mode m) { return static_cast<Mode>(m); }

}  // namespace smd::capi

// Returns SMD_E_INVALID_ARGUMENT from a C API function when m is not one of the smd_mode values.
#define SMD_CHECK_MODE(m)                                          \
  SMD_CHECK_ARG(smd::capi::ValidMode(m),                           \
                "unknown mode " + std::to_string(static_cast<int>(m)))
