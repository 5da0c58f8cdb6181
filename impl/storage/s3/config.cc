#include "impl/storage/s3/config.h"

#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>

#include "impl/core/environment.h"
#include "impl/core/text.h"

namespace smd::s3 {

namespace {

std::string Env(const char* name) { return env::Variable(name); }

std::string Trim(std::string_view s) { return std::string(StripAscii(s)); }

// Reads section `section` of an INI file: key = value pairs; a nested block ("s3 =" followed by
// indented lines) is flattened as "s3.key".
// *found (when not null) tells whether the section is there at all (it may be empty).
std::map<std::string, std::string> ReadIniSection(const std::string& path,
                                                  const std::string& section,
                                                  bool* found = nullptr) {
  std::map<std::string, std::string> out;
  if (found != nullptr) *found = false;
  std::ifstream in(path);
  if (!in) return out;
  bool inside = false;
  std::string nested;
  for (std::string line; std::getline(in, line);) {
    std::string t = Trim(line);
    if (t.empty() || t[0] == '#' || t[0] == ';') continue;
    if (t.front() == '[' && t.back() == ']') {
      inside = Trim(t.substr(1, t.size() - 2)) == section;
      if (inside && found != nullptr) *found = true;
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
  std::optional<std::string> home = env::HomeDir();
  return home ? *home + "/" + rel : std::string();
}

}  // namespace

Result<Config> ConfigFromEnvironment() { return ConfigFromEnvironment("", nullptr); }

Result<Config> ConfigFromEnvironment(const std::string& given_profile, const Credentials* given) {
  Config c;
  std::string profile = given_profile.empty() ? Env("AWS_PROFILE") : given_profile;
  // A profile named by the caller or AWS_PROFILE must exist: a missing one never leaves the
  // credentials to the container or the instance metadata (another identity).
  const char* const named_by =
      !given_profile.empty() ? "the profile option" : (profile.empty() ? nullptr : "AWS_PROFILE");
  if (profile.empty()) profile = "default";
  std::string cred_file = Env("AWS_SHARED_CREDENTIALS_FILE");
  if (cred_file.empty()) cred_file = HomePath(".aws/credentials");
  std::string conf_file = Env("AWS_CONFIG_FILE");
  if (conf_file.empty()) conf_file = HomePath(".aws/config");
  bool in_creds = false, in_conf = false;
  auto creds_ini = ReadIniSection(cred_file, profile, &in_creds);
  auto conf_ini = ReadIniSection(conf_file, "profile " + profile, &in_conf);
  if (!in_conf && profile == "default") conf_ini = ReadIniSection(conf_file, "default", &in_conf);
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
    const std::string where = cred_file + " or " + conf_file;
    if (!profile_keys) {
      // A profile whose credentials come from a source smd does not implement would otherwise
      // fall through to the container or the instance role: another identity, silently.
      std::string unsupported;
      for (const char* key : {"web_identity_token_file", "credential_process", "sso_session",
                              "sso_start_url", "sso_account_id", "sso_role_name", "role_arn",
                              "source_profile", "credential_source"})
        if (!prof(key).empty()) {
          unsupported = key;
          break;
        }
      if (!unsupported.empty()) {
        const char* what = unsupported == "credential_process" ? "credential_process"
                           : unsupported == "web_identity_token_file"
                               ? "web identity (web_identity_token_file, STS "
                                 "AssumeRoleWithWebIdentity)"
                           : unsupported.rfind("sso_", 0) == 0
                               ? "SSO (sso_*)"
                               : "STS AssumeRole (role_arn/source_profile/credential_source)";
        return Status(Code::kAuth,
                      "S3 credentials: profile '" + profile + "' (" + where + ") gets them from " +
                          what + ", a credential source smd does not support; give the profile "
                          "aws_access_key_id and aws_secret_access_key, or set AWS_ACCESS_KEY_ID "
                          "and AWS_SECRET_ACCESS_KEY (for instance from `aws configure "
                          "export-credentials --profile " + profile + " --format env`)");
      }
      if (!c.credentials.access_key_id.empty() || !c.credentials.secret_access_key.empty())
        return Status(Code::kAuth,
                      "S3 credentials: profile '" + profile + "' (" + where + ") has " +
                          (c.credentials.access_key_id.empty() ? "aws_secret_access_key but no "
                                                                 "aws_access_key_id"
                                                               : "aws_access_key_id but no "
                                                                 "aws_secret_access_key"));
      if (named_by != nullptr && !in_creds && !in_conf)
        return Status(Code::kAuth,
                      "S3 credentials: profile '" + profile + "' (named by " + named_by +
                          ") is in neither " + where + "; set AWS_ACCESS_KEY_ID and "
                          "AWS_SECRET_ACCESS_KEY or name a profile that exists");
      // A profile that exists with no credentials of any kind (a region, say) leaves them to the
      // container or the instance, as the AWS SDKs do.
    }
    if (!profile_keys && (!rel.empty() || !full.empty())) {
      c.credentials = {};
      c.credential_source = Config::CredentialSource::kContainer;
      c.credentials_url = !rel.empty() ? "http://169.254.170.2" + rel : full;
      // The token file is read at every fetch (EKS Pod Identity rotates it).
      c.credentials_auth_token_file = Env("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE");
      if (c.credentials_auth_token_file.empty())
        c.credentials_auth_token = Env("AWS_CONTAINER_AUTHORIZATION_TOKEN");
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
  c.virtual_style_explicit = style == "virtual";
  if (style == "path") c.path_style = true;
  else if (style == "virtual") c.path_style = false;
  else c.path_style = !aws;  // virtual-hosted on AWS (but see Config::path_style on '.')

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

bool IsDnsCompatibleBucketName(std::string_view b) {
  if (b.size() < 3 || b.size() > 63) return false;
  for (char c : b)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-')) return false;
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  return alnum(b.front()) && alnum(b.back()) && b.find("..") == std::string_view::npos;
}

Status ValidateBucketName(std::string_view b) {
  if (IsDnsCompatibleBucketName(b)) return Status::Ok();
  // The legacy rules of us-east-1 (buckets made before March 2018), which S3 still serves.
  auto bad = [&](const char* why) {
    return InvalidArgument("bad S3 bucket name '" + std::string(b) + "': " + why);
  };
  if (b.size() < 3 || b.size() > 255) return bad("must be 3 to 63 characters long (255 for a legacy name)");
  for (char c : b)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
          c == '-' || c == '_'))
      return bad("only letters, digits, '.', '-' and '_' are allowed");
  const char c = b.front();
  if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')))
    return bad("must start with a letter or digit");
  return Status::Ok();
}

}  // namespace smd::s3
