// SigV4 signer against the official AWS test suite (the cases that apply to S3), the worked
// examples of the S3 API reference and S3 edge cases signed by botocore (tests/data/sigv4).
#include "impl/storage/s3/sigv4.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace smd::s3 {
namespace {

std::string DataDir() { return std::string(SMD_TEST_DATA_DIR) + "/sigv4"; }

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string StripCr(std::string s) {
  s.erase(std::remove(s.begin(), s.end(), '\r'), s.end());
  return s;
}

std::vector<std::string> Cases(const std::string& suite) {
  std::vector<std::string> out;
  DIR* d = opendir((DataDir() + "/" + suite).c_str());
  if (d == nullptr) return out;
  while (dirent* e = readdir(d)) {
    std::string n = e->d_name;
    if (n == "." || n == ".." || n == "LICENSE" || n == "NOTICE") continue;
    out.push_back(suite + "/" + n);
  }
  closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

struct Vector {
  SignRequest req;
  Credentials creds;
  SignOptions opts;
};

std::string JsonString(const cJSON* obj, const char* key) {
  const cJSON* v = cJSON_GetObjectItemCaseSensitive(obj, key);
  return cJSON_IsString(v) ? v->valuestring : "";
}
bool JsonBool(const cJSON* obj, const char* key) {
  return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(obj, key));
}

// "2015-08-30T12:36:00Z" -> "20150830T123600Z"
std::string AmzDate(const std::string& iso) {
  std::string out;
  for (char c : iso)
    if (c != '-' && c != ':') out.push_back(c);
  return out;
}

// Parses a request.txt (request line, headers with folded continuation lines, blank line, body)
// and its context.json.
Vector Load(const std::string& dir) {
  Vector v;
  std::string raw = ReadFile(dir + "/request.txt");
  std::string ctx_text = ReadFile(dir + "/context.json");
  cJSON* ctx = cJSON_Parse(ctx_text.c_str());
  EXPECT_NE(ctx, nullptr) << dir;
  const cJSON* creds = cJSON_GetObjectItemCaseSensitive(ctx, "credentials");
  v.creds.access_key_id = JsonString(creds, "access_key_id");
  v.creds.secret_access_key = JsonString(creds, "secret_access_key");
  v.creds.session_token = JsonString(creds, "token");
  v.opts.region = JsonString(ctx, "region");
  v.opts.service = JsonString(ctx, "service");
  v.opts.amz_date = AmzDate(JsonString(ctx, "timestamp"));
  const bool sign_body = JsonBool(ctx, "sign_body");
  const bool unsigned_payload = JsonBool(ctx, "unsigned_payload");
  const bool path_encoded = JsonBool(ctx, "path_encoded");
  v.opts.sign_session_token = !JsonBool(ctx, "omit_session_token");
  cJSON_Delete(ctx);

  std::string body;
  size_t head_end = raw.find("\n\n");
  if (head_end != std::string::npos) {
    body = raw.substr(head_end + 2);
    raw.resize(head_end);
  }
  std::vector<std::string> lines;
  std::stringstream ss(raw);
  for (std::string line; std::getline(ss, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!line.empty()) lines.push_back(line);
  }
  EXPECT_FALSE(lines.empty()) << dir;
  const std::string& rl = lines[0];
  v.req.method = rl.substr(0, rl.find(' '));
  std::string target = rl.substr(rl.find(' ') + 1, rl.rfind(' ') - rl.find(' ') - 1);
  std::string path = target, query;
  if (size_t q = target.find('?'); q != std::string::npos) {
    path = target.substr(0, q);
    query = target.substr(q + 1);
  }
  v.req.path = path_encoded ? UriDecode(path) : path;
  size_t pos = 0;
  while (!query.empty() && pos <= query.size()) {
    size_t amp = query.find('&', pos);
    std::string part = query.substr(pos, amp == std::string::npos ? std::string::npos : amp - pos);
    size_t eq = part.find('=');
    std::string k = eq == std::string::npos ? part : part.substr(0, eq);
    std::string val = eq == std::string::npos ? "" : part.substr(eq + 1);
    v.req.query.emplace_back(UriDecode(k), UriDecode(val));
    if (amp == std::string::npos) break;
    pos = amp + 1;
  }
  for (size_t i = 1; i < lines.size(); ++i) {
    const std::string& l = lines[i];
    if (l[0] == ' ' || l[0] == '\t') {  // folded continuation of the previous header
      v.req.headers.back().second += " " + l;
      continue;
    }
    size_t colon = l.find(':');
    v.req.headers.emplace_back(l.substr(0, colon), l.substr(colon + 1));
  }
  v.opts.add_content_sha256 = sign_body || unsigned_payload;
  v.req.payload_hash = unsigned_payload ? kUnsignedPayload : Sha256Hex(sign_body ? body : "");
  return v;
}

class SigV4Suite : public ::testing::TestWithParam<std::string> {};

TEST_P(SigV4Suite, CanonicalRequestStringToSignAndSignatureMatch) {
  const std::string dir = DataDir() + "/" + GetParam();
  Vector v = Load(dir);
  Signature sig = Sign(v.req, v.creds, v.opts);
  EXPECT_EQ(sig.canonical_request, StripCr(ReadFile(dir + "/header-canonical-request.txt")));
  EXPECT_EQ(sig.string_to_sign, StripCr(ReadFile(dir + "/header-string-to-sign.txt")));
  std::string want = StripCr(ReadFile(dir + "/header-signature.txt"));
  while (!want.empty() && (want.back() == '\n' || want.back() == ' ')) want.pop_back();
  EXPECT_EQ(sig.signature, want);
  EXPECT_NE(sig.authorization.find("Credential=" + v.creds.access_key_id + "/" +
                                   v.opts.amz_date.substr(0, 8) + "/" + v.opts.region + "/"),
            std::string::npos);
  EXPECT_NE(sig.authorization.find(", Signature=" + want), std::string::npos);
}

std::string CaseName(const ::testing::TestParamInfo<std::string>& info) {
  std::string n = info.param.substr(info.param.find('/') + 1);
  for (char& c : n)
    if (!isalnum(static_cast<unsigned char>(c))) c = '_';
  return n;
}

INSTANTIATE_TEST_SUITE_P(Official, SigV4Suite, ::testing::ValuesIn(Cases("aws-c-auth-v4")),
                         CaseName);
INSTANTIATE_TEST_SUITE_P(S3DocExamples, SigV4Suite,
                         ::testing::ValuesIn(Cases("s3-doc-examples")), CaseName);
INSTANTIATE_TEST_SUITE_P(S3EdgeCases, SigV4Suite, ::testing::ValuesIn(Cases("s3-edge-cases")),
                         CaseName);

TEST(SigV4Data, AllSuitesPresent) {
  // The suites ship with the repository; an empty folder would silently run nothing.
  EXPECT_EQ(Cases("aws-c-auth-v4").size(), 31u);
  EXPECT_EQ(Cases("s3-doc-examples").size(), 4u);
  EXPECT_EQ(Cases("s3-edge-cases").size(), 16u);
}

TEST(SigV4, UriEncodeKeepsUnreservedAndOptionallySlash) {
  EXPECT_EQ(UriEncode("a b+c=d:e/f~g_h.i-j", true), "a%20b%2Bc%3Dd%3Ae/f~g_h.i-j");
  EXPECT_EQ(UriEncode("a/b", false), "a%2Fb");
  EXPECT_EQ(UriEncode("\xc3\xbc", true), "%C3%BC");
  EXPECT_EQ(UriEncode("100%", true), "100%25");
}

TEST(SigV4, UriDecodeHandlesMalformedEscapes) {
  EXPECT_EQ(UriDecode("a%20b%2fc"), "a b/c");
  EXPECT_EQ(UriDecode("100%"), "100%");
  EXPECT_EQ(UriDecode("%zz%4"), "%zz%4");
  EXPECT_EQ(UriDecode("a+b"), "a+b");
}

TEST(SigV4, PathIsNotNormalised) {
  SignRequest r{"GET", "/b/a//b/./c/../d", {}, {{"Host", "h"}}, kEmptySha256};
  SignOptions o{"us-east-1", "s3", "20150830T123600Z"};
  Signature s = Sign(r, Credentials{"AK", "SK", ""}, o);
  EXPECT_EQ(s.canonical_request.substr(0, s.canonical_request.find('\n', 4)),
            "GET\n/b/a//b/./c/../d");
}

TEST(SigV4, SessionTokenSignedOrAppended) {
  SignRequest r{"GET", "/", {}, {{"Host", "h"}}, kUnsignedPayload};
  SignOptions o{"eu-west-1", "s3", "20200101T000000Z"};
  Credentials c{"AK", "SK", "TOKEN"};
  Signature s = Sign(r, c, o);
  EXPECT_NE(s.canonical_request.find("x-amz-security-token:TOKEN\n"), std::string::npos);
  EXPECT_NE(s.authorization.find("SignedHeaders=host;x-amz-content-sha256;x-amz-date;"
                                 "x-amz-security-token,"),
            std::string::npos);
  EXPECT_NE(s.canonical_request.find("x-amz-content-sha256:UNSIGNED-PAYLOAD\n"),
            std::string::npos);
  ASSERT_EQ(s.extra_headers.size(), 3u);
  EXPECT_EQ(s.extra_headers[2].first, "x-amz-security-token");
  o.sign_session_token = false;
  Signature u = Sign(r, c, o);
  EXPECT_EQ(u.canonical_request.find("x-amz-security-token"), std::string::npos);
  ASSERT_EQ(u.extra_headers.size(), 3u);
  EXPECT_EQ(u.extra_headers.back().second, "TOKEN");
  // A different secret gives a different signature.
  c.secret_access_key = "SK2";
  EXPECT_NE(Sign(r, c, o).signature, u.signature);
}

TEST(SigV4, Sha256AndHmacKnownAnswers) {
  EXPECT_EQ(Sha256Hex(""), kEmptySha256);
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  // RFC 4231 test case 2.
  EXPECT_EQ(HexEncode(HmacSha256("Jefe", "what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

}  // namespace
}  // namespace smd::s3
