// The S3 client without a real server: XML parsing, configuration from the environment, and the
// retry policy against a scripted HTTP server on loopback (errors, resets, truncation, stalls).
#include "impl/storage/s3/client.h"
#include "impl/storage/s3_storage.h"

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

// ---------------------------------------------------------------------------------------------
TEST(S3Xml, ParsesListObjectsV2) {
  const std::string doc =
      "<?xml version=\"1.0\"?><ListBucketResult><Name>b</Name><IsTruncated>true</IsTruncated>"
      "<Contents><Key>a &amp; b&lt;c&gt;&#x1234;&#252;</Key><Size>12</Size><ETag>&quot;e1&quot;"
      "</ETag></Contents><Contents><Key>k2</Key><Size>0</Size></Contents>"
      "<CommonPrefixes><Prefix>dir/</Prefix></CommonPrefixes>"
      "<NextContinuationToken>tok+/=</NextContinuationToken><KeyCount>2</KeyCount>"
      "</ListBucketResult>";
  auto contents = xml::Elements(doc, "Contents");
  ASSERT_EQ(contents.size(), 2u);
  EXPECT_EQ(xml::FirstText(contents[0], "Key"), "a & b<c>\xe1\x88\xb4\xc3\xbc");
  EXPECT_EQ(xml::FirstText(contents[0], "ETag"), "\"e1\"");
  EXPECT_EQ(xml::FirstText(contents[1], "Size"), "0");
  EXPECT_EQ(xml::AllText(doc, "Prefix"), std::vector<std::string>{"dir/"});
  EXPECT_EQ(xml::FirstText(doc, "NextContinuationToken"), "tok+/=");
  // <Key> must not match <KeyCount>.
  EXPECT_EQ(xml::AllText(doc, "Key").size(), 2u);
  EXPECT_EQ(xml::FirstText(doc, "Missing"), "");
}

TEST(S3Xml, MalformedInputIsHandled) {
  EXPECT_TRUE(xml::Elements("<Key>unterminated", "Key").empty());
  EXPECT_TRUE(xml::Elements("<Key", "Key").empty());
  EXPECT_EQ(xml::Elements("<Key/><Key>x</Key>", "Key").size(), 2u);
  EXPECT_EQ(xml::Unescape("&bogus; & &#;"), "&bogus; & &#;");
  EXPECT_EQ(xml::Unescape(xml::Escape("<a&'\">")), "<a&'\">");
}

// ---------------------------------------------------------------------------------------------
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
  EXPECT_EQ(c->credentials_auth_token, "Bearer abc");
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

// ---------------------------------------------------------------------------------------------
// A scripted HTTP/1.1 server on 127.0.0.1: each accepted connection serves one request with the
// next step of the script, then closes.
class ScriptedServer {
 public:
  enum class Act { kRespond, kReset, kTruncate, kStall };
  struct Step {
    Act act = Act::kRespond;
    int status = 200;
    std::string body;
    std::string extra_headers;
  };

