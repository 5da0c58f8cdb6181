#include "impl/storage/s3/transport.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <thread>

#include "impl/core/text.h"
#include "impl/storage/s3/xml.h"

namespace smd::s3 {
namespace {

std::once_flag g_curl_init;

size_t WriteBody(char* ptr, size_t size, size_t n, void* user) {
  static_cast<std::string*>(user)->append(ptr, size * n);
  return size * n;
}

size_t WriteHeader(char* ptr, size_t size, size_t n, void* user) {
  auto* h = static_cast<std::map<std::string, std::string>*>(user);
  std::string_view line(ptr, size * n);
  size_t colon = line.find(':');
  if (colon != std::string_view::npos) {
    std::string name = AsciiLower(line.substr(0, colon));
    (*h)[name] = std::string(StripAscii(line.substr(colon + 1)));
  } else if (line.rfind("HTTP/", 0) == 0) {
    h->clear();  // a new response (after 100 Continue or a redirect)
  }
  return size * n;
}

struct UploadSource {
  std::string_view data;
  size_t pos = 0;
};

size_t ReadBody(char* buf, size_t size, size_t n, void* user) {
  auto* src = static_cast<UploadSource*>(user);
  size_t k = std::min(size * n, src->data.size() - src->pos);
  if (k) std::memcpy(buf, src->data.data() + src->pos, k);
  src->pos += k;
  return k;
}

std::string AmzDate(std::time_t t) {
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", &tm);
  return buf;
}

bool RetryableS3Code(const std::string& code) {
  return code == "SlowDown" || code == "InternalError" || code == "ServiceUnavailable" ||
         code == "RequestTimeout" || code == "RequestTimeTooSkewed" || code == "Throttling" ||
         code == "ThrottlingException" ||
         // 409 to a conditional PUT racing another request on the key: S3 says to retry (the
         // retry then finds the object, 412, or writes it).
         code == "ConditionalRequestConflict";
}

bool AuthS3Code(const std::string& code) {
  return code == "SignatureDoesNotMatch" || code == "InvalidAccessKeyId" ||
         code == "AccessDenied" || code == "ExpiredToken" || code == "InvalidToken" ||
         code == "TokenRefreshRequired" || code == "AuthorizationHeaderMalformed" ||
         code == "XAdminUserNotFound";  // versitygw's answer (404) to an unknown access key id
}

}  // namespace

Transport::~Transport() {
  for (CURL* h : pool_) curl_easy_cleanup(h);
  if (share_) curl_share_cleanup(share_);
}

void Transport::Lock(CURL*, curl_lock_data data, curl_lock_access, void* user) {
  static_cast<Transport*>(user)->share_locks_[data].lock();
}

void Transport::Unlock(CURL*, curl_lock_data data, void* user) {
  static_cast<Transport*>(user)->share_locks_[data].unlock();
}

CURL* Transport::Acquire() {
  {
    std::lock_guard<std::mutex> l(pool_mu_);
    if (!pool_.empty()) {
      CURL* h = pool_.back();
      pool_.pop_back();
      curl_easy_reset(h);
      return h;
    }
  }
  return curl_easy_init();
}
void Transport::Release(CURL* h) {
  std::lock_guard<std::mutex> l(pool_mu_);
  if (pool_.size() < 16) pool_.push_back(h);
  else curl_easy_cleanup(h);
}

std::string Transport::Where(const Request& r) const {
  return "s3://" + r.bucket + (r.key.empty() ? "" : "/" + r.key);
}

int Transport::BackoffMs(int attempt) {
  long long cap = std::min<long long>(cfg_.backoff_cap_ms,
                                      static_cast<long long>(cfg_.backoff_base_ms) << std::min(attempt - 1, 20));
  std::lock_guard<std::mutex> l(rng_mu_);
  return static_cast<int>(std::uniform_int_distribution<long long>(0, std::max(0LL, cap))(rng_));
}

bool Transport::PathStyleFor(const std::string& bucket) const {
  if (cfg_.path_style) return true;
  // A legacy name (upper case, '_', over 63 characters) is no host name label.
  if (!IsDnsCompatibleBucketName(bucket)) return true;
  // bucket.with.dots.s3.amazonaws.com does not match the certificate *.s3.amazonaws.com (a
  // wildcard covers one label): over https such a bucket goes in the path, as the AWS SDKs do,
  // unless virtual-hosted addressing was asked for by name.
  return scheme_ == "https" && bucket.find('.') != std::string::npos &&
         !cfg_.virtual_style_explicit;
}

std::string Transport::HostFor(const std::string& bucket) const {
  return PathStyleFor(bucket) ? host_port_ : bucket + "." + host_port_;
}

CURLcode Transport::Once(const Request& r, const Credentials& creds_now, Response* resp,
             std::string* curl_err) {
  const std::string host = HostFor(r.bucket);
  const std::string path = PathStyleFor(r.bucket)
                               ? "/" + r.bucket + (r.key.empty() ? "" : "/" + r.key)
                               : "/" + r.key;
  SignRequest sr;
  sr.method = r.method;
  sr.path = path;
  sr.query = r.query;
  sr.headers = r.headers;
  sr.headers.emplace_back("Host", host);
  sr.payload_hash = Sha256Hex(r.body);
  SignOptions so;
  so.region = cfg_.region;
  so.amz_date = AmzDate(std::time(nullptr) + static_cast<std::time_t>(clock_offset_s_.load()));
  Signature sig = Sign(sr, creds_now, so);

  std::string url = scheme_ + "://" + host + UriEncode(path, true);
  std::string qs = CanonicalQueryString(r.query);
  if (!qs.empty()) url += "?" + qs;

  curl_slist* hl = nullptr;
  auto add = [&](const std::string& n, const std::string& v) {
    hl = curl_slist_append(hl, (n + ": " + v).c_str());
  };
  for (const auto& [n, v] : sr.headers) add(n, v);
  for (const auto& [n, v] : sig.extra_headers) add(n, v);
  add("Authorization", sig.authorization);
  hl = curl_slist_append(hl, "Expect:");
  if (r.method == "POST" || r.method == "PUT")
    if (std::none_of(r.headers.begin(), r.headers.end(),
                     [](const auto& h) { return h.first == "Content-Type"; }))
      hl = curl_slist_append(hl, "Content-Type:");

  CURL* h = Acquire();
  char errbuf[CURL_ERROR_SIZE] = {0};
  UploadSource src{r.body, 0};
  curl_easy_setopt(h, CURLOPT_URL, url.c_str());
  curl_easy_setopt(h, CURLOPT_PATH_AS_IS, 1L);
  curl_easy_setopt(h, CURLOPT_SHARE, share_);
  // The shared cache keeps this many idle connections (curl's default, 5, would close the
  // connections of concurrent requests as soon as more than 5 threads use the client).
  curl_easy_setopt(h, CURLOPT_MAXCONNECTS, 64L);
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, hl);
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, cfg_.connect_timeout_ms);
  curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
  // curl counts the stall in whole seconds: round up, so that a transfer is never abandoned
  // before stall_timeout_ms (1500 ms waits 2 s; 1500 / 1000 waited 1 s).
  curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, std::max(1L, (cfg_.stall_timeout_ms + 999) / 1000));
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, WriteBody);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &resp->body);
  curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, WriteHeader);
  curl_easy_setopt(h, CURLOPT_HEADERDATA, &resp->headers);
  if (!cfg_.ca_bundle.empty()) curl_easy_setopt(h, CURLOPT_CAINFO, cfg_.ca_bundle.c_str());
  if (r.head) {
    curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
  } else if (r.method == "PUT") {
    curl_easy_setopt(h, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(h, CURLOPT_READFUNCTION, ReadBody);
    curl_easy_setopt(h, CURLOPT_READDATA, &src);
    curl_easy_setopt(h, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(r.body.size()));
  } else if (r.method == "POST") {
    curl_easy_setopt(h, CURLOPT_POST, 1L);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, r.body.data());
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(r.body.size()));
  } else if (r.method != "GET") {
    curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, r.method.c_str());
  }
  CURLcode rc = curl_easy_perform(h);
  long connects = 0;
  curl_easy_getinfo(h, CURLINFO_NUM_CONNECTS, &connects);
  n_connections_ += static_cast<uint64_t>(connects);
  ++n_requests_;
  if (rc == CURLE_OK) {
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &resp->status);
  } else {
    *curl_err = errbuf[0] ? errbuf : curl_easy_strerror(rc);
  }
  curl_slist_free_all(hl);
  if (rc == CURLE_OK) Release(h);
  else curl_easy_cleanup(h);  // do not reuse a handle whose connection broke
  return rc;
}

