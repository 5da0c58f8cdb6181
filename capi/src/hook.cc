// The C glue for the hook: save/reduction configurations, hook options, the hook, collections.
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <sstream>

#include "capi/src/capi_internal.h"
#include "impl/core/reductions.h"
#include "impl/core/text.h"
#include "impl/format/hook_config.h"
#include "impl/format/layout.h"
#include "impl/hook/hook.h"
#include "impl/tensorboard/summary.h"
#include "impl/core/environment.h"

struct smd_reduction_config {
  smd::hook::ReductionConfig cfg;
};
struct smd_hook_options {
  smd::hook::HookOptions opts;
};
struct smd_hook {
  std::shared_ptr<smd::hook::Hook> hook;
};
struct smd_collection {
  std::shared_ptr<smd::hook::Hook> hook;  // keeps the hook's state alive
  size_t index;
  std::string name;
};

namespace {

using smd::capi::DupInt64s;
using smd::capi::DupString;
using smd::capi::FillStrArray;
using smd::capi::FromStatus;
using smd::capi::MakeError;

// A save refused because no step is open: the C caller is told which function begins one (impl
// messages do not name C functions).
smd_error* FromSaveStatus(const smd_hook* hook, const smd::Status& st) {
  if (st.ok()) return nullptr;
  if (st.code() == smd::Code::kInvalidState && !hook->hook->in_step() &&
      !hook->hook->closed()) {
    return MakeError(SMD_E_INVALID_STATE, st.message() + " (call smd_hook_begin_step first)");
  }
  return FromStatus(st);
}

// Applies `fn` to the modes `mode` names (one mode, or all four for SMD_MODE_ALL).
template <typename Fn>
smd_error* ForModes(smd_mode mode, Fn fn) {
  if (mode == SMD_MODE_ALL) {
    for (smd::Mode m : smd::kAllModesInOrder) fn(m);
    return nullptr;
  }
  if (!smd::IsValidMode(static_cast<int>(mode))) {
    return MakeError(SMD_E_INVALID_ARGUMENT, "invalid mode " + std::to_string(static_cast<int>(mode)) +
                                                 " (expected SMD_MODE_* or SMD_MODE_ALL)");
  }
  fn(static_cast<smd::Mode>(mode));
  return nullptr;
}

smd_error* CreateHookFromJson(std::string_view json, const std::string& source,
                              const smd_hook_options* options, smd_hook** out) {
  smd::hook::HookOptions opts = options ? options->opts : smd::hook::HookOptions();
  auto hook = smd::hook::Hook::CreateFromJson(json, source, opts);
  if (!hook.ok()) return FromStatus(hook.status());
  *out = new smd_hook{std::move(hook).value()};
  return nullptr;
}

}  // namespace

extern "C" {

// ---------------------------------------------------------------------------------------------
// smd_save_config

smd_error* smd_save_config_create(smd_save_config** out) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(out != nullptr, "out is NULL");
  *out = new smd_save_config();
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_save_config_clone(const smd_save_config* config, smd_save_config** out) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(config != nullptr, "config is NULL");
  SMD_CHECK_ARG(out != nullptr, "out is NULL");
  *out = new smd_save_config(*config);
  return nullptr;
  SMD_CAPI_END
}

void smd_save_config_free(smd_save_config* config) noexcept { delete config; }

smd_error* smd_save_config_set(smd_save_config* config, smd_mode mode, int64_t save_interval,
                               int64_t start_step, int64_t end_step, const int64_t* save_steps,
                               size_t n_save_steps) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(config != nullptr, "config is NULL");
  SMD_CHECK_ARG(save_interval >= 1,
                "save_interval must be at least 1, not " + std::to_string(save_interval));
  SMD_CHECK_ARG(n_save_steps == 0 || save_steps != nullptr, "save_steps is NULL but n_save_steps is not 0");
  smd::hook::SaveConfigMode m;
  m.save_interval = save_interval;
  m.start_step = start_step;
  if (end_step >= 0) m.end_step = end_step;
  m.save_steps.assign(save_steps, save_steps + n_save_steps);
  return ForModes(mode, [&](smd::Mode md) { config->cfg.mode(md) = m; });
  SMD_CAPI_END
}

smd_error* smd_save_config_set_interval(smd_save_config* config, smd_mode mode,
                                        int64_t save_interval) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(config != nullptr, "config is NULL");
  SMD_CHECK_ARG(save_interval >= 1,
                "save_interval must be at least 1, not " + std::to_string(save_interval));
  return ForModes(mode, [&](smd::Mode md) {
    auto& m = config->cfg.mode(md);
    if (!m) m = smd::hook::SaveConfigMode();
    m->save_interval = save_interval;
  });
  SMD_CAPI_END
}

smd_error* smd_save_config_unset(smd_save_config* config, smd_mode mode) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(config != nullptr, "config is NULL");
  return ForModes(mode, [&](smd::Mode md) { config->cfg.mode(md).reset(); });
  SMD_CAPI_END
}

