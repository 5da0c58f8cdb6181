// smd uploads s3://bucket/prefix [--abort]: the S3 multipart uploads in progress under a trial's
// prefix (a writer killed during an upload leaves one, whose parts S3 keeps and bills until it is
// aborted), and, with --abort, aborts them. Made from the public C API only.
#include <cstdio>
#include <cstring>
#include <string>

#include "capi_util.h"
#include "commands.h"
#include "smd/smd.h"

namespace smdtool {

void HelpUploads() {
  std::printf(
      "usage: smd uploads s3://bucket/prefix [--abort]\n"
      "\n"
      "Lists the S3 multipart uploads in progress (created, neither completed nor aborted)\n"
      "under the trial prefix, one per line: key, upload id, initiation time (tab-separated).\n"
      "A writer killed while it uploaded a large event file leaves one; S3 keeps its parts,\n"
      "and bills them, until it is aborted. smd's writer aborts its own failed uploads; a\n"
      "lifecycle rule (AbortIncompleteMultipartUpload, docs/s3.md) cleans up after any writer.\n"
      "\n"
      "  --abort   abort each upload listed (its parts are deleted); the lines then list those\n"
      "            aborted. Do not abort while a writer of this prefix is still running.\n"
      "\n"
      "S3 settings come from the AWS chain (AWS_ENDPOINT_URL_S3, AWS_PROFILE, AWS_REGION, ...).\n"
      "exit status: 0 ok (also when there is nothing to list); 1 S3 refused or failed (a failed\n"
      "abort: the others were still tried); 2 bad usage.\n");
}

int RunUploads(int argc, char** argv) {
  std::string uri;
  bool abort_them = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      HelpUploads();
      return kExitOk;
    } else if (a == "--abort") {
      abort_them = true;
    } else if (a.size() > 1 && a[0] == '-') {
      std::fprintf(stderr, "smd uploads: unknown option '%s' (see smd uploads --help)\n", a.c_str());
      return kExitUsage;
    } else if (uri.empty()) {
      uri = a;
    } else {
      std::fprintf(stderr, "smd uploads: more than one URI given ('%s' and '%s')\n", uri.c_str(),
                   a.c_str());
      return kExitUsage;
    }
  }
  if (uri.rfind("s3://", 0) != 0) {
    std::fprintf(stderr, "smd uploads: an s3://bucket/prefix URI is required (see smd uploads --help)\n");
    return kExitUsage;
  }
  StrArray lines;
  Err err(smd_s3_uploads_in_progress(uri.c_str(), nullptr, abort_them, &lines.a));
  if (err) {
    std::fprintf(stderr, "smd uploads: %s: %s\n", uri.c_str(), err.message().c_str());
    return err.code() == SMD_E_INVALID_ARGUMENT ? kExitUsage : kExitTrialError;
  }
  for (const std::string& l : lines.vec()) std::printf("%s\n", l.c_str());
  std::fprintf(stderr, "smd uploads: %zu upload(s) in progress under %s%s\n", lines.a.count,
               uri.c_str(), abort_them ? ", aborted" : "");
  if (std::fflush(stdout) != 0) return kExitOutput;
  return kExitOk;
}

}  // namespace smdtool
