#include "impl/storage/open.h"

#include <cctype>
#include <mutex>
#include <utility>

#include "impl/storage/environment.h"

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
    const unsigned char c = static_cast<unsigned char>(uri[i]);
    if (!(std::isalnum(c) || c == '+' || c == '-' || c == '.')) return std::string();
  }
  if (!std::isalpha(static_cast<unsigned char>(uri[0]))) return std::string();
  return uri.substr(0, sep);
}

}  // namespace

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
  (void)options;  // nothing a local folder needs
  if (uri.empty()) return InvalidArgument("empty storage path");
  std::string root;
  const std::string scheme = SchemeOf(uri);
  if (scheme == "s3") {
    return Unsupported("S3 storage is not supported yet: '" + uri + "' (give a local folder)");
  } else if (scheme == "file") {
    root = uri.substr(7);
    if (root.empty()) return InvalidArgument("empty storage path in '" + uri + "'");
  } else if (!scheme.empty()) {
    return InvalidArgument("unsupported storage URI '" + uri + "': give a local folder");
  } else {
    root = ExpandHome(uri);
  }
  std::unique_ptr<Storage> storage = MakeLocalStorage(root);
  std::lock_guard<std::mutex> lock(g_wrap_mu);
  if (Wrapper()) storage = Wrapper()(std::move(storage));
  return storage;
}

void SetStorageWrapperForTesting(StorageWrapper wrap) {
  std::lock_guard<std::mutex> lock(g_wrap_mu);
  Wrapper() = std::move(wrap);
}

}  // namespace smd::io
