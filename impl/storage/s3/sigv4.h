// AWS Signature Version 4 for S3 requests (header authorisation), with S3's rules: the object key
// path is percent-encoded once (RFC 3986 unreserved characters and '/' kept) and never normalised
// (no '.'/'..' resolution, no '//' merging). Pure functions; no I/O, no clock.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace smd::s3 {

// The payload hash S3 accepts when the body is not hashed (TLS protects it in transit).
inline constexpr const char* kUnsignedPayload = "UNSIGNED-PAYLOAD";
// SHA-256 of the empty string, hex.
inline constexpr const char* kEmptySha256 =
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

struct Credentials {
  std::string access_key_id;
  std::string secret_access_key;
  std::string session_token;  // empty when the credentials are long-term
};

using HeaderList = std::vector<std::pair<std::string, std::string>>;

struct SignRequest {
  std::string method;  // "GET", "PUT", ...
  // The path as raw bytes, starting with '/': "/bucket/a b/c" (path style) or "/a b/c"
  // (virtual-hosted). It is percent-encoded here; do not encode it yourself.
  std::string path;
  // Decoded query parameters; a valueless one ("?uploads") has an empty value.
  std::vector<std::pair<std::string, std::string>> query;
  // Headers to sign, as they will be sent ("Host" included). Names in any case; a repeated name
  // is signed as one header with its values joined by ',' in order.
  HeaderList headers;
  // Hex SHA-256 of the body, or kUnsignedPayload.
  std::string payload_hash;
};

struct SignOptions {
  std::string region;             // "us-east-1"
  std::string service = "s3";     // the general test suite uses "service"
  std::string amz_date;           // "20150830T123600Z" (UTC)
  bool add_content_sha256 = true; // add and sign x-amz-content-sha256 (S3 requires it)
  bool sign_session_token = true; // false: send x-amz-security-token but do not sign it
};

struct Signature {
  std::string canonical_request;
  std::string string_to_sign;
  std::string signature;       // hex
  std::string authorization;   // value of the Authorization header
  // Headers the caller must add to the request besides Authorization (x-amz-date,
  // x-amz-content-sha256, x-amz-security-token), in this order.
  HeaderList extra_headers;
};

// Percent-encodes every byte outside A-Z a-z 0-9 - _ . ~ as %XX (upper-case hex); '/' is kept
// when keep_slash.
std::string UriEncode(std::string_view in, bool keep_slash);
// Decodes %XX sequences; a malformed '%' is kept as is. '+' stays '+'.
std::string UriDecode(std::string_view in);

// Lower-case hex of SHA-256(data).
std::string Sha256Hex(std::string_view data);
// Raw 32-byte HMAC-SHA256(key, data).
std::string HmacSha256(std::string_view key, std::string_view data);
std::string HexEncode(std::string_view raw);

// The canonical query string: keys and values encoded, sorted by encoded key then value.
std::string CanonicalQueryString(const std::vector<std::pair<std::string, std::string>>& query);

// Signs `req` (the headers in `opts` are added to what is signed). Never fails: bad input gives a
// signature the server rejects.
Signature Sign(const SignRequest& req, const Credentials& creds, const SignOptions& opts);

}  // namespace smd::s3
