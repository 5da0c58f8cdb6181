// Small RAII helpers over the public C API, shared by the smd subcommands.
#pragma once

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <sys/stat.h>

#include "commands.h"
#include "json.h"
#include "smd/smd.h"

namespace smdtool {

// smd_code_name, never NULL (a code newer than the library's names: "SMD_E_UNKNOWN").
inline const char* CodeName(smd_code code) {
  const char* name = smd_code_name(code);
  return name != nullptr ? name : "SMD_E_UNKNOWN";
}

// Owns an smd_error (NULL: success).
struct Err {
  smd_error* e = nullptr;
  explicit Err(smd_error* err) : e(err) {}
  ~Err() { smd_error_free(e); }
  Err(const Err&) = delete;
  Err& operator=(const Err&) = delete;
  explicit operator bool() const { return e != nullptr; }
  smd_code code() const { return smd_error_code(e); }
  // "SMD_E_NOT_FOUND: <message>"
  std::string message() const {
    return std::string(CodeName(code())) + ": " + smd_error_message(e);
  }
};

struct StrArray {
  smd_strarray a{nullptr, 0};
  StrArray() = default;
  StrArray(const StrArray&) = delete;
  StrArray& operator=(const StrArray&) = delete;
  ~StrArray() { smd_strarray_free(&a); }
  std::vector<std::string> vec() const {
    std::vector<std::string> v;
    for (size_t i = 0; i < a.count; ++i) v.emplace_back(a.strings[i]);
    return v;
  }
};

struct Steps {
  int64_t* p = nullptr;
  size_t n = 0;
  Steps() = default;
  Steps(const Steps&) = delete;
  Steps& operator=(const Steps&) = delete;
  ~Steps() { smd_free(p); }
  std::vector<int64_t> vec() const { return std::vector<int64_t>(p, p + n); }
};

template <typename T, void (*Free)(T*)>
struct Owned {
  T* p = nullptr;
  Owned() = default;
  Owned(const Owned&) = delete;
  Owned& operator=(const Owned&) = delete;
  ~Owned() { Free(p); }
};
using TrialPtr = Owned<smd_trial, smd_trial_free>;
using TensorPtr = Owned<smd_tensor, smd_tensor_free>;
using ValuePtr = Owned<smd_value, smd_value_free>;
using OptionsPtr = Owned<smd_trial_options, smd_trial_options_free>;
using CollectionPtr = Owned<smd_collection_info, smd_collection_info_free>;
using FilterPtr = Owned<smd_tensor_filter, smd_tensor_filter_free>;
using WriterPtr = Owned<smd_tensorboard_writer, smd_tensorboard_writer_free>;

// A failure that ends the command with an exit code and a message.
struct Fatal {
  int exit_code;
  std::string message;
};

// The exit code for an error of the trial as a whole.
inline int TrialExitCode(const Err& err) {
  return err.code() == SMD_E_MISSING_COLLECTION_FILES ? kExitNoCollections : kExitTrialError;
}

// The exit status of a failed smd_trial_open: a path refused as such (empty, a malformed s3://
// URI) is bad usage.
inline int OpenExitCode(const Err& err) {
  return err.code() == SMD_E_INVALID_ARGUMENT ? kExitUsage : TrialExitCode(err);
}

// Prints the trial's warnings (index files skipped, ...) as "<command>: warning: ..." on stderr;
// how many there were.
inline size_t PrintTrialWarnings(const smd_trial* trial, const char* command) {
  smd_strarray warn = {nullptr, 0};
  if (smd_error* e = smd_trial_warnings(trial, &warn)) {
    smd_error_free(e);
    return 0;
  }
  for (size_t i = 0; i < warn.count; ++i) {
    std::fprintf(stderr, "%s: warning: %s\n", command, Printable(warn.strings[i]).c_str());
  }
  const size_t n = warn.count;
  smd_strarray_free(&warn);
  return n;
}

[[noreturn]] inline void ThrowFatal(const Err& err, const std::string& what) {
  throw Fatal{TrialExitCode(err), what + ": " + err.message()};
}

// Why smd_trial_open(path) failed with err, for a message that starts "<command>: ". A local
// path that names something other than a folder (a file given by mistake: an event file, the
// collections file) is said to be that, rather than what listing inside it answered.
inline std::string OpenFailure(const std::string& path, const Err& err) {
  struct stat st;
  if (path.find("://") == std::string::npos && ::stat(path.c_str(), &st) == 0 && !S_ISDIR(st.st_mode)) {
    return "'" + path + "' is not a trial folder: it is a file (a trial folder holds collections/, " +
           "index/ and events/)";
  }
  return "cannot open trial '" + path + "': " + err.message();
}

// Parses a decimal integer argument; false if it is not one.
inline bool ParseInt64Arg(const char* s, int64_t* out) {
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(s, &end, 10);
  if (errno != 0 || end == s || *end != '\0') return false;
  *out = v;
  return true;
}

}  // namespace smdtool
