// S3 multipart uploads over the client's transport: parts uploaded in parallel, completed, and
// aborted on failure (no upload left behind with its parts, even when an answer was lost); and
// the listing and aborting of uploads in progress. Internal to impl/storage/s3 (client.cc).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "impl/core/status.h"
#include "impl/storage/s3/client.h"
#include "impl/storage/s3/transport.h"

namespace smd::s3 {

// Uploads `body` to `key` in parts of config().part_size, config().max_parallel_parts at a time.
Status PutMultipart(Transport& t, const std::string& bucket, const std::string& key,
                    std::string_view body);
// The same with the parts given (each at least 5 MiB for AWS, but the last), in order.
Status PutMultipartParts(Transport& t, const std::string& bucket, const std::string& key,
                         const std::vector<std::string_view>& parts);
// The uploads in progress whose keys start with `prefix`, every page.
Result<std::vector<UploadInfo>> ListUploads(Transport& t, const std::string& bucket,
                                            const std::string& prefix);
// Aborts one upload; one already gone (NoSuchUpload) is not an error.
Status AbortUpload(Transport& t, const std::string& bucket, const std::string& key,
                   const std::string& id);

}  // namespace smd::s3