smd_error* smd_save_config_should_save(const smd_save_config* config, int64_t mode_step,
                                       smd_mode mode, bool* out) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(config != nullptr, "config is NULL");
  SMD_CHECK_ARG(out != nullptr, "out is NULL");
  SMD_CHECK_ARG(smd::IsValidMode(mode), "invalid mode " + std::to_string(static_cast<int>(mode)));
  *out = config->cfg.Effective(static_cast<smd::Mode>(mode), nullptr).ShouldSave(mode_step);
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_save_config_settings(const smd_save_config* config, smd_mode mode, bool* is_set_out,
                                    int64_t* save_interval_out, int64_t* start_step_out,
                                    int64_t* end_step_out, int64_t** save_steps_out,
                                    size_t* n_out) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(config != nullptr, "config is NULL");
  SMD_CHECK_ARG(is_set_out != nullptr, "is_set_out is NULL");
  SMD_CHECK_ARG(save_interval_out != nullptr, "save_interval_out is NULL");
  SMD_CHECK_ARG(start_step_out != nullptr, "start_step_out is NULL");
  SMD_CHECK_ARG(end_step_out != nullptr, "end_step_out is NULL");
  SMD_CHECK_ARG(save_steps_out != nullptr, "save_steps_out is NULL");
  SMD_CHECK_ARG(n_out != nullptr, "n_out is NULL");
  SMD_CHECK_ARG(smd::IsValidMode(mode), "invalid mode " + std::to_string(static_cast<int>(mode)) +
                                            " (expected one of SMD_MODE_TRAIN ... SMD_MODE_GLOBAL)");
  const std::optional<smd::hook::SaveConfigMode>& m = config->cfg.mode(static_cast<smd::Mode>(mode));
  const smd::hook::SaveConfigMode settings = m.value_or(smd::hook::SaveConfigMode());
  int64_t* steps = DupInt64s(settings.save_steps);  // before any output is written
  *is_set_out = m.has_value();
  *save_interval_out = settings.save_interval;
  *start_step_out = settings.start_step;
  *end_step_out = settings.end_step.value_or(-1);
  *save_steps_out = steps;
  *n_out = settings.save_steps.size();
  return nullptr;
  SMD_CAPI_END
}

// ---------------------------------------------------------------------------------------------
// smd_reduction_config

smd_error* smd_reduction_config_create(smd_reduction_config** out) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(out != nullptr, "out is NULL");
  *out = new smd_reduction_config();
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_reduction_config_parse(const char* reductions, smd_reduction_config** out) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(reductions != nullptr, "reductions is NULL");
  SMD_CHECK_ARG(out != nullptr, "out is NULL");
  auto rc = smd::hook::ReductionConfig::Parse(reductions);
  if (!rc.ok()) return FromStatus(rc.status());
  *out = new smd_reduction_config{std::move(rc).value()};
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_reduction_config_clone(const smd_reduction_config* config,
                                      smd_reduction_config** out) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(config != nullptr, "config is NULL");
  SMD_CHECK_ARG(out != nullptr, "out is NULL");
  *out = new smd_reduction_config(*config);
  return nullptr;
  SMD_CAPI_END
}

void smd_reduction_config_free(smd_reduction_config* config) noexcept { delete config; }

smd_error* smd_reduction_config_add(smd_reduction_config* config, const char* name) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(config != nullptr, "config is NULL");
  SMD_CHECK_ARG(name != nullptr, "name is NULL");
  SMD_RETURN_STATUS(config->cfg.Add(name));
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_reduction_config_set_save_raw_tensor(smd_reduction_config* config, bool save) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(config != nullptr, "config is NULL");
  config->cfg.save_raw_tensor = save;
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_reduction_config_set_save_shape(smd_reduction_config* config, bool save) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(config != nullptr, "config is NULL");
  config->cfg.save_shape = save;
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_reduction_config_to_string(const smd_reduction_config* config, char** out) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(config != nullptr, "config is NULL");
  SMD_CHECK_ARG(out != nullptr, "out is NULL");
  *out = DupString(config->cfg.ToString());
  return nullptr;
  SMD_CAPI_END
}

// ---------------------------------------------------------------------------------------------
// smd_hook_options

smd_error* smd_hook_options_create(smd_hook_options** out) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(out != nullptr, "out is NULL");
  *out = new smd_hook_options();
  return nullptr;
  SMD_CAPI_END
}

void smd_hook_options_free(smd_hook_options* options) noexcept { delete options; }

#define SMD_OPTIONS_SETTER_BEGIN \
  SMD_CAPI_BEGIN                 \
  SMD_CHECK_ARG(options != nullptr, "options is NULL");

