// Opening a storage: the one place that decides what a root may be (a local folder, "~" for the
// home folder; s3:// later) and refuses the rest.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "impl/core/status.h"
#include "impl/storage/storage.h"

namespace smd::io {

// How to reach the storage. Local folders need nothing; an S3 backend will take its endpoint,
// region and credentials from here.
struct StorageOptions {
  std::string s3_endpoint;  // empty: the default for the region
  std::string s3_region;    // empty: the SDK's default chain
};

// Opens the storage at `uri`: a local path ("~" and "~/..." are the home folder, "file://" is
// dropped), created lazily by writers. Errors: kInvalidArgument for an empty path or a scheme
// smd does not know, naming the URI; kUnsupported for s3:// (not built into this version).
Result<std::unique_ptr<Storage>> OpenStorage(const std::string& uri,
                                             const StorageOptions& options = StorageOptions());

// "~" and "~/..." with $HOME (as Python's os.path.expanduser); other paths unchanged. The one
// place that expands "~".
std::string ExpandHome(const std::string& path);

// The local folder and file name of a file path ("a/b/c.txt" -> "a/b", "c.txt"; "c.txt" -> ".",
// "c.txt"), for files outside a trial opened through a storage of their folder.
std::pair<std::string, std::string> SplitFilePath(const std::string& path);

// Tests only: every storage OpenStorage opens from now on is passed through `wrap` (to record
// what goes through the seam); an empty function stops that. Not thread-safe against concurrent
// OpenStorage calls.
using StorageWrapper = std::function<std::unique_ptr<Storage>(std::unique_ptr<Storage>)>;
void SetStorageWrapperForTesting(StorageWrapper wrap);

}  // namespace smd::io
