// The C glue for trials: options, opening, refreshing, steps, tensor names, collections.
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>

#include "capi/src/trial_internal.h"
#include "impl/storage/open.h"

struct smd_tensor_filter {
  smd::trial::TensorFilter filter;
};

struct smd_collection_info {
  smd::trial::CollectionInfo info;
};

using smd::capi::DupInt64s;
using smd::capi::FillStrArray;
using smd::capi::MakeError;
using smd::capi::ToMode;
using smd::capi::ValidMode;

namespace {
// The mode and mode step of a global step; SMD_E_NOT_FOUND if the trial does not know the step.
smd_error* LookUpModeOf(const smd_trial* trial, int64_t global_step, std::pair<smd::Mode, int64_t>* out) {
  auto r = trial->trial->ModeOf(global_step);
  if (!r.ok()) return smd::capi::FromStatus(r.status());
  if (!r.value()) {
    return MakeError(SMD_E_NOT_FOUND, "global step " + std::to_string(global_step) +
                                          " is not known to the trial");
  }
  *out = *r.value();
  return nullptr;
}
}  // namespace

extern "C" {

// ---- options --------------------------------------------------------------------------------

smd_error* smd_trial_options_create(smd_trial_options** out) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(out != nullptr, "out is NULL");
  *out = new smd_trial_options();
  return nullptr;
  SMD_CAPI_END
}

void smd_trial_options_free(smd_trial_options* options) noexcept { delete options; }

smd_error* smd_trial_options_set_range_steps(smd_trial_options* options, int64_t begin,
                                             int64_t end) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(options != nullptr, "options is NULL");
  SMD_CHECK_ARG(begin >= -1 && end >= -1,
                "range_steps bounds must be >= 0, or -1 for no bound");
  SMD_CHECK_ARG(begin < 0 || end < 0 || end > begin,
                "range_steps must be (begin, end) with begin < end (end is exclusive), got (" +
                    std::to_string(begin) + ", " + std::to_string(end) + ")");
  options->options.range_begin = begin;
  options->options.range_end = end;
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_trial_options_set_auto_refresh(smd_trial_options* options, bool on) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(options != nullptr, "options is NULL");
  options->options.auto_refresh = on;
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_trial_options_set_collection_wait_ms(smd_trial_options* options,
                                                    int64_t wait_ms) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(options != nullptr, "options is NULL");
  SMD_CHECK_ARG(wait_ms >= 0, "the collection file wait must be >= 0 ms");
  options->options.collection_wait_ms = wait_ms;
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_trial_options_set_cache_bytes(smd_trial_options* options, size_t bytes) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(options != nullptr, "options is NULL");
  options->options.cache_bytes = bytes;
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_trial_options_set_storage(smd_trial_options* options,
                                         const smd_storage_options* storage) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(options != nullptr, "options is NULL");
  options->options.storage = storage != nullptr ? storage->opts : smd::io::StorageOptions();
  return nullptr;
  SMD_CAPI_END
}

// ---- trial ----------------------------------------------------------------------------------

smd_error* smd_trial_open(const char* path, const smd_trial_options* options,
                          smd_trial** out) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(path != nullptr, "path is NULL");
  SMD_CHECK_ARG(out != nullptr, "out is NULL");
  smd::trial::TrialOptions opts = options ? options->options : smd::trial::TrialOptions();
  auto t = smd::trial::Trial::Open(path, opts);
  if (!t.ok()) return smd::capi::FromStatus(t.status());
  *out = new smd_trial{std::move(t).value()};
  return nullptr;
  SMD_CAPI_END
}

void smd_trial_free(smd_trial* trial) noexcept { delete trial; }

const char* smd_trial_path(const smd_trial* trial) noexcept {
  return trial ? trial->trial->path().c_str() : nullptr;
}

smd_error* smd_trial_refresh(smd_trial* trial) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(trial != nullptr, "trial is NULL");
  SMD_RETURN_STATUS(trial->trial->Refresh());
  return nullptr;
  SMD_CAPI_END
}

bool smd_trial_auto_refresh(const smd_trial* trial) noexcept {
  return trial != nullptr && trial->trial->auto_refresh();
}

struct smd_trial_refresh_scope {
  std::shared_ptr<smd::trial::Trial> trial;  // outlives the override, which points at it
  smd::trial::Trial::RefreshOverride scope;
  smd_trial_refresh_scope(std::shared_ptr<smd::trial::Trial> t, bool on)
      : trial(std::move(t)), scope(trial.get(), on) {}
};

