// impl/storage/s3/multipart.h against a scripted server: a failed part aborts the upload, and a
// lost CreateMultipartUpload answer leaves no upload behind.
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
