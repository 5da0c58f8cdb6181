#include "impl/storage/s3_storage.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <new>
#include <random>
#include <string_view>
#include <utility>

#include "impl/core/pages.h"

namespace smd::io {

Result<S3Uri> ParseS3Uri(const std::string& uri) {
  const std::string scheme = "s3://";
  if (uri.compare(0, scheme.size(), scheme) != 0)
    return InvalidArgument("not an S3 URI (s3://bucket/prefix): '" + uri + "'");
  std::string rest = uri.substr(scheme.size());
  size_t slash = rest.find('/');
  S3Uri out;
  out.bucket = rest.substr(0, slash);
  if (out.bucket.empty())
    return InvalidArgument("S3 URI '" + uri + "' has no bucket (expected s3://bucket/prefix)");
  Status st = s3::ValidateBucketName(out.bucket);
  if (!st.ok()) return st.WithContext("S3 URI '" + uri + "'");
  std::string raw = slash == std::string::npos ? "" : rest.substr(slash + 1);
  for (char c : raw) {
    if (c == '/' && (out.prefix.empty() || out.prefix.back() == '/')) continue;
    out.prefix.push_back(c);
  }
  while (!out.prefix.empty() && out.prefix.back() == '/') out.prefix.pop_back();
  if (out.prefix.empty())
    return InvalidArgument("S3 URI '" + uri +
                           "' has no prefix: a trial lives under s3://bucket/prefix");
  return out;
}

namespace {

class S3Storage;

// One part of an object being written: a mapping of the part's size, of which only the pages
// written take memory (no copy as it fills, and given back to the system whole when freed).
class PartBlock {
 public:
  explicit PartBlock(size_t cap) : data_(MapPages(cap)), cap_(cap) {
    if (data_ == nullptr) throw std::bad_alloc();
  }
  ~PartBlock() { UnmapPages(data_, cap_); }
  PartBlock(PartBlock&& o) noexcept : data_(o.data_), size_(o.size_), cap_(o.cap_) { o.data_ = nullptr; }
  PartBlock(const PartBlock&) = delete;
  PartBlock& operator=(const PartBlock&) = delete;
  PartBlock& operator=(PartBlock&&) = delete;
  size_t room() const { return cap_ - size_; }
  void Append(const char* p, size_t n) {
    std::memcpy(data_ + size_, p, n);
    size_ += n;
  }
  std::string_view view() const { return std::string_view(data_, size_); }

 private:
  char* data_;
  size_t size_ = 0;
  size_t cap_;
};

// An object written whole at commit. Its bytes are kept in blocks of the multipart part size,
// each the part it will be uploaded as (no copy into one body), mapped from the system: a
// contiguous heap buffer growing by doubling held the old and the new buffer at once, and the
// heap kept what was freed (an S3 run with a 64 MiB budget peaked at 162 MiB resident).
class S3Sink : public FileSink {
 public:
  S3Sink(std::shared_ptr<s3::Client> client, std::string bucket, std::string key)
      : client_(std::move(client)), bucket_(std::move(bucket)), key_(std::move(key)),
        block_(static_cast<size_t>(std::clamp<uint64_t>(client_->config().part_size, 4096, 1u << 30))) {}
  Status Append(const struct iovec* pieces, int count) override {
    if (done_) return InvalidState("append to s3://" + bucket_ + "/" + key_ + " after commit/abort");
    for (int i = 0; i < count; ++i) {
      const char* p = static_cast<const char*>(pieces[i].iov_base);
      size_t n = pieces[i].iov_len;
      while (n > 0) {
        if (blocks_.empty() || blocks_.back().room() == 0) blocks_.emplace_back(block_);
        const size_t take = std::min(n, blocks_.back().room());
        blocks_.back().Append(p, take);
        p += take;
        n -= take;
        size_ += take;
      }
    }
    return Status::Ok();
  }
  uint64_t size() const override { return size_; }
  bool HoldsBytesInMemory() const override { return true; }
  Status Commit() override {
    if (done_) return InvalidState("commit of s3://" + bucket_ + "/" + key_ + " twice or after abort");
    std::vector<std::string_view> parts;
    for (const PartBlock& b : blocks_) parts.push_back(b.view());
    Status st = client_->PutParts(bucket_, key_, parts);
    if (st.ok()) Release();
    return st;
  }
  void Abort() override { Release(); }

