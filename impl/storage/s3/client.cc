#include "impl/storage/s3/client.h"

#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <openssl/evp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <random>
#include <thread>

namespace smd::s3 {

// ---------------------------------------------------------------------------------------------
// XML
namespace xml {

std::string Unescape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '&') {
      out.push_back(s[i]);
      continue;
    }
    size_t semi = s.find(';', i);
    if (semi == std::string_view::npos || semi - i > 10) {
      out.push_back('&');
      continue;
    }
    std::string_view ent = s.substr(i + 1, semi - i - 1);
    if (ent == "amp") out.push_back('&');
    else if (ent == "lt") out.push_back('<');
    else if (ent == "gt") out.push_back('>');
    else if (ent == "quot") out.push_back('"');
    else if (ent == "apos") out.push_back('\'');
    else if (ent.size() >= 2 && ent[0] == '#') {
      unsigned long cp = ent[1] == 'x' || ent[1] == 'X'
                             ? std::strtoul(std::string(ent.substr(2)).c_str(), nullptr, 16)
                             : std::strtoul(std::string(ent.substr(1)).c_str(), nullptr, 10);
      // UTF-8 encode.
      if (cp < 0x80) {
        out.push_back(static_cast<char>(cp));
      } else if (cp < 0x800) {
        out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
      } else if (cp < 0x10000) {
        out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
      } else {
        out.push_back(static_cast<char>(0xF0 | ((cp >> 18) & 0x07)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
      }
    } else {
      out.push_back('&');
      continue;
    }
    i = semi;
  }
  return out;
}

std::string Escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: out.push_back(c);
    }
  }
  return out;
}

std::vector<std::string_view> Elements(std::string_view doc, std::string_view tag) {
  std::vector<std::string_view> out;
  const std::string open = "<" + std::string(tag);
  const std::string close = "</" + std::string(tag) + ">";
  size_t pos = 0;
  while ((pos = doc.find(open, pos)) != std::string_view::npos) {
    size_t after = pos + open.size();
    if (after >= doc.size()) break;
    char c = doc[after];
    if (c != '>' && c != ' ' && c != '/' && c != '\t' && c != '\n' && c != '\r') {
      pos = after;  // a longer tag name with the same start
      continue;
    }
    size_t gt = doc.find('>', after);
    if (gt == std::string_view::npos) break;
    if (doc[gt - 1] == '/') {  // <tag/>
      out.push_back(std::string_view());
      pos = gt + 1;
      continue;
    }
    size_t end = doc.find(close, gt + 1);
    if (end == std::string_view::npos) break;
    out.push_back(doc.substr(gt + 1, end - gt - 1));
    pos = end + close.size();
  }
  return out;
}

std::vector<std::string> AllText(std::string_view doc, std::string_view tag) {
  std::vector<std::string> out;
  for (std::string_view e : Elements(doc, tag)) out.push_back(Unescape(e));
  return out;
}

std::string FirstText(std::string_view doc, std::string_view tag) {
  auto e = Elements(doc, tag);
  return e.empty() ? std::string() : Unescape(e[0]);
}

}  // namespace xml

// ---------------------------------------------------------------------------------------------
// Configuration

namespace {

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

std::string Trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return "";
  size_t e = s.find_last_not_of(" \t\r\n");
  return std::string(s.substr(b, e - b + 1));
}

// Reads section `section` of an INI file: key = value pairs; a nested block ("s3 =" followed by
// indented lines) is flattened as "s3.key".
std::map<std::string, std::string> ReadIniSection(const std::string& path,
                                                  const std::string& section) {
  std::map<std::string, std::string> out;
  std::ifstream in(path);
  if (!in) return out;
  bool inside = false;
  std::string nested;
  for (std::string line; std::getline(in, line);) {
    std::string t = Trim(line);
    if (t.empty() || t[0] == '#' || t[0] == ';') continue;
    if (t.front() == '[' && t.back() == ']') {
      inside = Trim(t.substr(1, t.size() - 2)) == section;
      nested.clear();
      continue;
    }
    if (!inside) continue;
    size_t eq = t.find('=');
    if (eq == std::string::npos) continue;
    std::string k = Trim(t.substr(0, eq)), v = Trim(t.substr(eq + 1));
    bool indented = !line.empty() && (line[0] == ' ' || line[0] == '\t');
    if (!indented) nested.clear();
    if (v.empty() && !indented) {
      nested = k;
      continue;
    }
    out[(indented && !nested.empty()) ? nested + "." + k : k] = v;
  }
  return out;
}

std::string HomePath(const char* rel) {
  std::string home = Env("HOME");
  return home.empty() ? std::string() : home + "/" + rel;
}

}  // namespace

Result<Config> ConfigFromEnvironment() { return ConfigFromEnvironment("", nullptr); }

