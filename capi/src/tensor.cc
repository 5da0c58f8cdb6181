// The C glue for tensors and values (DLPack export included).
#include <cstdlib>
#include <cstring>

#include "capi/src/trial_internal.h"
#include "impl/core/dtype.h"

using smd::capi::DupInt64s;
using smd::capi::FillStrArray;
using smd::capi::MakeError;
using smd::capi::ToMode;
using smd::capi::ValidMode;

namespace {

smd_value* NewValue(smd::trial::ValuePtr v) { return new smd_value{std::move(v)}; }

// Moves values into a malloc'd array of handles (freed with smd_value_array_free).
smd_value** NewValueArray(const std::vector<smd::trial::ValuePtr>& values) {
  if (values.empty()) return nullptr;
  smd_value** arr = static_cast<smd_value**>(std::calloc(values.size(), sizeof(smd_value*)));
  if (arr == nullptr) throw std::bad_alloc();
  try {
    for (size_t i = 0; i < values.size(); ++i) arr[i] = NewValue(values[i]);
  } catch (...) {
    smd_value_array_free(arr, values.size());
    throw;
  }
  return arr;
}

// What a DLPack export keeps alive: the value and the int64 shape DLTensor points at.
struct DlpackContext {
  smd::trial::ValuePtr value;
  std::vector<int64_t> shape;
};

void DlpackDeleter(DLManagedTensorVersioned* self) {
  if (self == nullptr) return;
  delete static_cast<DlpackContext*>(self->manager_ctx);
  delete self;
}

}  // namespace

extern "C" {

// ---- tensors --------------------------------------------------------------------------------

void smd_tensor_free(smd_tensor* tensor) noexcept { delete tensor; }

const char* smd_tensor_name(const smd_tensor* tensor) noexcept {
  return tensor ? tensor->name.c_str() : nullptr;
}

smd_error* smd_tensor_original_name(const smd_tensor* tensor, char** out) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(tensor != nullptr, "tensor is NULL");
  SMD_CHECK_ARG(out != nullptr, "out is NULL");
  std::optional<std::string> name = tensor->trial->TensorOriginalName(tensor->id);
  *out = name ? smd::capi::DupString(*name) : nullptr;
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_tensor_steps(const smd_tensor* tensor, smd_mode mode, bool show_incomplete,
                            int64_t** steps_out, size_t* n_out) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(tensor != nullptr, "tensor is NULL");
  SMD_CHECK_ARG(steps_out != nullptr && n_out != nullptr, "steps_out or n_out is NULL");
  SMD_CHECK_MODE(mode);
  auto r = tensor->trial->TensorSteps(tensor->id, ToMode(mode), show_incomplete);
  if (!r.ok()) return smd::capi::FromStatus(r.status());
  *steps_out = DupInt64s(r.value());
  *n_out = r.value().size();
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_tensor_value(const smd_tensor* tensor, int64_t step, smd_mode mode,
                            const char* worker, smd_value** out) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(tensor != nullptr, "tensor is NULL");
  SMD_CHECK_ARG(out != nullptr, "out is NULL");
  SMD_CHECK_MODE(mode);
  std::string w = worker ? worker : "";
  auto r = tensor->trial->TensorValue(tensor->id, step, ToMode(mode), worker ? &w : nullptr);
  if (!r.ok()) return smd::capi::FromStatus(r.status());
  *out = NewValue(std::move(r).value());
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_tensor_values(const smd_tensor* tensor, smd_mode mode, const char* worker,
                             int64_t** steps_out, smd_value*** values_out, size_t* n_out) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(tensor != nullptr, "tensor is NULL");
  SMD_CHECK_ARG(steps_out != nullptr && values_out != nullptr && n_out != nullptr,
                "steps_out, values_out or n_out is NULL");
  SMD_CHECK_MODE(mode);
  std::string w = worker ? worker : "";
  auto r = tensor->trial->TensorValues(tensor->id, ToMode(mode), worker ? &w : nullptr);
  if (!r.ok()) return smd::capi::FromStatus(r.status());
  std::vector<int64_t> steps;
  std::vector<smd::trial::ValuePtr> values;
  for (auto& sv : r.value()) {
    steps.push_back(sv.first);
    values.push_back(std::move(sv.second));
  }
  int64_t* s = DupInt64s(steps);
  smd_value** v;
  try {
    v = NewValueArray(values);
  } catch (...) {
    std::free(s);
    throw;
  }
  *steps_out = s;
  *values_out = v;
  *n_out = values.size();
  return nullptr;
  SMD_CAPI_END
}

