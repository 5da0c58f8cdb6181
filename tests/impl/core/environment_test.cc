// Unit tests for impl/core/environment.{h,cc}: each variable unset, empty, garbage and valid, the
// launchers' order, and ReadConfigFile on what a configuration path may turn out to be.
#include "impl/core/environment.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>

namespace smd::env {
namespace {

const char* const kVariables[] = {
    "HOME", "TRAINING_JOB_NAME",
    "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "RANK", "WORLD_SIZE",
    "HOROVOD_RANK", "HOROVOD_SIZE", "PMI_RANK", "PMI_SIZE",
    "SMDEBUG_INCOMPLETE_STEP_WAIT_WINDOW", "SMDEBUG_CONFIG_FILE_PATH",
    "TENSORBOARD_CONFIG_FILE_PATH", "SMD_ENVIRONMENT_TEST_VARIABLE",
};

// Every test starts with all the variables above unset and leaves them as it found them.
class Environment : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name : kVariables) {
      const char* v = std::getenv(name);
      saved_[name] = v ? std::optional<std::string>(v) : std::nullopt;
      ASSERT_EQ(::unsetenv(name), 0);
    }
  }
  void TearDown() override {
    for (const auto& [name, value] : saved_) {
      if (value) {
        ::setenv(name.c_str(), value->c_str(), 1);
      } else {
        ::unsetenv(name.c_str());
      }
    }
  }
  static void Set(const char* name, const char* value) { ASSERT_EQ(::setenv(name, value, 1), 0); }

 private:
  std::map<std::string, std::optional<std::string>> saved_;
};

// ---- Variable, HomeDir, InSageMakerJob ----

TEST_F(Environment, VariableUnsetOrEmptyIsEmpty) {
  EXPECT_EQ(Variable("SMD_ENVIRONMENT_TEST_VARIABLE"), "");
  Set("SMD_ENVIRONMENT_TEST_VARIABLE", "");
  EXPECT_EQ(Variable("SMD_ENVIRONMENT_TEST_VARIABLE"), "");
}

TEST_F(Environment, VariableIsReturnedAsItIs) {
  Set("SMD_ENVIRONMENT_TEST_VARIABLE", " eu-west-1 ");  // not stripped
  EXPECT_EQ(Variable("SMD_ENVIRONMENT_TEST_VARIABLE"), " eu-west-1 ");
  Set("SMD_ENVIRONMENT_TEST_VARIABLE", "caf\xc3\xa9=1");
  EXPECT_EQ(Variable("SMD_ENVIRONMENT_TEST_VARIABLE"), "caf\xc3\xa9=1");
}

TEST_F(Environment, HomeDir) {
  EXPECT_FALSE(HomeDir().has_value());
  Set("HOME", "");
  EXPECT_FALSE(HomeDir().has_value());
  Set("HOME", "/home/some user");
  EXPECT_EQ(HomeDir(), "/home/some user");
}

TEST_F(Environment, InSageMakerJobWhenTheJobNameIsSet) {
  EXPECT_FALSE(InSageMakerJob());
  Set("TRAINING_JOB_NAME", "");
  EXPECT_FALSE(InSageMakerJob());
  Set("TRAINING_JOB_NAME", "my-job-2024");
  EXPECT_TRUE(InSageMakerJob());
  Set("TRAINING_JOB_NAME", "0");  // any name, even one that reads as false
  EXPECT_TRUE(InSageMakerJob());
}

// ---- LauncherRank, LauncherWorldSize ----

TEST_F(Environment, NoLauncher) {
  EXPECT_FALSE(LauncherRank().has_value());
  EXPECT_FALSE(LauncherWorldSize().has_value());
}

