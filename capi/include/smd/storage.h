/* smd/storage.h: how smd reaches a trial's storage, a hook's out_dir or a TensorBoard folder.
 *
 * One options object says it for every part of smd that opens storage: hook options
 * (smd_hook_options_set_storage), trial options (smd_trial_options_set_storage), the TensorBoard
 * writer (smd_tensorboard_writer_create) and smd_s3_uploads_in_progress. Each of them copies the
 * settings, so one object may serve many and be freed at once. Local paths ignore the S3 settings.
 *
 * A setting left unset comes from the AWS configuration chain (AWS_* environment variables, then
 * ~/.aws/credentials and ~/.aws/config, then container or instance credentials; docs/s3.md); one
 * set here wins. Setters copy their strings; NULL or "" unsets one.
 *
 * Threading: one thread at a time per object.
 */
#ifndef SMD_STORAGE_H
#define SMD_STORAGE_H

#include "smd/common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct smd_storage_options smd_storage_options;

/* A new object with nothing set. *out is the caller's, freed with smd_storage_options_free(). */
SMD_API SMD_MUST_USE smd_error *smd_storage_options_create(smd_storage_options **out) SMD_NOEXCEPT;
/* NULL is allowed. */
SMD_API void smd_storage_options_free(smd_storage_options *options) SMD_NOEXCEPT;

/* The S3 endpoint "http[s]://host[:port]" (e.g. a MinIO or Ceph server); it implies path-style
 * addressing unless an addressing style is set.
 * Errors: SMD_E_INVALID_ARGUMENT (NULL options; an endpoint without http:// or https://). */
SMD_API SMD_MUST_USE smd_error *smd_storage_options_set_s3_endpoint(smd_storage_options *options,
                                                                    const char *endpoint) SMD_NOEXCEPT;
SMD_API SMD_MUST_USE smd_error *smd_storage_options_set_s3_region(smd_storage_options *options,
                                                                  const char *region) SMD_NOEXCEPT;
/* A profile of ~/.aws/credentials and ~/.aws/config (as AWS_PROFILE). */
SMD_API SMD_MUST_USE smd_error *smd_storage_options_set_s3_profile(smd_storage_options *options,
                                                                   const char *profile) SMD_NOEXCEPT;
/* "path" or "virtual". Errors: SMD_E_INVALID_ARGUMENT (another value). */
SMD_API SMD_MUST_USE smd_error *smd_storage_options_set_s3_addressing_style(smd_storage_options *options,
                                                                            const char *style) SMD_NOEXCEPT;
/* A PEM file of the certificate authorities that TLS certificates are checked against. */
SMD_API SMD_MUST_USE smd_error *smd_storage_options_set_s3_ca_bundle(smd_storage_options *options,
                                                                     const char *path) SMD_NOEXCEPT;
/* Static S3 credentials (never echoed in any message): both keys, or both NULL to go back to the
 * chain; session_token may be NULL (permanent keys).
 * Errors: SMD_E_INVALID_ARGUMENT (NULL options, one key without the other, a token without keys). */
SMD_API SMD_MUST_USE smd_error *smd_storage_options_set_s3_credentials(smd_storage_options *options,
                                                                       const char *access_key_id,
                                                                       const char *secret_access_key,
                                                                       const char *session_token) SMD_NOEXCEPT;
/* Retry tuning (docs/s3.md, "Retry policy"); 0 keeps the default. max_attempts: attempts per
 * request (default 5, or AWS_MAX_ATTEMPTS, or the profile's max_attempts); backoff_ms: the base of
 * the jittered exponential backoff between attempts (default 50); stall_timeout_ms: how long a
 * transfer may move less than a byte a second before it is abandoned and retried (default 30000).
 * Errors: SMD_E_INVALID_ARGUMENT (NULL options, a negative value). */
SMD_API SMD_MUST_USE smd_error *smd_storage_options_set_s3_retries(smd_storage_options *options,
                                                                   int32_t max_attempts,
                                                                   int32_t backoff_ms,
                                                                   int64_t stall_timeout_ms) SMD_NOEXCEPT;

#ifdef __cplusplus
}
#endif

#endif /* SMD_STORAGE_H */