Result<Config> ConfigFromEnvironment(const std::string& given_profile, const Credentials* given) {
  Config c;
  std::string profile = given_profile.empty() ? Env("AWS_PROFILE") : given_profile;
  if (profile.empty()) profile = "default";
  std::string cred_file = Env("AWS_SHARED_CREDENTIALS_FILE");
  if (cred_file.empty()) cred_file = HomePath(".aws/credentials");
  std::string conf_file = Env("AWS_CONFIG_FILE");
  if (conf_file.empty()) conf_file = HomePath(".aws/config");
  auto creds_ini = ReadIniSection(cred_file, profile);
  auto conf_ini = ReadIniSection(conf_file, "profile " + profile);
  if (conf_ini.empty() && profile == "default") conf_ini = ReadIniSection(conf_file, "default");
  auto prof = [&](const std::string& key) {
    auto it = creds_ini.find(key);
    if (it != creds_ini.end()) return it->second;
    it = conf_ini.find(key);
    return it != conf_ini.end() ? it->second : std::string();
  };

  if (given != nullptr) {
    c.credentials = *given;
  } else if (given_profile.empty() &&
             (!Env("AWS_ACCESS_KEY_ID").empty() || !Env("AWS_SECRET_ACCESS_KEY").empty())) {
    // A profile named by the caller wins over the environment's keys (as `aws --profile`).
    c.credentials.access_key_id = Env("AWS_ACCESS_KEY_ID");
    c.credentials.secret_access_key = Env("AWS_SECRET_ACCESS_KEY");
    c.credentials.session_token = Env("AWS_SESSION_TOKEN");
    if (c.credentials.access_key_id.empty() || c.credentials.secret_access_key.empty())
      return Status(Code::kAuth,
                    "S3 credentials: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must both be set");
  } else {
    c.credentials.access_key_id = prof("aws_access_key_id");
    c.credentials.secret_access_key = prof("aws_secret_access_key");
    c.credentials.session_token = prof("aws_session_token");
    const std::string rel = Env("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI");
    const std::string full = Env("AWS_CONTAINER_CREDENTIALS_FULL_URI");
    const bool profile_keys =
        !c.credentials.access_key_id.empty() && !c.credentials.secret_access_key.empty();
    if (!profile_keys && (!rel.empty() || !full.empty())) {
      c.credentials = {};
      c.credential_source = Config::CredentialSource::kContainer;
      c.credentials_url = !rel.empty() ? "http://169.254.170.2" + rel : full;
      std::string token_file = Env("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE");
      if (!token_file.empty()) {
        std::ifstream in(token_file);
        std::getline(in, c.credentials_auth_token);
        c.credentials_auth_token = Trim(c.credentials_auth_token);
      } else {
        c.credentials_auth_token = Env("AWS_CONTAINER_AUTHORIZATION_TOKEN");
      }
    } else if (!profile_keys && Env("AWS_EC2_METADATA_DISABLED") != "true") {
      c.credentials = {};
      c.credential_source = Config::CredentialSource::kInstanceMetadata;
      c.credentials_url = Env("AWS_EC2_METADATA_SERVICE_ENDPOINT");
      if (c.credentials_url.empty()) c.credentials_url = "http://169.254.169.254";
      while (!c.credentials_url.empty() && c.credentials_url.back() == '/')
        c.credentials_url.pop_back();
    } else if (!profile_keys) {
      return Status(Code::kAuth,
                    "no S3 credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or give "
                    "profile '" + profile + "' aws_access_key_id and aws_secret_access_key in " +
                        cred_file + " or " + conf_file +
                        " (AWS_EC2_METADATA_DISABLED=true turns off the instance metadata)");
    }
  }

  c.region = Env("AWS_REGION");
  if (c.region.empty()) c.region = Env("AWS_DEFAULT_REGION");
  if (c.region.empty()) c.region = prof("region");
  if (c.region.empty()) c.region = "us-east-1";

  c.endpoint = Env("AWS_ENDPOINT_URL_S3");
  if (c.endpoint.empty()) c.endpoint = Env("AWS_ENDPOINT_URL");
  if (c.endpoint.empty()) c.endpoint = prof("s3.endpoint_url");
  if (c.endpoint.empty()) c.endpoint = prof("endpoint_url");
  const bool aws = c.endpoint.empty();
  if (aws) c.endpoint = "https://s3." + c.region + ".amazonaws.com";
  while (!c.endpoint.empty() && c.endpoint.back() == '/') c.endpoint.pop_back();
  SMD_RETURN_IF_ERROR(ValidateEndpoint(c.endpoint));

  std::string style = prof("s3.addressing_style");
  if (style.empty()) style = prof("addressing_style");
  if (style == "path") c.path_style = true;
  else if (style == "virtual") c.path_style = false;
  else c.path_style = !aws;

  c.ca_bundle = Env("AWS_CA_BUNDLE");
  if (c.ca_bundle.empty()) c.ca_bundle = prof("ca_bundle");

  // Attempts per request, as the AWS CLI and SDKs read them (the first try included).
  std::string attempts = Env("AWS_MAX_ATTEMPTS");
  if (attempts.empty()) attempts = prof("max_attempts");
  if (!attempts.empty()) {
    char* end = nullptr;
    long n = std::strtol(attempts.c_str(), &end, 10);
    if (end == attempts.c_str() || *end != '\0' || n < 1 || n > 100)
      return InvalidArgument("S3 max_attempts '" + attempts +
                             "' (AWS_MAX_ATTEMPTS or the profile) must be a number from 1 to 100");
    c.max_attempts = static_cast<int>(n);
  }
  return c;
}

std::string RedactEndpoint(std::string_view endpoint) {
  const size_t sep = endpoint.find("://");
  const size_t host = sep == std::string_view::npos ? 0 : sep + 3;
  // Everything up to the last '@' after the scheme (a password may hold '/' or '?' too).
  const size_t at = endpoint.rfind('@');
  if (at == std::string_view::npos || at < host) return std::string(endpoint);
  return std::string(endpoint.substr(0, host)) + "***" + std::string(endpoint.substr(at));
}

