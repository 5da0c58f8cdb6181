// The C glue for errors, dtypes, modes, string arrays, memory and versions.
#include <cstdlib>
#include <cstring>

#include "capi/src/capi_internal.h"
#include "impl/core/dtype.h"
#include "impl/core/mode.h"

namespace smd::capi {

// impl's status codes are the C ABI's codes: FromStatus converts by value.
#define SMD_SAME_CODE(c, k) \
  static_assert(static_cast<int>(c) == static_cast<int>(::smd::Code::k), #c " != Code::" #k)
SMD_SAME_CODE(SMD_OK, kOk);
SMD_SAME_CODE(SMD_E_INTERNAL, kInternal);
SMD_SAME_CODE(SMD_E_INVALID_ARGUMENT, kInvalidArgument);
SMD_SAME_CODE(SMD_E_NOT_FOUND, kNotFound);
SMD_SAME_CODE(SMD_E_IO, kIO);
SMD_SAME_CODE(SMD_E_CORRUPT, kCorrupt);
SMD_SAME_CODE(SMD_E_OUT_OF_MEMORY, kOutOfMemory);
SMD_SAME_CODE(SMD_E_UNSUPPORTED, kUnsupported);
SMD_SAME_CODE(SMD_E_INVALID_STATE, kInvalidState);
SMD_SAME_CODE(SMD_E_ALREADY_EXISTS, kAlreadyExists);
SMD_SAME_CODE(SMD_E_CANCELLED, kCancelled);
SMD_SAME_CODE(SMD_E_TENSOR_UNAVAILABLE_FOR_STEP, kTensorUnavailableForStep);
SMD_SAME_CODE(SMD_E_TENSOR_UNAVAILABLE, kTensorUnavailable);
SMD_SAME_CODE(SMD_E_STEP_UNAVAILABLE, kStepUnavailable);
SMD_SAME_CODE(SMD_E_STEP_NOT_YET_AVAILABLE, kStepNotYetAvailable);
SMD_SAME_CODE(SMD_E_NO_MORE_DATA, kNoMoreData);
SMD_SAME_CODE(SMD_E_MISSING_COLLECTION_FILES, kMissingCollectionFiles);
SMD_SAME_CODE(SMD_E_SHAPE_UNAVAILABLE_FOR_STEP, kShapeUnavailableForStep);
SMD_SAME_CODE(SMD_E_INVALID_WORKER, kInvalidWorker);
SMD_SAME_CODE(SMD_E_RULE_CONDITION_MET, kRuleConditionMet);
SMD_SAME_CODE(SMD_E_HTTP, kHttp);
SMD_SAME_CODE(SMD_E_AUTH, kAuth);
#undef SMD_SAME_CODE

// The error returned when even the error object cannot be allocated. It lives in static storage,
// is built without allocating (the message fits the string's inline buffer) and is never
// destroyed; smd_error_free ignores it. So an allocation failure can never come back as NULL,
// which would read as success.
smd_error* OutOfMemoryError() noexcept {
  alignas(smd_error) static unsigned char storage[sizeof(smd_error)];
  static smd_error* const err = new (storage) smd_error{SMD_E_OUT_OF_MEMORY, "out of memory"};
  return err;
}

smd_error* MakeError(smd_code code, std::string message) noexcept {
  try {
    return new smd_error{code, std::move(message)};
  } catch (...) {
    return OutOfMemoryError();
  }
}

smd_error* FromStatus(const Status& st) noexcept {
  if (st.ok()) return nullptr;
  return MakeError(static_cast<smd_code>(st.code()), st.message());
}

char* DupString(const std::string& s) {
  char* p = static_cast<char*>(std::malloc(s.size() + 1));
  if (p == nullptr) throw std::bad_alloc();
  std::memcpy(p, s.data(), s.size());
  p[s.size()] = '\0';
  return p;
}

void FillStrArray(const std::vector<std::string>& in, smd_strarray* out) {
  smd_strarray tmp{nullptr, 0};
  if (!in.empty()) {
    tmp.strings = static_cast<char**>(std::calloc(in.size(), sizeof(char*)));
    if (tmp.strings == nullptr) throw std::bad_alloc();
    try {
      for (const std::string& s : in) tmp.strings[tmp.count++] = DupString(s);
    } catch (...) {
      smd_strarray_free(&tmp);
      throw;
    }
  }
  *out = tmp;
}

int64_t* DupInt64s(const std::vector<int64_t>& v) {
  if (v.empty()) return nullptr;
  int64_t* p = static_cast<int64_t*>(std::malloc(v.size() * sizeof(int64_t)));
  if (p == nullptr) throw std::bad_alloc();
  std::memcpy(p, v.data(), v.size() * sizeof(int64_t));
  return p;
}

}  // namespace smd::capi

extern "C" {

smd_code smd_error_code(const smd_error* err) noexcept { return err ? err->code : SMD_OK; }

const char* smd_error_message(const smd_error* err) noexcept {
  return err ? err->message.c_str() : "";
}

void smd_error_free(smd_error* err) noexcept {
  if (err != smd::capi::OutOfMemoryError()) delete err;
}

const char* smd_code_name(smd_code code) noexcept {
  switch (code) {
    case SMD_OK: return "SMD_OK";
    case SMD_E_INTERNAL: return "SMD_E_INTERNAL";
    case SMD_E_INVALID_ARGUMENT: return "SMD_E_INVALID_ARGUMENT";
    case SMD_E_NOT_FOUND: return "SMD_E_NOT_FOUND";
    case SMD_E_IO: return "SMD_E_IO";
    case SMD_E_CORRUPT: return "SMD_E_CORRUPT";
    case SMD_E_OUT_OF_MEMORY: return "SMD_E_OUT_OF_MEMORY";
    case SMD_E_UNSUPPORTED: return "SMD_E_UNSUPPORTED";
    case SMD_E_INVALID_STATE: return "SMD_E_INVALID_STATE";
    case SMD_E_ALREADY_EXISTS: return "SMD_E_ALREADY_EXISTS";
    case SMD_E_CANCELLED: return "SMD_E_CANCELLED";
    case SMD_E_TENSOR_UNAVAILABLE_FOR_STEP: return "SMD_E_TENSOR_UNAVAILABLE_FOR_STEP";
    case SMD_E_TENSOR_UNAVAILABLE: return "SMD_E_TENSOR_UNAVAILABLE";
    case SMD_E_STEP_UNAVAILABLE: return "SMD_E_STEP_UNAVAILABLE";
    case SMD_E_STEP_NOT_YET_AVAILABLE: return "SMD_E_STEP_NOT_YET_AVAILABLE";
    case SMD_E_NO_MORE_DATA: return "SMD_E_NO_MORE_DATA";
    case SMD_E_MISSING_COLLECTION_FILES: return "SMD_E_MISSING_COLLECTION_FILES";
    case SMD_E_SHAPE_UNAVAILABLE_FOR_STEP: return "SMD_E_SHAPE_UNAVAILABLE_FOR_STEP";
    case SMD_E_INVALID_WORKER: return "SMD_E_INVALID_WORKER";
    case SMD_E_RULE_CONDITION_MET: return "SMD_E_RULE_CONDITION_MET";
    case SMD_E_HTTP: return "SMD_E_HTTP";
    case SMD_E_AUTH: return "SMD_E_AUTH";
  }
  return nullptr;  // as smd_dtype_name and smd_mode_name for values they do not know
}

size_t smd_dtype_size(smd_dtype dtype) noexcept {
  const smd::DTypeInfo* i = smd::GetDTypeInfo(static_cast<int>(dtype));
  return i ? i->size : 0;
}

const char* smd_dtype_name(smd_dtype dtype) noexcept {
  const smd::DTypeInfo* i = smd::GetDTypeInfo(static_cast<int>(dtype));
  return i ? i->name : nullptr;
}

smd_error* smd_dtype_from_name(const char* name, smd_dtype* out) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(name != nullptr, "name is NULL");
  SMD_CHECK_ARG(out != nullptr, "out is NULL");
  auto t = smd::DTypeFromName(name);
  SMD_CHECK_ARG(t.has_value(), std::string("unknown dtype name '") + name + "'");
  *out = static_cast<smd_dtype>(*t);
  return nullptr;
  SMD_CAPI_END
}

const char* smd_mode_name(smd_mode mode) noexcept {
  if (!smd::IsValidMode(static_cast<int>(mode))) return nullptr;
  return smd::ModeName(static_cast<smd::Mode>(mode));
}

smd_error* smd_mode_from_name(const char* name, smd_mode* out) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(name != nullptr, "name is NULL");
  SMD_CHECK_ARG(out != nullptr, "out is NULL");
  auto m = smd::ParseMode(name);
  SMD_CHECK_ARG(m.has_value(), std::string("unknown mode '") + name +
                                   "' (expected TRAIN, EVAL, PREDICT or GLOBAL)");
  *out = static_cast<smd_mode>(*m);
  return nullptr;
  SMD_CAPI_END
}

void smd_strarray_free(smd_strarray* array) noexcept {
  if (array == nullptr) return;
  for (size_t i = 0; i < array->count; ++i) std::free(array->strings[i]);
  std::free(array->strings);
  array->strings = nullptr;
  array->count = 0;
}

void smd_free(void* ptr) noexcept { std::free(ptr); }

void smd_version(int32_t* major_out, int32_t* minor_out, int32_t* patch_out) noexcept {
  if (major_out) *major_out = SMD_VERSION_MAJOR;
  if (minor_out) *minor_out = SMD_VERSION_MINOR;
  if (patch_out) *patch_out = SMD_VERSION_PATCH;
}

const char* smd_version_string(void) noexcept { return SMD_VERSION_STRING; }

}  // extern "C"