Result<Response> Transport::Execute(const Request& r, const char* what) {
  std::string last;
  Code last_code = Code::kIO;
  bool no_such_bucket = false;  // the last answer was NoSuchBucket
  bool refresh = false;
  for (int attempt = 1; attempt <= std::max(1, cfg_.max_attempts); ++attempt) {
    if (attempt > 1) ++n_retries_;
    if (attempt > 1)
      std::this_thread::sleep_for(std::chrono::milliseconds(BackoffMs(attempt - 1)));
    if (attempt > 1 && r.before_retry) r.before_retry();
    Response resp;
    std::string curl_err;
    auto creds_now = credentials_->ForRequest(refresh);
    if (!creds_now.ok()) return creds_now.status();
    refresh = false;
    CURLcode rc = Once(r, *creds_now, &resp, &curl_err);
    if (rc != CURLE_OK) {
      last_code = Code::kIO;
      // The host contacted (bucket.host in virtual-hosted addressing), not only the endpoint.
      const std::string contacted = scheme_ + "://" + HostFor(r.bucket);
      if (rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_HOST)
        last = "cannot reach S3 endpoint " + contacted + ": " + curl_err;
      else
        last = "connection to " + contacted + " failed: " + curl_err;
      if (rc == CURLE_SSL_CACERT || rc == CURLE_PEER_FAILED_VERIFICATION ||
          rc == CURLE_SSL_CACERT_BADFILE || rc == CURLE_URL_MALFORMAT ||
          rc == CURLE_UNSUPPORTED_PROTOCOL)
        break;  // not transient
      continue;
    }
    if (resp.status >= 200 && resp.status < 300 &&
        !(r.error_in_200 && resp.body.find("<Error>") != std::string::npos)) {
      const std::string wrong = r.check_body ? r.check_body(resp.body) : std::string();
      if (wrong.empty()) return resp;
      last_code = Code::kIO;
      last = "HTTP " + std::to_string(resp.status) + " with an incomplete or malformed answer (" +
             wrong + ", " + std::to_string(resp.body.size()) + " bytes)";
      continue;
    }
    std::string code = xml::FirstText(resp.body, "Code");
    std::string message = xml::FirstText(resp.body, "Message");
    // A skewed clock: S3 says RequestTimeTooSkewed, but a HEAD's answer has no body, and some
    // servers answer a signature from the wrong time with another 403. As the AWS SDKs do, a
    // 403 whose Date is more than 4 minutes from our (corrected) clock counts as skew too.
    // Either way the retry is signed with the server's clock (the offset from its Date).
    if (code == "RequestTimeTooSkewed" || resp.status == 403) {
      auto it = resp.headers.find("date");
      std::tm tm{};
      if (it != resp.headers.end() &&
          strptime(it->second.c_str(), "%a, %d %b %Y %H:%M:%S", &tm) != nullptr) {
        const long long offset = static_cast<long long>(timegm(&tm) - std::time(nullptr));
        if (code == "RequestTimeTooSkewed" || std::llabs(offset - clock_offset_s_.load()) > 240) {
          clock_offset_s_ = offset;
          code = "RequestTimeTooSkewed";
        }
      }
    }
    if (code.empty()) {
      if (resp.status == 404) code = r.key.empty() ? "NoSuchBucket" : "NoSuchKey";
      else if (resp.status == 403) code = "AccessDenied";
      else if (resp.status == 412) code = "PreconditionFailed";
      else if (resp.status == 503) code = "ServiceUnavailable";
    }
    last = "HTTP " + std::to_string(resp.status) + (code.empty() ? "" : " " + code) +
           (message.empty() ? "" : ": " + message);
    // Temporary credentials that expired early: fetch new ones and try again.
    const bool renew = code == "ExpiredToken" &&
                       cfg_.credential_source != Config::CredentialSource::kStatic;
    if (renew) refresh = true;
    const bool retry = resp.status == 500 || resp.status == 502 || resp.status == 503 ||
                       resp.status == 504 || RetryableS3Code(code) || renew;
    if (resp.status == 403 || AuthS3Code(code)) last_code = Code::kAuth;
    else if (code == "NoSuchBucket" || code == "InvalidBucketName") last_code = Code::kInvalidArgument;
    else if (resp.status == 404 || code == "NoSuchKey") last_code = Code::kNotFound;
    else if (resp.status == 412 || code == "PreconditionFailed") last_code = Code::kAlreadyExists;
    else if (resp.status == 416 || code == "InvalidRange") last_code = Code::kCorrupt;
    else last_code = Code::kHttp;
    if (code == "RequestTimeTooSkewed" || code == "ExpiredToken") last_code = Code::kAuth;
    no_such_bucket = code == "NoSuchBucket";
    if (!retry) break;
  }
  std::string msg = std::string("S3 ") + what + " " + Where(r) + ": ";
  if (no_such_bucket) msg += "bucket '" + r.bucket + "' does not exist (";
  msg += last;
  if (no_such_bucket) msg += ")";
  return Status(last_code, ScrubSecrets(msg, credentials_->Current()));
}