Status ValidateEndpoint(std::string_view endpoint) {
  const std::string shown = RedactEndpoint(endpoint);
  const size_t sep = endpoint.find("://");
  if (sep == std::string_view::npos ||
      (endpoint.substr(0, sep) != "http" && endpoint.substr(0, sep) != "https"))
    return InvalidArgument("S3 endpoint '" + shown +
                           "' must be http://host[:port] or https://host[:port]");
  std::string_view rest = endpoint.substr(sep + 3);
  while (!rest.empty() && rest.back() == '/') rest.remove_suffix(1);
  if (shown != endpoint || rest.find('@') != std::string_view::npos)
    return InvalidArgument("S3 endpoint '" + shown +
                           "' must not hold a user name or password (user:password@host): give "
                           "credentials through AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, a "
                           "profile or the credential options");
  if (rest.empty() || rest.find_first_of("/?#") != std::string_view::npos ||
      rest.find_first_of(" \t\r\n") != std::string_view::npos)
    return InvalidArgument("S3 endpoint '" + shown + "' must have a host and no path");
  return Status::Ok();
}

Status ValidateBucketName(std::string_view b) {
  auto bad = [&](const char* why) {
    return InvalidArgument("bad S3 bucket name '" + std::string(b) + "': " + why);
  };
  if (b.size() < 3 || b.size() > 63) return bad("must be 3 to 63 characters long");
  for (char c : b)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-'))
      return bad("only lower-case letters, digits, '.' and '-' are allowed");
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (!alnum(b.front()) || !alnum(b.back())) return bad("must start and end with a letter or digit");
  if (b.find("..") != std::string_view::npos) return bad("must not contain '..'");
  return Status::Ok();
}

// ---------------------------------------------------------------------------------------------
// Transport

