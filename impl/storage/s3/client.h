// A small S3 client: libcurl for transport, our own SigV4 signing (impl/storage/s3/sigv4.h).
// PUT, GET (whole or a byte range), HEAD, DELETE, ListObjectsV2 (paginated, start-after) and
// multipart upload (parts in parallel, abort on failure) above a threshold. Connections are kept
// alive by the client's pooled curl handles (DNS and TLS sessions are shared through a curl share
// handle; connections are not, since libcurl does not support one connection cache used by
// concurrent threads). Failed requests are
// retried with exponential backoff and full jitter (docs/s3.md).
//
// Errors (Status codes): kAuth (403: SignatureDoesNotMatch, InvalidAccessKeyId, AccessDenied,
// expired token; or no credentials), kInvalidArgument (NoSuchBucket, a bad bucket name),
// kNotFound (NoSuchKey), kIO (endpoint unreachable, timeouts, connection errors once the retries
// are spent), kAlreadyExists (If-None-Match failed), kHttp (any other S3 error, with the HTTP
// status and the S3 error code). Messages name the bucket and key, never the secret key or the
// session token.
//
// Thread-safe: one Client may serve many threads at once.
//
// The parts: config.h (settings and the AWS configuration chain), credentials.h (static and
// temporary credentials, secret scrubbing), transport.h (signed requests, retries, curl),
// multipart.h (multipart uploads), xml.h (S3's answers).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "impl/core/status.h"
#include "impl/storage/s3/config.h"
#include "impl/storage/s3/credentials.h"
#include "impl/storage/s3/sigv4.h"
#include "impl/storage/s3/xml.h"

namespace smd::s3 {

// One object of a listing.
struct ObjectInfo {
  std::string key;
  uint64_t size = 0;
  std::string etag;
};

struct ListPage {
  std::vector<ObjectInfo> objects;
  std::vector<std::string> common_prefixes;  // with delimiter
  bool truncated = false;
  std::string next_continuation_token;
};

struct ListOptions {
  std::string prefix;
  std::string delimiter;    // "" for a flat listing
  std::string start_after;  // keys after this one only (lexicographic, UTF-8 bytes)
  int max_keys = 0;         // per page; 0: Config::list_max_keys
};

// One multipart upload in progress (ListMultipartUploads).
struct UploadInfo {
  std::string key;
  std::string upload_id;
  std::string initiated;  // as S3 gives it (ISO 8601)
};

struct PutOptions {
  bool if_none_match = false;  // fail with kAlreadyExists if the key exists (conditional write)
  std::string content_type;
};

class Client {
 public:
  static Result<std::unique_ptr<Client>> Create(Config config);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  const Config& config() const;

  // One PUT below the multipart threshold, else a multipart upload (aborted on failure).
  Status Put(const std::string& bucket, const std::string& key, std::string_view body,
             const PutOptions& opts = {});
  // The whole object.
  Result<std::string> Get(const std::string& bucket, const std::string& key);
  // Exactly `len` bytes at `offset`. kCorrupt if the object is shorter.
  Status GetRange(const std::string& bucket, const std::string& key, uint64_t offset,
                  uint64_t len, char* out);
  // Size and ETag. kNotFound if there is no such object.
  Result<ObjectInfo> Head(const std::string& bucket, const std::string& key);
  // Deleting a missing key succeeds (S3 semantics).
  Status Delete(const std::string& bucket, const std::string& key);

  // One page of ListObjectsV2; pass the previous page's next_continuation_token to go on.
  Result<ListPage> ListPageV2(const std::string& bucket, const ListOptions& opts,
                              const std::string& continuation_token = "");
  // Every page, concatenated. kHttp if a truncated page repeats a continuation token (the
  // listing would never end).
  Result<ListPage> List(const std::string& bucket, const ListOptions& opts);

  // Counters since Create, for tests and benchmarks.
  struct Stats {
    uint64_t requests = 0;     // HTTP exchanges, retries included
    uint64_t connections = 0;  // new TCP/TLS connections opened (the rest reused one)
    uint64_t retries = 0;
  };
  Stats stats() const;

  // Multipart upload, also usable on its own (Put uses it above the threshold).
  Status PutMultipart(const std::string& bucket, const std::string& key, std::string_view body);
  // An object made of `parts` in order (no copy of them into one body): one PUT of their bytes
  // joined below the multipart threshold, else a multipart upload of these parts (each at least
  // 5 MiB for AWS, but the last).
  Status PutParts(const std::string& bucket, const std::string& key,
                  const std::vector<std::string_view>& parts);

  // The multipart uploads in progress (created, neither completed nor aborted) whose keys start
  // with `prefix`, every page, in S3's order (key, then initiation).
  Result<std::vector<UploadInfo>> ListUploads(const std::string& bucket, const std::string& prefix);
  // Aborts one upload (its parts are deleted). An upload already gone (NoSuchUpload) is not an
  // error.
  Status AbortUpload(const std::string& bucket, const std::string& key, const std::string& upload_id);

  struct Impl;

 private:
  explicit Client(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace smd::s3
