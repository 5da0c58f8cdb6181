// The S3 client's transport: SigV4-signed HTTP requests over pooled libcurl handles, retried with
// exponential backoff and full jitter, S3's answers turned into Status codes (client.h lists
// them), credentials refreshed when they expire, a skewed clock corrected from the server's Date.
// Internal to impl/storage/s3 (client.cc and multipart.cc).
#pragma once

#include <curl/curl.h>

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "impl/core/status.h"
#include "impl/storage/s3/config.h"
#include "impl/storage/s3/credentials.h"
#include "impl/storage/s3/sigv4.h"

namespace smd::s3 {

struct Response {
  long status = 0;
  std::string body;
  std::map<std::string, std::string> headers;  // lower-case names
};

struct Request {
  std::string method;
  std::string bucket;
  std::string key;  // "" for bucket-level requests
  std::vector<std::pair<std::string, std::string>> query;
  HeaderList headers;  // signed and sent
  std::string_view body;
  bool head = false;
  // S3 may answer 200 and put an <Error> in the body (CompleteMultipartUpload, CopyObject): such
  // an answer is an error, classified and retried like any other.
  bool error_in_200 = false;
  // For a 2xx answer: "" if its body is whole and well-formed, else what is wrong with it. Such
  // an answer (a listing cut short, with a Content-Length that matches the cut) is retried like
  // a truncated transfer, never taken for a shorter one.
  std::function<std::string(const std::string& body)> check_body = nullptr;
  // Called before each attempt after the first (a request whose lost answer may have had an
  // effect cleans it up first).
  std::function<void()> before_retry = nullptr;
};

class Transport {
 public:
  // Checks the endpoint and the credentials (fetching temporary ones first).
  static Result<std::unique_ptr<Transport>> Create(Config config);
  ~Transport();
  Transport(const Transport&) = delete;
  Transport& operator=(const Transport&) = delete;

  const Config& config() const { return cfg_; }
  // Runs a request with retries; a 2xx response is returned, anything else becomes a Status whose
  // message says `what` and where, without secrets.
  Result<Response> Execute(const Request& r, const char* what);

  uint64_t requests() const { return n_requests_.load(); }
  uint64_t connections() const { return n_connections_.load(); }
  uint64_t retries() const { return n_retries_.load(); }

 private:
  Transport() = default;
  static void Lock(CURL*, curl_lock_data data, curl_lock_access, void* user);
  static void Unlock(CURL*, curl_lock_data data, void* user);
  CURL* Acquire();
  void Release(CURL* h);
  std::string Where(const Request& r) const;
  // Whether `bucket` goes in the path (else in the host name), and the host:port contacted.
  bool PathStyleFor(const std::string& bucket) const;
  std::string HostFor(const std::string& bucket) const;
  int BackoffMs(int attempt);
  // One attempt. Returns the curl result; fills resp.
  CURLcode Once(const Request& r, const Credentials& creds_now, Response* resp,
                std::string* curl_err);

  Config cfg_;
  std::string scheme_;     // "http" / "https"
  std::string host_port_;  // "127.0.0.1:7070"
  std::unique_ptr<CredentialProvider> credentials_;
  CURLSH* share_ = nullptr;
  std::mutex share_locks_[CURL_LOCK_DATA_LAST];
  std::atomic<uint64_t> n_requests_{0}, n_connections_{0}, n_retries_{0};
  // Seconds to add to our clock, learnt from a server that answered RequestTimeTooSkewed.
  std::atomic<long long> clock_offset_s_{0};
  std::mutex rng_mu_;
  std::mt19937_64 rng_{std::random_device{}()};
  // Easy handles kept for reuse (each keeps its own connection cache too).
  std::mutex pool_mu_;
  std::vector<CURL*> pool_;
};

}  // namespace smd::s3
