#include "impl/storage/s3/credentials.h"

#include <cjson/cJSON.h>
#include <curl/curl.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <thread>

#include "impl/core/text.h"
#include "impl/storage/s3/xml.h"

namespace smd::s3 {
namespace {

// Position of `needle` in `hay` at or after `from`, ASCII letters compared without case.
size_t FindNoCase(const std::string& hay, const std::string& needle, size_t from) {
  if (needle.empty() || hay.size() < needle.size()) return std::string::npos;
  for (size_t i = from; i + needle.size() <= hay.size(); ++i) {
    size_t k = 0;
    while (k < needle.size() && AsciiLower(hay[i + k]) == AsciiLower(needle[k])) ++k;
    if (k == needle.size()) return i;
  }
  return std::string::npos;
}

size_t AppendBody(char* ptr, size_t size, size_t n, void* user) {
  static_cast<std::string*>(user)->append(ptr, size * n);
  return size * n;
}

}  // namespace

std::string ScrubSecrets(std::string s, const Credentials& c) {
  // The secrets as sent, percent-encoded (with and without '/' kept, as a URL or a form would
  // carry them), XML-escaped (as an error body would), each found in any letter case (a server
  // may upper-case what it echoes, and percent-escapes come in either case).
  std::vector<std::string> forms;
  for (const std::string* secret : {&c.secret_access_key, &c.session_token}) {
    if (secret->empty()) continue;
    std::string plus = UriEncode(*secret, false);  // a form-encoded space is '+'
    for (size_t p = 0; (p = plus.find("%20", p)) != std::string::npos;) plus.replace(p, 3, "+");
    for (std::string f : {*secret, UriEncode(*secret, false), UriEncode(*secret, true),
                          xml::Escape(*secret), plus})
      forms.push_back(std::move(f));
  }
  if (forms.empty()) return s;
  std::sort(forms.begin(), forms.end(),
            [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
  // One pass over the text, every form tried at each position (longest first), going on after
  // each mask: a secret of '*' is not found again inside a mask.
  std::string out;
  out.reserve(s.size());
  for (size_t p = 0; p < s.size();) {
    size_t matched = 0;
    for (const std::string& f : forms) {
      if (p + f.size() <= s.size() && FindNoCase(s.substr(p, f.size()), f, 0) == 0) {
        matched = f.size();
        break;
      }
    }
    if (matched > 0) {
      out += "***";
      p += matched;
    } else {
      out.push_back(s[p++]);
    }
  }
  return out;
}

CredentialProvider::CredentialProvider(const Config& config)
    : source_(config), creds_(config.credentials) {}

Status CredentialProvider::Start() {
  if (source_.credential_source == Config::CredentialSource::kStatic) return Status::Ok();
  return Refresh();
}

Credentials CredentialProvider::Current() const {
  std::lock_guard<std::mutex> l(mu_);
  return creds_;
}

// A plain (unsigned) HTTP exchange with the credential services, short timeouts. A service that
// answers that it is busy (HTTP 429, 5xx: the instance metadata service throttles) is asked up to
// twice more; one that cannot be reached is not (off EC2 there is none, and each try costs the
// connection timeout), as the AWS SDKs' default.
Status CredentialProvider::Fetch(const std::string& method, const std::string& url,
             const std::vector<std::string>& headers, std::string* body) {
  Status st;
  for (int attempt = 0; attempt < 3; ++attempt) {
    if (attempt > 0) std::this_thread::sleep_for(std::chrono::milliseconds(100 << attempt));
    long status = 0;
    st = FetchOnce(method, url, headers, body, &status);
    if (st.ok() || !(status == 429 || status >= 500)) return st;
  }
  return st;
}

Status CredentialProvider::FetchOnce(const std::string& method, const std::string& url,
                                     const std::vector<std::string>& headers, std::string* body,
                                     long* status_out) {
  CURL* h = curl_easy_init();
  curl_slist* hl = nullptr;
  for (const auto& x : headers) hl = curl_slist_append(hl, x.c_str());
  char errbuf[CURL_ERROR_SIZE] = {0};
  body->clear();
  curl_easy_setopt(h, CURLOPT_URL, url.c_str());
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, hl);
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, 1000L);
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 5000L);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, AppendBody);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, body);
  if (method == "PUT") {
    curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, "PUT");
  }
  CURLcode rc = curl_easy_perform(h);
  long status = 0;
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
  *status_out = status;
  curl_slist_free_all(hl);
  curl_easy_cleanup(h);
  if (rc != CURLE_OK)
    return Status(Code::kAuth, "no S3 credentials: cannot reach " + url + ": " +
                                   (errbuf[0] ? errbuf : curl_easy_strerror(rc)));
  if (status != 200)
    return Status(Code::kAuth, "no S3 credentials: " + url + " answered HTTP " +
                                   std::to_string(status));
  return Status::Ok();
}