  explicit ScriptedServer(std::vector<Step> script) : script_(std::move(script)) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    listen(fd_, 16);
    socklen_t len = sizeof a;
    getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { Run(); });
  }
  ~ScriptedServer() {
    stop_ = true;
    shutdown(fd_, SHUT_RDWR);
    close(fd_);
    thread_.join();
  }
  std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int served() const { return served_.load(); }
  std::string last_request() {
    std::lock_guard<std::mutex> l(mu_);
    return requests_.empty() ? std::string() : requests_.back();
  }
  std::vector<std::string> requests() {
    std::lock_guard<std::mutex> l(mu_);
    return requests_;
  }

 private:
  void Run() {
    for (;;) {
      int c = accept(fd_, nullptr, nullptr);
      if (c < 0 || stop_) {
        if (c >= 0) close(c);
        return;
      }
      std::string req;
      char buf[65536];
      size_t need = std::string::npos;
      for (;;) {
        ssize_t n = recv(c, buf, sizeof buf, 0);
        if (n <= 0) break;
        req.append(buf, n);
        size_t head = req.find("\r\n\r\n");
        if (head != std::string::npos && need == std::string::npos) {
          size_t cl = req.find("Content-Length: ");
          size_t body_len = cl == std::string::npos || cl > head ? 0 : std::stoul(req.substr(cl + 16));
          need = head + 4 + body_len;
        }
        if (need != std::string::npos && req.size() >= need) break;
      }
      {
        std::lock_guard<std::mutex> l(mu_);
        requests_.push_back(req);
      }
      const int i = served_.fetch_add(1);
      Step s = i < static_cast<int>(script_.size()) ? script_[i] : script_.back();
      std::string resp = "HTTP/1.1 " + std::to_string(s.status) + " X\r\nConnection: close\r\n" +
                         s.extra_headers;
      switch (s.act) {
        case Act::kRespond:
          resp += "Content-Length: " + std::to_string(s.body.size()) + "\r\n\r\n" + s.body;
          send(c, resp.data(), resp.size(), MSG_NOSIGNAL);
          break;
        case Act::kReset: {
          linger lg{1, 0};  // RST instead of FIN
          setsockopt(c, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
          break;
        }
        case Act::kTruncate:
          resp += "Content-Length: " + std::to_string(s.body.size() + 100) + "\r\n\r\n" + s.body;
          send(c, resp.data(), resp.size(), MSG_NOSIGNAL);
          break;
        case Act::kStall:
          resp += "Content-Length: 1000\r\n\r\n";
          send(c, resp.data(), resp.size(), MSG_NOSIGNAL);
          // Say nothing more until the client gives up and closes.
          for (int k = 0; k < 100 && !stop_; ++k) {
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
            char b;
            if (recv(c, &b, 1, MSG_PEEK | MSG_DONTWAIT) == 0) break;
          }
          break;
      }
      close(c);
    }
  }

  std::vector<Step> script_;
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> served_{0};
  std::mutex mu_;
  std::vector<std::string> requests_;
  std::thread thread_;
};

using Act = ScriptedServer::Act;

std::string ErrorXml(const std::string& code) {
  return "<?xml version=\"1.0\"?><Error><Code>" + code + "</Code><Message>m-" + code +
         "</Message></Error>";
}

std::unique_ptr<Client> MakeClient(const std::string& endpoint, int attempts = 4) {
  Config cfg;
  cfg.endpoint = endpoint;
  cfg.credentials = {"AKIDTEST", "TOP-SECRET-KEY", "SESSION-TOKEN-XYZ"};
  cfg.max_attempts = attempts;
  cfg.backoff_base_ms = 5;
  cfg.backoff_cap_ms = 20;
  cfg.stall_timeout_ms = 1000;
  auto c = Client::Create(cfg);
  EXPECT_TRUE(c.ok()) << c.status().message();
  return std::move(c).value();
}

TEST(S3Retry, ServerErrorsAndSlowDownAreRetriedThenSucceed) {
  ScriptedServer srv({{Act::kRespond, 500, ErrorXml("InternalError")},
                      {Act::kRespond, 503, ErrorXml("SlowDown")},
                      {Act::kRespond, 200, "payload"}});
  auto c = MakeClient(srv.endpoint());
  auto got = c->Get("bucket", "dir/key");
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ(*got, "payload");
  EXPECT_EQ(srv.served(), 3);
  EXPECT_EQ(c->stats().retries, 2u);
  // What went on the wire: our signature, the path as is, the token header.
  const std::string req = srv.last_request();
  EXPECT_NE(req.find("GET /bucket/dir/key HTTP/1.1"), std::string::npos) << req;
  EXPECT_NE(req.find("Authorization: AWS4-HMAC-SHA256 Credential=AKIDTEST/"), std::string::npos);
  EXPECT_NE(req.find("x-amz-security-token: SESSION-TOKEN-XYZ"), std::string::npos);
  EXPECT_NE(req.find("x-amz-content-sha256: "), std::string::npos);
}

TEST(S3Retry, ResetTruncationAndStallAreRetried) {
  ScriptedServer srv({{Act::kReset},
                      {Act::kTruncate, 200, "partial"},
                      {Act::kStall},
                      {Act::kRespond, 200, "whole"}});
  auto c = MakeClient(srv.endpoint(), 5);
  auto got = c->Get("bucket", "k");
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ(*got, "whole");
  EXPECT_EQ(srv.served(), 4);
}

TEST(S3Retry, BudgetSpentGivesTheS3CodeAndTheKeyButNoSecret) {
  ScriptedServer srv({{Act::kRespond, 503, ErrorXml("SlowDown")}});
  auto c = MakeClient(srv.endpoint(), 3);
  Status st = c->Put("bucket", "a/b c", "data");
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), Code::kHttp);
  EXPECT_EQ(srv.served(), 3);
  EXPECT_NE(st.message().find("s3://bucket/a/b c"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("503 SlowDown"), std::string::npos) << st.message();
  EXPECT_EQ(st.message().find("TOP-SECRET-KEY"), std::string::npos);
  EXPECT_EQ(st.message().find("SESSION-TOKEN-XYZ"), std::string::npos);
}

