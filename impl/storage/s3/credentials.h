// S3 credentials: static ones, or temporary ones fetched from the container credentials endpoint
// (ECS/EKS) or the EC2 instance metadata service (IMDSv2) and fetched again before they expire;
// and the scrubbing that keeps secrets out of every message.
#pragma once

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
  // Credentials for a request: refreshed first when they expire within 5 minutes (or when
  // force_refresh: S3 answered ExpiredToken). One thread refreshes at a time (the others then
  // find fresh credentials). An early refresh that fails while the credentials in hand are still
  // valid is not an error: they are used (as the AWS SDKs do), and the next request tries again.
  Result<Credentials> ForRequest(bool force_refresh);

 private:
  Status Fetch(const std::string& method, const std::string& url,
               const std::vector<std::string>& headers, std::string* body);
  Status Refresh();

  const Config source_;
  mutable std::mutex mu_;
  std::mutex refresh_mu_;  // one refresh at a time
  Credentials creds_;
  std::time_t expire_ = 0;  // 0: never
};

}  // namespace smd::s3
