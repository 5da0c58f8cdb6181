// impl/storage/s3/transport.h against a scripted server: retries (errors, resets, truncation,
// stalls, a skewed clock), addressing, answers cut short, and no secret in any message.
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

// A conditional PUT that raced another request on the key: 409 ConditionalRequestConflict, which
// S3 says to retry (it was a plain HTTP error, and a claim failed with it).
TEST(S3Retry, ConditionalRequestConflictIsRetried) {
  ScriptedServer srv({{Act::kRespond, 409, ErrorXml("ConditionalRequestConflict")},
                      {Act::kRespond, 200, ""}});
  auto c = MakeClient(srv.endpoint());
  PutOptions o;
  o.if_none_match = true;
  Status st = c->Put("bucket", "claim.smd", "token", o);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(srv.served(), 2);
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

// A legacy bucket name (us-east-1 before March 2018: upper case, '_', up to 255 characters) is no
// host name label: it always goes in the path, even when virtual-hosted addressing is asked for.
TEST(S3Addressing, LegacyBucketNameGoesInThePath) {
  ScriptedServer srv({{Act::kRespond, 200, "v"}});
  Config cfg;
  cfg.endpoint = "http://localhost:" + srv.endpoint().substr(srv.endpoint().rfind(':') + 1);
  cfg.path_style = false;
  cfg.virtual_style_explicit = true;
  cfg.credentials = {"AK", "SK", ""};
  auto c = Client::Create(cfg);
  ASSERT_TRUE(c.ok());
  auto got = (*c)->Get("My_Legacy.Bucket", "k");
  ASSERT_TRUE(got.ok()) << got.status().message();
  const std::string req = srv.last_request();
  EXPECT_NE(req.find("GET /My_Legacy.Bucket/k HTTP/1.1"), std::string::npos) << req;
  EXPECT_NE(req.find("Host: localhost:"), std::string::npos) << req;
  EXPECT_EQ(ValidateBucketName(std::string(255, 'B')).code(), Code::kOk);
  for (const std::string bad : {std::string(256, 'B'), std::string("ab"), std::string("_x_bucket"),
                                std::string("a bucket"), std::string("bucket/x")}) {
    auto st = ValidateBucketName(bad);
    EXPECT_EQ(st.code(), Code::kInvalidArgument) << bad;
    EXPECT_NE(st.message().find("'" + bad + "'"), std::string::npos) << st.message();
  }
  EXPECT_TRUE(IsDnsCompatibleBucketName("my.bucket-1"));
  EXPECT_FALSE(IsDnsCompatibleBucketName("My_Legacy.Bucket"));
  EXPECT_FALSE(IsDnsCompatibleBucketName("a..b"));
}

// Over https, a bucket whose name holds '.' goes in the path: bucket.with.dots.s3.amazonaws.com
// fails the check of the wildcard certificate *.s3.amazonaws.com. The scripted server does not
// speak TLS: it records the ClientHello, whose server name (SNI) is the host curl contacted, and
// the handshake times out. The error names that host.
TEST(S3Addressing, DottedBucketOverHttpsGoesInThePath) {
  auto contacted = [](const std::string& bucket, bool explicit_virtual, std::string* message) {
    ScriptedServer srv({{Act::kRespond, 200, ""}});
    Config cfg;
    const std::string port = srv.endpoint().substr(srv.endpoint().rfind(':') + 1);
    cfg.endpoint = "https://localhost:" + port;
    cfg.path_style = false;  // virtual-hosted, as on AWS
    cfg.virtual_style_explicit = explicit_virtual;
    cfg.credentials = {"AK", "SK", ""};
    cfg.max_attempts = 1;
    cfg.connect_timeout_ms = 300;
    auto c = Client::Create(cfg);
    EXPECT_TRUE(c.ok());
    auto got = (*c)->Get(bucket, "k");
    EXPECT_FALSE(got.ok());
    EXPECT_EQ(got.status().code(), Code::kIO);
    *message = got.status().message();
    for (int i = 0; i < 200 && srv.served() == 0; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    const std::string hello = srv.last_request();
    const bool virtual_host = hello.find(bucket + ".localhost") != std::string::npos;
    EXPECT_TRUE(virtual_host || hello.find("localhost") != std::string::npos)
        << "no server name in the ClientHello";
    return virtual_host ? bucket + ".localhost:" + port : "localhost:" + port;
  };
  std::string m;
  const std::string dotted = contacted("my.dotted.bucket", false, &m);
  EXPECT_EQ(dotted.rfind("localhost:", 0), 0u) << "contacted " << dotted;
  EXPECT_NE(m.find("https://" + dotted), std::string::npos) << m;
  const std::string plain = contacted("plain-bucket", false, &m);
  EXPECT_EQ(plain.rfind("plain-bucket.localhost:", 0), 0u) << "contacted " << plain;
  EXPECT_NE(m.find("https://" + plain), std::string::npos) << "the host contacted: " << m;
  // Virtual-hosted addressing asked for by name is kept, dots or not.
  const std::string forced = contacted("my.dotted.bucket", true, &m);
  EXPECT_EQ(forced.rfind("my.dotted.bucket.localhost:", 0), 0u) << "contacted " << forced;
}

// stall_timeout_ms is rounded up to whole seconds (curl's resolution), never down: 2500 ms
// waits 3 s (it waited 2 s, abandoning transfers before the limit asked for).
TEST(S3Retry, StallTimeoutIsRoundedUpToWholeSeconds) {
  ScriptedServer srv({{Act::kStall}});
  Config cfg;
  cfg.endpoint = srv.endpoint();
  cfg.credentials = {"AK", "SK", ""};
  cfg.max_attempts = 1;
  cfg.stall_timeout_ms = 2500;
  auto c = Client::Create(cfg);
  ASSERT_TRUE(c.ok());
  const auto t0 = std::chrono::steady_clock::now();
  auto got = (*c)->Get("bucket", "k");
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::steady_clock::now() - t0).count();
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), Code::kIO);
  EXPECT_GE(ms, 2500) << "the stall limit cut the transfer before stall_timeout_ms";
  EXPECT_LT(ms, 4900) << got.status().message();  // the server gives up at 5 s
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