// Fetches temporary credentials from the configured source.
Status CredentialProvider::Refresh() {
  std::string body, url = source_.credentials_url;
  if (source_.credential_source == Config::CredentialSource::kContainer) {
    std::vector<std::string> h;
    std::string token = source_.credentials_auth_token;
    if (!source_.credentials_auth_token_file.empty()) {
      // Read at every fetch: the file is rotated while the job runs (EKS Pod Identity).
      std::ifstream in(source_.credentials_auth_token_file);
      if (!in)
        return Status(Code::kAuth, "no S3 credentials: cannot read the container authorization "
                                   "token file " + source_.credentials_auth_token_file +
                                   " (AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE)");
      std::getline(in, token);
      token = std::string(StripAscii(token));
    }
    if (!token.empty()) h.push_back("Authorization: " + token);
    SMD_RETURN_IF_ERROR(Fetch("GET", url, h, &body));
  } else {
    std::string token;
    SMD_RETURN_IF_ERROR(Fetch("PUT", url + "/latest/api/token",
                              {"X-aws-ec2-metadata-token-ttl-seconds: 21600"}, &token));
    const std::string th = "X-aws-ec2-metadata-token: " + token;
    std::string role;
    url += "/latest/meta-data/iam/security-credentials/";
    SMD_RETURN_IF_ERROR(Fetch("GET", url, {th}, &role));
    role = std::string(StripAscii(role.substr(0, role.find('\n'))));
    if (role.empty()) return Status(Code::kAuth, "no S3 credentials: no IAM role at " + url);
    url += role;
    SMD_RETURN_IF_ERROR(Fetch("GET", url, {th}, &body));
  }
  cJSON* j = cJSON_Parse(body.c_str());
  auto str = [&](const char* k) {
    const cJSON* v = cJSON_GetObjectItemCaseSensitive(j, k);
    return cJSON_IsString(v) ? std::string(v->valuestring) : std::string();
  };
  Credentials c{str("AccessKeyId"), str("SecretAccessKey"), str("Token")};
  std::string exp = str("Expiration");
  cJSON_Delete(j);
  if (c.access_key_id.empty() || c.secret_access_key.empty())
    return Status(Code::kAuth, "no S3 credentials: " + url +
                                   " gave no AccessKeyId/SecretAccessKey");
  std::time_t expire = 0;
  std::tm tm{};
  if (!exp.empty() && strptime(exp.c_str(), "%Y-%m-%dT%H:%M:%S", &tm) != nullptr)
    expire = timegm(&tm);
  std::lock_guard<std::mutex> l(mu_);
  creds_ = std::move(c);
  expire_ = expire;
  ++generation_;
  return Status::Ok();
}

Result<Credentials> CredentialProvider::ForRequest(bool force_refresh) {
  if (source_.credential_source == Config::CredentialSource::kStatic) return Current();
  struct State {
    bool stale, usable;
    uint64_t generation;
    std::time_t next_early;
  };
  auto state = [&] {
    std::lock_guard<std::mutex> l(mu_);
    const std::time_t now = std::time(nullptr);
    State s;
    s.usable = !creds_.access_key_id.empty() && (expire_ == 0 || now < expire_);
    s.stale = creds_.access_key_id.empty() || (expire_ != 0 && now + kEarlyRefreshS >= expire_);
    s.generation = generation_;
    s.next_early = next_early_;
    return s;
  };
  State s = state();
  if (!force_refresh && !s.stale) return Current();
  if (!force_refresh && s.usable) {
    // Early refresh: by whoever gets the lock first; nobody waits for it.
    if (std::time(nullptr) < s.next_early) return Current();
    std::unique_lock<std::mutex> one(refresh_mu_, std::try_to_lock);
    if (!one.owns_lock()) return Current();
    s = state();  // another thread may have refreshed, or failed to, meanwhile
    if (s.stale && s.usable && std::time(nullptr) >= s.next_early) {
      if (!Refresh().ok()) {
        std::lock_guard<std::mutex> l(mu_);
        next_early_ = std::time(nullptr) + kEarlyRetryAfterFailureS;
      }
    }
    if (s.stale && !s.usable) {  // expired meanwhile: refresh now (we hold the lock)
      Status st = Refresh();
      if (!st.ok() && !state().usable) return st;
    }
    return Current();
  }
  // Expired (or none), or S3 said ExpiredToken: wait for a refresh.
  std::lock_guard<std::mutex> one(refresh_mu_);
  const State now = state();
  if (now.generation != s.generation) {
    // Another thread refreshed while this one waited: its credentials are newer than the ones
    // S3 refused (forced) or found expired.
    if (now.usable) return Current();
  } else if (!force_refresh && !now.stale) {
    return Current();
  }
  Status st = Refresh();
  if (!st.ok()) return st;
  return Current();
}

}  // namespace smd::s3