TEST(S3Retry, ClientErrorsAreNotRetried) {
  ScriptedServer srv({{Act::kRespond, 403, ErrorXml("SignatureDoesNotMatch")},
                      {Act::kRespond, 200, "never"}});
  auto c = MakeClient(srv.endpoint());
  auto got = c->Get("bucket", "k");
  EXPECT_EQ(got.status().code(), Code::kAuth);
  EXPECT_NE(got.status().message().find("SignatureDoesNotMatch"), std::string::npos);
  EXPECT_EQ(srv.served(), 1);
}

TEST(S3Retry, ServerEchoingTheSecretIsScrubbed) {
  ScriptedServer srv({{Act::kRespond, 400,
                       "<Error><Code>InvalidArgument</Code><Message>bad TOP-SECRET-KEY and "
                       "SESSION-TOKEN-XYZ</Message></Error>"}});
  auto c = MakeClient(srv.endpoint());
  auto got = c->Get("bucket", "k");
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), Code::kHttp);
  EXPECT_EQ(got.status().message().find("TOP-SECRET-KEY"), std::string::npos);
  EXPECT_EQ(got.status().message().find("SESSION-TOKEN-XYZ"), std::string::npos);
}

TEST(S3Retry, SkewedClockIsRetriedThenAnAuthError) {
  ScriptedServer srv({{Act::kRespond, 403, ErrorXml("RequestTimeTooSkewed")}});
  auto c = MakeClient(srv.endpoint(), 2);
  auto got = c->Get("bucket", "k");
  EXPECT_EQ(got.status().code(), Code::kAuth);
  EXPECT_NE(got.status().message().find("RequestTimeTooSkewed"), std::string::npos);
  EXPECT_EQ(srv.served(), 2);
}

TEST(S3Retry, SkewedClockIsCorrectedFromTheServersDate) {
  std::time_t ahead = std::time(nullptr) + 3600;
  std::tm tm{};
  gmtime_r(&ahead, &tm);
  char date[64], amz[32];
  std::strftime(date, sizeof date, "Date: %a, %d %b %Y %H:%M:%S GMT\r\n", &tm);
  std::strftime(amz, sizeof amz, "%Y%m%dT%H", &tm);
  ScriptedServer srv({{Act::kRespond, 403, ErrorXml("RequestTimeTooSkewed"), date},
                      {Act::kRespond, 200, "ok"}});
  auto c = MakeClient(srv.endpoint());
  auto got = c->Get("bucket", "k");
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_NE(srv.last_request().find(std::string("x-amz-date: ") + amz), std::string::npos)
      << srv.last_request();
}

TEST(S3Addressing, VirtualHostedPutsTheBucketInTheHost) {
  // curl resolves every *.localhost name to the loopback address.
  ScriptedServer srv({{Act::kRespond, 200, "v"}});
  Config cfg;
  cfg.endpoint = "http://localhost:" + srv.endpoint().substr(srv.endpoint().rfind(':') + 1);
  cfg.path_style = false;
  cfg.credentials = {"AK", "SK", ""};
  auto c = Client::Create(cfg);
  ASSERT_TRUE(c.ok());
  auto got = (*c)->Get("my-bucket", "dir/a b");
  ASSERT_TRUE(got.ok()) << got.status().message();
  const std::string req = srv.last_request();
  EXPECT_NE(req.find("GET /dir/a%20b HTTP/1.1"), std::string::npos) << req;
  EXPECT_NE(req.find("Host: my-bucket.localhost:"), std::string::npos) << req;
}

