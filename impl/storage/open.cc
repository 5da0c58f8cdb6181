#include "impl/storage/open.h"

#include <mutex>
#include <utility>

#include "impl/core/environment.h"
#include "impl/core/text.h"
#include "impl/storage/s3/client.h"
#include "impl/storage/s3_storage.h"

namespace smd::io {
namespace {

std::mutex g_wrap_mu;
StorageWrapper& Wrapper() {
  static StorageWrapper* w = new StorageWrapper();  // never destroyed: safe at exit
  return *w;
}

// The scheme of "scheme://...", or "" for a path.
std::string SchemeOf(const std::string& uri) {
  size_t sep = uri.find("://");
  if (sep == std::string::npos || sep == 0) return std::string();
  for (size_t i = 0; i < sep; ++i) {
    const char c = uri[i];
    if (!(IsAsciiAlnum(c) || c == '+' || c == '-' || c == '.')) return std::string();
  }
  if (!IsAsciiAlpha(uri[0])) return std::string();
  return uri.substr(0, sep);
}

// The S3 client configuration: the AWS chain, then what `o` sets.
Result<s3::Config> S3ConfigFor(const std::string& uri, const StorageOptions& o) {
  if (o.s3_access_key_id.empty() != o.s3_secret_access_key.empty()) {
    return InvalidArgument("S3 options for '" + uri +
                           "': give both the access key id and the secret access key, or neither");
  }
  if (!o.s3_session_token.empty() && o.s3_access_key_id.empty()) {
    return InvalidArgument("S3 options for '" + uri +
                           "': a session token needs the access key id and secret access key");
  }
  if (!o.s3_addressing_style.empty() && o.s3_addressing_style != "path" &&
      o.s3_addressing_style != "virtual") {
    return InvalidArgument("S3 options for '" + uri + "': addressing style '" +
                           o.s3_addressing_style + "' is neither 'path' nor 'virtual'");
  }
  s3::Credentials given;
  given.access_key_id = o.s3_access_key_id;
  given.secret_access_key = o.s3_secret_access_key;
  given.session_token = o.s3_session_token;
  Result<s3::Config> chain =
      s3::ConfigFromEnvironment(o.s3_profile, given.access_key_id.empty() ? nullptr : &given);
  if (!chain.ok()) return chain.status().WithContext("opening '" + uri + "'");
  s3::Config c = std::move(chain).value();
  if (!o.s3_region.empty()) {
    // A region given here also moves the default AWS endpoint to that region.
    if (c.endpoint == "https://s3." + c.region + ".amazonaws.com" && o.s3_endpoint.empty())
      c.endpoint = "https://s3." + o.s3_region + ".amazonaws.com";
    c.region = o.s3_region;
  }
  if (!o.s3_endpoint.empty()) {
    std::string e = o.s3_endpoint;
    while (!e.empty() && e.back() == '/') e.pop_back();
    if (e.rfind("http://", 0) != 0 && e.rfind("https://", 0) != 0) {
      return InvalidArgument("S3 options for '" + uri + "': endpoint '" +
                             s3::RedactEndpoint(o.s3_endpoint) +
                             "' must start with http:// or https://");
    }
    Status valid = s3::ValidateEndpoint(e);
    if (!valid.ok()) return valid.WithContext("S3 options for '" + uri + "'");
    c.endpoint = e;
    if (o.s3_addressing_style.empty()) c.path_style = true;  // not AWS: path style
  }
  if (o.s3_addressing_style == "path") c.path_style = true;
  if (o.s3_addressing_style == "virtual") c.path_style = false;
  if (!o.s3_addressing_style.empty()) c.virtual_style_explicit = o.s3_addressing_style == "virtual";
  if (!o.s3_ca_bundle.empty()) c.ca_bundle = o.s3_ca_bundle;
  if (o.s3_max_attempts < 0 || o.s3_backoff_base_ms < 0 || o.s3_stall_timeout_ms < 0)
    return InvalidArgument("S3 options for '" + uri +
                           "': attempts, backoff and stall timeout must not be negative");
  if (o.s3_max_attempts > 0) c.max_attempts = o.s3_max_attempts;
  if (o.s3_backoff_base_ms > 0) c.backoff_base_ms = o.s3_backoff_base_ms;
  if (o.s3_stall_timeout_ms > 0) c.stall_timeout_ms = o.s3_stall_timeout_ms;
  return c;
}

Result<std::unique_ptr<Storage>> OpenS3(const std::string& uri, const StorageOptions& o) {
  SMD_RETURN_IF_ERROR(ParseS3Uri(uri).status());  // URI errors before configuration ones
  SMD_ASSIGN_OR_RETURN(s3::Config cfg, S3ConfigFor(uri, o));
  Result<std::unique_ptr<s3::Client>> client = s3::Client::Create(std::move(cfg));
  if (!client.ok()) return client.status().WithContext("opening '" + uri + "'");
  return MakeS3Storage(uri, std::shared_ptr<s3::Client>(std::move(client).value()));
}

}  // namespace

Result<std::vector<S3Upload>> S3UploadsInProgress(const std::string& uri,
                                                  const StorageOptions& options, bool abort) {
  SMD_ASSIGN_OR_RETURN(S3Uri u, ParseS3Uri(uri));
  SMD_ASSIGN_OR_RETURN(s3::Config cfg, S3ConfigFor(uri, options));
  Result<std::unique_ptr<s3::Client>> client = s3::Client::Create(std::move(cfg));
  if (!client.ok()) return client.status().WithContext("opening '" + uri + "'");
  SMD_ASSIGN_OR_RETURN(std::vector<s3::UploadInfo> ups,
                       (*client)->ListUploads(u.bucket, u.prefix + "/"));
  std::vector<S3Upload> out;
  Status first;
  for (s3::UploadInfo& up : ups) {
    if (abort) {
      Status st = (*client)->AbortUpload(u.bucket, up.key, up.upload_id);
      if (!st.ok()) {
        if (first.ok()) first = st;
        continue;
      }
    }
    out.push_back(S3Upload{std::move(up.key), std::move(up.upload_id), std::move(up.initiated)});
  }
  if (!first.ok()) return first;
  return out;
}

std::string ExpandHome(const std::string& path) {
  if (path.empty() || path[0] != '~' || (path.size() > 1 && path[1] != '/')) return path;
  std::optional<std::string> home = env::HomeDir();
  if (!home) return path;
  return *home + path.substr(1);
}

std::pair<std::string, std::string> SplitFilePath(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return {".", path};
  if (slash == 0) return {"/", path.substr(1)};
  return {path.substr(0, slash), path.substr(slash + 1)};
}

Result<std::unique_ptr<Storage>> OpenStorage(const std::string& uri, const StorageOptions& options) {
  if (uri.empty()) return InvalidArgument("empty storage path");
  std::string root;
  const std::string scheme = SchemeOf(uri);
  std::unique_ptr<Storage> storage;
  if (scheme == "s3") {
    SMD_ASSIGN_OR_RETURN(storage, OpenS3(uri, options));
  } else if (scheme == "file") {
    root = uri.substr(7);
    if (root.empty()) return InvalidArgument("empty storage path in '" + uri + "'");
  } else if (!scheme.empty()) {
    return InvalidArgument("unsupported storage URI '" + uri +
                           "': give a local folder or s3://bucket/prefix");
  } else {
    root = ExpandHome(uri);
  }
  if (!storage) storage = MakeLocalStorage(root);
  std::lock_guard<std::mutex> lock(g_wrap_mu);
  if (Wrapper()) storage = Wrapper()(std::move(storage));
  return storage;
}

void SetStorageWrapperForTesting(StorageWrapper wrap) {
  std::lock_guard<std::mutex> lock(g_wrap_mu);
  Wrapper() = std::move(wrap);
}

}  // namespace smd::io
