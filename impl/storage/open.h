// Opening a storage: the one place that decides what a root may be (a local folder, "~" for the
// home folder, s3://bucket/prefix) and refuses the rest.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "impl/core/status.h"
#include "impl/storage/storage.h"

namespace smd::io {

// How to reach the storage. Local folders need nothing. For s3:// every field left empty comes
// from the AWS configuration chain (environment, then profile, docs/s3.md "Configuration order");
// a field set here wins over it.
struct StorageOptions {
  std::string s3_endpoint;          // "http://127.0.0.1:9000", "https://s3.eu-west-1.amazonaws.com"
  std::string s3_region;            // "eu-west-1"
  std::string s3_profile;           // profile of ~/.aws/credentials and ~/.aws/config (AWS_PROFILE)
  // "path", "virtual" or "" (virtual on AWS, but path for a bucket with '.' over https; path
  // elsewhere). "virtual" forces virtual-hosted addressing for every bucket.
  std::string s3_addressing_style;
  std::string s3_ca_bundle;         // PEM file of the CAs that TLS certificates are checked against
  // Static credentials: both keys or neither (then the chain); the token for temporary ones.
  std::string s3_access_key_id;
  std::string s3_secret_access_key;
  std::string s3_session_token;
  // Retry and timeout tuning (C++ only; 0 keeps the client's default, docs/s3.md "Retry
  // policy"): attempts per request (AWS_MAX_ATTEMPTS or the profile's max_attempts otherwise),
  // the first backoff step, and how long a transfer may stall before it is abandoned and retried.
  int s3_max_attempts = 0;
  int s3_backoff_base_ms = 0;
  long s3_stall_timeout_ms = 0;

  bool has_s3_settings() const {
    return !s3_endpoint.empty() || !s3_region.empty() || !s3_profile.empty() ||
           !s3_addressing_style.empty() || !s3_ca_bundle.empty() || !s3_access_key_id.empty() ||
           !s3_secret_access_key.empty() || !s3_session_token.empty();
  }
};

// Opens the storage at `uri`: a local path ("~" and "~/..." are the home folder, "file://" is
// dropped), created lazily by writers; or an S3 prefix "s3://bucket/prefix" (one S3 client per
// storage, shared by everything the storage opens). Errors: kInvalidArgument naming the URI for
// an empty path, a scheme smd does not know, an S3 URI without a bucket or without a prefix
// ("s3://bucket" alone is refused: a trial is a prefix, never a whole bucket), a bad bucket name,
// or a bad S3 option; kAuth when no S3 credentials are found.
Result<std::unique_ptr<Storage>> OpenStorage(const std::string& uri,
                                             const StorageOptions& options = StorageOptions());

// One multipart upload in progress under an S3 prefix.
struct S3Upload {
  std::string key;        // the object key (without s3://bucket/)
  std::string upload_id;
  std::string initiated;  // as S3 gives it (ISO 8601)
};

// The multipart uploads in progress (neither completed nor aborted) under the trial prefix
// "s3://bucket/prefix" (a writer killed during an upload leaves one; S3 keeps, and bills, its
// parts until it is aborted). With `abort`, each is aborted too (every one is tried; the first
// error is returned after that). Errors: kInvalidArgument (not an s3:// URI, a bad option),
// kAuth, kHttp, kIO.
Result<std::vector<S3Upload>> S3UploadsInProgress(const std::string& uri,
                                                  const StorageOptions& options, bool abort);

// "~" and "~/..." with $HOME (as Python's os.path.expanduser); other paths unchanged. The one
// place that expands "~".
std::string ExpandHome(const std::string& path);

// The local folder and file name of a file path ("a/b/c.txt" -> "a/b", "c.txt"; "c.txt" -> ".",
// "c.txt"), for files outside a trial opened through a storage of their folder.
std::pair<std::string, std::string> SplitFilePath(const std::string& path);

// Tests only: every storage OpenStorage opens from now on is passed through `wrap` (to record
// what goes through the seam); an empty function stops that. Not thread-safe against concurrent
// OpenStorage calls.
using StorageWrapper = std::function<std::unique_ptr<Storage>(std::unique_ptr<Storage>)>;
void SetStorageWrapperForTesting(StorageWrapper wrap);

}  // namespace smd::io
