// The C glue for the TensorBoard writer.
#include <chrono>
#include <memory>

#include "capi/src/capi_internal.h"
#include "impl/tensorboard/files.h"
#include "impl/tensorboard/summary.h"

struct smd_tensorboard_writer {
  std::unique_ptr<smd::tensorboard::EventFileSet> files;  // null once closed
};

namespace {

using smd::capi::FromStatus;
using smd::capi::MakeError;

double WallTimeOrNow(double wall_time) {
  if (wall_time != 0) return wall_time;
  using namespace std::chrono;
  return duration_cast<duration<double>>(system_clock::now().time_since_epoch()).count();
}

smd_error* CheckCommon(const smd_tensorboard_writer* w, int64_t step, smd_mode mode, const char* tag,
                       double wall_time, std::string* clean) {
  if (w == nullptr) return MakeError(SMD_E_INVALID_ARGUMENT, "writer is NULL");
  // The file names carry the step zero-padded: a negative one would sort out of order.
  if (step < 0) {
    return MakeError(SMD_E_INVALID_ARGUMENT, "step " + std::to_string(step) + " is negative");
  }
  if (tag == nullptr) return MakeError(SMD_E_INVALID_ARGUMENT, "tag is NULL");
  if (!smd::IsValidMode(static_cast<int>(mode))) {
    return MakeError(SMD_E_INVALID_ARGUMENT, "invalid mode " + std::to_string(static_cast<int>(mode)));
  }
  if (!(wall_time >= 0)) {
    return MakeError(SMD_E_INVALID_ARGUMENT, "the wall time must be a non-negative number");
  }
  if (!w->files) return MakeError(SMD_E_INVALID_STATE, "the TensorBoard writer is closed");
  *clean = smd::tensorboard::SanitizeTag(tag);
  if (clean->empty()) {
    return MakeError(SMD_E_INVALID_ARGUMENT,
                     std::string("tag '") + tag + "' has no character left once sanitized");
  }
  return nullptr;
}

}  // namespace

extern "C" {

smd_error* smd_tensorboard_writer_create(const char* dir, const smd_storage_options* storage,
                                         smd_tensorboard_writer** out) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(dir != nullptr && dir[0] != '\0', "dir is NULL or empty");
  SMD_CHECK_ARG(out != nullptr, "out is NULL");
  auto w = std::make_unique<smd_tensorboard_writer>();
  w->files = std::make_unique<smd::tensorboard::EventFileSet>(
      dir, storage != nullptr ? storage->opts : smd::io::StorageOptions());
  *out = w.release();
  return nullptr;
  SMD_CAPI_END
}

void smd_tensorboard_writer_free(smd_tensorboard_writer* writer) noexcept {
  if (writer == nullptr) return;
  try {
    if (writer->files) (void)writer->files->Close();
  } catch (...) {
  }
  delete writer;
}

smd_error* smd_tensorboard_writer_add_scalar(smd_tensorboard_writer* writer, int64_t step,
                                             smd_mode mode, double wall_time, const char* tag,
                                             double value) noexcept {
  SMD_CAPI_BEGIN
  std::string clean;
  if (smd_error* e = CheckCommon(writer, step, mode, tag, wall_time, &clean)) return e;
  const double wt = WallTimeOrNow(wall_time);
  std::string rec;
  smd::tensorboard::AppendScalarRecord(&rec, wt, step, clean, static_cast<float>(value));
  SMD_RETURN_STATUS(writer->files->Append(static_cast<smd::Mode>(mode), step, wt, rec));
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_tensorboard_writer_add_histogram(smd_tensorboard_writer* writer, int64_t step,
                                                smd_mode mode, double wall_time, const char* tag,
                                                smd_dtype dtype, const void* data, size_t nbytes,
                                                bool* written_out) noexcept {
  SMD_CAPI_BEGIN
  std::string clean;
  if (smd_error* e = CheckCommon(writer, step, mode, tag, wall_time, &clean)) return e;
  const smd::DTypeInfo* info = smd::GetDTypeInfo(static_cast<int>(dtype));
  SMD_CHECK_ARG(info != nullptr && info->size > 0,
                "dtype " + std::to_string(static_cast<int>(dtype)) + " is not a numeric dtype");
  SMD_CHECK_ARG(dtype != SMD_DTYPE_BOOL, "bool tensors get no histogram (as in smdebug)");
  SMD_CHECK_ARG(nbytes > 0 && nbytes % info->size == 0,
                "nbytes (" + std::to_string(nbytes) + ") is not a positive multiple of the " +
                    info->name + " element size");
  SMD_CHECK_ARG(data != nullptr, "data is NULL");
  smd::tensorboard::Histogram h;
  auto any = smd::tensorboard::ComputeHistogram(static_cast<smd::DType>(dtype), data,
                                                nbytes / info->size, &h);
  if (!any.ok()) return FromStatus(any.status());
  if (*any) {
    const double wt = WallTimeOrNow(wall_time);
    std::string rec;
    smd::tensorboard::AppendHistogramRecord(&rec, wt, step, clean, h);
    SMD_RETURN_STATUS(writer->files->Append(static_cast<smd::Mode>(mode), step, wt, rec));
  }
  if (written_out != nullptr) *written_out = *any;
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_tensorboard_writer_flush(smd_tensorboard_writer* writer) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(writer != nullptr, "writer is NULL");
  if (!writer->files) return MakeError(SMD_E_INVALID_STATE, "the TensorBoard writer is closed");
  SMD_RETURN_STATUS(writer->files->Flush());
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_tensorboard_writer_close(smd_tensorboard_writer* writer) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(writer != nullptr, "writer is NULL");
  if (!writer->files) return nullptr;
  smd::Status st = writer->files->Close();
  writer->files.reset();
  SMD_RETURN_STATUS(st);
  return nullptr;
  SMD_CAPI_END
}

}  // extern "C"