std::string CredsJson(const std::string& id, const std::string& token, long expires_in_s) {
  std::time_t t = std::time(nullptr) + expires_in_s;
  std::tm tm{};
  gmtime_r(&t, &tm);
  char exp[32];
  std::strftime(exp, sizeof exp, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return "{\"AccessKeyId\":\"" + id + "\",\"SecretAccessKey\":\"SECRET-" + id +
         "\",\"Token\":\"" + token + "\",\"Expiration\":\"" + exp + "\"}";
}

TEST(S3Credentials, ContainerCredentialsRefreshedOnExpiredToken) {
  ScriptedServer srv({{Act::kRespond, 200, CredsJson("AKID1", "TOKEN1", 3600)},
                      {Act::kRespond, 400, ErrorXml("ExpiredToken")},
                      {Act::kRespond, 200, CredsJson("AKID2", "TOKEN2", 3600)},
                      {Act::kRespond, 200, "data"}});
  Config cfg;
  cfg.endpoint = srv.endpoint();
  cfg.credential_source = Config::CredentialSource::kContainer;
  cfg.credentials_url = srv.endpoint() + "/creds";
  cfg.credentials_auth_token = "Bearer tok";
  cfg.backoff_base_ms = 1;
  auto c = Client::Create(cfg);
  ASSERT_TRUE(c.ok()) << c.status().message();
  auto got = (*c)->Get("bucket", "k");
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ(*got, "data");
  auto reqs = srv.requests();
  ASSERT_EQ(reqs.size(), 4u);
  EXPECT_NE(reqs[0].find("GET /creds "), std::string::npos);
  EXPECT_NE(reqs[0].find("Authorization: Bearer tok"), std::string::npos);
  EXPECT_NE(reqs[1].find("Credential=AKID1/"), std::string::npos);
  EXPECT_NE(reqs[1].find("x-amz-security-token: TOKEN1"), std::string::npos);
  EXPECT_NE(reqs[3].find("Credential=AKID2/"), std::string::npos);
  EXPECT_NE(reqs[3].find("x-amz-security-token: TOKEN2"), std::string::npos);
}

TEST(S3Credentials, InstanceMetadataV2AndRefreshBeforeExpiry) {
  // Credentials that expire within 5 minutes are fetched again before the next request.
  ScriptedServer srv({{Act::kRespond, 200, "IMDS-TOKEN"},
                      {Act::kRespond, 200, "my-role\n"},
                      {Act::kRespond, 200, CredsJson("AKIDA", "TA", 120)},
                      {Act::kRespond, 200, "IMDS-TOKEN2"},
                      {Act::kRespond, 200, "my-role"},
                      {Act::kRespond, 200, CredsJson("AKIDB", "TB", 7200)},
                      {Act::kRespond, 200, "data"}});
  Config cfg;
  cfg.endpoint = srv.endpoint();
  cfg.credential_source = Config::CredentialSource::kInstanceMetadata;
  cfg.credentials_url = srv.endpoint();
  auto c = Client::Create(cfg);
  ASSERT_TRUE(c.ok()) << c.status().message();
  auto got = (*c)->Get("bucket", "k");
  ASSERT_TRUE(got.ok()) << got.status().message();
  auto reqs = srv.requests();
  ASSERT_EQ(reqs.size(), 7u);
  EXPECT_NE(reqs[0].find("PUT /latest/api/token "), std::string::npos) << reqs[0];
  EXPECT_NE(reqs[0].find("X-aws-ec2-metadata-token-ttl-seconds: 21600"), std::string::npos);
  EXPECT_NE(reqs[1].find("GET /latest/meta-data/iam/security-credentials/ "), std::string::npos);
  EXPECT_NE(reqs[1].find("X-aws-ec2-metadata-token: IMDS-TOKEN"), std::string::npos);
  EXPECT_NE(reqs[2].find("GET /latest/meta-data/iam/security-credentials/my-role "),
            std::string::npos);
  EXPECT_NE(reqs[6].find("Credential=AKIDB/"), std::string::npos) << reqs[6];
}

TEST(S3Credentials, FailedEarlyRefreshKeepsTheValidCredentials) {
  // Credentials valid for 2 more minutes are refreshed early; the credential service fails that
  // refresh, and the request goes out with the credentials in hand instead of failing.
  ScriptedServer srv({{Act::kRespond, 200, CredsJson("AKIDA", "TA", 120)},
                      {Act::kRespond, 500, "credential service down"},
                      {Act::kRespond, 200, "data"}});
  Config cfg;
  cfg.endpoint = srv.endpoint();
  cfg.credential_source = Config::CredentialSource::kContainer;
  cfg.credentials_url = srv.endpoint() + "/creds";
  cfg.backoff_base_ms = 1;
  auto c = Client::Create(cfg);
  ASSERT_TRUE(c.ok()) << c.status().message();
  auto got = (*c)->Get("bucket", "k");
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ(*got, "data");
  auto reqs = srv.requests();
  ASSERT_EQ(reqs.size(), 3u);
  EXPECT_NE(reqs[1].find("GET /creds "), std::string::npos) << reqs[1];
  EXPECT_NE(reqs[2].find("Credential=AKIDA/"), std::string::npos) << reqs[2];
}

TEST(S3Retry, SecretsOfMaskCharactersAreScrubbedWithoutLooping) {
  // The mask is "***": a secret made of '*' must not be found again inside it.
  ScriptedServer srv({{Act::kRespond, 400,
                       "<Error><Code>InvalidArgument</Code><Message>key * here</Message></Error>"}});
  Config cfg;
  cfg.endpoint = srv.endpoint();
  cfg.credentials = {"AK", "*", ""};
  cfg.max_attempts = 1;
  auto c = Client::Create(cfg);
  ASSERT_TRUE(c.ok());
  auto got = (*c)->Get("bucket", "k");
  ASSERT_FALSE(got.ok());
  EXPECT_NE(got.status().message().find("key *** here"), std::string::npos)
      << got.status().message();
}

TEST(S3Credentials, UnreachableCredentialServiceIsAnAuthError) {
  Config cfg;
  cfg.endpoint = "http://127.0.0.1:9";
  cfg.credential_source = Config::CredentialSource::kContainer;
  cfg.credentials_url = "http://127.0.0.1:9/creds";
  auto c = Client::Create(cfg);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), Code::kAuth);
  EXPECT_NE(c.status().message().find("127.0.0.1:9/creds"), std::string::npos);
}