smd_error* smd_hook_options_set_save_config(smd_hook_options* options,
                                            const smd_save_config* config) noexcept {
  SMD_OPTIONS_SETTER_BEGIN
  SMD_CHECK_ARG(config != nullptr, "config is NULL");
  options->opts.save_config = config->cfg;
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_hook_options_set_reduction_config(smd_hook_options* options,
                                                 const smd_reduction_config* config) noexcept {
  SMD_OPTIONS_SETTER_BEGIN
  if (config == nullptr) {
    options->opts.reduction_config.reset();
  } else {
    options->opts.reduction_config = config->cfg;
  }
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_hook_options_add_include_regex(smd_hook_options* options, const char* regex) noexcept {
  SMD_OPTIONS_SETTER_BEGIN
  SMD_CHECK_ARG(regex != nullptr, "regex is NULL");
  auto re = smd::Regex::Compile(regex);
  if (!re.ok()) return FromStatus(re.status());
  options->opts.include_regex.emplace_back(regex);
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_hook_options_add_include_collection(smd_hook_options* options,
                                                   const char* name) noexcept {
  SMD_OPTIONS_SETTER_BEGIN
  SMD_CHECK_ARG(name != nullptr && name[0] != '\0', "collection name is NULL or empty");
  SMD_CHECK_ARG(smd::IsValidUtf8(name), "collection name is not valid UTF-8");
  options->opts.include_collections.emplace_back(name);
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_hook_options_set_save_all(smd_hook_options* options, bool save_all) noexcept {
  SMD_OPTIONS_SETTER_BEGIN
  options->opts.save_all = save_all;
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_hook_options_set_include_workers(smd_hook_options* options,
                                                smd_include_workers which) noexcept {
  SMD_OPTIONS_SETTER_BEGIN
  SMD_CHECK_ARG(which == SMD_INCLUDE_WORKERS_ONE || which == SMD_INCLUDE_WORKERS_ALL,
                "include_workers must be SMD_INCLUDE_WORKERS_ONE or SMD_INCLUDE_WORKERS_ALL");
  options->opts.include_all_workers = which == SMD_INCLUDE_WORKERS_ALL;
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_hook_options_set_worker(smd_hook_options* options, const char* worker) noexcept {
  SMD_OPTIONS_SETTER_BEGIN
  SMD_CHECK_ARG(worker != nullptr, "worker is NULL");
  SMD_RETURN_STATUS(smd::io::ValidateWorkerName(worker));
  options->opts.worker = worker;
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_hook_options_set_num_workers(smd_hook_options* options, int64_t num_workers) noexcept {
  SMD_OPTIONS_SETTER_BEGIN
  SMD_CHECK_ARG(num_workers >= 1, "num_workers must be at least 1, not " + std::to_string(num_workers));
  options->opts.num_workers = num_workers;
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_hook_options_set_dry_run(smd_hook_options* options, bool dry_run) noexcept {
  SMD_OPTIONS_SETTER_BEGIN
  options->opts.dry_run = dry_run;
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_hook_options_set_real_payload_crc(smd_hook_options* options, bool real) noexcept {
  SMD_OPTIONS_SETTER_BEGIN
  options->opts.real_payload_crc = real;
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_hook_options_set_keep_colon_index(smd_hook_options* options, bool keep) noexcept {
  SMD_OPTIONS_SETTER_BEGIN
  options->opts.keep_colon_index = keep;
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_hook_options_set_wall_time_base(smd_hook_options* options, double base) noexcept {
  SMD_OPTIONS_SETTER_BEGIN
  SMD_CHECK_ARG(base >= 0 && base == base, "the wall time base must be a non-negative number");
  options->opts.wall_time_base = base;
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_hook_options_set_memory_budget(smd_hook_options* options, size_t bytes) noexcept {
  SMD_OPTIONS_SETTER_BEGIN
  SMD_CHECK_ARG(bytes > 0, "the memory budget must be more than 0 bytes");
  options->opts.memory_budget = bytes;
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_hook_options_set_max_pending_steps(smd_hook_options* options, int64_t steps) noexcept {
  SMD_OPTIONS_SETTER_BEGIN
  SMD_CHECK_ARG(steps >= -1, "max_pending_steps must be -1 (no bound) or >= 0");
  options->opts.max_pending_steps = steps;
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_hook_options_set_write_end_marker(smd_hook_options* options, bool write) noexcept {
  SMD_OPTIONS_SETTER_BEGIN
  options->opts.write_end_marker = write;
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_hook_options_set_fsync(smd_hook_options* options, bool on) noexcept {
  SMD_OPTIONS_SETTER_BEGIN
  options->opts.fsync = on;
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_hook_options_set_export_tensorboard(smd_hook_options* options, bool on) noexcept {
  SMD_OPTIONS_SETTER_BEGIN
  options->opts.export_tensorboard = on;
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_hook_options_set_tensorboard_dir(smd_hook_options* options, const char* dir) noexcept {
  SMD_OPTIONS_SETTER_BEGIN
  if (dir == nullptr || dir[0] == '\0') {
    options->opts.tensorboard_dir.reset();
    return nullptr;
  }
  options->opts.tensorboard_dir = dir;
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_hook_options_set_storage(smd_hook_options* options,
                                        const smd_storage_options* storage) noexcept {
  SMD_OPTIONS_SETTER_BEGIN
  options->opts.storage = storage != nullptr ? storage->opts : smd::io::StorageOptions();
  return nullptr;
  SMD_CAPI_END
}

// ---------------------------------------------------------------------------------------------
// smd_hook

smd_error* smd_hook_create(const char* out_dir, const smd_hook_options* options,
                           smd_hook** out) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(out_dir != nullptr, "out_dir is NULL");
  SMD_CHECK_ARG(out != nullptr, "out is NULL");
  auto hook = smd::hook::Hook::Create(out_dir, options ? options->opts : smd::hook::HookOptions());
  if (!hook.ok()) return FromStatus(hook.status());
  *out = new smd_hook{std::move(hook).value()};
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_hook_create_from_json_file(const char* json_path, const smd_hook_options* options,
                                          smd_hook** out) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(out != nullptr, "out is NULL");
  std::string path = json_path ? json_path : smd::io::DefaultHookConfigPath();
  smd::Result<std::string> text = smd::env::ReadConfigFile("the hook configuration", path);
  if (!text.ok()) return FromStatus(text.status());
  return CreateHookFromJson(*text, path, options, out);
  SMD_CAPI_END
}

smd_error* smd_hook_create_from_json(const char* json, size_t len, const smd_hook_options* options,
                                     smd_hook** out) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(json != nullptr, "json is NULL");
  SMD_CHECK_ARG(out != nullptr, "out is NULL");
  return CreateHookFromJson(std::string_view(json, len), "hook configuration", options, out);
  SMD_CAPI_END
}

void smd_hook_free(smd_hook* hook) noexcept {
  if (hook == nullptr) return;
  try {
    (void)hook->hook->Close();
  } catch (...) {
  }
  delete hook;
}

smd_error* smd_hook_close(smd_hook* hook) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(hook != nullptr, "hook is NULL");
  SMD_RETURN_STATUS(hook->hook->Close());
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_hook_flush(smd_hook* hook) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(hook != nullptr, "hook is NULL");
  SMD_RETURN_STATUS(hook->hook->Flush());
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_hook_set_mode(smd_hook* hook, smd_mode mode) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(hook != nullptr, "hook is NULL");
  SMD_RETURN_STATUS(hook->hook->SetMode(static_cast<smd::Mode>(mode)));
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_hook_begin_step(smd_hook* hook) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(hook != nullptr, "hook is NULL");
  SMD_RETURN_STATUS(hook->hook->BeginStep());
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_hook_end_step(smd_hook* hook) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(hook != nullptr, "hook is NULL");
  SMD_RETURN_STATUS(hook->hook->EndStep());
  return nullptr;
  SMD_CAPI_END
}

int64_t smd_hook_global_step(const smd_hook* hook) noexcept {
  return hook ? hook->hook->global_step() : -1;
}

smd_mode smd_hook_mode(const smd_hook* hook) noexcept {
  return hook ? static_cast<smd_mode>(hook->hook->mode()) : SMD_MODE_GLOBAL;
}

int64_t smd_hook_mode_step(const smd_hook* hook) noexcept {
  return hook ? hook->hook->mode_step() : -1;
}

const char* smd_hook_worker(const smd_hook* hook) noexcept {
  return hook ? hook->hook->worker().c_str() : nullptr;
}

bool smd_hook_is_due(const smd_hook* hook, const char* name) noexcept {
  if (hook == nullptr || name == nullptr) return false;
  try {
    return hook->hook->IsDue(name);
  } catch (...) {
    return false;
  }
}

bool smd_hook_any_due(const smd_hook* hook) noexcept { return hook && hook->hook->AnyDue(); }

bool smd_hook_may_save(const smd_hook* hook, const char* name, bool numbered) noexcept {
  if (hook == nullptr || name == nullptr) return false;
  try {
    return hook->hook->MaySave(name, numbered);
  } catch (...) {
    return true;  // out of memory: the tensor is offered, and saving it reports the error
  }
}

uint64_t smd_hook_collections_version(const smd_hook* hook) noexcept {
  return hook == nullptr ? 0 : hook->hook->CollectionsVersion();
}

smd_error* smd_hook_stop_requested(const smd_hook* hook, bool* out) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(hook != nullptr, "hook is NULL");
  SMD_CHECK_ARG(out != nullptr, "out is NULL");
  auto r = hook->hook->StopRequested();
  if (!r.ok()) return FromStatus(r.status());
  *out = r.value();
  return nullptr;
  SMD_CAPI_END
}

namespace {

// The C-boundary checks of a save: pointers that must not be NULL. The hook checks the rest
// (the dtype, sizes against the shape, names, collections' names).
smd_error* CheckSaveRequest(const smd::hook::Hook::SaveRequest& req) {
  if (req.name == nullptr) return MakeError(SMD_E_INVALID_ARGUMENT, "tensor name is NULL");
  if (req.dtype == smd::DType::kString && req.strings == nullptr) {
    return MakeError(SMD_E_INVALID_ARGUMENT, std::string("tensor '") + req.name +
                                                 "': string tensors are saved with smd_hook_save_strings");
  }
  if (req.ndim > 0 && req.shape == nullptr) {
    return MakeError(SMD_E_INVALID_ARGUMENT,
                     "shape is NULL but ndim is " + std::to_string(req.ndim));
  }
  if (req.nbytes > 0 && req.data == nullptr) return MakeError(SMD_E_INVALID_ARGUMENT, "data is NULL");
  if (req.n_collections > 0 && req.collections == nullptr) {
    return MakeError(SMD_E_INVALID_ARGUMENT, "collections is NULL but n_collections is not 0");
  }
  for (size_t i = 0; i < req.n_collections; ++i) {
    if (req.collections[i] == nullptr) {
      return MakeError(SMD_E_INVALID_ARGUMENT, "collection name " + std::to_string(i) + " is NULL");
    }
  }
  return nullptr;
}

}  // namespace

smd_error* smd_hook_save_tensor(smd_hook* hook, const char* name, smd_dtype dtype,
                                const int64_t* shape, size_t ndim, const void* data, size_t nbytes,
                                const char* const* collections, size_t n_collections) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(hook != nullptr, "hook is NULL");
  smd::hook::Hook::SaveRequest req;
  req.name = name;
  req.dtype = static_cast<smd::DType>(dtype);
  req.shape = shape;
  req.ndim = ndim;
  req.data = data;
  req.nbytes = nbytes;
  req.collections = collections;
  req.n_collections = n_collections;
  if (smd_error* e = CheckSaveRequest(req)) return e;
  if (smd_error* e = FromSaveStatus(hook, hook->hook->Save(req))) return e;
  return nullptr;
  SMD_CAPI_END
}

namespace {

// Checks a DLPack view and computes its element type, contiguous byte size and data pointer.
smd::Status InspectDLTensor(const DLTensor* t, smd::DType* dtype, size_t* nbytes, const char** data) {
  if (t->device.device_type != kDLCPU) {
    return smd::Unsupported("DLPack tensor is on device type " +
                            std::to_string(static_cast<int>(t->device.device_type)) +
                            "; only CPU tensors (kDLCPU) can be saved");
  }
  auto dt = smd::DTypeFromDLPack(t->dtype.code, t->dtype.bits, t->dtype.lanes);
  if (!dt) {
    return smd::Unsupported("DLPack dtype (code " + std::to_string(t->dtype.code) + ", bits " +
                            std::to_string(t->dtype.bits) + ", lanes " +
                            std::to_string(t->dtype.lanes) + ") has no smd equivalent");
  }
  if (t->ndim < 0) return smd::InvalidArgument("DLPack tensor has negative ndim");
  if (t->ndim > 0 && t->shape == nullptr) return smd::InvalidArgument("DLPack tensor has no shape");
  size_t count = 1;
  bool empty = false;
  bool overflow = false;
  for (int32_t i = 0; i < t->ndim; ++i) {
    if (t->shape[i] < 0) return smd::InvalidArgument("DLPack tensor has a negative dimension");
    if (t->shape[i] == 0) empty = true;
    overflow |= __builtin_mul_overflow(count, static_cast<size_t>(t->shape[i]), &count);
  }
  size_t bytes = 0;
  overflow |= __builtin_mul_overflow(count, smd::DTypeSize(*dt), &bytes);
  if (overflow && !empty) {
    return smd::InvalidArgument("DLPack tensor shape is too large (its size overflows 64 bits)");
  }
  if (empty) count = bytes = 0;
  if (t->strides != nullptr && count > 1) {
    size_t expect = 1;  // (no overflow: the product of the dimensions fits, checked above)
    for (int32_t i = t->ndim - 1; i >= 0; --i) {
      if (t->shape[i] != 1 && (t->strides[i] < 0 || static_cast<size_t>(t->strides[i]) != expect)) {
        return smd::Unsupported("DLPack tensor is not compact row-major (strides); make it "
                                "contiguous before saving");
      }
      expect *= static_cast<size_t>(t->shape[i]);
    }
  }
  *dtype = *dt;
  *nbytes = bytes;
  *data = static_cast<const char*>(t->data) + t->byte_offset;
  if (*nbytes > 0 && t->data == nullptr) return smd::InvalidArgument("DLPack tensor data is NULL");
  return smd::Status::Ok();
}

}  // namespace

smd_error* smd_hook_save_dlpack(smd_hook* hook, const char* name, const DLTensor* tensor,
                                const char* const* collections, size_t n_collections) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(hook != nullptr, "hook is NULL");
  SMD_CHECK_ARG(tensor != nullptr, "tensor is NULL");
  smd::hook::Hook::SaveRequest req;
  const char* data = nullptr;
  SMD_RETURN_STATUS(InspectDLTensor(tensor, &req.dtype, &req.nbytes, &data));
  req.name = name;
  req.shape = tensor->shape;
  req.ndim = static_cast<size_t>(tensor->ndim);
  req.data = data;
  req.collections = collections;
  req.n_collections = n_collections;
  if (smd_error* e = CheckSaveRequest(req)) return e;
  if (smd_error* e = FromSaveStatus(hook, hook->hook->Save(req))) return e;
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_hook_save_dlpack_managed(smd_hook* hook, const char* name,
                                        DLManagedTensorVersioned* tensor,
                                        const char* const* collections,
                                        size_t n_collections) noexcept {
  // Ownership passes to us whatever happens: every early return deletes the tensor.
  struct Deleter {
    DLManagedTensorVersioned* t;
    ~Deleter() {
      if (t != nullptr && t->deleter != nullptr) t->deleter(t);
    }
  } owner{tensor};
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(hook != nullptr, "hook is NULL");
  SMD_CHECK_ARG(tensor != nullptr, "tensor is NULL");
  if (tensor->version.major != DLPACK_MAJOR_VERSION) {
    return MakeError(SMD_E_UNSUPPORTED, "DLPack tensor has ABI version " +
                                            std::to_string(tensor->version.major) + "." +
                                            std::to_string(tensor->version.minor) +
                                            "; smd supports major version 1");
  }
  smd::hook::Hook::SaveRequest req;
  const char* data = nullptr;
  SMD_RETURN_STATUS(InspectDLTensor(&tensor->dl_tensor, &req.dtype, &req.nbytes, &data));
  req.name = name;
  req.shape = tensor->dl_tensor.shape;
  req.ndim = static_cast<size_t>(tensor->dl_tensor.ndim);
  req.data = data;
  req.collections = collections;
  req.n_collections = n_collections;
  if (smd_error* e = CheckSaveRequest(req)) return e;  // owner deletes the tensor
  req.managed = owner.t;
  owner.t = nullptr;  // Save owns it now, in every outcome
  if (smd_error* e = FromSaveStatus(hook, hook->hook->Save(req))) return e;
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_hook_save_strings(smd_hook* hook, const char* name, const char* const* strings,
                                 const size_t* lens, size_t n, const char* const* collections,
                                 size_t n_collections) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(hook != nullptr, "hook is NULL");
  SMD_CHECK_ARG(name != nullptr, "tensor name is NULL");
  SMD_CHECK_ARG(n == 0 || strings != nullptr, "strings is NULL but n is not 0");
  SMD_CHECK_ARG(n <= static_cast<uint64_t>(INT64_MAX), "too many strings");
  std::vector<size_t> own_lens;
  if (lens == nullptr) own_lens.resize(n);
  for (size_t i = 0; i < n; ++i) {
    SMD_CHECK_ARG(strings[i] != nullptr, "string " + std::to_string(i) + " of tensor '" + name + "' is NULL");
    if (lens == nullptr) own_lens[i] = std::strlen(strings[i]);
  }
  const int64_t dim = static_cast<int64_t>(n);
  smd::hook::Hook::SaveRequest req;
  req.name = name;
  req.dtype = smd::DType::kString;
  req.shape = &dim;
  req.ndim = 1;
  static const char* const kNoStrings[1] = {nullptr};  // n == 0 with strings NULL
  req.strings = strings != nullptr ? strings : kNoStrings;
  req.string_lens = lens != nullptr ? lens : own_lens.data();
  req.collections = collections;
  req.n_collections = n_collections;
  if (smd_error* e = CheckSaveRequest(req)) return e;
  if (smd_error* e = FromSaveStatus(hook, hook->hook->Save(req))) return e;
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_hook_save_scalar_typed(smd_hook* hook, const char* name, smd_dtype dtype,
                                      const void* value, size_t nbytes) noexcept {
  return smd_hook_save_scalar_timestamped(hook, name, dtype, value, nbytes, 0);
}

smd_error* smd_hook_save_scalar_timestamped(smd_hook* hook, const char* name, smd_dtype dtype,
                                            const void* value, size_t nbytes,
                                            double timestamp) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(hook != nullptr, "hook is NULL");
  SMD_CHECK_ARG(name != nullptr, "name is NULL");
  SMD_CHECK_ARG(value != nullptr, "value is NULL");
  const smd::DTypeInfo* info = smd::GetDTypeInfo(static_cast<int>(dtype));
  SMD_CHECK_ARG(info != nullptr && info->size > 0,
                "scalar '" + std::string(name) + "': dtype " + std::to_string(static_cast<int>(dtype)) +
                    " is not a numeric dtype or bool");
  SMD_CHECK_ARG(nbytes == info->size, "scalar '" + std::string(name) + "': " + std::to_string(nbytes) +
                                          " bytes given but a " + info->name + " holds " +
                                          std::to_string(info->size));
  if (dtype == SMD_DTYPE_BOOL) {
    SMD_CHECK_ARG(*static_cast<const unsigned char*>(value) <= 1,
                  "scalar '" + std::string(name) + "': a bool is one byte, 0 or 1");
  }
  SMD_CHECK_ARG(std::isfinite(timestamp),
                "scalar '" + std::string(name) + "': the timestamp is not a finite number");
  if (smd_error* e = FromSaveStatus(
          hook, hook->hook->SaveScalar(name, static_cast<smd::DType>(dtype), value, timestamp))) {
    return e;
  }
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_hook_save_scalar(smd_hook* hook, const char* name, double value) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(hook != nullptr, "hook is NULL");
  SMD_CHECK_ARG(name != nullptr, "name is NULL");
  if (smd_error* e = FromSaveStatus(hook, hook->hook->SaveScalar(name, value))) return e;
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_hook_writer_stats(const smd_hook* hook, smd_hook_stats* out) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(hook != nullptr, "hook is NULL");
  SMD_CHECK_ARG(out != nullptr, "out is NULL");
  SMD_CHECK_ARG(out->struct_size >= offsetof(smd_hook_stats, bytes),
                "struct_size is not set (set it to sizeof(smd_hook_stats))");
  smd::hook::WriterStats w = hook->hook->writer_stats();
  smd_hook_stats s;
  s.struct_size = sizeof s;
  s.records = w.records;
  s.bytes = w.bytes;
  s.steps = w.steps;
  s.budget_waits = w.budget_waits;
  s.peak_pending_bytes = w.peak_pending_bytes;
  s.encoder_cpu_seconds = w.encoder_cpu_seconds;
  s.committer_cpu_seconds = w.committer_cpu_seconds;
  const size_t n = out->struct_size < sizeof s ? out->struct_size : sizeof s;
  std::memcpy(out, &s, n);
  out->struct_size = n;
  return nullptr;
  SMD_CAPI_END
}

// ---------------------------------------------------------------------------------------------
// Collections

smd_error* smd_hook_get_collection(smd_hook* hook, const char* name, smd_collection** out) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(hook != nullptr, "hook is NULL");
  SMD_CHECK_ARG(name != nullptr, "name is NULL");
  SMD_CHECK_ARG(out != nullptr, "out is NULL");
  auto idx = hook->hook->GetCollection(name);
  if (!idx.ok()) return FromStatus(idx.status());
  *out = new smd_collection{hook->hook, *idx, name};
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_hook_collection_names(const smd_hook* hook, smd_strarray* out) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(hook != nullptr, "hook is NULL");
  SMD_CHECK_ARG(out != nullptr, "out is NULL");
  FillStrArray(hook->hook->CollectionNames(), out);
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_hook_include_collection(smd_hook* hook, const char* name) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(hook != nullptr, "hook is NULL");
  SMD_CHECK_ARG(name != nullptr, "name is NULL");
  SMD_RETURN_STATUS(hook->hook->IncludeCollection(name));
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_hook_make_due(smd_hook* hook, const char* collection) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(hook != nullptr, "hook is NULL");
  SMD_CHECK_ARG(collection != nullptr, "collection is NULL");
  return FromSaveStatus(hook, hook->hook->MakeDue(collection));
  SMD_CAPI_END
}

void smd_collection_free(smd_collection* collection) noexcept { delete collection; }

const char* smd_collection_name(const smd_collection* collection) noexcept {
  return collection ? collection->name.c_str() : nullptr;
}

smd_error* smd_collection_add_include_regex(smd_collection* c, const char* regex) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(c != nullptr, "collection is NULL");
  SMD_CHECK_ARG(regex != nullptr, "regex is NULL");
  SMD_RETURN_STATUS(c->hook->CollectionIncludeRegex(c->index, regex));
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_collection_clear_include_regex(smd_collection* c) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(c != nullptr, "collection is NULL");
  SMD_RETURN_STATUS(c->hook->CollectionClearIncludeRegex(c->index));
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_collection_add_tensor_name(smd_collection* c, const char* name) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(c != nullptr, "collection is NULL");
  SMD_CHECK_ARG(name != nullptr, "name is NULL");
  SMD_RETURN_STATUS(c->hook->CollectionAddTensorName(c->index, name));
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_collection_set_save_config(smd_collection* c, const smd_save_config* config) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(c != nullptr, "collection is NULL");
  std::optional<smd::hook::SaveConfig> cfg;
  if (config) cfg = config->cfg;
  SMD_RETURN_STATUS(c->hook->CollectionSetSaveConfig(c->index, cfg));
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_collection_set_reduction_config(smd_collection* c,
                                               const smd_reduction_config* config) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(c != nullptr, "collection is NULL");
  std::optional<smd::hook::ReductionConfig> cfg;
  if (config) cfg = config->cfg;
  SMD_RETURN_STATUS(c->hook->CollectionSetReductionConfig(c->index, cfg));
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_collection_set_save_histogram(smd_collection* c, bool save) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(c != nullptr, "collection is NULL");
  SMD_RETURN_STATUS(c->hook->CollectionSetSaveHistogram(c->index, save));
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_collection_tensor_names(const smd_collection* c, smd_strarray* out) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(c != nullptr, "collection is NULL");
  SMD_CHECK_ARG(out != nullptr, "out is NULL");
  auto names = c->hook->CollectionTensorNames(c->index);
  if (!names.ok()) return FromStatus(names.status());
  FillStrArray(*names, out);
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_reduction_names(smd_strarray* out) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(out != nullptr, "out is NULL");
  smd::capi::FillStrArray(smd::ReductionSpellings(), out);
  return nullptr;
  SMD_CAPI_END
}

// ---- Reductions computed by the caller ------------------------------------------------------

const double* smd_histogram_bucket_edges(size_t* n_out) noexcept {
  const std::vector<double>& edges = smd::tensorboard::DefaultBucketEdges();
  if (n_out != nullptr) *n_out = edges.size();
  return edges.data();
}

smd_error* smd_hook_due_reductions(const smd_hook* hook, const char* name,
                                   smd_strarray* reductions_out, bool* value_out,
                                   bool* histogram_out) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(hook != nullptr, "hook is NULL");
  SMD_CHECK_ARG(name != nullptr, "tensor name is NULL");
  SMD_CHECK_ARG(reductions_out != nullptr, "reductions_out is NULL");
  SMD_CHECK_ARG(value_out != nullptr, "value_out is NULL");
  SMD_CHECK_ARG(histogram_out != nullptr, "histogram_out is NULL");
  auto plan = hook->hook->Plan(name);
  if (!plan.ok()) return FromSaveStatus(hook, plan.status());
  std::vector<std::string> names;
  names.reserve(plan->reductions.size());
  for (size_t i = 0; i < plan->reductions.size(); ++i) {
    const smd::ReductionName r = plan->reductions[i];
    names.push_back(std::string(r.abs ? "abs_" : "") + smd::ReductionOpName(r.op));
  }
  FillStrArray(names, reductions_out);
  *value_out = plan->value;
  *histogram_out = plan->histogram;
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_hook_save_reductions(smd_hook* hook, const char* name, smd_dtype dtype,
                                    const int64_t* shape, size_t ndim,
                                    const smd_reduction_value* values, size_t n_values,
                                    const smd_histogram* histogram,
                                    const char* const* collections, size_t n_collections) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(hook != nullptr, "hook is NULL");
  SMD_CHECK_ARG(name != nullptr, "tensor name is NULL");
  SMD_CHECK_ARG(n_values == 0 || values != nullptr, "values is NULL but n_values is not 0");
  SMD_CHECK_ARG(dtype != SMD_DTYPE_STRING,
                std::string("tensor '") + name + "': string tensors have no reductions");
  std::vector<smd::hook::GivenReduction> given(n_values);
  for (size_t i = 0; i < n_values; ++i) {
    SMD_CHECK_ARG(values[i].reduction != nullptr,
                  "the name of reduction " + std::to_string(i) + " is NULL");
    const std::string rn = values[i].reduction;
    SMD_CHECK_ARG(rn.rfind("abs_", 0) != 0,
                  "reduction '" + rn + "': give the name without abs_ and set abs instead");
    auto parsed = smd::ParseReductionName(rn);
    if (!parsed.ok()) return FromStatus(parsed.status());
    given[i].name = smd::ReductionName{parsed->op, values[i].abs};
    given[i].value = values[i].value;
  }
  smd::hook::Hook::SaveRequest req;
  req.name = name;
  req.dtype = static_cast<smd::DType>(dtype);
  req.shape = shape;
  req.ndim = ndim;
  req.collections = collections;
  req.n_collections = n_collections;
  req.reductions_only = true;
  req.given = given.data();
  req.n_given = given.size();
  smd::hook::GivenHistogram given_histogram;
  if (histogram != nullptr) {
    SMD_CHECK_ARG(histogram->n_counts == 0 || histogram->counts != nullptr,
                  std::string("tensor '") + name + "': the histogram's counts are NULL");
    given_histogram.min = histogram->min;
    given_histogram.max = histogram->max;
    given_histogram.sum = histogram->sum;
    given_histogram.sum_squares = histogram->sum_squares;
    given_histogram.counts = histogram->counts;
    given_histogram.n_counts = histogram->n_counts;
    req.histogram = &given_histogram;
  }
  if (smd_error* e = CheckSaveRequest(req)) return e;
  smd::Status st = hook->hook->Save(req);
  if (st.code() == smd::Code::kInvalidState && st.message().find("value is due") != std::string::npos) {
    return MakeError(SMD_E_INVALID_STATE, st.message() + " with smd_hook_save_tensor");
  }
  if (smd_error* e = FromSaveStatus(hook, st)) return e;
  return nullptr;
  SMD_CAPI_END
}

}  // extern "C"
