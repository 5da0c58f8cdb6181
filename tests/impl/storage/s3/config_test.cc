// impl/storage/s3/config.h: the AWS configuration chain (environment, credentials and config
// files, container and instance credentials) and endpoint validation.
#include "impl/storage/s3/client.h"
#include "impl/storage/s3/config.h"
#include "tests/impl/storage/s3/scripted_server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace smd::s3 {
namespace {

// Configuration. Each test sets the variables it needs and clears the others.
class S3Config : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* v : kVars) {
      if (const char* old = std::getenv(v)) saved_.emplace_back(v, old);
      unsetenv(v);
    }
    dir_ = ::testing::TempDir() + "/s3cfg-" + std::to_string(getpid());
    std::string cmd = "mkdir -p '" + dir_ + "'";
    ASSERT_EQ(std::system(cmd.c_str()), 0);
    setenv("AWS_SHARED_CREDENTIALS_FILE", (dir_ + "/credentials").c_str(), 1);
    setenv("AWS_CONFIG_FILE", (dir_ + "/config").c_str(), 1);
    std::remove((dir_ + "/credentials").c_str());
    std::remove((dir_ + "/config").c_str());
    setenv("AWS_EC2_METADATA_DISABLED", "true", 1);  // no instance metadata unless a test asks
  }
  void TearDown() override {
    for (const char* v : kVars) unsetenv(v);
    for (const auto& [k, v] : saved_) setenv(k.c_str(), v.c_str(), 1);
  }
  void Write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ + "/" + name) << text;
  }
  static constexpr const char* kVars[] = {
      "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE",
      "AWS_SHARED_CREDENTIALS_FILE", "AWS_CONFIG_FILE", "AWS_REGION", "AWS_DEFAULT_REGION",
      "AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL", "AWS_CA_BUNDLE",
      "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI",
      "AWS_CONTAINER_AUTHORIZATION_TOKEN", "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE",
      "AWS_EC2_METADATA_DISABLED", "AWS_EC2_METADATA_SERVICE_ENDPOINT"};
  std::vector<std::pair<std::string, std::string>> saved_;
  std::string dir_;
};

TEST_F(S3Config, EnvironmentCredentialsComeFirst) {
  Write("credentials", "[default]\naws_access_key_id = FILEKEY\naws_secret_access_key = FILESECRET\n");
  setenv("AWS_ACCESS_KEY_ID", "ENVKEY", 1);
  setenv("AWS_SECRET_ACCESS_KEY", "ENVSECRET", 1);
  setenv("AWS_SESSION_TOKEN", "ENVTOKEN", 1);
  auto c = ConfigFromEnvironment();
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->credentials.access_key_id, "ENVKEY");
  EXPECT_EQ(c->credentials.secret_access_key, "ENVSECRET");
  EXPECT_EQ(c->credentials.session_token, "ENVTOKEN");
  EXPECT_EQ(c->region, "us-east-1");
  EXPECT_EQ(c->endpoint, "https://s3.us-east-1.amazonaws.com");
  EXPECT_FALSE(c->path_style);  // AWS: virtual-hosted
}

TEST_F(S3Config, HalfEnvironmentCredentialsAreAnError) {
  setenv("AWS_ACCESS_KEY_ID", "ENVKEY", 1);
  auto c = ConfigFromEnvironment();
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), Code::kAuth);
  EXPECT_NE(c.status().message().find("AWS_SECRET_ACCESS_KEY"), std::string::npos);
}

