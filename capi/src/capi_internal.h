// Shared by the C glue only: the smd_error struct, the guard macros every exported function uses,
// and argument checks. This is the one place that sees both the C and the C++ types.
#pragma once

#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "impl/core/status.h"
#include "impl/hook/config.h"
#include "impl/storage/open.h"
#include "smd/smd.h"

struct smd_error {
  smd_code code;
  std::string message;
};

namespace smd::capi {

// A new error; when it cannot be allocated, the static out-of-memory error (never NULL).
smd_error* MakeError(smd_code code, std::string message) noexcept;
// The static SMD_E_OUT_OF_MEMORY error: never freed (smd_error_free ignores it).
smd_error* OutOfMemoryError() noexcept;
smd_error* FromStatus(const Status& st) noexcept;

char* DupString(const std::string& s);  // malloc'd copy, freed with smd_free
// Copies strings into an smd_strarray (malloc'd; the caller frees it with smd_strarray_free).
void FillStrArray(const std::vector<std::string>& in, smd_strarray* out);
// Copies int64s into a malloc'd array (NULL for an empty one), freed with smd_free.
int64_t* DupInt64s(const std::vector<int64_t>& v);

}  // namespace smd::capi

// What smd_save_config holds (made by the hook's glue, and by the trial's for a collection's).
struct smd_save_config {
  smd::hook::SaveConfig cfg;
};

// What smd_storage_options holds: the settings every storage the library opens takes.
struct smd_storage_options {
  smd::io::StorageOptions opts;
};

// Every exported function that returns smd_error* has its body between these two.
#define SMD_CAPI_BEGIN try {
#define SMD_CAPI_END                                                                   \
  }                                                                                    \
  catch (const std::bad_alloc&) {                                                      \
    return ::smd::capi::MakeError(SMD_E_OUT_OF_MEMORY, "out of memory");               \
  }                                                                                    \
  catch (const std::exception& e) {                                                    \
    return ::smd::capi::MakeError(SMD_E_INTERNAL, std::string("internal error: ") + e.what()); \
  }                                                                                    \
  catch (...) {                                                                        \
    return ::smd::capi::MakeError(SMD_E_INTERNAL, "internal error: unknown exception"); \
  }

#define SMD_CHECK_ARG(cond, what)                                                  \
  do {                                                                             \
    if (!(cond)) return ::smd::capi::MakeError(SMD_E_INVALID_ARGUMENT, (what));    \
  } while (0)

#define SMD_RETURN_STATUS(expr)                            \
  do {                                                     \
    ::smd::Status smd_st_ = (expr);                        \
    if (!smd_st_.ok()) return ::smd::capi::FromStatus(smd_st_); \
  } while (0)