namespace {

std::once_flag g_curl_init;

struct Response {
  long status = 0;
  std::string body;
  std::map<std::string, std::string> headers;  // lower-case names
};

size_t WriteBody(char* ptr, size_t size, size_t n, void* user) {
  static_cast<std::string*>(user)->append(ptr, size * n);
  return size * n;
}

size_t WriteHeader(char* ptr, size_t size, size_t n, void* user) {
  auto* h = static_cast<std::map<std::string, std::string>*>(user);
  std::string_view line(ptr, size * n);
  size_t colon = line.find(':');
  if (colon != std::string_view::npos) {
    std::string name(line.substr(0, colon));
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    (*h)[name] = Trim(line.substr(colon + 1));
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

char LowerAscii(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

// Position of `needle` in `hay` at or after `from`, ASCII letters compared without case.
size_t FindNoCase(const std::string& hay, const std::string& needle, size_t from) {
  if (needle.empty() || hay.size() < needle.size()) return std::string::npos;
  for (size_t i = from; i + needle.size() <= hay.size(); ++i) {
    size_t k = 0;
    while (k < needle.size() && LowerAscii(hay[i + k]) == LowerAscii(needle[k])) ++k;
    if (k == needle.size()) return i;
  }
  return std::string::npos;
}

bool RetryableS3Code(const std::string& code) {
  return code == "SlowDown" || code == "InternalError" || code == "ServiceUnavailable" ||
         code == "RequestTimeout" || code == "RequestTimeTooSkewed" || code == "Throttling" ||
         code == "ThrottlingException";
}

bool AuthS3Code(const std::string& code) {
  return code == "SignatureDoesNotMatch" || code == "InvalidAccessKeyId" ||
         code == "AccessDenied" || code == "ExpiredToken" || code == "InvalidToken" ||
         code == "TokenRefreshRequired" || code == "AuthorizationHeaderMalformed" ||
         code == "XAdminUserNotFound";  // versitygw's answer (404) to an unknown access key id
}

}  // namespace

namespace {
// "" when `body` is one whole <root>...</root> document, else what is wrong.
std::string WholeDocument(std::string_view body, std::string_view root) {
  const std::string open = "<" + std::string(root);
  const std::string close = "</" + std::string(root) + ">";
  size_t end = body.find_last_not_of(" \t\r\n");
  if (body.find(open) == std::string_view::npos) return "no <" + std::string(root) + ">";
  if (end == std::string_view::npos || end + 1 < close.size() ||
      body.substr(end + 1 - close.size(), close.size()) != close)
    return "it does not end with " + close;
  return "";
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

struct Client::Impl {
  Config cfg;
  std::string scheme;     // "http" / "https"
  std::string host_port;  // "127.0.0.1:7070"
  CURLSH* share = nullptr;
  std::mutex share_locks[CURL_LOCK_DATA_LAST];
  std::atomic<uint64_t> n_requests{0}, n_connections{0}, n_retries{0};
  // Current credentials (replaced by refreshes of temporary ones) and when they expire.
  mutable std::mutex creds_mu;
  std::mutex refresh_mu;  // one credential refresh at a time
  Credentials creds;
  std::time_t creds_expire = 0;  // 0: never
  // Seconds to add to our clock, learnt from a server that answered RequestTimeTooSkewed.
  std::atomic<long long> clock_offset_s{0};
  std::mutex rng_mu;
  std::mt19937_64 rng{std::random_device{}()};

  // Easy handles kept for reuse (each keeps its own connection cache too).
  std::mutex pool_mu;
  std::vector<CURL*> pool;

  ~Impl() {
    for (CURL* h : pool) curl_easy_cleanup(h);
    if (share) curl_share_cleanup(share);
  }

  static void Lock(CURL*, curl_lock_data data, curl_lock_access, void* user) {
    static_cast<Impl*>(user)->share_locks[data].lock();
  }
  static void Unlock(CURL*, curl_lock_data data, void* user) {
    static_cast<Impl*>(user)->share_locks[data].unlock();
  }

  CURL* Acquire() {
    {
      std::lock_guard<std::mutex> l(pool_mu);
      if (!pool.empty()) {
        CURL* h = pool.back();
        pool.pop_back();
        curl_easy_reset(h);
        return h;
      }
    }
    return curl_easy_init();
  }
  void Release(CURL* h) {
    std::lock_guard<std::mutex> l(pool_mu);
    if (pool.size() < 16) pool.push_back(h);
    else curl_easy_cleanup(h);
  }

  std::string Where(const Request& r) const {
    return "s3://" + r.bucket + (r.key.empty() ? "" : "/" + r.key);
  }

  // Never lets the secret or the token into a message.
  std::string Scrub(std::string s) const { return ScrubSecrets(std::move(s), Current()); }

  Credentials Current() const {
    std::lock_guard<std::mutex> l(creds_mu);
    return creds;
  }

  // A plain (unsigned) HTTP exchange with the credential services; one attempt, short timeouts.
  Status Fetch(const std::string& method, const std::string& url,
               const std::vector<std::string>& headers, std::string* body) {
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
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, WriteBody);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, body);
    if (method == "PUT") {
      curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, "PUT");
    }
    CURLcode rc = curl_easy_perform(h);
    long status = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
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
  Status Refresh() {
    std::string body, url = cfg.credentials_url;
    if (cfg.credential_source == Config::CredentialSource::kContainer) {
      std::vector<std::string> h;
      if (!cfg.credentials_auth_token.empty())
        h.push_back("Authorization: " + cfg.credentials_auth_token);
      SMD_RETURN_IF_ERROR(Fetch("GET", url, h, &body));
    } else {
      std::string token;
      SMD_RETURN_IF_ERROR(Fetch("PUT", url + "/latest/api/token",
                                {"X-aws-ec2-metadata-token-ttl-seconds: 21600"}, &token));
      const std::string th = "X-aws-ec2-metadata-token: " + token;
      std::string role;
      url += "/latest/meta-data/iam/security-credentials/";
      SMD_RETURN_IF_ERROR(Fetch("GET", url, {th}, &role));
      role = Trim(role.substr(0, role.find('\n')));
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
    std::lock_guard<std::mutex> l(creds_mu);
    creds = std::move(c);
    creds_expire = expire;
    return Status::Ok();
  }

  // Credentials for a request: refreshed first when they expire within 5 minutes. One thread
  // refreshes at a time (the others then find fresh credentials). An early refresh that fails
  // while the credentials in hand are still valid is not an error: they are used (as the AWS SDKs
  // do), and the next request tries again.
  Result<Credentials> ForRequest(bool force_refresh) {
    if (cfg.credential_source != Config::CredentialSource::kStatic) {
      auto state = [&](bool* stale, bool* usable) {
        std::lock_guard<std::mutex> l(creds_mu);
        const std::time_t now = std::time(nullptr);
        *usable = !creds.access_key_id.empty() && (creds_expire == 0 || now < creds_expire);
        *stale = creds.access_key_id.empty() || (creds_expire != 0 && now + 300 >= creds_expire);
      };
      bool stale, usable;
      state(&stale, &usable);
      if (stale || force_refresh) {
        std::lock_guard<std::mutex> one(refresh_mu);
        if (!force_refresh) state(&stale, &usable);  // another thread may have refreshed
        if (stale || force_refresh) {
          Status st = Refresh();
          if (!st.ok() && (force_refresh || !usable)) return st;
        }
      }
    }
    return Current();
  }

  int BackoffMs(int attempt) {
    long long cap = std::min<long long>(cfg.backoff_cap_ms,
                                        static_cast<long long>(cfg.backoff_base_ms) << std::min(attempt - 1, 20));
    std::lock_guard<std::mutex> l(rng_mu);
    return static_cast<int>(std::uniform_int_distribution<long long>(0, std::max(0LL, cap))(rng));
  }

  // One attempt. Returns the curl result; fills resp.
  CURLcode Once(const Request& r, const Credentials& creds_now, Response* resp,
               std::string* curl_err) {
    std::string host = host_port, path;
    if (cfg.path_style) {
      path = "/" + r.bucket + (r.key.empty() ? "" : "/" + r.key);
    } else {
      host = r.bucket + "." + host_port;
      path = "/" + r.key;
    }
    SignRequest sr;
    sr.method = r.method;
    sr.path = path;
    sr.query = r.query;
    sr.headers = r.headers;
    sr.headers.emplace_back("Host", host);
    sr.payload_hash = Sha256Hex(r.body);
    SignOptions so;
    so.region = cfg.region;
    so.amz_date = AmzDate(std::time(nullptr) + static_cast<std::time_t>(clock_offset_s.load()));
    Signature sig = Sign(sr, creds_now, so);

    std::string url = scheme + "://" + host + UriEncode(path, true);
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
    curl_easy_setopt(h, CURLOPT_SHARE, share);
    // The shared cache keeps this many idle connections (curl's default, 5, would close the
    // connections of concurrent requests as soon as more than 5 threads use the client).
    curl_easy_setopt(h, CURLOPT_MAXCONNECTS, 64L);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hl);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, cfg.connect_timeout_ms);
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, std::max(1L, cfg.stall_timeout_ms / 1000));
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, WriteBody);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &resp->body);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, WriteHeader);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, &resp->headers);
    if (!cfg.ca_bundle.empty()) curl_easy_setopt(h, CURLOPT_CAINFO, cfg.ca_bundle.c_str());
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
    n_connections += static_cast<uint64_t>(connects);
    ++n_requests;
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

  // Runs a request with retries; a 2xx response is returned, anything else becomes a Status.
  Result<Response> Execute(const Request& r, const char* what) {
    std::string last;
    Code last_code = Code::kIO;
    bool refresh = false;
    for (int attempt = 1; attempt <= std::max(1, cfg.max_attempts); ++attempt) {
      if (attempt > 1) ++n_retries;
      if (attempt > 1)
        std::this_thread::sleep_for(std::chrono::milliseconds(BackoffMs(attempt - 1)));
      if (attempt > 1 && r.before_retry) r.before_retry();
      Response resp;
      std::string curl_err;
      auto creds_now = ForRequest(refresh);
      if (!creds_now.ok()) return creds_now.status();
      refresh = false;
      CURLcode rc = Once(r, *creds_now, &resp, &curl_err);
      if (rc != CURLE_OK) {
        last_code = Code::kIO;
        if (rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_HOST)
          last = "cannot reach S3 endpoint " + cfg.endpoint + ": " + curl_err;
        else
          last = "connection to " + cfg.endpoint + " failed: " + curl_err;
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
          if (code == "RequestTimeTooSkewed" || std::llabs(offset - clock_offset_s.load()) > 240) {
            clock_offset_s = offset;
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
                         cfg.credential_source != Config::CredentialSource::kStatic;
      if (renew) refresh = true;
      const bool retry = resp.status == 500 || resp.status == 502 || resp.status == 503 ||
                         resp.status == 504 || RetryableS3Code(code) || renew;
      if (resp.status == 403 || AuthS3Code(code)) last_code = Code::kAuth;
      else if (code == "NoSuchBucket") last_code = Code::kInvalidArgument;
      else if (resp.status == 404 || code == "NoSuchKey") last_code = Code::kNotFound;
      else if (resp.status == 412 || code == "PreconditionFailed") last_code = Code::kAlreadyExists;
      else if (resp.status == 416 || code == "InvalidRange") last_code = Code::kCorrupt;
      else last_code = Code::kHttp;
      if (code == "RequestTimeTooSkewed" || code == "ExpiredToken") last_code = Code::kAuth;
      if (!retry) break;
    }
    std::string msg = std::string("S3 ") + what + " " + Where(r) + ": ";
    if (last_code == Code::kInvalidArgument) msg += "bucket '" + r.bucket + "' does not exist (";
    msg += last;
    if (last_code == Code::kInvalidArgument) msg += ")";
    return Status(last_code, Scrub(msg));
  }

  Status PutSingle(const std::string& bucket, const std::string& key, std::string_view body,
                   const PutOptions& opts) {
    Request r{"PUT", bucket, key, {}, {}, body};
    if (opts.if_none_match) r.headers.emplace_back("If-None-Match", "*");
    if (!opts.content_type.empty()) r.headers.emplace_back("Content-Type", opts.content_type);
    auto res = Execute(r, "PUT");
    return res.ok() ? Status::Ok() : res.status();
  }

  // Whether `key` now holds the object a multipart upload of these parts made: same size, and the
  // ETag S3 gives a multipart object, MD5 of the parts' binary MD5s then "-<number of parts>".
  bool CompletedAlready(const std::string& bucket, const std::string& key, uint64_t size,
                        const std::vector<std::string>& etags) {
    Request r{"HEAD", bucket, key, {}, {}, {}};
    r.head = true;
    Result<Response> head = Execute(r, "HEAD");
    if (!head.ok()) return false;
    auto it = head->headers.find("content-length");
    if (it == head->headers.end() || std::strtoull(it->second.c_str(), nullptr, 10) != size)
      return false;
    it = head->headers.find("etag");
    return it != head->headers.end() && Unquote(it->second) == MultipartEtag(etags);
  }

  static std::string Unquote(std::string s) {
    if (s.size() >= 2 && s.front() == '"' && s.back() == '"') s = s.substr(1, s.size() - 2);
    return s;
  }

  static std::string MultipartEtag(const std::vector<std::string>& etags) {
    std::string raw;
    for (const std::string& e : etags) {
      const std::string hex = Unquote(e);
      if (hex.size() != 32) return "";
      for (size_t i = 0; i < 32; i += 2)
        raw.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
    }
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    EVP_Digest(raw.data(), raw.size(), md, &n, EVP_md5(), nullptr);
    return HexEncode(std::string_view(reinterpret_cast<const char*>(md), n)) + "-" +
           std::to_string(etags.size());
  }

  // Aborts every upload in progress of exactly `key`; errors are ignored (best effort).
  void AbortUploadsOf(const std::string& bucket, const std::string& key) {
    Result<std::vector<UploadInfo>> ups = ListUploads(bucket, key);
    if (!ups.ok()) return;
    for (const UploadInfo& u : *ups)
      if (u.key == key) (void)AbortUpload(bucket, key, u.upload_id);
  }

  Status AbortUpload(const std::string& bucket, const std::string& key, const std::string& id) {
    Request abort{"DELETE", bucket, key, {{"uploadId", id}}, {}, {}};
    auto res = Execute(abort, "AbortMultipartUpload");
    if (!res.ok() && (res.status().code() == Code::kNotFound ||
                      res.status().message().find("NoSuchUpload") != std::string::npos))
      return Status::Ok();
    return res.ok() ? Status::Ok() : res.status();
  }

  Result<std::vector<UploadInfo>> ListUploads(const std::string& bucket, const std::string& prefix) {
    std::vector<UploadInfo> out;
    std::string key_marker, id_marker;
    for (int page = 0;; ++page) {
      Request r{"GET", bucket, "", {{"uploads", ""}}, {}, {}};
      if (!prefix.empty()) r.query.emplace_back("prefix", prefix);
      if (!key_marker.empty()) r.query.emplace_back("key-marker", key_marker);
      if (!id_marker.empty()) r.query.emplace_back("upload-id-marker", id_marker);
      r.check_body = [](const std::string& b) {
        return WholeDocument(b, "ListMultipartUploadsResult");
      };
      SMD_ASSIGN_OR_RETURN(Response res, Execute(r, "ListMultipartUploads"));
      for (std::string_view u : xml::Elements(res.body, "Upload")) {
        UploadInfo info;
        info.key = xml::FirstText(u, "Key");
        info.upload_id = xml::FirstText(u, "UploadId");
        info.initiated = xml::FirstText(u, "Initiated");
        if (!info.key.empty() && !info.upload_id.empty()) out.push_back(std::move(info));
      }
      if (xml::FirstText(res.body, "IsTruncated") != "true") break;
      std::string nk = xml::FirstText(res.body, "NextKeyMarker");
      std::string ni = xml::FirstText(res.body, "NextUploadIdMarker");
      if ((nk.empty() && ni.empty()) || (nk == key_marker && ni == id_marker) || page > 100000)
        return Status(Code::kHttp, "S3 ListMultipartUploads s3://" + bucket + "/" + prefix +
                                       ": truncated page without a new marker");
      key_marker = std::move(nk);
      id_marker = std::move(ni);
    }
    return out;
  }

  Status Multipart(const std::string& bucket, const std::string& key, std::string_view body) {
    Request create{"POST", bucket, key, {{"uploads", ""}}, {}, {}};
    create.check_body = [](const std::string& b) {
      return xml::FirstText(b, "UploadId").empty() ? std::string("no UploadId") : std::string();
    };
    // An attempt whose answer was lost (a reset, a 500 after the server applied it) may have
    // created an upload whose id we never learnt: abort the key's uploads before trying again,
    // so that none is left behind with its parts.
    create.before_retry = [&] { AbortUploadsOf(bucket, key); };
    SMD_ASSIGN_OR_RETURN(Response cr, Execute(create, "CreateMultipartUpload"));
    const std::string upload_id = xml::FirstText(cr.body, "UploadId");
    if (upload_id.empty())
      return Status(Code::kHttp, "S3 CreateMultipartUpload s3://" + bucket + "/" + key +
                                     ": no UploadId in the response");
    const uint64_t part = std::max<uint64_t>(cfg.part_size, 1);
    const size_t nparts = std::max<size_t>(1, (body.size() + part - 1) / part);
    std::vector<std::string> etags(nparts);
    std::vector<Status> errors(nparts);
    std::atomic<size_t> next{0};
    std::atomic<bool> failed{false};
    auto worker = [&] {
      for (size_t i; (i = next.fetch_add(1)) < nparts && !failed.load();) {
        std::string_view piece = body.substr(i * part, part);
        Request up{"PUT", bucket, key,
                   {{"partNumber", std::to_string(i + 1)}, {"uploadId", upload_id}}, {}, piece};
        auto res = Execute(up, "UploadPart");
        if (!res.ok()) {
          errors[i] = res.status();
          failed = true;
          continue;
        }
        auto it = res->headers.find("etag");
        etags[i] = it != res->headers.end() ? it->second : "";
      }
    };
    const int nthreads =
        static_cast<int>(std::min<size_t>(nparts, std::max(1, cfg.max_parallel_parts)));
    std::vector<std::thread> threads;
    for (int t = 1; t < nthreads; ++t) threads.emplace_back(worker);
    worker();
    for (auto& t : threads) t.join();
    Status st;
    for (const Status& e : errors)
      if (!e.ok()) {
        st = e;
        break;
      }
    if (st.ok()) {
      std::string xml_body = "<CompleteMultipartUpload>";
      for (size_t i = 0; i < nparts; ++i)
        xml_body += "<Part><PartNumber>" + std::to_string(i + 1) + "</PartNumber><ETag>" +
                    xml::Escape(etags[i]) + "</ETag></Part>";
      xml_body += "</CompleteMultipartUpload>";
      Request complete{"POST", bucket, key, {{"uploadId", upload_id}},
                       {{"Content-Type", "application/xml"}}, xml_body};
      complete.error_in_200 = true;  // a 200 whose body is an <Error> is retried too
      auto res = Execute(complete, "CompleteMultipartUpload");
      if (!res.ok()) st = res.status();
      if (!st.ok() && st.message().find("NoSuchUpload") != std::string::npos &&
          CompletedAlready(bucket, key, body.size(), etags)) {
        // An earlier attempt completed the upload and its answer was lost: the retry finds the
        // upload gone. The object there now is ours (its size and multipart ETag say so).
        return Status::Ok();
      }
      if (st.ok()) return st;
    }
    (void)AbortUpload(bucket, key, upload_id);
    return st;
  }
};

Result<std::vector<UploadInfo>> Client::ListUploads(const std::string& bucket,
                                                    const std::string& prefix) {
  SMD_RETURN_IF_ERROR(ValidateBucketName(bucket));
  return impl_->ListUploads(bucket, prefix);
}

Status Client::AbortUpload(const std::string& bucket, const std::string& key,
                           const std::string& upload_id) {
  SMD_RETURN_IF_ERROR(ValidateBucketName(bucket));
  return impl_->AbortUpload(bucket, key, upload_id);
}

Result<std::unique_ptr<Client>> Client::Create(Config config) {
  std::call_once(g_curl_init, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  if (config.credential_source == Config::CredentialSource::kStatic &&
      (config.credentials.access_key_id.empty() || config.credentials.secret_access_key.empty()))
    return Status(Code::kAuth, "no S3 credentials (access key id and secret access key)");
  auto impl = std::make_unique<Impl>();
  std::string ep = config.endpoint;
  while (!ep.empty() && ep.back() == '/') ep.pop_back();
  SMD_RETURN_IF_ERROR(ValidateEndpoint(ep));
  size_t sep = ep.find("://");
  impl->scheme = ep.substr(0, sep);
  impl->host_port = ep.substr(sep + 3);
  config.endpoint = ep;
  impl->creds = config.credentials;
  impl->cfg = std::move(config);
  if (impl->cfg.credential_source != Config::CredentialSource::kStatic) {
    Status st = impl->Refresh();
    if (!st.ok() && impl->cfg.credential_source == Config::CredentialSource::kInstanceMetadata)
      return Status(st.code(),
                    st.message() +
                        " (EC2 instance metadata, tried because neither AWS_ACCESS_KEY_ID/"
                        "AWS_SECRET_ACCESS_KEY nor a profile with keys nor container credentials "
                        "are set; AWS_EC2_METADATA_DISABLED=true skips it)");
    SMD_RETURN_IF_ERROR(st);
  }
  impl->share = curl_share_init();
  curl_share_setopt(impl->share, CURLSHOPT_LOCKFUNC, &Impl::Lock);
  curl_share_setopt(impl->share, CURLSHOPT_UNLOCKFUNC, &Impl::Unlock);
  curl_share_setopt(impl->share, CURLSHOPT_USERDATA, impl.get());
  curl_share_setopt(impl->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
  curl_share_setopt(impl->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
  return std::unique_ptr<Client>(new Client(std::move(impl)));
}

Client::Client(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Client::~Client() = default;
const Config& Client::config() const { return impl_->cfg; }

Client::Stats Client::stats() const {
  Stats s;
  s.requests = impl_->n_requests.load();
  s.connections = impl_->n_connections.load();
  s.retries = impl_->n_retries.load();
  return s;
}

Status Client::Put(const std::string& bucket, const std::string& key, std::string_view body,
                   const PutOptions& opts) {
  SMD_RETURN_IF_ERROR(ValidateBucketName(bucket));
  if (body.size() >= impl_->cfg.multipart_threshold && !opts.if_none_match)
    return impl_->Multipart(bucket, key, body);
  return impl_->PutSingle(bucket, key, body, opts);
}

Status Client::PutMultipart(const std::string& bucket, const std::string& key,
                            std::string_view body) {
  SMD_RETURN_IF_ERROR(ValidateBucketName(bucket));
  return impl_->Multipart(bucket, key, body);
}

Result<std::string> Client::Get(const std::string& bucket, const std::string& key) {
  SMD_RETURN_IF_ERROR(ValidateBucketName(bucket));
  SMD_ASSIGN_OR_RETURN(Response r, impl_->Execute(Request{"GET", bucket, key, {}, {}, {}}, "GET"));
  return std::move(r.body);
}

Status Client::GetRange(const std::string& bucket, const std::string& key, uint64_t offset,
                        uint64_t len, char* out) {
  SMD_RETURN_IF_ERROR(ValidateBucketName(bucket));
  if (len == 0) {
    SMD_ASSIGN_OR_RETURN(ObjectInfo info, Head(bucket, key));
    if (info.size < offset)
      return Corrupt("S3 object s3://" + bucket + "/" + key + " has " +
                     std::to_string(info.size) + " bytes, fewer than offset " +
                     std::to_string(offset));
    return Status::Ok();
  }
  Request r{"GET", bucket, key, {}, {}, {}};
  r.headers.emplace_back("Range", "bytes=" + std::to_string(offset) + "-" +
                                      std::to_string(offset + len - 1));
  auto res = impl_->Execute(r, "GET (range)");
  if (!res.ok()) {
    if (res.status().code() == Code::kCorrupt)
      return Corrupt("S3 object s3://" + bucket + "/" + key + " is shorter than " +
                     std::to_string(offset + len) + " bytes (range " + std::to_string(offset) +
                     "+" + std::to_string(len) + ")");
    return res.status();
  }
  if (res->status != 206 && res->status != 200)
    return Status(Code::kHttp, "S3 GET (range) s3://" + bucket + "/" + key + ": HTTP " +
                                   std::to_string(res->status));
  std::string_view body = res->body;
  if (res->status == 200) body = body.substr(std::min<size_t>(offset, body.size()));
  if (body.size() < len)
    return Corrupt("S3 object s3://" + bucket + "/" + key + " is shorter than " +
                   std::to_string(offset + len) + " bytes (range " + std::to_string(offset) +
                   "+" + std::to_string(len) + " returned " + std::to_string(body.size()) + ")");
  std::memcpy(out, body.data(), len);
  return Status::Ok();
}

Result<ObjectInfo> Client::Head(const std::string& bucket, const std::string& key) {
  SMD_RETURN_IF_ERROR(ValidateBucketName(bucket));
  Request r{"HEAD", bucket, key, {}, {}, {}};
  r.head = true;
  Result<Response> head = impl_->Execute(r, "HEAD");
  if (!head.ok() && head.status().code() == Code::kHttp) {
    // A HEAD answer has no body, so no S3 error code: a 400 may be an invalid session token, a
    // bad request... A one-key listing of the same key tells which (its error has a body).
    ListOptions lo;
    lo.prefix = key;
    lo.max_keys = 1;
    Result<ListPage> probe = ListPageV2(bucket, lo);
    if (!probe.ok() && probe.status().code() != Code::kHttp) return probe.status();
  }
  SMD_ASSIGN_OR_RETURN(Response res, std::move(head));
  ObjectInfo info;
  info.key = key;
  auto it = res.headers.find("content-length");
  if (it != res.headers.end()) info.size = std::strtoull(it->second.c_str(), nullptr, 10);
  it = res.headers.find("etag");
  if (it != res.headers.end()) info.etag = it->second;
  return info;
}

Status Client::Delete(const std::string& bucket, const std::string& key) {
  SMD_RETURN_IF_ERROR(ValidateBucketName(bucket));
  auto res = impl_->Execute(Request{"DELETE", bucket, key, {}, {}, {}}, "DELETE");
  if (!res.ok() && res.status().code() == Code::kNotFound) return Status::Ok();
  return res.ok() ? Status::Ok() : res.status();
}

Result<ListPage> Client::ListPageV2(const std::string& bucket, const ListOptions& opts,
                                    const std::string& continuation_token) {
  SMD_RETURN_IF_ERROR(ValidateBucketName(bucket));
  Request r{"GET", bucket, "", {{"list-type", "2"}}, {}, {}};
  if (!opts.prefix.empty()) r.query.emplace_back("prefix", opts.prefix);
  if (!opts.delimiter.empty()) r.query.emplace_back("delimiter", opts.delimiter);
  if (!opts.start_after.empty()) r.query.emplace_back("start-after", opts.start_after);
  if (!continuation_token.empty()) r.query.emplace_back("continuation-token", continuation_token);
  const int max_keys = opts.max_keys > 0 ? opts.max_keys : impl_->cfg.list_max_keys;
  r.query.emplace_back("max-keys", std::to_string(max_keys > 0 ? max_keys : 1000));
  r.check_body = [](const std::string& b) {
    std::string wrong = WholeDocument(b, "ListBucketResult");
    if (!wrong.empty()) return wrong;
    // KeyCount (when the server gives it) counts the keys and common prefixes of the page (some
    // servers count the keys only).
    const std::string count = xml::FirstText(b, "KeyCount");
    if (!count.empty()) {
      const size_t keys = xml::Elements(b, "Contents").size();
      const size_t all = keys + xml::Elements(b, "CommonPrefixes").size();
      const unsigned long long said = std::strtoull(count.c_str(), nullptr, 10);
      if (said != all && said != keys)
        return "KeyCount " + count + " but " + std::to_string(all) + " entries";
    }
    return std::string();
  };
  SMD_ASSIGN_OR_RETURN(Response res, impl_->Execute(r, "ListObjectsV2"));
  ListPage page;
  for (std::string_view c : xml::Elements(res.body, "Contents")) {
    ObjectInfo o;
    o.key = xml::FirstText(c, "Key");
    o.size = std::strtoull(xml::FirstText(c, "Size").c_str(), nullptr, 10);
    o.etag = xml::FirstText(c, "ETag");
    page.objects.push_back(std::move(o));
  }
  for (std::string_view c : xml::Elements(res.body, "CommonPrefixes"))
    page.common_prefixes.push_back(xml::FirstText(c, "Prefix"));
  page.truncated = xml::FirstText(res.body, "IsTruncated") == "true";
  page.next_continuation_token = xml::FirstText(res.body, "NextContinuationToken");
  if (page.truncated && page.next_continuation_token.empty())
    return Status(Code::kHttp, "S3 ListObjectsV2 s3://" + bucket + "/" + opts.prefix +
                                   ": truncated page without NextContinuationToken");
  return page;
}

Result<ListPage> Client::List(const std::string& bucket, const ListOptions& opts) {
  ListPage all;
  std::string token;
  for (;;) {
    SMD_ASSIGN_OR_RETURN(ListPage p, ListPageV2(bucket, opts, token));
    for (auto& o : p.objects) all.objects.push_back(std::move(o));
    for (auto& c : p.common_prefixes) all.common_prefixes.push_back(std::move(c));
    if (!p.truncated) break;
    token = p.next_continuation_token;
  }
  return all;
}

}  // namespace smd::s3