TEST(S3StorageFallback, CreateExclusiveWithoutConditionalPutUsesHeadThenPut) {
  ScriptedServer srv({{Act::kRespond, 501, ErrorXml("NotImplemented")},  // PUT If-None-Match
                      {Act::kRespond, 404, ""},                          // HEAD: absent
                      {Act::kRespond, 200, "<ListBucketResult></ListBucketResult>"},
                      {Act::kRespond, 200, ""},                          // plain PUT
                      {Act::kRespond, 200, ""}});                        // HEAD: present
  auto c = MakeClient(srv.endpoint(), 1);
  auto storage = io::MakeS3Storage("s3://bucket/trial", std::shared_ptr<Client>(std::move(c)));
  ASSERT_TRUE(storage.ok());
  Status first = (*storage)->CreateExclusive("lock");
  ASSERT_TRUE(first.ok()) << first.message();
  Status second = (*storage)->CreateExclusive("lock");  // no conditional PUT tried again
  EXPECT_EQ(second.code(), Code::kAlreadyExists) << second.message();
  auto reqs = srv.requests();
  ASSERT_EQ(reqs.size(), 5u);
  EXPECT_NE(reqs[0].find("If-None-Match: *"), std::string::npos);
  EXPECT_NE(reqs[1].find("HEAD /bucket/trial/lock "), std::string::npos);
  EXPECT_NE(reqs[3].find("PUT /bucket/trial/lock "), std::string::npos);
  EXPECT_EQ(reqs[3].find("If-None-Match"), std::string::npos);
  EXPECT_NE(reqs[4].find("HEAD /bucket/trial/lock "), std::string::npos);
}

TEST(S3Credentials, MissingInstanceMetadataSaysWhatWasTried) {
  Config cfg;
  cfg.endpoint = "http://127.0.0.1:9";
  cfg.credential_source = Config::CredentialSource::kInstanceMetadata;
  ScriptedServer srv({{Act::kRespond, 404, ""}});
  cfg.credentials_url = srv.endpoint();
  auto c = Client::Create(cfg);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), Code::kAuth);
  EXPECT_NE(c.status().message().find("/latest/api/token"), std::string::npos);
  EXPECT_NE(c.status().message().find("AWS_ACCESS_KEY_ID"), std::string::npos);
  EXPECT_NE(c.status().message().find("AWS_EC2_METADATA_DISABLED"), std::string::npos);
}

