// What an S3 client is configured with, and where that comes from: the AWS configuration chain
// (environment variables read through impl/core/environment.h, then the shared credentials and
// config files), as the AWS CLI reads it. Validation of endpoints and bucket names.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "impl/core/status.h"
#include "impl/storage/s3/sigv4.h"

namespace smd::s3 {

struct Config {
  // "http://127.0.0.1:7070" or "https://s3.eu-west-1.amazonaws.com"; no trailing path.
  std::string endpoint;
  std::string region = "us-east-1";
  // true: http://host/bucket/key; false: http://bucket.host/key (virtual-hosted), except that a
  // bucket whose name holds '.' is addressed in path style over https (bucket.with.dots.host
  // fails the check of a wildcard certificate such as *.s3.amazonaws.com) unless
  // virtual_style_explicit says that virtual-hosted addressing was asked for by name.
  bool path_style = true;
  bool virtual_style_explicit = false;
  std::string ca_bundle;  // empty: the system's CA store
  Credentials credentials;

  // Where temporary credentials come from when `credentials` is empty: kContainer (ECS/EKS
  // container endpoint) or kInstanceMetadata (EC2 IMDSv2). They are fetched by Create and
  // fetched again 5 minutes before they expire, or when S3 answers ExpiredToken.
  enum class CredentialSource { kStatic, kContainer, kInstanceMetadata };
  CredentialSource credential_source = CredentialSource::kStatic;
  std::string credentials_url;         // container: the full URI; IMDS: the service endpoint
  std::string credentials_auth_token;  // container: Authorization header value, if any
  // Container: a file holding the Authorization header value (AWS_CONTAINER_AUTHORIZATION_TOKEN_
  // FILE; EKS Pod Identity rotates it). Read again at every fetch; wins over the token above.
  std::string credentials_auth_token_file;

  uint64_t multipart_threshold = 16u << 20;  // PutObject below, multipart at and above
  uint64_t part_size = 8u << 20;             // >= 5 MiB for AWS (the last part may be smaller)
  int max_parallel_parts = 4;
  int list_max_keys = 1000;  // page size of listings whose ListOptions::max_keys is 0

  int max_attempts = 5;       // per request, the first try included
  int backoff_base_ms = 50;   // attempt n (from 1) waits random(0, min(cap, base * 2^(n-1)))
  int backoff_cap_ms = 5000;
  long connect_timeout_ms = 5000;
  // A transfer slower than 1 byte/s for this long is abandoned (then retried). The limit has a
  // resolution of one second: it is rounded up to whole seconds (1500 waits 2 s).
  long stall_timeout_ms = 30000;
};

// The configuration the AWS CLI would use (docs/s3.md "Configuration"):
// credentials from AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY[/AWS_SESSION_TOKEN], else the profile
// AWS_PROFILE (default "default") of AWS_SHARED_CREDENTIALS_FILE (~/.aws/credentials) then
// AWS_CONFIG_FILE (~/.aws/config), else container then instance-metadata credentials. A profile
// named by AWS_PROFILE or the caller that is in neither file, or one whose credentials come from
// a source smd does not implement (role_arn/source_profile, credential_process, sso_*,
// web_identity_token_file), is kAuth naming the profile (and the source), never a fall-back to
// another identity (a profile with no credentials of any kind falls back, as the SDKs do);
// region from AWS_REGION, AWS_DEFAULT_REGION, the profile, else
// us-east-1; endpoint from AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, the profile's endpoint_url,
// else https://s3.<region>.amazonaws.com; addressing from the profile's addressing_style
// (path|virtual), else virtual-hosted on AWS (path style for a bucket with '.' over https) and
// path style elsewhere; CA bundle from
// AWS_CA_BUNDLE or the profile's ca_bundle. Errors: kAuth when no credentials are found,
// kInvalidArgument for a malformed endpoint.
Result<Config> ConfigFromEnvironment();
// The same with profile `profile` instead of AWS_PROFILE (when not empty; its keys then win over
// AWS_ACCESS_KEY_ID, as with `aws --profile`), and with `given` credentials (when not null)
// instead of the credentials chain.
Result<Config> ConfigFromEnvironment(const std::string& profile, const Credentials* given);

// Validates an endpoint: http:// or https://, a host (and port), no path, and no user
// information (user:password@host): kInvalidArgument otherwise, never showing that part.
Status ValidateEndpoint(std::string_view endpoint);
// The endpoint with any user information replaced by "***" (for messages).
std::string RedactEndpoint(std::string_view endpoint);
// Validates a bucket name: S3's rules (3-63 characters of a-z 0-9 . -, starting and ending with a
// letter or digit, no "..") or, for buckets made in us-east-1 before March 2018, the legacy ones
// (3-255 characters of A-Z a-z 0-9 . _ -). kInvalidArgument naming the bucket otherwise.
Status ValidateBucketName(std::string_view bucket);
// Whether a valid bucket name can be a host name label (S3's current rules): a legacy name cannot,
// and is always addressed in the path.
bool IsDnsCompatibleBucketName(std::string_view bucket);

}  // namespace smd::s3
