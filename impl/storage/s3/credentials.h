// S3 credentials: static ones, or temporary ones fetched from the container credentials endpoint
// (ECS/EKS) or the EC2 instance metadata service (IMDSv2) and fetched again before they expire;
// and the scrubbing that keeps secrets out of every message.
#pragma once

#include <cstdint>
#include <ctime>
#include <mutex>
#include <string>
#include <vector>

#include "impl/core/status.h"
#include "impl/storage/s3/config.h"
#include "impl/storage/s3/sigv4.h"

namespace smd::s3 {

// `s` with every occurrence of the secret key and the session token replaced by "***": as they
// are, percent-encoded or XML-escaped, in any letter case.
std::string ScrubSecrets(std::string s, const Credentials& c);

// The credentials of one client. Thread-safe.
class CredentialProvider {
 public:
  // Takes config.credentials, or (credential_source not kStatic) where to fetch them from.
  explicit CredentialProvider(const Config& config);

  // The first fetch of temporary credentials (nothing to do for static ones).
  Status Start();
  // The credentials in hand now.
  Credentials Current() const;
  // Credentials for a request. When they expire within 5 minutes they are refreshed early, by
  // one thread at a time without blocking the others: a thread that finds a refresh under way
  // goes on with the credentials in hand, and an early refresh that fails is not an error (the
  // credentials in hand are used, as the AWS SDKs do) and is not tried again for
  // kEarlyRetryAfterFailureS seconds. A thread blocks for a refresh only when the credentials
  // have expired (or there are none), or when force_refresh (S3 answered ExpiredToken); a
  // forced refresh is skipped when another thread refreshed while this one waited.
  Result<Credentials> ForRequest(bool force_refresh);

  static constexpr int kEarlyRefreshS = 300;           // refresh this long before expiry
  static constexpr int kEarlyRetryAfterFailureS = 10;  // pause after a failed early refresh

 private:
  Status Fetch(const std::string& method, const std::string& url,
               const std::vector<std::string>& headers, std::string* body);
  Status FetchOnce(const std::string& method, const std::string& url,
                   const std::vector<std::string>& headers, std::string* body, long* status);
  Status Refresh();

  const Config source_;
  mutable std::mutex mu_;
  std::mutex refresh_mu_;  // one refresh at a time
  Credentials creds_;
  std::time_t expire_ = 0;       // 0: never
  uint64_t generation_ = 0;      // successful refreshes so far (under mu_)
  std::time_t next_early_ = 0;   // no early refresh before this time (after a failed one)
};

}  // namespace smd::s3