TEST(S3Retry, MultipartAbortsWhenAPartFails) {
  const std::string create =
      "<InitiateMultipartUploadResult><UploadId>UP-1</UploadId></InitiateMultipartUploadResult>";
  ScriptedServer srv({{Act::kRespond, 200, create},
                      {Act::kRespond, 400, ErrorXml("InvalidPart")},
                      {Act::kRespond, 204, ""}});
  Config cfg;
  cfg.endpoint = srv.endpoint();
  cfg.credentials = {"AK", "SK", ""};
  cfg.part_size = 1 << 20;
  cfg.max_parallel_parts = 1;
  auto c = Client::Create(cfg);
  ASSERT_TRUE(c.ok());
  Status st = (*c)->PutMultipart("bucket", "big", std::string(1 << 20, 'x'));
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("InvalidPart"), std::string::npos) << st.message();
  EXPECT_EQ(srv.served(), 3);
  EXPECT_NE(srv.last_request().find("DELETE /bucket/big?uploadId=UP-1 "), std::string::npos)
      << srv.last_request();
}


// ---- Hostile answers and settings (no silent loss, no secret shown) ----

std::string ListXml(int n, bool with_count = true) {
  std::string x = "<?xml version=\"1.0\"?><ListBucketResult><Name>bucket</Name>";
  for (int i = 0; i < n; ++i)
    x += "<Contents><Key>p/k" + std::to_string(i) + "</Key><Size>1</Size></Contents>";
  if (with_count) x += "<KeyCount>" + std::to_string(n) + "</KeyCount>";
  return x + "<IsTruncated>false</IsTruncated></ListBucketResult>";
}

// A listing cut short whose Content-Length matches the cut (so the transfer looks complete) is
// retried like a truncated transfer; it never passes for a shorter listing.
TEST(S3Hostile, ListingCutShortWithMatchingLengthIsRetried) {
  const std::string whole = ListXml(5);
  const size_t cuts[] = {whole.size() / 3, whole.find("</Contents>") + 11,
                         whole.rfind("</ListBucketResult>"), whole.size() - 1};
  for (size_t cut : cuts) {
    ScriptedServer srv({{Act::kRespond, 200, whole.substr(0, cut)}, {Act::kRespond, 200, whole}});
    auto c = MakeClient(srv.endpoint());
    ListOptions o;
    o.prefix = "p/";
    auto page = c->List("bucket", o);
    ASSERT_TRUE(page.ok()) << page.status().message();
    EXPECT_EQ(page->objects.size(), 5u) << "cut at " << cut;
    EXPECT_EQ(srv.served(), 2) << "cut at " << cut;
  }
  // A KeyCount that disagrees with the entries is malformed too.
  std::string miscounted = ListXml(5);
  miscounted.replace(miscounted.find("<KeyCount>5"), 11, "<KeyCount>7");
  {
    ScriptedServer srv({{Act::kRespond, 200, miscounted}, {Act::kRespond, 200, whole}});
    auto c = MakeClient(srv.endpoint());
    auto page = c->List("bucket", ListOptions{});
    ASSERT_TRUE(page.ok()) << page.status().message();
    EXPECT_EQ(page->objects.size(), 5u);
    EXPECT_EQ(srv.served(), 2);
  }
  // Cut on every attempt: an error (kIO, saying what was wrong), never a shorter listing.
  ScriptedServer srv({{Act::kRespond, 200, whole.substr(0, whole.size() / 2)}});
  auto c = MakeClient(srv.endpoint(), 3);
  auto page = c->List("bucket", ListOptions{});
  ASSERT_FALSE(page.ok());
  EXPECT_EQ(page.status().code(), Code::kIO);
  EXPECT_NE(page.status().message().find("incomplete or malformed"), std::string::npos)
      << page.status().message();
  EXPECT_NE(page.status().message().find("ListObjectsV2"), std::string::npos);
  EXPECT_EQ(srv.served(), 3);
}