 private:
  void Release() {
    done_ = true;
    std::vector<PartBlock>().swap(blocks_);
    size_ = 0;
  }
  std::shared_ptr<s3::Client> client_;
  std::string bucket_, key_;
  const size_t block_;             // the part size
  std::vector<PartBlock> blocks_;  // every one full but the last
  uint64_t size_ = 0;
  bool done_ = false;
};

class S3AppendFile : public AppendFile {
 public:
  S3AppendFile(std::shared_ptr<s3::Client> client, std::string bucket, std::string key,
               std::string where, std::string content)
      : client_(std::move(client)), bucket_(std::move(bucket)), key_(std::move(key)),
        where_(std::move(where)), content_(std::move(content)) {}
  ~S3AppendFile() override { (void)Close(); }
  Status Append(std::string_view bytes) override {
    if (closed_) return Status(Code::kIO, where_ + ": appended to after close");
    content_.append(bytes.data(), bytes.size());
    return Status::Ok();
  }
  uint64_t size() const override { return content_.size(); }
  // The whole object is PUT again (S3 cannot append); nothing is sent when nothing changed.
  Status Flush() override {
    if (closed_) return Status(Code::kIO, where_ + ": flushed after close");
    if (uploaded_ == content_.size()) return Status::Ok();
    SMD_RETURN_IF_ERROR(client_->Put(bucket_, key_, content_));
    uploaded_ = content_.size();
    return Status::Ok();
  }
  // A failed upload is kept: every later Close returns it too (never OK after a lost upload).
  Status Close() override {
    if (closed_) return close_status_;
    closed_ = true;
    if (uploaded_ == content_.size() && uploaded_ > 0) return Status::Ok();
    close_status_ = client_->Put(bucket_, key_, content_);
    return close_status_;
  }

 private:
  std::shared_ptr<s3::Client> client_;
  std::string bucket_, key_, where_, content_;
  bool closed_ = false;
  Status close_status_;  // the first Close's result
  size_t uploaded_ = 0;  // bytes of content_ the object holds (after a Flush)
};

class S3Storage : public Storage {
 public:
  S3Storage(std::shared_ptr<s3::Client> client, S3Uri uri)
      : client_(std::move(client)), uri_(std::move(uri)),
        root_("s3://" + uri_.bucket + "/" + uri_.prefix) {}

  bool RootAppearsWithFirstFile() const override { return true; }  // a prefix is its objects

  const std::string& root() const override { return root_; }
  std::string Describe(std::string_view rel) const override {
    return rel.empty() ? root_ : root_ + "/" + std::string(rel);
  }

  Status PrepareForWriting() override {
    // One small listing proves the bucket exists and the credentials may read it.
    s3::ListOptions o;
    o.prefix = uri_.prefix + "/";
    o.max_keys = 1;
    auto page = client_->ListPageV2(uri_.bucket, o);
    return page.ok() ? Status::Ok() : page.status();
  }

  Result<std::unique_ptr<FileSink>> Create(const std::string& rel) override {
    return std::unique_ptr<FileSink>(new S3Sink(client_, uri_.bucket, Key(rel)));
  }

  Status WriteAtomic(const std::string& rel, std::string_view content) override {
    return client_->Put(uri_.bucket, Key(rel), content);
  }

  Status CreateExclusive(const std::string& rel) override {
    // The object holds a token of this call, so that a 412 can be told apart: when the answer
    // to our PUT was lost and the client retried, the retry finds the object, which is ours.
    const std::string token = ClaimToken();
    if (conditional_put_.load()) {
      s3::PutOptions o;
      o.if_none_match = true;
      Status st = client_->Put(uri_.bucket, Key(rel), token, o);
      if (st.ok()) return st;
      if (st.code() == Code::kAlreadyExists) {
        auto there = client_->Get(uri_.bucket, Key(rel));
        if (there.ok() && *there == token) return Status::Ok();
        if (there.ok()) return Status(Code::kAlreadyExists, Describe(rel) + " already exists");
        if (there.status().code() == Code::kNotFound) {
          // Removed since the 412 (its owner ended): one more try.
          st = client_->Put(uri_.bucket, Key(rel), token, o);
          if (st.ok() || st.code() != Code::kAlreadyExists) return st;
          return Status(Code::kAlreadyExists, Describe(rel) + " already exists");
        }
        // Whose it is cannot be told (it may be ours, from a PUT whose answer was lost): not
        // "another process", which would send the user to remove a file that may be ours.
        return there.status().WithContext("cannot tell whose " + Describe(rel) +
                                          " is (it exists; reading it failed)");
      }
      // A server without conditional writes answers 501 NotImplemented.
      if (st.code() != Code::kHttp || st.message().find("NotImplemented") == std::string::npos)
        return st;
      conditional_put_ = false;
    }
    // Fallback, NOT atomic: two writers may both see "absent" and both write.
    SMD_ASSIGN_OR_RETURN(bool exists, Exists(rel));
    if (exists) return Status(Code::kAlreadyExists, Describe(rel) + " already exists");
    return client_->Put(uri_.bucket, Key(rel), token);
  }

  Status Remove(const std::string& rel) override { return client_->Delete(uri_.bucket, Key(rel)); }

  Result<bool> Exists(const std::string& rel) override {
    auto head = client_->Head(uri_.bucket, Key(rel));
    if (head.ok()) return true;
    if (head.status().code() != Code::kNotFound) return head.status();
    // A folder: some object below it.
    s3::ListOptions o;
    o.prefix = Key(rel) + "/";
    o.max_keys = 1;
    SMD_ASSIGN_OR_RETURN(s3::ListPage page, client_->ListPageV2(uri_.bucket, o));
    return !page.objects.empty();
  }

  Result<uint64_t> FileSize(const std::string& rel) override {
    SMD_ASSIGN_OR_RETURN(s3::ObjectInfo info, client_->Head(uri_.bucket, Key(rel)));
    return info.size;
  }