TEST_F(Environment, EachLauncherAlone) {
  const char* const launchers[][2] = {{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
                                      {"RANK", "WORLD_SIZE"},
                                      {"HOROVOD_RANK", "HOROVOD_SIZE"},
                                      {"PMI_RANK", "PMI_SIZE"}};
  for (const auto& vars : launchers) {
    SCOPED_TRACE(vars[0]);
    Set(vars[0], "3");
    Set(vars[1], "8");
    EXPECT_EQ(LauncherRank(), 3);
    EXPECT_EQ(LauncherWorldSize(), 8);
    ::unsetenv(vars[0]);
    ::unsetenv(vars[1]);
  }
}

TEST_F(Environment, LaunchersAreConsultedInOrder) {
  Set("PMI_RANK", "4");
  Set("PMI_SIZE", "40");
  Set("HOROVOD_RANK", "3");
  Set("HOROVOD_SIZE", "30");
  EXPECT_EQ(LauncherRank(), 3);
  EXPECT_EQ(LauncherWorldSize(), 30);
  Set("RANK", "2");
  Set("WORLD_SIZE", "20");
  EXPECT_EQ(LauncherRank(), 2);
  EXPECT_EQ(LauncherWorldSize(), 20);
  Set("OMPI_COMM_WORLD_RANK", "1");
  Set("OMPI_COMM_WORLD_SIZE", "10");
  EXPECT_EQ(LauncherRank(), 1);
  EXPECT_EQ(LauncherWorldSize(), 10);
}

TEST_F(Environment, RankZeroAndSizeOneAreValid) {
  Set("RANK", "0");
  Set("WORLD_SIZE", "1");
  EXPECT_EQ(LauncherRank(), 0);
  EXPECT_EQ(LauncherWorldSize(), 1);
}

// A value that is not a valid rank is skipped: the next launcher's is used, or none.
TEST_F(Environment, InvalidRankIsSkipped) {
  for (const char* bad : {"", "abc", "1.5", "3x", "0x10", "- 1", "99999999999999999999", "-1",
                          "-9223372036854775808"}) {
    SCOPED_TRACE(std::string("'") + bad + "'");
    Set("OMPI_COMM_WORLD_RANK", bad);
    EXPECT_FALSE(LauncherRank().has_value());
    Set("RANK", "5");
    EXPECT_EQ(LauncherRank(), 5);
    ::unsetenv("RANK");
  }
}

TEST_F(Environment, InvalidWorldSizeIsSkipped) {
  for (const char* bad : {"", "abc", "2.0", "0", "-1", "-4", "99999999999999999999"}) {
    SCOPED_TRACE(std::string("'") + bad + "'");
    Set("OMPI_COMM_WORLD_SIZE", bad);
    EXPECT_FALSE(LauncherWorldSize().has_value());
    Set("WORLD_SIZE", "6");
    EXPECT_EQ(LauncherWorldSize(), 6);
    ::unsetenv("WORLD_SIZE");
  }
}

// ---- IncompleteStepWaitWindow ----

TEST_F(Environment, IncompleteStepWaitWindow) {
  EXPECT_FALSE(IncompleteStepWaitWindow().has_value());
  Set("SMDEBUG_INCOMPLETE_STEP_WAIT_WINDOW", "");
  EXPECT_FALSE(IncompleteStepWaitWindow().has_value());
  Set("SMDEBUG_INCOMPLETE_STEP_WAIT_WINDOW", "0");
  EXPECT_EQ(IncompleteStepWaitWindow(), 0);
  Set("SMDEBUG_INCOMPLETE_STEP_WAIT_WINDOW", "1000");
  EXPECT_EQ(IncompleteStepWaitWindow(), 1000);
  Set("SMDEBUG_INCOMPLETE_STEP_WAIT_WINDOW", "9223372036854775807");
  EXPECT_EQ(IncompleteStepWaitWindow(), INT64_MAX);
  for (const char* bad : {"-1", "abc", "1e3", "10.5", "9223372036854775808", "1000 steps"}) {
    Set("SMDEBUG_INCOMPLETE_STEP_WAIT_WINDOW", bad);
    EXPECT_FALSE(IncompleteStepWaitWindow().has_value()) << bad;
  }
}

// ---- configuration paths ----

TEST_F(Environment, HookConfigPath) {
  EXPECT_EQ(HookConfigPath(), "/opt/ml/input/config/debughookconfig.json");
  Set("SMDEBUG_CONFIG_FILE_PATH", "");
  EXPECT_EQ(HookConfigPath(), "/opt/ml/input/config/debughookconfig.json");
  Set("SMDEBUG_CONFIG_FILE_PATH", "relative/my config.json");
  EXPECT_EQ(HookConfigPath(), "relative/my config.json");
}

TEST_F(Environment, TensorBoardConfigPath) {
  EXPECT_EQ(TensorBoardConfigPath(), "/opt/ml/input/config/tensorboardoutputconfig.json");
  Set("TENSORBOARD_CONFIG_FILE_PATH", "");
  EXPECT_EQ(TensorBoardConfigPath(), "/opt/ml/input/config/tensorboardoutputconfig.json");
  Set("TENSORBOARD_CONFIG_FILE_PATH", "/tmp/tb.json");
  EXPECT_EQ(TensorBoardConfigPath(), "/tmp/tb.json");
}

// ---- ReadConfigFile ----

class ReadConfig : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* base = std::getenv("TEST_TMPDIR");
    std::string tmpl = std::string(base ? base : "/tmp") + "/smd_env_test_XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  std::string Write(const std::string& name, const std::string& text) {
    std::string path = dir_ + "/" + name;
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }
  static std::string Message(const Result<std::string>& r) {
    return r.ok() ? "ok" : r.status().message();
  }

  std::string dir_;
};

