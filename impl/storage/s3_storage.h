// io::Storage over an S3 prefix (s3://bucket/prefix), on impl/storage/s3/client.h.
//
// A file is an object "<prefix>/<rel>". Create() buffers in memory and uploads on Commit (one PUT,
// or a multipart upload at and above the client's threshold), so nothing is visible before
// Commit. CreateExclusive uses a conditional PUT (If-None-Match: *); on a server that does not
// implement it (501 NotImplemented) it falls back to HEAD then PUT, which is NOT atomic.
// A "folder" exists when at least one object has its path as a prefix.
#pragma once

#include <memory>
#include <string>

#include "impl/core/status.h"
#include "impl/storage/s3/client.h"
#include "impl/storage/storage.h"

namespace smd::io {

struct S3Uri {
  std::string bucket;
  std::string prefix;  // no leading or trailing '/', runs of '/' collapsed; never empty
};

// Parses "s3://bucket/prefix[/...]". Errors: kInvalidArgument naming the URI for "s3://",
// "s3://bucket" (a trial needs a prefix), a bad bucket name, or another scheme.
Result<S3Uri> ParseS3Uri(const std::string& uri);

// An S3 storage with the configuration of the environment (s3::ConfigFromEnvironment).
Result<std::unique_ptr<Storage>> MakeS3Storage(const std::string& uri);
// The same over a given client (tests, or callers with their own configuration).
Result<std::unique_ptr<Storage>> MakeS3Storage(const std::string& uri,
                                               std::shared_ptr<s3::Client> client);

}  // namespace smd::io