// S3 answers an invalid session token with 400 InvalidToken: an authentication error, for a GET
// (the code in the body) and for a HEAD (no body: the listing probe names it).
TEST(S3Hostile, InvalidTokenIsAnAuthError) {
  {
    ScriptedServer srv({{Act::kRespond, 400, ErrorXml("InvalidToken")}});
    auto c = MakeClient(srv.endpoint());
    auto got = c->Get("bucket", "k");
    EXPECT_EQ(got.status().code(), Code::kAuth) << got.status().message();
    EXPECT_NE(got.status().message().find("InvalidToken"), std::string::npos);
    EXPECT_EQ(srv.served(), 1);
  }
  {
    ScriptedServer srv({{Act::kRespond, 400, ""}, {Act::kRespond, 400, ErrorXml("InvalidToken")}});
    auto c = MakeClient(srv.endpoint());
    auto head = c->Head("bucket", "k");
    EXPECT_EQ(head.status().code(), Code::kAuth) << head.status().message();
  }
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

// A server echoing the secret or the token URL-encoded, upper- or lower-cased, or XML-escaped:
// every form is masked.
TEST(S3Hostile, EncodedAndCaseChangedSecretsAreScrubbed) {
  const std::string secret = "Sec/r+t=Key&X";
  const std::string token = "tok/EN+1";
  ScriptedServer srv({{Act::kRespond, 400,
                       "<Error><Code>InvalidArgument</Code><Message>a SEC/R+T=KEY&amp;X b "
                       "Sec%2Fr%2Bt%3DKey%26X c sec%2fr%2bt%3dkey%26x d SEC/R%2BT%3DKEY%26X e "
                       "tok%2FEN%2B1 f TOK/EN+1 g Sec/r+t=Key&amp;X</Message></Error>"}});
  Config cfg;
  cfg.endpoint = srv.endpoint();
  cfg.credentials = {"AK", secret, token};
  cfg.max_attempts = 1;
  auto c = Client::Create(cfg);
  ASSERT_TRUE(c.ok());
  auto got = (*c)->Get("bucket", "k");
  ASSERT_FALSE(got.ok());
  const std::string m = got.status().message();
  for (const char* leak : {"SEC/R", "Sec%2F", "sec%2f", "R%2BT", "tok%2F", "TOK/EN", "Key&", "KEY&"})
    EXPECT_EQ(m.find(leak), std::string::npos) << leak << " in: " << m;
  for (const char* kept : {" a ", " b ", " c ", " d ", " e ", " f ", " g "})
    EXPECT_NE(m.find(kept), std::string::npos) << m;
  EXPECT_EQ(ScrubSecrets("x" + secret + "y", cfg.credentials), "x***y");
}

// A CreateMultipartUpload whose answer is lost after the server created the upload: before
// trying again the client lists the key's uploads and aborts the one it never learnt about.
TEST(S3Hostile, LostCreateMultipartUploadIsAbortedBeforeTheRetry) {
  const std::string create =
      "<InitiateMultipartUploadResult><UploadId>UP-2</UploadId></InitiateMultipartUploadResult>";
  const std::string uploads =
      "<?xml version=\"1.0\"?><ListMultipartUploadsResult><Bucket>bucket</Bucket>"
      "<Upload><Key>big</Key><UploadId>ORPHAN-1</UploadId><Initiated>2026-01-01T00:00:00Z"
      "</Initiated></Upload><Upload><Key>big/other</Key><UploadId>NOT-OURS</UploadId></Upload>"
      "<IsTruncated>false</IsTruncated></ListMultipartUploadsResult>";
  ScriptedServer srv({{Act::kReset},                       // create: the answer is lost
                      {Act::kRespond, 200, uploads},        // list the key's uploads
                      {Act::kRespond, 204, ""},             // abort ORPHAN-1
                      {Act::kRespond, 200, create},         // create again
                      {Act::kRespond, 200, "", "ETag: \"0123456789abcdef0123456789abcdef\"\r\n"},
                      {Act::kRespond, 200,
                       "<CompleteMultipartUploadResult><Key>big</Key>"
                       "</CompleteMultipartUploadResult>"}});
  Config cfg;
  cfg.endpoint = srv.endpoint();
  cfg.credentials = {"AK", "SK", ""};
  cfg.part_size = 1 << 20;
  cfg.max_parallel_parts = 1;
  cfg.backoff_base_ms = 1;
  auto c = Client::Create(cfg);
  ASSERT_TRUE(c.ok());
  Status st = (*c)->PutMultipart("bucket", "big", std::string(1 << 20, 'x'));
  ASSERT_TRUE(st.ok()) << st.message();
  auto reqs = srv.requests();
  ASSERT_EQ(reqs.size(), 6u);
  EXPECT_EQ(reqs[1].rfind("GET /bucket?prefix=big&uploads= ", 0), 0u) << reqs[1];
  EXPECT_EQ(reqs[2].rfind("DELETE /bucket/big?uploadId=ORPHAN-1 ", 0), 0u) << reqs[2];
  EXPECT_EQ(reqs[3].rfind("POST /bucket/big?uploads= ", 0), 0u) << reqs[3];
  for (const std::string& r : reqs) EXPECT_EQ(r.find("NOT-OURS"), std::string::npos);
}
}  // namespace
}  // namespace smd::s3