TEST_F(ReadConfig, RegularFileIsReadExactly) {
  const std::string text("{\"LocalPath\": \"/out\"}\n\0tail\xff", 28);
  Result<std::string> r = ReadConfigFile("the hook configuration", Write("c.json", text));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(*r, text);
}

TEST_F(ReadConfig, EmptyFile) {
  Result<std::string> r = ReadConfigFile("the hook configuration", Write("empty.json", ""));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(*r, "");
}

TEST_F(ReadConfig, SymlinkToAFileIsFollowed) {
  const std::string target = Write("real.json", "{}");
  const std::string link = dir_ + "/link.json";
  ASSERT_EQ(::symlink(target.c_str(), link.c_str()), 0);
  Result<std::string> r = ReadConfigFile("the hook configuration", link);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(*r, "{}");
}

// A file whose size stat does not know (procfs says 0): read to its end all the same.
TEST_F(ReadConfig, FileLongerThanItsStatSize) {
  struct stat st {};
  ASSERT_EQ(::stat("/proc/self/status", &st), 0);
  if (st.st_size != 0) GTEST_SKIP() << "/proc/self/status has a size here";
  Result<std::string> r = ReadConfigFile("the status", "/proc/self/status");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->rfind("Name:", 0), 0u) << *r;
  EXPECT_NE(r->find("\nPid:"), std::string::npos);
  EXPECT_EQ(r->back(), '\n');
}

TEST_F(ReadConfig, MissingFileIsNotFound) {
  const std::string path = dir_ + "/missing.json";
  Result<std::string> r = ReadConfigFile("the hook configuration", path);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kNotFound);
  EXPECT_EQ(r.status().message(),
            "cannot open the hook configuration '" + path + "': " + std::strerror(ENOENT));
  Result<std::string> empty = ReadConfigFile("the hook configuration", "");
  EXPECT_EQ(empty.status().code(), Code::kNotFound) << Message(empty);
}

TEST_F(ReadConfig, PathThroughAFileIsAnIOError) {
  const std::string path = Write("file", "x") + "/c.json";
  Result<std::string> r = ReadConfigFile("the hook configuration", path);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kIO);
  EXPECT_NE(r.status().message().find(path), std::string::npos) << Message(r);
}

TEST_F(ReadConfig, FolderIsRefused) {
  Result<std::string> r = ReadConfigFile("the hook configuration", dir_);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(r.status().message(),
            "the hook configuration '" + dir_ + "' is a folder, not a regular file");
}

TEST_F(ReadConfig, FifoIsRefusedWithoutWaitingForAWriter) {
  const std::string path = dir_ + "/fifo";
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  Result<std::string> r = ReadConfigFile("the TensorBoard configuration", path);  // must not block
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(r.status().message(),
            "the TensorBoard configuration '" + path + "' is a FIFO, not a regular file");
}

TEST_F(ReadConfig, DeviceIsRefused) {
  Result<std::string> r = ReadConfigFile("the hook configuration", "/dev/null");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(r.status().message(),
            "the hook configuration '/dev/null' is a device, not a regular file");
}

TEST_F(ReadConfig, SocketIsRefused) {
  const std::string path = dir_ + "/sock";
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  ASSERT_LT(path.size(), sizeof addr.sun_path);
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  Result<std::string> r = ReadConfigFile("the hook configuration", path);
  ::close(fd);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument) << Message(r);
  EXPECT_EQ(r.status().message(),
            "the hook configuration '" + path + "' is a socket, not a regular file");
}

TEST_F(ReadConfig, SizeLimitIsInclusive) {
  const std::string path = dir_ + "/big.json";
  ASSERT_EQ(::truncate(Write("big.json", "").c_str(), kMaxConfigFileBytes), 0);
  Result<std::string> r = ReadConfigFile("the hook configuration", path);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->size(), kMaxConfigFileBytes);

  ASSERT_EQ(::truncate(path.c_str(), kMaxConfigFileBytes + 1), 0);
  Result<std::string> over = ReadConfigFile("the hook configuration", path);
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(over.status().message(),
            "the hook configuration '" + path + "' is larger than 16777216 bytes");
}

}  // namespace
}  // namespace smd::env