smd_error* smd_trial_refresh_scope_create(const smd_trial* trial, bool on,
                                          smd_trial_refresh_scope** out) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(trial != nullptr, "trial is NULL");
  SMD_CHECK_ARG(out != nullptr, "out is NULL");
  *out = new smd_trial_refresh_scope(trial->trial, on);
  return nullptr;
  SMD_CAPI_END
}

void smd_trial_refresh_scope_free(smd_trial_refresh_scope* scope) noexcept { delete scope; }

smd_error* smd_trial_warnings(const smd_trial* trial, smd_strarray* out) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(trial != nullptr, "trial is NULL");
  SMD_CHECK_ARG(out != nullptr, "out is NULL");
  FillStrArray(trial->trial->Warnings(), out);
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_trial_has_ended(const smd_trial* trial, bool* out) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(trial != nullptr, "trial is NULL");
  SMD_CHECK_ARG(out != nullptr, "out is NULL");
  auto r = trial->trial->HasEnded();
  if (!r.ok()) return smd::capi::FromStatus(r.status());
  *out = r.value();
  return nullptr;
  SMD_CAPI_END
}

int64_t smd_trial_num_workers(const smd_trial* trial) noexcept {
  return trial ? trial->trial->num_workers() : 0;
}

bool smd_trial_loaded_all_steps(const smd_trial* trial) noexcept {
  return trial ? trial->trial->loaded_all_steps() : false;
}

int64_t smd_trial_last_complete_step(const smd_trial* trial) noexcept {
  return trial ? trial->trial->last_complete_step() : -1;
}

