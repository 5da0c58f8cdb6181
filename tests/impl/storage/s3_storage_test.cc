// impl/storage/s3_storage.h without a real server (tests/s3/ has the suite against one).
#include "impl/storage/s3_storage.h"
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

}  // namespace
}  // namespace smd::s3
