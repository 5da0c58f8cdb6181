// impl/storage/s3/credentials.h: temporary credentials from the container endpoint and the
// instance metadata service (scripted), refreshed before they expire or when S3 says so.
#include "impl/storage/s3/client.h"
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

// The instance metadata service throttles (HTTP 429) or fails for a moment (503): the fetch is
// tried again (it failed the client's creation at once).
TEST(S3Credentials, ABusyCredentialServiceIsAskedAgain) {
  ScriptedServer srv({{Act::kRespond, 429, "Too Many Requests"},
                      {Act::kRespond, 200, "IMDS-TOKEN"},
                      {Act::kRespond, 503, "busy"},
                      {Act::kRespond, 200, "my-role"},
                      {Act::kRespond, 200, CredsJson("AKIDA", "TA", 7200)},
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
  ASSERT_EQ(reqs.size(), 6u);
  EXPECT_NE(reqs[5].find("Credential=AKIDA/"), std::string::npos) << reqs[5];
}

TEST(S3Credentials, FailedEarlyRefreshKeepsTheValidCredentials) {
  // Credentials valid for 2 more minutes are refreshed early; the credential service fails that
  // refresh, and the request goes out with the credentials in hand instead of failing.
  ScriptedServer srv({{Act::kRespond, 200, CredsJson("AKIDA", "TA", 120)},
                      {Act::kRespond, 500, "credential service down"},
                      {Act::kRespond, 500, "credential service down"},  // asked three times
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
  ASSERT_EQ(reqs.size(), 5u);
  EXPECT_NE(reqs[1].find("GET /creds "), std::string::npos) << reqs[1];
  EXPECT_NE(reqs[3].find("GET /creds "), std::string::npos) << reqs[3];
  EXPECT_NE(reqs[4].find("Credential=AKIDA/"), std::string::npos) << reqs[4];
}

// An early refresh (the credentials still valid for 2 minutes) against a credential service that
// hangs: one thread tries it (up to the fetch's 5 s timeout), the others go on at once with the
// credentials in hand instead of queueing for a refresh each (4 threads took 5, 10, 15 and 20 s).
// After the failed try, requests do not try again for a while.
TEST(S3Credentials, EarlyRefreshAgainstAHangingServiceBlocksNobodyElse) {
  ScriptedServer creds({{Act::kRespond, 200, CredsJson("AKIDA", "TA", 120)}, {Act::kStall}});
  ScriptedServer s3({{Act::kRespond, 200, "data"}});
  Config cfg;
  cfg.endpoint = s3.endpoint();
  cfg.credential_source = Config::CredentialSource::kContainer;
  cfg.credentials_url = creds.endpoint() + "/creds";
  auto c = Client::Create(cfg);
  ASSERT_TRUE(c.ok()) << c.status().message();
  constexpr int kThreads = 4;
  std::vector<long> ms(kThreads, -1);
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      const auto t0 = std::chrono::steady_clock::now();
      auto got = (*c)->Get("bucket", "k");
      ms[t] = static_cast<long>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                    std::chrono::steady_clock::now() - t0).count());
      if (!got.ok()) errors[t] = got.status().message();
    });
  for (auto& t : threads) t.join();
  int quick = 0;
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(errors[t], "") << "thread " << t;
    if (ms[t] < 2000) ++quick;
  }
  EXPECT_GE(quick, kThreads - 1) << "threads waited for another's early refresh: " << ms[0]
                                 << ", " << ms[1] << ", " << ms[2] << ", " << ms[3] << " ms";
  EXPECT_EQ(creds.served(), 2) << "one early refresh, not one per thread";
  // Right after the failed early refresh: no new try, no wait.
  const auto t0 = std::chrono::steady_clock::now();
  auto again = (*c)->Get("bucket", "k");
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(2));
  EXPECT_EQ(creds.served(), 2);
  EXPECT_NE(s3.last_request().find("Credential=AKIDA/"), std::string::npos);
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

}  // namespace
}  // namespace smd::s3