Result<std::unique_ptr<Transport>> Transport::Create(Config config) {
  std::call_once(g_curl_init, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  if (config.credential_source == Config::CredentialSource::kStatic &&
      (config.credentials.access_key_id.empty() || config.credentials.secret_access_key.empty()))
    return Status(Code::kAuth, "no S3 credentials (access key id and secret access key)");
  std::unique_ptr<Transport> t(new Transport());
  std::string ep = config.endpoint;
  while (!ep.empty() && ep.back() == '/') ep.pop_back();
  SMD_RETURN_IF_ERROR(ValidateEndpoint(ep));
  size_t sep = ep.find("://");
  t->scheme_ = ep.substr(0, sep);
  t->host_port_ = ep.substr(sep + 3);
  config.endpoint = ep;
  t->cfg_ = std::move(config);
  t->credentials_ = std::make_unique<CredentialProvider>(t->cfg_);
  Status st = t->credentials_->Start();
  if (!st.ok() && t->cfg_.credential_source == Config::CredentialSource::kInstanceMetadata)
    return Status(st.code(),
                  st.message() +
                      " (EC2 instance metadata, tried because neither AWS_ACCESS_KEY_ID/"
                      "AWS_SECRET_ACCESS_KEY nor a profile with keys nor container credentials "
                      "are set; AWS_EC2_METADATA_DISABLED=true skips it)");
  SMD_RETURN_IF_ERROR(st);
  t->share_ = curl_share_init();
  curl_share_setopt(t->share_, CURLSHOPT_LOCKFUNC, &Transport::Lock);
  curl_share_setopt(t->share_, CURLSHOPT_UNLOCKFUNC, &Transport::Unlock);
  curl_share_setopt(t->share_, CURLSHOPT_USERDATA, t.get());
  curl_share_setopt(t->share_, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
  curl_share_setopt(t->share_, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
  return t;
}
}  // namespace smd::s3