void smd_value_array_free(smd_value** values, size_t n) noexcept {
  if (values == nullptr) return;
  for (size_t i = 0; i < n; ++i) delete values[i];
  std::free(values);
}

smd_error* smd_tensor_shape(const smd_tensor* tensor, int64_t step, smd_mode mode,
                            const char* worker, int64_t** dims_out, size_t* ndim_out) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(tensor != nullptr, "tensor is NULL");
  SMD_CHECK_ARG(dims_out != nullptr && ndim_out != nullptr, "dims_out or ndim_out is NULL");
  SMD_CHECK_MODE(mode);
  std::string w = worker ? worker : "";
  auto r = tensor->trial->TensorShape(tensor->id, step, ToMode(mode), worker ? &w : nullptr);
  if (!r.ok()) return smd::capi::FromStatus(r.status());
  const std::vector<int64_t>& dims = r.value();
  int64_t* p = static_cast<int64_t*>(std::malloc(std::max<size_t>(1, dims.size()) * sizeof(int64_t)));
  if (p == nullptr) throw std::bad_alloc();
  if (!dims.empty()) std::memcpy(p, dims.data(), dims.size() * sizeof(int64_t));
  *dims_out = p;
  *ndim_out = dims.size();
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_tensor_value_info(const smd_tensor* tensor, int64_t step, smd_mode mode,
                                 const char* worker, smd_dtype* dtype_out, int64_t** dims_out,
                                 size_t* ndim_out) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(tensor != nullptr, "tensor is NULL");
  SMD_CHECK_ARG(dtype_out != nullptr && dims_out != nullptr && ndim_out != nullptr,
                "dtype_out, dims_out or ndim_out is NULL");
  SMD_CHECK_MODE(mode);
  std::string w = worker ? worker : "";
  auto r = tensor->trial->TensorValueInfo(tensor->id, step, ToMode(mode), worker ? &w : nullptr);
  if (!r.ok()) return smd::capi::FromStatus(r.status());
  const std::vector<int64_t>& dims = r.value().shape;
  int64_t* p = static_cast<int64_t*>(std::malloc(std::max<size_t>(1, dims.size()) * sizeof(int64_t)));
  if (p == nullptr) throw std::bad_alloc();
  if (!dims.empty()) std::memcpy(p, dims.data(), dims.size() * sizeof(int64_t));
  *dtype_out = static_cast<smd_dtype>(r.value().dtype);
  *dims_out = p;
  *ndim_out = dims.size();
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_tensor_shapes(const smd_tensor* tensor, smd_mode mode, const char* worker,
                             int64_t** steps_out, size_t** offsets_out, int64_t** dims_out,
                             size_t* n_out) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(tensor != nullptr, "tensor is NULL");
  SMD_CHECK_ARG(steps_out && offsets_out && dims_out && n_out,
                "steps_out, offsets_out, dims_out or n_out is NULL");
  SMD_CHECK_MODE(mode);
  std::string w = worker ? worker : "";
  auto r = tensor->trial->TensorShapes(tensor->id, ToMode(mode), worker ? &w : nullptr);
  if (!r.ok()) return smd::capi::FromStatus(r.status());
  std::vector<int64_t> steps, dims;
  std::vector<size_t> offsets{0};
  for (const auto& sv : r.value()) {
    steps.push_back(sv.first);
    dims.insert(dims.end(), sv.second.begin(), sv.second.end());
    offsets.push_back(dims.size());
  }
  size_t* o = static_cast<size_t*>(std::malloc(offsets.size() * sizeof(size_t)));
  if (o == nullptr) throw std::bad_alloc();
  std::memcpy(o, offsets.data(), offsets.size() * sizeof(size_t));
  int64_t* s = nullptr;
  int64_t* d = nullptr;
  try {
    s = DupInt64s(steps);
    d = DupInt64s(dims);
  } catch (...) {
    std::free(o);
    std::free(s);
    throw;
  }
  *steps_out = s;
  *offsets_out = o;
  *dims_out = d;
  *n_out = steps.size();
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_tensor_reduction_value(const smd_tensor* tensor, int64_t step, smd_mode mode,
                                      const char* worker, const char* reduction,
                                      smd_value** out) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(tensor != nullptr, "tensor is NULL");
  SMD_CHECK_ARG(reduction != nullptr, "reduction is NULL");
  SMD_CHECK_ARG(out != nullptr, "out is NULL");
  SMD_CHECK_MODE(mode);
  std::string w = worker ? worker : "";
  auto r = tensor->trial->TensorReductionValue(tensor->id, step, reduction, ToMode(mode),
                                               worker ? &w : nullptr);
  if (!r.ok()) return smd::capi::FromStatus(r.status());
  *out = NewValue(std::move(r).value());
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_tensor_reduction_names(const smd_tensor* tensor, int64_t step, smd_mode mode,
                                      const char* worker, smd_strarray* out) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(tensor != nullptr, "tensor is NULL");
  SMD_CHECK_ARG(out != nullptr, "out is NULL");
  SMD_CHECK_MODE(mode);
  std::string w = worker ? worker : "";
  auto r = tensor->trial->TensorReductionNames(tensor->id, step, ToMode(mode),
                                               worker ? &w : nullptr);
  if (!r.ok()) return smd::capi::FromStatus(r.status());
  FillStrArray(r.value(), out);
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_tensor_reduction_values(const smd_tensor* tensor, int64_t step, smd_mode mode,
                                       const char* worker, smd_strarray* names_out,
                                       smd_value*** values_out, size_t* n_out) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(tensor != nullptr, "tensor is NULL");
  SMD_CHECK_ARG(names_out != nullptr && values_out != nullptr && n_out != nullptr,
                "names_out, values_out or n_out is NULL");
  SMD_CHECK_MODE(mode);
  std::string w = worker ? worker : "";
  const std::string* wp = worker ? &w : nullptr;
  auto names = tensor->trial->TensorReductionNames(tensor->id, step, ToMode(mode), wp);
  if (!names.ok()) return smd::capi::FromStatus(names.status());
  std::vector<smd::trial::ValuePtr> values;
  for (const std::string& n : names.value()) {
    auto v = tensor->trial->TensorReductionValue(tensor->id, step, n, ToMode(mode), wp);
    if (!v.ok()) return smd::capi::FromStatus(v.status());
    values.push_back(std::move(v).value());
  }
  smd_value** arr = NewValueArray(values);
  try {
    FillStrArray(names.value(), names_out);
  } catch (...) {
    smd_value_array_free(arr, values.size());
    throw;
  }
  *values_out = arr;
  *n_out = values.size();
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_tensor_workers(const smd_tensor* tensor, int64_t step, smd_mode mode,
                              smd_strarray* out) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(tensor != nullptr, "tensor is NULL");
  SMD_CHECK_ARG(out != nullptr, "out is NULL");
  SMD_CHECK_MODE(mode);
  auto r = tensor->trial->TensorWorkers(tensor->id, step, ToMode(mode));
  if (!r.ok()) return smd::capi::FromStatus(r.status());
  FillStrArray(r.value(), out);
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_tensor_prev_steps(const smd_tensor* tensor, int64_t step, smd_mode mode, size_t n,
                                 int64_t** steps_out, size_t* n_out) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(tensor != nullptr, "tensor is NULL");
  SMD_CHECK_ARG(steps_out != nullptr && n_out != nullptr, "steps_out or n_out is NULL");
  SMD_CHECK_MODE(mode);
  auto r = tensor->trial->TensorPrevSteps(tensor->id, step, n, ToMode(mode));
  if (!r.ok()) return smd::capi::FromStatus(r.status());
  *steps_out = DupInt64s(r.value());
  *n_out = r.value().size();
  return nullptr;
  SMD_CAPI_END
}

