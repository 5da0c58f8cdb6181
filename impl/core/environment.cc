#include "impl/core/environment.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include "impl/core/text.h"

namespace smd::env {
namespace {

// A variable's value, or nullptr when it is unset or empty.
const char* Get(const char* name) {
  const char* v = std::getenv(name);
  return (v != nullptr && *v != '\0') ? v : nullptr;
}

// (rank variable, size variable) pairs, in the order they are consulted.
const char* const kLauncherVars[][2] = {
    {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},  // OpenMPI (mpirun)
    {"RANK", "WORLD_SIZE"},                            // torch.distributed (torchrun)
    {"HOROVOD_RANK", "HOROVOD_SIZE"},                  // Horovod (horovodrun)
    {"PMI_RANK", "PMI_SIZE"},                          // MPICH / Intel MPI
};

}  // namespace

std::string Variable(const char* name) {
  const char* v = Get(name);
  return v != nullptr ? std::string(v) : std::string();
}

std::optional<std::string> HomeDir() {
  const char* home = Get("HOME");
  if (home == nullptr) return std::nullopt;
  return std::string(home);
}

bool InSageMakerJob() { return Get("TRAINING_JOB_NAME") != nullptr; }

std::optional<int64_t> LauncherRank() {
  for (const auto& vars : kLauncherVars) {
    if (const char* r = Get(vars[0])) {
      if (auto rank = ParseInt64(r); rank && *rank >= 0) return rank;
    }
  }
  return std::nullopt;
}

std::optional<int64_t> LauncherWorldSize() {
  for (const auto& vars : kLauncherVars) {
    if (const char* s = Get(vars[1])) {
      if (auto n = ParseInt64(s); n && *n >= 1) return n;
    }
  }
  return std::nullopt;
}

std::optional<int64_t> IncompleteStepWaitWindow() {
  const char* v = std::getenv("SMDEBUG_INCOMPLETE_STEP_WAIT_WINDOW");
  if (v != nullptr) {
    std::optional<int64_t> n = ParseInt64(v);
    if (n && *n >= 0) return n;
  }
  return std::nullopt;
}

std::string HookConfigPath() {
  const char* v = Get("SMDEBUG_CONFIG_FILE_PATH");
  return v != nullptr ? v : "/opt/ml/input/config/debughookconfig.json";
}

std::string TensorBoardConfigPath() {
  const char* v = Get("TENSORBOARD_CONFIG_FILE_PATH");
  return v != nullptr ? v : "/opt/ml/input/config/tensorboardoutputconfig.json";
}

Result<std::string> ReadConfigFile(const std::string& what, const std::string& path) {
  auto not_regular = [&](const struct stat& st) {
    const char* kind = S_ISDIR(st.st_mode)    ? "a folder"
                       : S_ISFIFO(st.st_mode) ? "a FIFO"
                       : S_ISSOCK(st.st_mode) ? "a socket"
                       : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device"
                                                                    : "not a regular file";
    return InvalidArgument(what + " '" + path + "' is " + kind + ", not a regular file");
  };
  struct stat st {};
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    const int err = errno;
    // A socket cannot be opened at all (ENXIO): say what it is rather than "no such device".
    if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) return not_regular(st);
    return ErrnoStatus("cannot open " + what, path, err);
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  if (::fstat(fd, &st) != 0) return ErrnoStatus("cannot read " + what, path, errno);
  if (!S_ISREG(st.st_mode)) return not_regular(st);
  auto too_big = [&] {
    return InvalidArgument(what + " '" + path + "' is larger than " +
                           std::to_string(kMaxConfigFileBytes) + " bytes");
  };
  if (static_cast<uint64_t>(st.st_size) > kMaxConfigFileBytes) return too_big();
  std::string text;
  text.resize(static_cast<size_t>(st.st_size) + 1);  // one more: sees a file that grew
  size_t got = 0;
  for (;;) {
    if (got == text.size()) {
      if (text.size() > kMaxConfigFileBytes) return too_big();
      text.resize(std::min(text.size() * 2, kMaxConfigFileBytes + 1));
    }
    ssize_t n = ::read(fd, text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoStatus("cannot read " + what, path, errno);
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  text.resize(got);
  return text;
}

}  // namespace smd::env
