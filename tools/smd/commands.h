// Subcommands of the smd tool. Each takes the arguments after its name and returns an exit code.
#pragma once

namespace smdtool {

// Exit codes shared by every subcommand.
enum ExitCode {
  kExitOk = 0,
  kExitTrialError = 1,        // the trial could not be read (the message says why)
  kExitUsage = 2,             // bad command line
  kExitNoCollections = 3,     // MissingCollectionFiles: no (or too few) collection files
  kExitOutput = 4,            // the output could not be written
  kExitPartial = 5,           // output written, but some data could not be read (see stderr)
  kExitConditionMet = 6,      // smd rules: a rule's condition was met (IssuesFound)
  kExitNotFound = 7,          // the tensor, step, worker or reduction asked for is not in the trial
  kExitTimedOut = 8,          // smd rules --follow --timeout: no new step came in time
  kExitInterrupted = 130,     // interrupted (SIGINT/SIGTERM) before the end
};

struct Command {
  const char* name;
  const char* summary;
  int (*run)(int argc, char** argv);  // argv[0] is the subcommand name
  void (*help)();
};

int RunDump(int argc, char** argv);
void HelpDump();
int RunRules(int argc, char** argv);
void HelpRules();

int RunExportTensorBoard(int argc, char** argv);
void HelpExportTensorBoard();

int RunLs(int argc, char** argv);
void HelpLs();
int RunCat(int argc, char** argv);
void HelpCat();

int RunUploads(int argc, char** argv);
void HelpUploads();

}  // namespace smdtool
