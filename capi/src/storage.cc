// The C glue for smd_storage_options: one set of storage settings for hooks, trials, the
// TensorBoard writer and the multipart-upload listing.
#include "capi/src/capi_internal.h"
#include "smd/storage.h"

smd_error* smd_storage_options_create(smd_storage_options** out) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(out != nullptr, "out is NULL");
  *out = new smd_storage_options();
  return nullptr;
  SMD_CAPI_END
}

void smd_storage_options_free(smd_storage_options* options) noexcept { delete options; }

#define SMD_STORAGE_SETTING(FN, WHICH)                                                     \
  smd_error* FN(smd_storage_options* options, const char* value) noexcept {               \
    SMD_CAPI_BEGIN                                                                          \
    SMD_CHECK_ARG(options != nullptr, "options is NULL");                                   \
    return smd::capi::SetS3Setting(&options->opts, WHICH, value);                           \
    SMD_CAPI_END                                                                            \
  }

SMD_STORAGE_SETTING(smd_storage_options_set_s3_endpoint, "endpoint")
SMD_STORAGE_SETTING(smd_storage_options_set_s3_region, "region")
SMD_STORAGE_SETTING(smd_storage_options_set_s3_profile, "profile")
SMD_STORAGE_SETTING(smd_storage_options_set_s3_addressing_style, "addressing_style")
SMD_STORAGE_SETTING(smd_storage_options_set_s3_ca_bundle, "ca_bundle")

smd_error* smd_storage_options_set_s3_credentials(smd_storage_options* options,
                                                  const char* access_key_id,
                                                  const char* secret_access_key,
                                                  const char* session_token) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(options != nullptr, "options is NULL");
  return smd::capi::SetS3Credentials(&options->opts, access_key_id, secret_access_key,
                                     session_token);
  SMD_CAPI_END
}

smd_error* smd_storage_options_set_s3_retries(smd_storage_options* options, int32_t max_attempts,
                                              int32_t backoff_ms, int64_t stall_timeout_ms) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(options != nullptr, "options is NULL");
  SMD_CHECK_ARG(max_attempts >= 0 && backoff_ms >= 0 && stall_timeout_ms >= 0,
                "S3 retries: max_attempts, backoff_ms and stall_timeout_ms must be >= 0 (0 keeps the "
                "default)");
  options->opts.s3_max_attempts = max_attempts;
  options->opts.s3_backoff_base_ms = backoff_ms;
  options->opts.s3_stall_timeout_ms = static_cast<long>(stall_timeout_ms);
  return nullptr;
  SMD_CAPI_END
}
