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

namespace {

using smd::capi::MakeError;

const char* OrEmpty(const char* value) { return value != nullptr ? value : ""; }  // NULL unsets

}  // namespace

smd_error* smd_storage_options_set_s3_endpoint(smd_storage_options* options,
                                               const char* endpoint) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(options != nullptr, "options is NULL");
  const std::string v = OrEmpty(endpoint);
  if (!v.empty() && v.rfind("http://", 0) != 0 && v.rfind("https://", 0) != 0) {
    return MakeError(SMD_E_INVALID_ARGUMENT, "S3 endpoint '" + v + "' must start with http:// or https://");
  }
  options->opts.s3_endpoint = v;
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_storage_options_set_s3_region(smd_storage_options* options, const char* region) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(options != nullptr, "options is NULL");
  options->opts.s3_region = OrEmpty(region);
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_storage_options_set_s3_profile(smd_storage_options* options, const char* profile) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(options != nullptr, "options is NULL");
  options->opts.s3_profile = OrEmpty(profile);
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_storage_options_set_s3_addressing_style(smd_storage_options* options,
                                                       const char* style) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(options != nullptr, "options is NULL");
  const std::string v = OrEmpty(style);
  if (!v.empty() && v != "path" && v != "virtual") {
    return MakeError(SMD_E_INVALID_ARGUMENT, "S3 addressing style '" + v + "' is neither \"path\" nor \"virtual\"");
  }
  options->opts.s3_addressing_style = v;
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_storage_options_set_s3_ca_bundle(smd_storage_options* options, const char* path) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(options != nullptr, "options is NULL");
  options->opts.s3_ca_bundle = OrEmpty(path);
  return nullptr;
  SMD_CAPI_END
}

smd_error* smd_storage_options_set_s3_credentials(smd_storage_options* options,
                                                  const char* access_key_id,
                                                  const char* secret_access_key,
                                                  const char* session_token) noexcept {
  SMD_CAPI_BEGIN
  SMD_CHECK_ARG(options != nullptr, "options is NULL");
  const std::string id = OrEmpty(access_key_id), secret = OrEmpty(secret_access_key), token = OrEmpty(session_token);
  if (id.empty() != secret.empty()) {
    return MakeError(SMD_E_INVALID_ARGUMENT,
                     "S3 credentials: give both the access key id and the secret access key, or "
                     "neither");
  }
  if (!token.empty() && id.empty()) {
    return MakeError(SMD_E_INVALID_ARGUMENT,
                     "S3 credentials: a session token needs the access key id and secret access key");
  }
  options->opts.s3_access_key_id = id;
  options->opts.s3_secret_access_key = secret;
  options->opts.s3_session_token = token;
  return nullptr;
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
