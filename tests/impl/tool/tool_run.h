// Runs the smd command from a C++ test (SMD_TOOL_PATH): exit status, standard output and error,
// a time limit, optionally a file size limit.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "tests/impl/trial/trial_builder.h"

extern char** environ;

namespace smd::trial::testing {

#ifdef SMD_TOOL_PATH

struct ToolRun {
  int rc = -1;         // exit status, or 128 + signal
  std::string out, err;
  bool timed_out = false;
};

// Runs `smd args...` with stdout and stderr to files in `dir`; killed after timeout_s (a hang is
// a failure, not a stuck test). file_size_limit > 0: RLIMIT_FSIZE for the child (a full disk).
inline ToolRun RunTool(const std::string& dir, std::vector<std::string> args, int timeout_s = 60,
                       long file_size_limit = 0) {
  ToolRun r;
  const std::string out_path = dir + "/tool.out", err_path = dir + "/tool.err";
  std::vector<std::string> argv_s = {SMD_TOOL_PATH};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  const pid_t pid = ::fork();
  if (pid == 0) {
    int o = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int e = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (o < 0 || e < 0) ::_exit(126);
    ::dup2(o, 1);
    ::dup2(e, 2);
    if (file_size_limit > 0) {
      ::signal(SIGXFSZ, SIG_IGN);  // a write past the limit fails with EFBIG, as on a full disk
      struct rlimit rl = {static_cast<rlim_t>(file_size_limit), static_cast<rlim_t>(file_size_limit)};
      ::setrlimit(RLIMIT_FSIZE, &rl);
    }
    std::vector<char*> argv;
    for (std::string& a : argv_s) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execve(argv[0], argv.data(), environ);
    ::_exit(127);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  int status = 0;
  for (;;) {
    pid_t w = ::waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      r.timed_out = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = ReadFile(out_path);
  r.err = ReadFile(err_path);
  return r;
}

#endif  // SMD_TOOL_PATH

}  // namespace smd::trial::testing