smd_error* smd_trial_index_cursor(const smd_trial* trial, char** out) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(trial != nullptr, "trial is NULL");
  SMD_CHECK_ARG(out != nullptr, "out is NULL");
  std::string cursor = trial->trial->index_cursor();
  *out = cursor.empty() ? nullptr : smd::capi::DupString(cursor);
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_trial_steps(const smd_trial* trial, smd_mode mode, bool show_incomplete,
                           int64_t** steps_out, size_t* n_out) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(trial != nullptr, "trial is NULL");
  SMD_CHECK_ARG(steps_out != nullptr && n_out != nullptr, "steps_out or n_out is NULL");
  SMD_CHECK_MODE(mode);
  auto r = trial->trial->Steps(ToMode(mode), show_incomplete);
  if (!r.ok()) return smd::capi::FromStatus(r.status());
  *steps_out = DupInt64s(r.value());
  *n_out = r.value().size();
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_trial_modes(const smd_trial* trial, smd_mode** modes_out, size_t* n_out) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(trial != nullptr, "trial is NULL");
  SMD_CHECK_ARG(modes_out != nullptr && n_out != nullptr, "modes_out or n_out is NULL");
  std::vector<smd::Mode> modes = trial->trial->Modes();
  smd_mode* arr = nullptr;
  if (!modes.empty()) {
    arr = static_cast<smd_mode*>(std::malloc(modes.size() * sizeof(smd_mode)));
    if (arr == nullptr) throw std::bad_alloc();
    for (size_t i = 0; i < modes.size(); ++i) arr[i] = static_cast<smd_mode>(modes[i]);
  }
  *modes_out = arr;
  *n_out = modes.size();
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_trial_mode(const smd_trial* trial, int64_t global_step, smd_mode* out) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(trial != nullptr, "trial is NULL");
  SMD_CHECK_ARG(out != nullptr, "out is NULL");
  std::pair<smd::Mode, int64_t> m;
  if (smd_error* e = LookUpModeOf(trial, global_step, &m)) return e;
  *out = static_cast<smd_mode>(m.first);
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_trial_mode_step(const smd_trial* trial, int64_t global_step, int64_t* out) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(trial != nullptr, "trial is NULL");
  SMD_CHECK_ARG(out != nullptr, "out is NULL");
  std::pair<smd::Mode, int64_t> m;
  if (smd_error* e = LookUpModeOf(trial, global_step, &m)) return e;
  *out = m.second;
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_trial_global_step(const smd_trial* trial, int64_t mode_step, smd_mode mode,
                                 int64_t* out) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(trial != nullptr, "trial is NULL");
  SMD_CHECK_ARG(out != nullptr, "out is NULL");
  SMD_CHECK_MODE(mode);
  auto r = trial->trial->GlobalStep(ToMode(mode), mode_step);
  if (!r.ok()) return smd::capi::FromStatus(r.status());
  if (!r.value()) {
    return MakeError(SMD_E_NOT_FOUND, std::string("step ") + std::to_string(mode_step) +
                                          " of mode " + smd::ModeName(ToMode(mode)) +
                                          " is not known to the trial");
  }
  *out = *r.value();
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_s3_uploads_in_progress(const char* uri, const smd_storage_options* storage_options,
                                      bool abort_them, smd_strarray* out) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(uri != nullptr, "uri is NULL");
  SMD_CHECK_ARG(out != nullptr, "out is NULL");
  const smd::io::StorageOptions storage =
      storage_options != nullptr ? storage_options->opts : smd::io::StorageOptions();
  auto r = smd::io::S3UploadsInProgress(uri, storage, abort_them);
  if (!r.ok()) return smd::capi::FromStatus(r.status());
  std::vector<std::string> lines;
  for (const smd::io::S3Upload& u : r.value())
    lines.push_back(u.key + "\t" + u.upload_id + "\t" + u.initiated);
  FillStrArray(lines, out);
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_trial_workers(const smd_trial* trial, smd_strarray* out) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(trial != nullptr, "trial is NULL");
  SMD_CHECK_ARG(out != nullptr, "out is NULL");
  auto r = trial->trial->Workers();
  if (!r.ok()) return smd::capi::FromStatus(r.status());
  FillStrArray(r.value(), out);
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_trial_has_passed_step(const smd_trial* trial, int64_t step, smd_mode mode,
                                     smd_step_state* out) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(trial != nullptr, "trial is NULL");
  SMD_CHECK_ARG(out != nullptr, "out is NULL");
  SMD_CHECK_MODE(mode);
  auto r = trial->trial->HasPassedStep(step, ToMode(mode));
  if (!r.ok()) return smd::capi::FromStatus(r.status());
  *out = static_cast<smd_step_state>(r.value());
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_trial_wait_for_steps(smd_trial* trial, const int64_t* steps, size_t n,
                                    smd_mode mode, int64_t timeout_ms) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(trial != nullptr, "trial is NULL");
  SMD_CHECK_ARG(steps != nullptr || n == 0, "steps is NULL");
  SMD_CHECK_MODE(mode);
  std::vector<int64_t> v(steps, steps + n);
  SMD_RETURN_STATUS(trial->trial->WaitForSteps(v, ToMode(mode), timeout_ms));
  return nullptr;
  SMD_CAPI_END
}

// ---- tensor names ---------------------------------------------------------------------------

smd_error* smd_tensor_filter_create(smd_tensor_filter** out) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(out != nullptr, "out is NULL");
  *out = new smd_tensor_filter();
  return nullptr;
  SMD_CAPI_END
}

void smd_tensor_filter_free(smd_tensor_filter* filter) noexcept { delete filter; }

smd_error* smd_tensor_filter_set_step(smd_tensor_filter* filter, int64_t step) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(filter != nullptr, "filter is NULL");
  filter->filter.step = step;
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_tensor_filter_set_mode(smd_tensor_filter* filter, smd_mode mode) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(filter != nullptr, "filter is NULL");
  SMD_CHECK_MODE(mode);
  filter->filter.mode = ToMode(mode);
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_tensor_filter_add_include_regex(smd_tensor_filter* filter, const char* regex) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(filter != nullptr, "filter is NULL");
  SMD_CHECK_ARG(regex != nullptr, "regex is NULL");
  filter->filter.regexes.emplace_back(regex);
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_tensor_filter_set_collection(smd_tensor_filter* filter,
                                            const char* collection) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(filter != nullptr, "filter is NULL");
  SMD_CHECK_ARG(collection != nullptr, "collection is NULL");
  filter->filter.collection = std::string(collection);
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_trial_tensor_names(const smd_trial* trial, const smd_tensor_filter* filter,
                                  smd_strarray* out) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(trial != nullptr, "trial is NULL");
  SMD_CHECK_ARG(out != nullptr, "out is NULL");
  static const smd::trial::TensorFilter kAll;
  auto r = trial->trial->TensorNames(filter ? filter->filter : kAll);
  if (!r.ok()) return smd::capi::FromStatus(r.status());
  FillStrArray(r.value(), out);
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_trial_has_tensor(const smd_trial* trial, const char* name, bool* out) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(trial != nullptr, "trial is NULL");
  SMD_CHECK_ARG(name != nullptr, "name is NULL");
  SMD_CHECK_ARG(out != nullptr, "out is NULL");
  auto r = trial->trial->HasTensor(name);
  if (!r.ok()) return smd::capi::FromStatus(r.status());
  *out = r.value();
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_trial_tensor(const smd_trial* trial, const char* name, smd_tensor** out) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(trial != nullptr, "trial is NULL");
  SMD_CHECK_ARG(name != nullptr, "name is NULL");
  SMD_CHECK_ARG(out != nullptr, "out is NULL");
  auto id = trial->trial->TensorId(name);
  if (!id.ok()) return smd::capi::FromStatus(id.status());
  *out = new smd_tensor{trial->trial, id.value(), trial->trial->TensorName(id.value())};
  return nullptr;
  SMD_CAPI_END
}

