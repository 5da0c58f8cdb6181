#include "impl/storage/s3/client.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <set>

#include "impl/storage/s3/multipart.h"
#include "impl/storage/s3/transport.h"
#include "impl/storage/s3/xml.h"

namespace smd::s3 {

struct Client::Impl {
  std::unique_ptr<Transport> transport;
};

namespace {

// A listing's value under encoding-type=url: %XX escapes, and '+' for a space (as S3 and the
// SDKs' unquote_plus read it; a '+' in a key comes as %2B).
std::string UrlDecodeListing(const std::string& v) {
  std::string plus = v;
  std::replace(plus.begin(), plus.end(), '+', ' ');
  return UriDecode(plus);
}

Status PutSingle(Transport& t, const std::string& bucket, const std::string& key,
                 std::string_view body, const PutOptions& opts) {
  Request r{"PUT", bucket, key, {}, {}, body};
  if (opts.if_none_match) r.headers.emplace_back("If-None-Match", "*");
  if (!opts.content_type.empty()) r.headers.emplace_back("Content-Type", opts.content_type);
  auto res = t.Execute(r, "PUT");
  return res.ok() ? Status::Ok() : res.status();
}

}  // namespace

Result<std::vector<UploadInfo>> Client::ListUploads(const std::string& bucket,
                                                    const std::string& prefix) {
  SMD_RETURN_IF_ERROR(ValidateBucketName(bucket));
  return s3::ListUploads(*impl_->transport, bucket, prefix);
}

Status Client::AbortUpload(const std::string& bucket, const std::string& key,
                           const std::string& upload_id) {
  SMD_RETURN_IF_ERROR(ValidateBucketName(bucket));
  return s3::AbortUpload(*impl_->transport, bucket, key, upload_id);
}

Result<std::unique_ptr<Client>> Client::Create(Config config) {
  auto impl = std::make_unique<Impl>();
  SMD_ASSIGN_OR_RETURN(impl->transport, Transport::Create(std::move(config)));
  return std::unique_ptr<Client>(new Client(std::move(impl)));
}

Client::Client(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Client::~Client() = default;
const Config& Client::config() const { return impl_->transport->config(); }

Client::Stats Client::stats() const {
  Stats s;
  s.requests = impl_->transport->requests();
  s.connections = impl_->transport->connections();
  s.retries = impl_->transport->retries();
  return s;
}

Status Client::Put(const std::string& bucket, const std::string& key, std::string_view body,
                   const PutOptions& opts) {
  SMD_RETURN_IF_ERROR(ValidateBucketName(bucket));
  if (body.size() >= impl_->transport->config().multipart_threshold && !opts.if_none_match)
    return s3::PutMultipart(*impl_->transport, bucket, key, body);
  return PutSingle(*impl_->transport, bucket, key, body, opts);
}

Status Client::PutMultipart(const std::string& bucket, const std::string& key,
                            std::string_view body) {
  SMD_RETURN_IF_ERROR(ValidateBucketName(bucket));
  return s3::PutMultipart(*impl_->transport, bucket, key, body);
}

Status Client::PutParts(const std::string& bucket, const std::string& key,
                        const std::vector<std::string_view>& parts) {
  SMD_RETURN_IF_ERROR(ValidateBucketName(bucket));
  uint64_t total = 0;
  for (std::string_view p : parts) total += p.size();
  if (parts.size() <= 1) return Put(bucket, key, parts.empty() ? std::string_view() : parts[0]);
  if (total < impl_->transport->config().multipart_threshold) {
    std::string joined;
    joined.reserve(total);
    for (std::string_view p : parts) joined.append(p.data(), p.size());
    return PutSingle(*impl_->transport, bucket, key, joined, PutOptions());
  }
  return s3::PutMultipartParts(*impl_->transport, bucket, key, parts);
}

Result<std::string> Client::Get(const std::string& bucket, const std::string& key) {
  SMD_RETURN_IF_ERROR(ValidateBucketName(bucket));
  SMD_ASSIGN_OR_RETURN(Response r, impl_->transport->Execute(Request{"GET", bucket, key, {}, {}, {}}, "GET"));
  return std::move(r.body);
}

Status Client::GetRange(const std::string& bucket, const std::string& key, uint64_t offset,
                        uint64_t len, char* out) {
  SMD_RETURN_IF_ERROR(ValidateBucketName(bucket));
  if (len == 0) {
    SMD_ASSIGN_OR_RETURN(ObjectInfo info, Head(bucket, key));
    if (info.size < offset)
      return Corrupt("S3 object s3://" + bucket + "/" + key + " has " +
                     std::to_string(info.size) + " bytes, fewer than offset " +
                     std::to_string(offset));
    return Status::Ok();
  }
  Request r{"GET", bucket, key, {}, {}, {}};
  r.headers.emplace_back("Range", "bytes=" + std::to_string(offset) + "-" +
                                      std::to_string(offset + len - 1));
  auto res = impl_->transport->Execute(r, "GET (range)");
  if (!res.ok()) {
    if (res.status().code() == Code::kCorrupt)
      return Corrupt("S3 object s3://" + bucket + "/" + key + " is shorter than " +
                     std::to_string(offset + len) + " bytes (range " + std::to_string(offset) +
                     "+" + std::to_string(len) + ")");
    return res.status();
  }
  if (res->status != 206 && res->status != 200)
    return Status(Code::kHttp, "S3 GET (range) s3://" + bucket + "/" + key + ": HTTP " +
                                   std::to_string(res->status));
  std::string_view body = res->body;
  if (res->status == 200) body = body.substr(std::min<size_t>(offset, body.size()));
  if (body.size() < len)
    return Corrupt("S3 object s3://" + bucket + "/" + key + " is shorter than " +
                   std::to_string(offset + len) + " bytes (range " + std::to_string(offset) +
                   "+" + std::to_string(len) + " returned " + std::to_string(body.size()) + ")");
  std::memcpy(out, body.data(), len);
  return Status::Ok();
}

Result<ObjectInfo> Client::Head(const std::string& bucket, const std::string& key) {
  SMD_RETURN_IF_ERROR(ValidateBucketName(bucket));
  Request r{"HEAD", bucket, key, {}, {}, {}};
  r.head = true;
  Result<Response> head = impl_->transport->Execute(r, "HEAD");
  if (!head.ok() && head.status().code() == Code::kHttp) {
    // A HEAD answer has no body, so no S3 error code: a 400 may be an invalid session token, a
    // bad request... A one-key listing of the same key tells which (its error has a body).
    ListOptions lo;
    lo.prefix = key;
    lo.max_keys = 1;
    Result<ListPage> probe = ListPageV2(bucket, lo);
    if (!probe.ok() && probe.status().code() != Code::kHttp) return probe.status();
  }
  SMD_ASSIGN_OR_RETURN(Response res, std::move(head));
  ObjectInfo info;
  info.key = key;
  auto it = res.headers.find("content-length");
  if (it != res.headers.end()) info.size = std::strtoull(it->second.c_str(), nullptr, 10);
  it = res.headers.find("etag");
  if (it != res.headers.end()) info.etag = it->second;
  return info;
}

Status Client::Delete(const std::string& bucket, const std::string& key) {
  SMD_RETURN_IF_ERROR(ValidateBucketName(bucket));
  auto res = impl_->transport->Execute(Request{"DELETE", bucket, key, {}, {}, {}}, "DELETE");
  if (!res.ok() && res.status().code() == Code::kNotFound) return Status::Ok();
  return res.ok() ? Status::Ok() : res.status();
}

Result<ListPage> Client::ListPageV2(const std::string& bucket, const ListOptions& opts,
                                    const std::string& continuation_token) {
  SMD_RETURN_IF_ERROR(ValidateBucketName(bucket));
  Request r{"GET", bucket, "", {{"list-type", "2"}}, {}, {}};
  if (!opts.prefix.empty()) r.query.emplace_back("prefix", opts.prefix);
  if (!opts.delimiter.empty()) r.query.emplace_back("delimiter", opts.delimiter);
  if (!opts.start_after.empty()) r.query.emplace_back("start-after", opts.start_after);
  if (!continuation_token.empty()) r.query.emplace_back("continuation-token", continuation_token);
  // Keys come back URL-encoded: XML 1.0 cannot carry every byte a key may hold (\x01 ...).
  r.query.emplace_back("encoding-type", "url");
  const int max_keys = opts.max_keys > 0 ? opts.max_keys : impl_->transport->config().list_max_keys;
  r.query.emplace_back("max-keys", std::to_string(max_keys > 0 ? max_keys : 1000));
  r.check_body = [](const std::string& b) {
    std::string wrong = xml::WholeDocument(b, "ListBucketResult");
    if (!wrong.empty()) return wrong;
    // KeyCount (when the server gives it) counts the keys and common prefixes of the page (some
    // servers count the keys only).
    const std::string count = xml::FirstText(b, "KeyCount");
    if (!count.empty()) {
      const size_t keys = xml::Elements(b, "Contents").size();
      const size_t all = keys + xml::Elements(b, "CommonPrefixes").size();
      const unsigned long long said = std::strtoull(count.c_str(), nullptr, 10);
      if (said != all && said != keys)
        return "KeyCount " + count + " but " + std::to_string(all) + " entries";
    }
    return std::string();
  };
  SMD_ASSIGN_OR_RETURN(Response res, impl_->transport->Execute(r, "ListObjectsV2"));
  // Decoded only when the answer says it is encoded (a server may ignore encoding-type), as the
  // AWS SDKs do: Key and Prefix ('+' is a space; the continuation token is opaque, never encoded).
  const bool encoded = xml::FirstText(res.body, "EncodingType") == "url";
  auto text = [&](std::string_view element, const char* name) {
    std::string v = xml::FirstText(element, name);
    return encoded ? UrlDecodeListing(v) : v;
  };
  ListPage page;
  for (std::string_view c : xml::Elements(res.body, "Contents")) {
    ObjectInfo o;
    o.key = text(c, "Key");
    o.size = std::strtoull(xml::FirstText(c, "Size").c_str(), nullptr, 10);
    o.etag = xml::FirstText(c, "ETag");
    page.objects.push_back(std::move(o));
  }
  for (std::string_view c : xml::Elements(res.body, "CommonPrefixes"))
    page.common_prefixes.push_back(text(c, "Prefix"));
  page.truncated = xml::FirstText(res.body, "IsTruncated") == "true";
  page.next_continuation_token = xml::FirstText(res.body, "NextContinuationToken");
  if (page.truncated && page.next_continuation_token.empty())
    return Status(Code::kHttp, "S3 ListObjectsV2 s3://" + bucket + "/" + opts.prefix +
                                   ": truncated page without NextContinuationToken");
  return page;
}

Result<ListPage> Client::List(const std::string& bucket, const ListOptions& opts) {
  ListPage all;
  std::string token;
  std::set<std::string> seen;  // a token given twice would list the same pages for ever
  for (;;) {
    SMD_ASSIGN_OR_RETURN(ListPage p, ListPageV2(bucket, opts, token));
    for (auto& o : p.objects) all.objects.push_back(std::move(o));
    for (auto& c : p.common_prefixes) all.common_prefixes.push_back(std::move(c));
    if (!p.truncated) break;
    if (!token.empty()) seen.insert(token);
    if (seen.count(p.next_continuation_token) != 0)
      return Status(Code::kHttp, "S3 ListObjectsV2 s3://" + bucket + "/" + opts.prefix +
                                     ": truncated page whose NextContinuationToken '" +
                                     p.next_continuation_token +
                                     "' was given before (the listing would never end)");
    token = p.next_continuation_token;
  }
  return all;
}

}  // namespace smd::s3
