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
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "impl/core/status.h"
#include "impl/storage/s3/sigv4.h"

namespace smd::s3 {

struct Config {
  // "http://127.0.0.1:7070" or "https://s3.eu-west-1.amazonaws.com"; no trailing path.
  std::string endpoint;
  std::string region = "us-east-1";
  // true: http://host/bucket/key; false: http://bucket.host/key (virtual-hosted).
  bool path_style = true;
  std::string ca_bundle;  // empty: the system's CA store
  Credentials credentials;

  // Where temporary credentials come from when `credentials` is empty: kContainer (ECS/EKS
  // container endpoint) or kInstanceMetadata (EC2 IMDSv2). They are fetched by Create and
  // fetched again 5 minutes before they expire, or when S3 answers ExpiredToken.
  enum class CredentialSource { kStatic, kContainer, kInstanceMetadata };
  CredentialSource credential_source = CredentialSource::kStatic;
  std::string credentials_url;         // container: the full URI; IMDS: the service endpoint
  std::string credentials_auth_token;  // container: Authorization header value, if any

  uint64_t multipart_threshold = 16u << 20;  // PutObject below, multipart at and above
  uint64_t part_size = 8u << 20;             // >= 5 MiB for AWS (the last part may be smaller)
  int max_parallel_parts = 4;
  int list_max_keys = 1000;  // page size of listings whose ListOptions::max_keys is 0

  int max_attempts = 5;       // per request, the first try included
  int backoff_base_ms = 50;   // attempt n (from 1) waits random(0, min(cap, base * 2^(n-1)))
  int backoff_cap_ms = 5000;
  long connect_timeout_ms = 5000;
  // A transfer slower than 1 byte/s for this long is abandoned (then retried).
  long stall_timeout_ms = 30000;
};

// The configuration the AWS CLI would use (docs/s3.md "Configuration"):
// credentials from AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY[/AWS_SESSION_TOKEN], else the profile
// AWS_PROFILE (default "default") of AWS_SHARED_CREDENTIALS_FILE (~/.aws/credentials) then
// AWS_CONFIG_FILE (~/.aws/config); region from AWS_REGION, AWS_DEFAULT_REGION, the profile, else
// us-east-1; endpoint from AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, the profile's endpoint_url,
// else https://s3.<region>.amazonaws.com; addressing from the profile's addressing_style
// (path|virtual), else virtual-hosted on AWS and path style elsewhere; CA bundle from
// AWS_CA_BUNDLE or the profile's ca_bundle. Errors: kAuth when no credentials are found,
// kInvalidArgument for a malformed endpoint.
Result<Config> ConfigFromEnvironment();
// The same with profile `profile` instead of AWS_PROFILE (when not empty; its keys then win over
// AWS_ACCESS_KEY_ID, as with `aws --profile`), and with `given` credentials (when not null)
// instead of the credentials chain.
Result<Config> ConfigFromEnvironment(const std::string& profile, const Credentials* given);

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
  // Every page, concatenated.
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

// Validates an endpoint: http:// or https://, a host (and port), no path, and no user
// information (user:password@host): kInvalidArgument otherwise, never showing that part.
Status ValidateEndpoint(std::string_view endpoint);
// The endpoint with any user information replaced by "***" (for messages).
std::string RedactEndpoint(std::string_view endpoint);
// `s` with every occurrence of the secret key and the session token replaced by "***": as they
// are, percent-encoded or XML-escaped, in any letter case.
std::string ScrubSecrets(std::string s, const Credentials& c);

// Validates a bucket name (S3 rules: 3-63 characters of a-z 0-9 . -, starting and ending with a
// letter or digit). kInvalidArgument naming the bucket otherwise.
Status ValidateBucketName(std::string_view bucket);

// Tiny XML helpers for S3's responses (exposed for tests).
namespace xml {
// The decoded text of each <tag>...</tag> directly or indirectly inside `doc`, in order.
std::vector<std::string> AllText(std::string_view doc, std::string_view tag);
// The inner XML of each <tag>...</tag> element, in order (not decoded).
std::vector<std::string_view> Elements(std::string_view doc, std::string_view tag);
// The first decoded text of <tag>, or "".
std::string FirstText(std::string_view doc, std::string_view tag);
// Decodes &amp; &lt; &gt; &quot; &apos; &#N; &#xH;.
std::string Unescape(std::string_view s);
std::string Escape(std::string_view s);
}  // namespace xml

}  // namespace smd::s3