// ---- values ---------------------------------------------------------------------------------

void smd_value_free(smd_value* value) noexcept { delete value; }

smd_value* smd_value_ref(const smd_value* value) noexcept {
  if (value == nullptr) return nullptr;
  return new (std::nothrow) smd_value{value->value};
}

smd_dtype smd_value_dtype(const smd_value* value) noexcept {
  return value ? static_cast<smd_dtype>(value->value->dtype()) : SMD_DTYPE_INVALID;
}

size_t smd_value_ndim(const smd_value* value) noexcept {
  return value ? value->value->shape().size() : 0;
}

const int64_t* smd_value_shape(const smd_value* value) noexcept {
  if (value == nullptr || value->value->shape().empty()) return nullptr;
  return value->value->shape().data();
}

size_t smd_value_count(const smd_value* value) noexcept {
  return value ? value->value->count() : 0;
}

size_t smd_value_nbytes(const smd_value* value) noexcept {
  return value ? value->value->nbytes() : 0;
}

const void* smd_value_data(const smd_value* value) noexcept {
  return value ? value->value->data() : nullptr;
}

smd_error* smd_value_string(const smd_value* value, size_t i, const char** out,
                            size_t* len_out) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(value != nullptr, "value is NULL");
  SMD_CHECK_ARG(out != nullptr, "out is NULL");
  SMD_CHECK_ARG(value->value->is_string(), "the value is not a string tensor");
  SMD_CHECK_ARG(i < value->value->count(), "string index " + std::to_string(i) +
                                               " out of range (the value has " +
                                               std::to_string(value->value->count()) + ")");
  std::string_view s = value->value->string_at(i);
  *out = s.data();  // std::string storage: NUL-terminated
  if (len_out) *len_out = s.size();
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_value_double_at(const smd_value* value, size_t i, double* out) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(value != nullptr, "value is NULL");
  SMD_CHECK_ARG(out != nullptr, "out is NULL");
  const smd::trial::Value& v = *value->value;
  if (v.is_string() || smd::IsComplexDType(v.dtype())) {
    return MakeError(SMD_E_UNSUPPORTED, std::string("a ") + smd::DTypeName(v.dtype()) +
                                            " element is not one real number");
  }
  SMD_CHECK_ARG(i < v.count(), "element index " + std::to_string(i) + " out of range (the value has " +
                                   std::to_string(v.count()) + ")");
  *out = smd::LoadAsDouble(v.dtype(), v.data(), i);
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_value_to_dlpack(const smd_value* value, DLManagedTensorVersioned** out) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(value != nullptr, "value is NULL");
  SMD_CHECK_ARG(out != nullptr, "out is NULL");
  const smd::trial::Value& v = *value->value;
  const smd::DTypeInfo* info = smd::GetDTypeInfo(static_cast<int>(v.dtype()));
  if (v.is_string() || info == nullptr) {
    return MakeError(SMD_E_UNSUPPORTED, "string values have no DLPack form");
  }
  auto ctx = std::make_unique<DlpackContext>();
  ctx->value = value->value;
  ctx->shape = v.shape();
  auto m = std::make_unique<DLManagedTensorVersioned>();
  std::memset(m.get(), 0, sizeof(DLManagedTensorVersioned));
  m->version.major = DLPACK_MAJOR_VERSION;
  m->version.minor = DLPACK_MINOR_VERSION;
  m->flags = DLPACK_FLAG_BITMASK_READ_ONLY;
  m->deleter = DlpackDeleter;
  m->dl_tensor.data = const_cast<void*>(v.data());  // read-only by contract (flag above)
  m->dl_tensor.device.device_type = kDLCPU;
  m->dl_tensor.device.device_id = 0;
  m->dl_tensor.ndim = static_cast<int32_t>(ctx->shape.size());
  m->dl_tensor.dtype.code = info->dl_code;
  m->dl_tensor.dtype.bits = info->dl_bits;
  m->dl_tensor.dtype.lanes = 1;
  m->dl_tensor.shape = ctx->shape.empty() ? nullptr : ctx->shape.data();
  m->dl_tensor.strides = nullptr;
  m->dl_tensor.byte_offset = 0;
  m->manager_ctx = ctx.release();
  *out = m.release();
  return nullptr;
  SMD_CAPI_END
}

}  // extern "C"