  Result<std::string> ReadAll(const std::string& rel) override {
    return client_->Get(uri_.bucket, Key(rel));
  }

  Status ReadRange(const std::string& rel, uint64_t offset, uint64_t len, char* out) override {
    return client_->GetRange(uri_.bucket, Key(rel), offset, len, out);
  }

  Result<std::vector<std::string>> ListDir(const std::string& rel_dir) override {
    s3::ListOptions o;
    o.prefix = (rel_dir.empty() ? uri_.prefix : Key(rel_dir)) + "/";
    o.delimiter = "/";
    SMD_ASSIGN_OR_RETURN(s3::ListPage page, client_->List(uri_.bucket, o));
    std::vector<std::string> names;
    for (const auto& obj : page.objects)
      if (obj.key.size() > o.prefix.size()) names.push_back(obj.key.substr(o.prefix.size()));
    for (const auto& p : page.common_prefixes) {
      std::string n = p.substr(o.prefix.size());
      if (!n.empty() && n.back() == '/') n.pop_back();
      if (!n.empty()) names.push_back(std::move(n));
    }
    if (names.empty()) return NotFound("cannot list " + Describe(rel_dir) + ": no such folder");
    return names;
  }

  // Only the keys after `from` are listed (ListObjectsV2 StartAfter), so a refresh of a growing
  // trial costs what is new, not what is there.
  Result<std::vector<std::string>> List(const std::string& rel_dir, std::string_view from) override {
    if (from.empty()) {
      SMD_ASSIGN_OR_RETURN(std::vector<std::string> all, ListDir(rel_dir));
      std::sort(all.begin(), all.end());
      return all;
    }
    s3::ListOptions o;
    o.prefix = (rel_dir.empty() ? uri_.prefix : Key(rel_dir)) + "/";
    o.delimiter = "/";
    // StartAfter is exclusive and `from` is inclusive: start after the key just before it.
    std::string start = o.prefix + std::string(from);
    start.pop_back();
    o.start_after = start;
    SMD_ASSIGN_OR_RETURN(s3::ListPage page, client_->List(uri_.bucket, o));
    std::vector<std::string> names;
    for (const auto& obj : page.objects) {
      std::string n = obj.key.substr(o.prefix.size());
      if (!n.empty() && n >= from) names.push_back(std::move(n));
    }
    for (const auto& p : page.common_prefixes) {
      std::string n = p.substr(o.prefix.size());
      if (!n.empty() && n.back() == '/') n.pop_back();
      if (!n.empty() && n >= from) names.push_back(std::move(n));
    }
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
    return names;
  }

  // An object cannot be appended to: the file is kept in memory and the whole object is PUT on
  // Close (what was there before is read first, so appending continues it).
  Result<std::unique_ptr<AppendFile>> OpenForAppend(const std::string& rel) override {
    std::string content;
    auto old = client_->Get(uri_.bucket, Key(rel));
    if (old.ok()) {
      content = std::move(*old);
    } else if (old.status().code() != Code::kNotFound) {
      return old.status();
    }
    return std::unique_ptr<AppendFile>(new S3AppendFile(client_, uri_.bucket, Key(rel),
                                                        Describe(rel), std::move(content)));
  }

 private:
  // Unique per call: host, process, a counter and 64 random bits.
  static std::string ClaimToken() {
    static std::atomic<uint64_t> counter{0};
    char host[256] = {0};
    ::gethostname(host, sizeof host - 1);
    std::random_device rd;
    const uint64_t r = (static_cast<uint64_t>(rd()) << 32) ^ rd();
    return "smd claim " + std::string(host) + " pid " + std::to_string(::getpid()) + " #" +
           std::to_string(counter.fetch_add(1)) + " " + std::to_string(r) + "\n";
  }

  std::string Key(const std::string& rel) const {
    return rel.empty() ? uri_.prefix : uri_.prefix + "/" + rel;
  }

  std::shared_ptr<s3::Client> client_;
  S3Uri uri_;
  std::string root_;
  std::atomic<bool> conditional_put_{true};
};

}  // namespace

Result<std::unique_ptr<Storage>> MakeS3Storage(const std::string& uri,
                                               std::shared_ptr<s3::Client> client) {
  SMD_ASSIGN_OR_RETURN(S3Uri u, ParseS3Uri(uri));
  return std::unique_ptr<Storage>(new S3Storage(std::move(client), std::move(u)));
}

Result<std::unique_ptr<Storage>> MakeS3Storage(const std::string& uri) {
  SMD_ASSIGN_OR_RETURN(S3Uri u, ParseS3Uri(uri));
  SMD_ASSIGN_OR_RETURN(s3::Config cfg, s3::ConfigFromEnvironment());
  SMD_ASSIGN_OR_RETURN(std::unique_ptr<s3::Client> c, s3::Client::Create(std::move(cfg)));
  return std::unique_ptr<Storage>(new S3Storage(std::shared_ptr<s3::Client>(std::move(c)), std::move(u)));
}

}  // namespace smd::io
