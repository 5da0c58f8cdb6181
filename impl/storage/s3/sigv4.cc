#include "impl/storage/s3/sigv4.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <algorithm>
#include <map>

#include "impl/core/text.h"

namespace smd::s3 {
namespace {

bool Unreserved(unsigned char c) {
  return IsAsciiAlnum(static_cast<char>(c)) || c == '-' || c == '_' || c == '.' || c == '~';
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

// Trims and collapses each run of whitespace inside the value to one space.
std::string CanonicalHeaderValue(std::string_view v) {
  std::string out;
  out.reserve(v.size());
  bool pending_space = false;
  for (char c : v) {
    if (IsSpace(c)) {
      pending_space = !out.empty();
      continue;
    }
    if (pending_space) out.push_back(' ');
    pending_space = false;
    out.push_back(c);
  }
  return out;
}

}  // namespace

std::string UriEncode(std::string_view in, bool keep_slash) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(in.size() * 3 / 2);
  for (char ch : in) {
    auto c = static_cast<unsigned char>(ch);
    if (Unreserved(c) || (keep_slash && c == '/')) {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

std::string UriDecode(std::string_view in) {
  std::string out;
  out.reserve(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] == '%' && i + 2 < in.size()) {
      int hi = HexValue(in[i + 1]), lo = HexValue(in[i + 2]);
      if (hi >= 0 && lo >= 0) {
        out.push_back(static_cast<char>(hi * 16 + lo));
        i += 2;
        continue;
      }
    }
    out.push_back(in[i]);
  }
  return out;
}

std::string HexEncode(std::string_view raw) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(raw.size() * 2);
  for (char ch : raw) {
    auto c = static_cast<unsigned char>(ch);
    out.push_back(kHex[c >> 4]);
    out.push_back(kHex[c & 15]);
  }
  return out;
}

std::string Sha256Hex(std::string_view data) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(data.data(), data.size(), md, &len, EVP_sha256(), nullptr);
  return HexEncode(std::string_view(reinterpret_cast<char*>(md), len));
}

std::string HmacSha256(std::string_view key, std::string_view data) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), md, &len);
  return std::string(reinterpret_cast<char*>(md), len);
}

std::string CanonicalQueryString(const std::vector<std::pair<std::string, std::string>>& query) {
  std::vector<std::pair<std::string, std::string>> enc;
  enc.reserve(query.size());
  for (const auto& [k, v] : query) enc.emplace_back(UriEncode(k, false), UriEncode(v, false));
  std::sort(enc.begin(), enc.end());
  std::string out;
  for (const auto& [k, v] : enc) {
    if (!out.empty()) out.push_back('&');
    out += k;
    out.push_back('=');
    out += v;
  }
  return out;
}

Signature Sign(const SignRequest& req, const Credentials& creds, const SignOptions& opts) {
  Signature sig;
  sig.extra_headers.emplace_back("x-amz-date", opts.amz_date);
  if (opts.add_content_sha256) sig.extra_headers.emplace_back("x-amz-content-sha256", req.payload_hash);
  const bool token = !creds.session_token.empty();
  if (token && opts.sign_session_token)
    sig.extra_headers.emplace_back("x-amz-security-token", creds.session_token);

  // Lower-case names, values joined in order for repeated names; std::map sorts by name.
  std::map<std::string, std::string> headers;
  auto add = [&](const std::string& name, std::string_view value) {
    std::string key = AsciiLower(name);
    std::string val = CanonicalHeaderValue(value);
    auto it = headers.find(key);
    if (it == headers.end()) {
      headers.emplace(std::move(key), std::move(val));
    } else {
      it->second.push_back(',');
      it->second += val;
    }
  };
  for (const auto& [n, v] : req.headers) add(n, v);
  for (const auto& [n, v] : sig.extra_headers) add(n, v);

  std::string canonical_headers, signed_headers;
  for (const auto& [n, v] : headers) {
    canonical_headers += n;
    canonical_headers.push_back(':');
    canonical_headers += v;
    canonical_headers.push_back('\n');
    if (!signed_headers.empty()) signed_headers.push_back(';');
    signed_headers += n;
  }

  std::string& cr = sig.canonical_request;
  cr = req.method;
  cr.push_back('\n');
  cr += UriEncode(req.path.empty() ? std::string_view("/") : std::string_view(req.path), true);
  cr.push_back('\n');
  cr += CanonicalQueryString(req.query);
  cr.push_back('\n');
  cr += canonical_headers;
  cr.push_back('\n');
  cr += signed_headers;
  cr.push_back('\n');
  cr += req.payload_hash;

  const std::string date = opts.amz_date.substr(0, 8);
  const std::string scope = date + "/" + opts.region + "/" + opts.service + "/aws4_request";
  sig.string_to_sign = "AWS4-HMAC-SHA256\n" + opts.amz_date + "\n" + scope + "\n" + Sha256Hex(cr);

  std::string k = HmacSha256("AWS4" + creds.secret_access_key, date);
  k = HmacSha256(k, opts.region);
  k = HmacSha256(k, opts.service);
  k = HmacSha256(k, "aws4_request");
  sig.signature = HexEncode(HmacSha256(k, sig.string_to_sign));
  sig.authorization = "AWS4-HMAC-SHA256 Credential=" + creds.access_key_id + "/" + scope +
                      ", SignedHeaders=" + signed_headers + ", Signature=" + sig.signature;
  if (token && !opts.sign_session_token)
    sig.extra_headers.emplace_back("x-amz-security-token", creds.session_token);
  return sig;
}

}  // namespace smd::s3
