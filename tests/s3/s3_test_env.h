// The S3 server the tests talk to: scripts/s3-server.sh writes its settings (SMD_S3_ENDPOINT,
// SMD_S3_ACCESS_KEY, SMD_S3_SECRET_KEY, SMD_S3_REGION, SMD_S3_BUCKET) to an env file; ctest's
// fixture passes that file's path as SMD_S3_ENV_FILE (the HTTPS twin's file is found beside it,
// or given as SMD_S3_TLS_ENV_FILE). Variables already in the environment win (plain server only).
// Without a server the tests skip, except under CI=true, where they fail.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <string>

#include "impl/storage/s3/client.h"

namespace smd::s3::testing {

// `file_var` names the variable holding the env file's path: SMD_S3_ENV_FILE (plain HTTP) or
// SMD_S3_TLS_ENV_FILE (HTTPS, which adds SMD_S3_CA_BUNDLE).
inline std::map<std::string, std::string> ServerEnv(const char* file_var = "SMD_S3_ENV_FILE") {
  std::map<std::string, std::string> env;
  const bool tls = std::string(file_var) != "SMD_S3_ENV_FILE";
  std::string path;
  if (const char* f = std::getenv(file_var)) {
    path = f;
  } else if (const char* plain = std::getenv("SMD_S3_ENV_FILE"); tls && plain != nullptr) {
    // ctest's fixture: <dir>/s3-server/env and <dir>/s3-server-tls/env.
    path = plain;
    size_t slash = path.rfind('/');
    if (slash != std::string::npos) path = path.substr(0, slash) + "-tls" + path.substr(slash);
  }
  if (!path.empty()) {
    const char* f = path.c_str();
    std::ifstream in(f);
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("export ", 0) == 0) line = line.substr(7);
      size_t eq = line.find('=');
      if (eq != std::string::npos) env[line.substr(0, eq)] = line.substr(eq + 1);
    }
  }
  if (!tls)
    for (const char* k : {"SMD_S3_ENDPOINT", "SMD_S3_ACCESS_KEY", "SMD_S3_SECRET_KEY",
                          "SMD_S3_REGION", "SMD_S3_BUCKET"})
      if (const char* v = std::getenv(k)) env[k] = v;
  return env;
}

// Fills *cfg and *bucket; false when no server is configured.
inline bool ServerConfig(Config* cfg, std::string* bucket,
                         const char* file_var = "SMD_S3_ENV_FILE") {
  auto env = ServerEnv(file_var);
  if (env["SMD_S3_ENDPOINT"].empty()) return false;
  cfg->endpoint = env["SMD_S3_ENDPOINT"];
  cfg->region = env["SMD_S3_REGION"].empty() ? "us-east-1" : env["SMD_S3_REGION"];
  cfg->path_style = true;
  cfg->credentials.access_key_id = env["SMD_S3_ACCESS_KEY"];
  cfg->credentials.secret_access_key = env["SMD_S3_SECRET_KEY"];
  cfg->ca_bundle = env["SMD_S3_CA_BUNDLE"];
  *bucket = env["SMD_S3_BUCKET"];
  cfg->max_attempts = 3;
  cfg->backoff_base_ms = 10;
  return true;
}

inline bool UnderCi() {
  const char* ci = std::getenv("CI");
  return ci != nullptr && std::string(ci) == "true";
}

}  // namespace smd::s3::testing

// Use at the top of a test: skips (or fails under CI=true) when no server is configured.
#define SMD_REQUIRE_S3_SERVER(cfg, bucket) SMD_REQUIRE_S3_SERVER_FROM(cfg, bucket, "SMD_S3_ENV_FILE")
#define SMD_REQUIRE_S3_SERVER_FROM(cfg, bucket, file_var)                                   \
  do {                                                                                      \
    if (!::smd::s3::testing::ServerConfig(&(cfg), &(bucket), file_var)) {                   \
      if (::smd::s3::testing::UnderCi())                                                    \
        FAIL() << "no S3 server: run the tests through ctest (fixture s3.server) or source " \
                  "the output of scripts/s3-server.sh start";                               \
      GTEST_SKIP() << "no S3 server (scripts/s3-server.sh start)";                          \
    }                                                                                       \
  } while (0)