TEST_F(S3Config, ProfileFromCredentialsAndConfigFiles) {
  Write("credentials",
        "[default]\naws_access_key_id = DEF\naws_secret_access_key = DEFS\n"
        "[work]\naws_access_key_id = WORK\naws_secret_access_key = WORKS\n"
        "aws_session_token = WORKT\n");
  Write("config",
        "[default]\nregion = eu-west-1\n"
        "[profile work]\nregion = ap-south-1\nendpoint_url = http://minio.local:9000/\n"
        "s3 =\n  addressing_style = virtual\nca_bundle = /etc/ca.pem\n");
  auto d = ConfigFromEnvironment();
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_EQ(d->credentials.access_key_id, "DEF");
  EXPECT_EQ(d->region, "eu-west-1");
  EXPECT_EQ(d->endpoint, "https://s3.eu-west-1.amazonaws.com");

  setenv("AWS_PROFILE", "work", 1);
  auto w = ConfigFromEnvironment();
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_EQ(w->credentials.access_key_id, "WORK");
  EXPECT_EQ(w->credentials.secret_access_key, "WORKS");
  EXPECT_EQ(w->credentials.session_token, "WORKT");
  EXPECT_EQ(w->region, "ap-south-1");
  EXPECT_EQ(w->endpoint, "http://minio.local:9000");
  EXPECT_FALSE(w->path_style);  // the profile's s3.addressing_style
  EXPECT_TRUE(w->virtual_style_explicit);  // asked for by name: dotted buckets too
  EXPECT_EQ(w->ca_bundle, "/etc/ca.pem");

  // Environment beats the profile for region, endpoint and CA bundle.
  setenv("AWS_DEFAULT_REGION", "us-west-2", 1);
  setenv("AWS_ENDPOINT_URL", "http://generic:1", 1);
  setenv("AWS_CA_BUNDLE", "/env/ca.pem", 1);
  auto e = ConfigFromEnvironment();
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->region, "us-west-2");
  EXPECT_EQ(e->endpoint, "http://generic:1");
  EXPECT_EQ(e->ca_bundle, "/env/ca.pem");
  setenv("AWS_REGION", "sa-east-1", 1);
  setenv("AWS_ENDPOINT_URL_S3", "http://s3only:2", 1);
  auto f = ConfigFromEnvironment();
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->region, "sa-east-1");
  EXPECT_EQ(f->endpoint, "http://s3only:2");
}

TEST_F(S3Config, CustomEndpointDefaultsToPathStyle) {
  setenv("AWS_ACCESS_KEY_ID", "K", 1);
  setenv("AWS_SECRET_ACCESS_KEY", "S", 1);
  setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:7070", 1);
  auto c = ConfigFromEnvironment();
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(c->path_style);
  setenv("AWS_ENDPOINT_URL", "127.0.0.1:7070", 1);
  EXPECT_EQ(ConfigFromEnvironment().status().code(), Code::kInvalidArgument);
}

TEST_F(S3Config, NoCredentialsNamesWhereItLooked) {
  setenv("AWS_PROFILE", "ghost", 1);
  auto c = ConfigFromEnvironment();
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), Code::kAuth);
  EXPECT_NE(c.status().message().find("ghost"), std::string::npos);
  EXPECT_NE(c.status().message().find("AWS_ACCESS_KEY_ID"), std::string::npos);
}

TEST_F(S3Config, ContainerThenInstanceMetadataWhenNoKeys) {
  Write("token", "Bearer abc\n");
  setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", "http://127.0.0.1:1/creds", 1);
  setenv("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE", (dir_ + "/token").c_str(), 1);
  auto c = ConfigFromEnvironment();
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->credential_source, Config::CredentialSource::kContainer);
  EXPECT_EQ(c->credentials_url, "http://127.0.0.1:1/creds");
  // The token file is kept by name, read at every fetch (ContainerTokenFileIsReadAtEveryFetch).
  EXPECT_EQ(c->credentials_auth_token_file, dir_ + "/token");
  setenv("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "/v2/credentials/x", 1);
  EXPECT_EQ(ConfigFromEnvironment()->credentials_url, "http://169.254.170.2/v2/credentials/x");

  unsetenv("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI");
  unsetenv("AWS_CONTAINER_CREDENTIALS_FULL_URI");
  unsetenv("AWS_EC2_METADATA_DISABLED");
  setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT", "http://127.0.0.1:2/", 1);
  auto i = ConfigFromEnvironment();
  ASSERT_TRUE(i.ok()) << i.status().message();
  EXPECT_EQ(i->credential_source, Config::CredentialSource::kInstanceMetadata);
  EXPECT_EQ(i->credentials_url, "http://127.0.0.1:2");

  // Profile keys come before both.
  Write("credentials", "[default]\naws_access_key_id = P\naws_secret_access_key = PS\n");
  auto p = ConfigFromEnvironment();
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->credential_source, Config::CredentialSource::kStatic);
  EXPECT_EQ(p->credentials.access_key_id, "P");
}