// A server answering IsTruncated=true with a continuation token it gave before would make List
// go round for ever: an error naming the token (kHttp), after the pages it could list.
TEST(S3Hostile, ListingThatRepeatsItsContinuationTokenIsAnError) {
  auto page = [](int first, const std::string& token) {
    return "<?xml version=\"1.0\"?><ListBucketResult><Name>bucket</Name><Contents><Key>p/k" +
           std::to_string(first) + "</Key><Size>1</Size></Contents><IsTruncated>true" +
           "</IsTruncated><NextContinuationToken>" + token +
           "</NextContinuationToken></ListBucketResult>";
  };
  // The third answer is one the old client stopped at (it never ends otherwise): a 403.
  ScriptedServer srv({{Act::kRespond, 200, page(0, "T1")},
                      {Act::kRespond, 200, page(1, "T1")},
                      {Act::kRespond, 403, ErrorXml("AccessDenied")}});
  auto c = MakeClient(srv.endpoint());
  auto all = c->List("bucket", ListOptions{});
  ASSERT_FALSE(all.ok());
  EXPECT_EQ(all.status().code(), Code::kHttp) << all.status().message();
  EXPECT_NE(all.status().message().find("NextContinuationToken 'T1'"), std::string::npos)
      << all.status().message();
  EXPECT_EQ(srv.served(), 2);
  // A token that comes back two pages later is caught too.
  ScriptedServer cycle({{Act::kRespond, 200, page(0, "A")},
                        {Act::kRespond, 200, page(1, "B")},
                        {Act::kRespond, 200, page(2, "A")},
                        {Act::kRespond, 403, ErrorXml("AccessDenied")}});
  auto c2 = MakeClient(cycle.endpoint());
  auto round = c2->List("bucket", ListOptions{});
  EXPECT_EQ(round.status().code(), Code::kHttp) << round.status().message();
  EXPECT_EQ(cycle.served(), 3);
}

// Listings ask for encoding-type=url (XML 1.0 cannot carry every byte of a key, \x01 say) and
// decode Key and Prefix when the answer says EncodingType url ('+' is a space); an answer of a
// server that ignored the parameter is taken as it is. The continuation token goes back as given.
TEST(S3Hostile, ListingKeysAreUrlEncodedAndDecoded) {
  const std::string encoded =
      "<?xml version=\"1.0\"?><ListBucketResult><Name>bucket</Name><EncodingType>url"
      "</EncodingType><Prefix>p%2F</Prefix><Contents><Key>p%2Fa%01b+c%2Bd%25</Key><Size>3</Size>"
      "</Contents><CommonPrefixes><Prefix>p%2Fdir%01%2F</Prefix></CommonPrefixes>"
      "<IsTruncated>true</IsTruncated><NextContinuationToken>tok%2B+/=</NextContinuationToken>"
      "</ListBucketResult>";
  const std::string plain =
      "<?xml version=\"1.0\"?><ListBucketResult><Name>bucket</Name><Contents><Key>p/x%41+y</Key>"
      "<Size>1</Size></Contents><IsTruncated>false</IsTruncated></ListBucketResult>";
  ScriptedServer srv({{Act::kRespond, 200, encoded}, {Act::kRespond, 200, plain}});
  auto c = MakeClient(srv.endpoint());
  ListOptions o;
  o.prefix = "p/";
  o.delimiter = "/";
  auto all = c->List("bucket", o);
  ASSERT_TRUE(all.ok()) << all.status().message();
  ASSERT_EQ(all->objects.size(), 2u);
  EXPECT_EQ(all->objects[0].key, std::string("p/a\x01" "b c+d%"));
  EXPECT_EQ(all->objects[1].key, "p/x%41+y");  // not encoded: as it is
  ASSERT_EQ(all->common_prefixes.size(), 1u);
  EXPECT_EQ(all->common_prefixes[0], std::string("p/dir\x01/"));
  auto reqs = srv.requests();
  ASSERT_EQ(reqs.size(), 2u);
  EXPECT_NE(reqs[0].find("encoding-type=url"), std::string::npos) << reqs[0];
  EXPECT_NE(reqs[1].find("continuation-token=tok%252B%2B%2F%3D"), std::string::npos) << reqs[1];
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

}  // namespace
}  // namespace smd::s3