// ---- collections ----------------------------------------------------------------------------

smd_error* smd_trial_collection_names(const smd_trial* trial, smd_strarray* out) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(trial != nullptr, "trial is NULL");
  SMD_CHECK_ARG(out != nullptr, "out is NULL");
  FillStrArray(trial->trial->CollectionNames(), out);
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_trial_collection(const smd_trial* trial, const char* name,
                                smd_collection_info** out) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(trial != nullptr, "trial is NULL");
  SMD_CHECK_ARG(name != nullptr, "name is NULL");
  SMD_CHECK_ARG(out != nullptr, "out is NULL");
  const smd::trial::CollectionInfo* c = trial->trial->Collection(name);
  if (c == nullptr) {
    return MakeError(SMD_E_NOT_FOUND, std::string("the trial has no collection '") + name + "'");
  }
  *out = new smd_collection_info{*c};
  return nullptr;
  SMD_CAPI_END
}

void smd_collection_info_free(smd_collection_info* info) noexcept { delete info; }

const char* smd_collection_info_name(const smd_collection_info* info) noexcept {
  return info ? info->info.name.c_str() : nullptr;
}

smd_error* smd_collection_info_include_regex(const smd_collection_info* info,
                                             smd_strarray* out) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(info != nullptr, "info is NULL");
  SMD_CHECK_ARG(out != nullptr, "out is NULL");
  FillStrArray(info->info.include_regex, out);
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_collection_info_tensor_names(const smd_collection_info* info,
                                            smd_strarray* out) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(info != nullptr, "info is NULL");
  SMD_CHECK_ARG(out != nullptr, "out is NULL");
  FillStrArray(info->info.tensor_names, out);
  return nullptr;
  SMD_CAPI_END
}

const char* smd_collection_info_reductions(const smd_collection_info* info) noexcept {
  if (info == nullptr || !info->info.has_reduction_config) return nullptr;
  return info->info.reductions.c_str();
}

bool smd_collection_info_save_raw_tensor(const smd_collection_info* info) noexcept {
  return info && info->info.save_raw_tensor;
}

bool smd_collection_info_save_shape(const smd_collection_info* info) noexcept {
  return info && info->info.save_shape;
}

bool smd_collection_info_save_histogram(const smd_collection_info* info) noexcept {
  return info && info->info.save_histogram;
}

smd_error* smd_collection_info_save_config(const smd_collection_info* info,
                                           smd_save_config** out) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(info != nullptr, "info is NULL");
  SMD_CHECK_ARG(out != nullptr, "out is NULL");
  *out = nullptr;
  if (!info->info.save_config) return nullptr;
  auto config = std::make_unique<smd_save_config>();
  for (int i = 0; i < smd::kNumModes; ++i) {
    const std::optional<smd::trial::SaveConfigModeInfo>& m = (*info->info.save_config)[i];
    if (!m) continue;
    smd::hook::SaveConfigMode& mode = config->cfg.mode(smd::kAllModesInOrder[i]).emplace();
    mode.save_interval = m->save_interval;
    mode.start_step = m->start_step;
    mode.end_step = m->end_step;
    mode.save_steps = m->save_steps;
  }
  *out = config.release();
  return nullptr;
  SMD_CAPI_END
}

}  // extern "C"