// A profile named by AWS_PROFILE or the caller that is in neither file is an error naming it,
// never a fall-back to the container's or the instance's role (another identity).
TEST_F(S3Config, NamedProfileThatDoesNotExistDoesNotFallBack) {
  Write("credentials", "[other]\naws_access_key_id = O\naws_secret_access_key = OS\n");
  Write("config", "[profile other]\nregion = eu-west-1\n");
  setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", "http://127.0.0.1:1/creds", 1);
  unsetenv("AWS_EC2_METADATA_DISABLED");
  setenv("AWS_PROFILE", "typo", 1);
  auto c = ConfigFromEnvironment();
  ASSERT_FALSE(c.ok()) << "fell back to credential source "
                       << static_cast<int>(c->credential_source);
  EXPECT_EQ(c.status().code(), Code::kAuth);
  EXPECT_NE(c.status().message().find("profile 'typo'"), std::string::npos) << c.status().message();
  EXPECT_NE(c.status().message().find("AWS_PROFILE"), std::string::npos) << c.status().message();
  unsetenv("AWS_PROFILE");
  auto given = ConfigFromEnvironment("typo", nullptr);
  ASSERT_FALSE(given.ok());
  EXPECT_EQ(given.status().code(), Code::kAuth);
  EXPECT_NE(given.status().message().find("profile 'typo'"), std::string::npos);
  // A named profile that exists with no credentials of any kind (a region only) leaves them to
  // the container or the instance, as the AWS SDKs do.
  setenv("AWS_PROFILE", "other", 1);
  Write("credentials", "");
  auto keyless = ConfigFromEnvironment();
  ASSERT_TRUE(keyless.ok()) << keyless.status().message();
  EXPECT_EQ(keyless->credential_source, Config::CredentialSource::kContainer);
  // The implicit default profile, missing, still leads to the container credentials.
  unsetenv("AWS_PROFILE");
  auto implicit = ConfigFromEnvironment();
  ASSERT_TRUE(implicit.ok()) << implicit.status().message();
  EXPECT_EQ(implicit->credential_source, Config::CredentialSource::kContainer);
}

// A profile whose credentials come from a source smd does not implement is kAuth naming that
// source, never the container's or the instance's role.
TEST_F(S3Config, ProfileWithAnUnsupportedCredentialSourceIsAnAuthError) {
  setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", "http://127.0.0.1:1/creds", 1);
  unsetenv("AWS_EC2_METADATA_DISABLED");
  const struct {
    const char* lines;
    const char* named;
  } cases[] = {
      {"role_arn = arn:aws:iam::1:role/r\nsource_profile = base\n", "AssumeRole"},
      {"credential_process = /bin/creds\n", "credential_process"},
      {"sso_session = s\nsso_account_id = 1\nsso_role_name = r\n", "SSO"},
      {"sso_start_url = https://x.awsapps.com/start\nsso_region = us-east-1\n", "SSO"},
      {"web_identity_token_file = /var/run/token\nrole_arn = arn:aws:iam::1:role/r\n",
       "web identity"},
      {"web_identity_token_file = /var/run/token\n", "web identity"},
  };
  for (const auto& k : cases) {
    Write("config", std::string("[profile base]\naws_access_key_id = B\n[profile p]\n") + k.lines);
    for (const char* profile : {"p", ""}) {  // named, then as the default profile
      if (*profile) {
        setenv("AWS_PROFILE", profile, 1);
      } else {
        unsetenv("AWS_PROFILE");
        Write("config", std::string("[default]\n") + k.lines);
      }
      auto c = ConfigFromEnvironment();
      ASSERT_FALSE(c.ok()) << k.lines << " fell back to credential source "
                           << static_cast<int>(c->credential_source);
      EXPECT_EQ(c.status().code(), Code::kAuth);
      EXPECT_NE(c.status().message().find(k.named), std::string::npos) << c.status().message();
      EXPECT_NE(c.status().message().find("not support"), std::string::npos)
          << c.status().message();
      EXPECT_NE(c.status().message().find(std::string("profile '") + (*profile ? "p" : "default")),
                std::string::npos)
          << c.status().message();
    }
  }
}

// AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE is read at every fetch: EKS Pod Identity rotates it, and
// a refresh with the token read at startup is refused.
TEST_F(S3Config, ContainerTokenFileIsReadAtEveryFetch) {
  ScriptedServer srv({{Act::kRespond, 200, CredsJson("AKID1", "T1", 3600)},
                      {Act::kRespond, 400, ErrorXml("ExpiredToken")},
                      {Act::kRespond, 200, CredsJson("AKID2", "T2", 3600)},
                      {Act::kRespond, 200, "data"}});
  Write("token", "token-v1\n");
  setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", (srv.endpoint() + "/creds").c_str(), 1);
  setenv("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE", (dir_ + "/token").c_str(), 1);
  auto cfg = ConfigFromEnvironment();
  ASSERT_TRUE(cfg.ok()) << cfg.status().message();
  cfg->endpoint = srv.endpoint();
  cfg->path_style = true;
  cfg->backoff_base_ms = 1;
  auto c = Client::Create(*cfg);
  ASSERT_TRUE(c.ok()) << c.status().message();
  Write("token", "token-v2\n");  // rotated while the job runs
  auto got = (*c)->Get("bucket", "k");
  ASSERT_TRUE(got.ok()) << got.status().message();
  auto reqs = srv.requests();
  ASSERT_EQ(reqs.size(), 4u);
  EXPECT_NE(reqs[0].find("Authorization: token-v1\r\n"), std::string::npos) << reqs[0];
  EXPECT_NE(reqs[2].find("GET /creds "), std::string::npos) << reqs[2];
  EXPECT_NE(reqs[2].find("Authorization: token-v2\r\n"), std::string::npos) << reqs[2];
  // A token file that went away: the fetch fails naming it.
  std::remove((dir_ + "/token").c_str());
  Config gone = *cfg;
  auto none = Client::Create(gone);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), Code::kAuth);
  EXPECT_NE(none.status().message().find(dir_ + "/token"), std::string::npos)
      << none.status().message();
}

// Credentials in the endpoint's URL are refused (they would go out in the Host header and show
// in every message); the message does not show them.
TEST_F(S3Config, EndpointWithUserInformationIsRefused) {
  setenv("AWS_ACCESS_KEY_ID", "K", 1);
  setenv("AWS_SECRET_ACCESS_KEY", "S", 1);
  for (const char* ep : {"http://alice:pw-xyzzy@127.0.0.1:9", "https://alice:pw-xyzzy@h.example/",
                         "http://:pw-xyzzy@127.0.0.1:9"}) {
    setenv("AWS_ENDPOINT_URL_S3", ep, 1);
    auto c = ConfigFromEnvironment();
    ASSERT_FALSE(c.ok()) << ep;
    EXPECT_EQ(c.status().code(), Code::kInvalidArgument);
    EXPECT_EQ(c.status().message().find("pw-xyzzy"), std::string::npos) << c.status().message();
    EXPECT_NE(c.status().message().find("user name or password"), std::string::npos)
        << c.status().message();
    Config cfg;
    cfg.endpoint = ep;
    cfg.credentials = {"K", "S", ""};
    auto client = Client::Create(cfg);
    ASSERT_FALSE(client.ok()) << ep;
    EXPECT_EQ(client.status().code(), Code::kInvalidArgument);
    EXPECT_EQ(client.status().message().find("pw-xyzzy"), std::string::npos);
  }
  EXPECT_EQ(RedactEndpoint("http://a:b@h:1"), "http://***@h:1");
  EXPECT_EQ(RedactEndpoint("http://h:1"), "http://h:1");
  EXPECT_TRUE(ValidateEndpoint("http://127.0.0.1:9000").ok());
}

}  // namespace
}  // namespace smd::s3
