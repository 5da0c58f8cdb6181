#include "impl/storage/s3/multipart.h"

#include <openssl/evp.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <thread>

#include "impl/storage/s3/xml.h"

namespace smd::s3 {
namespace {

std::string Unquote(std::string s) {
  if (s.size() >= 2 && s.front() == '"' && s.back() == '"') s = s.substr(1, s.size() - 2);
  return s;
}

std::string MultipartEtag(const std::vector<std::string>& etags) {
  std::string raw;
  for (const std::string& e : etags) {
    const std::string hex = Unquote(e);
    if (hex.size() != 32) return "";
    for (size_t i = 0; i < 32; i += 2)
      raw.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  }
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_Digest(raw.data(), raw.size(), md, &n, EVP_md5(), nullptr);
  return HexEncode(std::string_view(reinterpret_cast<const char*>(md), n)) + "-" +
         std::to_string(etags.size());
}

// Whether `key` now holds the object a multipart upload of these parts made: same size, and the
// ETag S3 gives a multipart object, MD5 of the parts' binary MD5s then "-<number of parts>".
bool CompletedAlready(Transport& t, const std::string& bucket, const std::string& key, uint64_t size,
                      const std::vector<std::string>& etags) {
  Request r{"HEAD", bucket, key, {}, {}, {}};
  r.head = true;
  Result<Response> head = t.Execute(r, "HEAD");
  if (!head.ok()) return false;
  auto it = head->headers.find("content-length");
  if (it == head->headers.end() || std::strtoull(it->second.c_str(), nullptr, 10) != size)
    return false;
  it = head->headers.find("etag");
  return it != head->headers.end() && Unquote(it->second) == MultipartEtag(etags);
}

// Aborts every upload in progress of exactly `key`; errors are ignored (best effort).
void AbortUploadsOf(Transport& t, const std::string& bucket, const std::string& key) {
  Result<std::vector<UploadInfo>> ups = ListUploads(t, bucket, key);
  if (!ups.ok()) return;
  for (const UploadInfo& u : *ups)
    if (u.key == key) (void)AbortUpload(t, bucket, key, u.upload_id);
}

}  // namespace

Status AbortUpload(Transport& t, const std::string& bucket, const std::string& key,
                   const std::string& id) {
  Request abort{"DELETE", bucket, key, {{"uploadId", id}}, {}, {}};
  auto res = t.Execute(abort, "AbortMultipartUpload");
  if (!res.ok() && (res.status().code() == Code::kNotFound ||
                    res.status().message().find("NoSuchUpload") != std::string::npos))
    return Status::Ok();
  return res.ok() ? Status::Ok() : res.status();
}

Result<std::vector<UploadInfo>> ListUploads(Transport& t, const std::string& bucket,
                                            const std::string& prefix) {
  std::vector<UploadInfo> out;
  std::string key_marker, id_marker;
  for (int page = 0;; ++page) {
    Request r{"GET", bucket, "", {{"uploads", ""}}, {}, {}};
    if (!prefix.empty()) r.query.emplace_back("prefix", prefix);
    if (!key_marker.empty()) r.query.emplace_back("key-marker", key_marker);
    if (!id_marker.empty()) r.query.emplace_back("upload-id-marker", id_marker);
    r.check_body = [](const std::string& b) {
      return xml::WholeDocument(b, "ListMultipartUploadsResult");
    };
    SMD_ASSIGN_OR_RETURN(Response res, t.Execute(r, "ListMultipartUploads"));
    for (std::string_view u : xml::Elements(res.body, "Upload")) {
      UploadInfo info;
      info.key = xml::FirstText(u, "Key");
      info.upload_id = xml::FirstText(u, "UploadId");
      info.initiated = xml::FirstText(u, "Initiated");
      if (!info.key.empty() && !info.upload_id.empty()) out.push_back(std::move(info));
    }
    if (xml::FirstText(res.body, "IsTruncated") != "true") break;
    std::string nk = xml::FirstText(res.body, "NextKeyMarker");
    std::string ni = xml::FirstText(res.body, "NextUploadIdMarker");
    if ((nk.empty() && ni.empty()) || (nk == key_marker && ni == id_marker) || page > 100000)
      return Status(Code::kHttp, "S3 ListMultipartUploads s3://" + bucket + "/" + prefix +
                                     ": truncated page without a new marker");
    key_marker = std::move(nk);
    id_marker = std::move(ni);
  }
  return out;
}

Status PutMultipart(Transport& t, const std::string& bucket, const std::string& key,
                    std::string_view body) {
  const uint64_t part = std::max<uint64_t>(t.config().part_size, 1);
  std::vector<std::string_view> parts;
  for (uint64_t at = 0; at < body.size() || parts.empty(); at += part) parts.push_back(body.substr(at, part));
  return PutMultipartParts(t, bucket, key, parts);
}

Status PutMultipartParts(Transport& t, const std::string& bucket, const std::string& key,
                         const std::vector<std::string_view>& parts) {
  uint64_t total = 0;
  for (std::string_view p : parts) total += p.size();
  Request create{"POST", bucket, key, {{"uploads", ""}}, {}, {}};
  create.check_body = [](const std::string& b) {
    return xml::FirstText(b, "UploadId").empty() ? std::string("no UploadId") : std::string();
  };
  // An attempt whose answer was lost (a reset, a 500 after the server applied it) may have
  // created an upload whose id we never learnt: abort the key's uploads before trying again,
  // so that none is left behind with its parts.
  create.before_retry = [&] { AbortUploadsOf(t, bucket, key); };
  SMD_ASSIGN_OR_RETURN(Response cr, t.Execute(create, "CreateMultipartUpload"));
  const std::string upload_id = xml::FirstText(cr.body, "UploadId");
  if (upload_id.empty())
    return Status(Code::kHttp, "S3 CreateMultipartUpload s3://" + bucket + "/" + key +
                                   ": no UploadId in the response");
  const size_t nparts = parts.size();
  std::vector<std::string> etags(nparts);
  std::vector<Status> errors(nparts);
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  auto worker = [&] {
    for (size_t i; (i = next.fetch_add(1)) < nparts && !failed.load();) {
      std::string_view piece = parts[i];
      Request up{"PUT", bucket, key,
                 {{"partNumber", std::to_string(i + 1)}, {"uploadId", upload_id}}, {}, piece};
      auto res = t.Execute(up, "UploadPart");
      if (!res.ok()) {
        errors[i] = res.status();
        failed = true;
        continue;
      }
      auto it = res->headers.find("etag");
      etags[i] = it != res->headers.end() ? it->second : "";
    }
  };
  const int nthreads =
      static_cast<int>(std::min<size_t>(nparts, std::max(1, t.config().max_parallel_parts)));
  std::vector<std::thread> threads;
  for (int t = 1; t < nthreads; ++t) threads.emplace_back(worker);
  worker();
  for (auto& t : threads) t.join();
  Status st;
  for (const Status& e : errors)
    if (!e.ok()) {
      st = e;
      break;
    }
  if (st.ok()) {
    std::string xml_body = "<CompleteMultipartUpload>";
    for (size_t i = 0; i < nparts; ++i)
      xml_body += "<Part><PartNumber>" + std::to_string(i + 1) + "</PartNumber><ETag>" +
                  xml::Escape(etags[i]) + "</ETag></Part>";
    xml_body += "</CompleteMultipartUpload>";
    Request complete{"POST", bucket, key, {{"uploadId", upload_id}},
                     {{"Content-Type", "application/xml"}}, xml_body};
    complete.error_in_200 = true;  // a 200 whose body is an <Error> is retried too
    auto res = t.Execute(complete, "CompleteMultipartUpload");
    if (!res.ok()) st = res.status();
    if (!st.ok() && st.message().find("NoSuchUpload") != std::string::npos &&
        CompletedAlready(t, bucket, key, total, etags)) {
      // An earlier attempt completed the upload and its answer was lost: the retry finds the
      // upload gone. The object there now is ours (its size and multipart ETag say so).
      return Status::Ok();
    }
    if (st.ok()) return st;
  }
  (void)AbortUpload(t, bucket, key, upload_id);
  return st;
}

}  // namespace smd::s3
