// smd: command-line access to smdebug trials, built on the public C API of libsmd.
#include <algorithm>
#include <cstdio>
#include <cstring>

#include "commands.h"
#include "smd/smd.h"

namespace smdtool {
namespace {

const Command kCommands[] = {
    {"dump", "print the canonical JSON view of a trial (smd-dump/1)", RunDump, HelpDump},
    {"ls", "summarize a trial: workers, modes, steps, tensors, collections", RunLs, HelpLs},
    {"cat", "print one value of a tensor, or write it as a .npy file", RunCat, HelpCat},
    {"rules", "run built-in rules over a trial (or watch a running job)", RunRules, HelpRules},
    {"export-tensorboard", "write TensorBoard logs (scalars, histograms) of a trial",
     RunExportTensorBoard, HelpExportTensorBoard},
    {"uploads", "list (or abort) the S3 multipart uploads left in progress under a trial",
     RunUploads, HelpUploads},
};

void Usage(FILE* out) {
  std::fprintf(out,
               "usage: smd <command> [options]\n"
               "\n"
               "Reads SageMaker Debugger (smdebug) trials.\n"
               "\n"
               "commands:\n");
  int width = 0;  // the longest command name sets the column of the summaries
  for (const Command& c : kCommands) width = std::max(width, static_cast<int>(std::strlen(c.name)));
  for (const Command& c : kCommands) std::fprintf(out, "  %-*s  %s\n", width, c.name, c.summary);
  std::fprintf(out,
               "\n"
               "smd <command> --help shows a command's options. smd --version prints the version.\n"
               "\n"
               "exit status: 0 ok; 1 the trial could not be read; 2 bad usage; 3 the trial has no\n"
               "collections file (MissingCollectionFiles); 4 the output could not be written;\n"
               "5 output written but some data could not be read (details on stderr);\n"
               "6 smd rules: a rule found an issue (IssuesFound); 7 the tensor, step, worker or\n"
               "reduction asked for is not in the trial; 8 smd rules --follow --timeout: no new\n"
               "step came in time; 130 interrupted (SIGINT, SIGTERM).\n");
}

}  // namespace
}  // namespace smdtool

int main(int argc, char** argv) {
  using namespace smdtool;
  if (argc < 2) {
    std::fprintf(stderr, "smd: no command given\n\n");
    Usage(stderr);
    return kExitUsage;
  }
  const char* cmd = argv[1];
  if (std::strcmp(cmd, "--help") == 0 || std::strcmp(cmd, "-h") == 0 || std::strcmp(cmd, "help") == 0) {
    if (argc >= 3) {
      for (const Command& c : kCommands) {
        if (std::strcmp(argv[2], c.name) == 0) {
          c.help();
          return kExitOk;
        }
      }
      std::fprintf(stderr, "smd: no help for '%s': not a command\n\n", argv[2]);
      Usage(stderr);
      return kExitUsage;
    }
    Usage(stdout);
    return kExitOk;
  }
  if (std::strcmp(cmd, "--version") == 0) {
    if (argc > 2) {
      std::fprintf(stderr, "smd: --version takes no arguments (got '%s')\n", argv[2]);
      return kExitUsage;
    }
    std::printf("smd %s\n", smd_version_string());
    return kExitOk;
  }
  for (const Command& c : kCommands) {
    if (std::strcmp(cmd, c.name) == 0) return c.run(argc - 1, argv + 1);
  }
  std::fprintf(stderr, "smd: unknown command '%s'\n\n", cmd);
  Usage(stderr);
  return kExitUsage;
}
