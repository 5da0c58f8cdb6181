// io::Storage over S3 (impl/storage/s3_storage.h) against the local server.
#include "impl/storage/s3_storage.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include "tests/impl/storage/s3/scripted_server.h"
#include "tests/s3/s3_test_env.h"

namespace smd::io {
namespace {

// The value of a result that must be OK (the failure is reported, a default value returned).
template <typename T>
T V(Result<T> r) {
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? std::move(r).value() : T{};
}

class S3StorageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SMD_REQUIRE_S3_SERVER(cfg_, bucket_);
    cfg_.multipart_threshold = 5u << 20;
    cfg_.part_size = 5u << 20;
    auto c = s3::Client::Create(cfg_);
    ASSERT_TRUE(c.ok()) << c.status().message();
    client_ = std::shared_ptr<s3::Client>(std::move(c).value());
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    uri_ = "s3://" + bucket_ + "/storage/" + info->name() + "-" + std::to_string(getpid());
    auto s = MakeS3Storage(uri_, client_);
    ASSERT_TRUE(s.ok()) << s.status().message();
    storage_ = std::move(s).value();
  }
  s3::Config cfg_;
  std::string bucket_, uri_;
  std::shared_ptr<s3::Client> client_;
  std::unique_ptr<Storage> storage_;
};

TEST_F(S3StorageTest, CreateIsInvisibleUntilCommit) {
  ASSERT_TRUE(storage_->PrepareForWriting().ok());
  auto sink = storage_->Create("events/000/file.tfevents");
  ASSERT_TRUE(sink.ok());
  ASSERT_TRUE((*sink)->Append("hello ").ok());
  ASSERT_TRUE((*sink)->Append("world").ok());
  EXPECT_EQ((*sink)->size(), 11u);
  auto before = storage_->Exists("events/000/file.tfevents");
  ASSERT_TRUE(before.ok());
  EXPECT_FALSE(*before);
  ASSERT_TRUE((*sink)->Commit().ok());
  auto after = storage_->ReadAll("events/000/file.tfevents");
  ASSERT_TRUE(after.ok()) << after.status().message();
  EXPECT_EQ(*after, "hello world");
  EXPECT_EQ(V(storage_->FileSize("events/000/file.tfevents")), 11u);
  EXPECT_TRUE(V(storage_->Exists("events")));       // a folder: objects below it
  EXPECT_TRUE(V(storage_->Exists("events/000")));
  EXPECT_FALSE(V(storage_->Exists("event")));       // a prefix of a name is not a folder
}

TEST_F(S3StorageTest, AbortLeavesNothing) {
  auto sink = storage_->Create("aborted");
  ASSERT_TRUE(sink.ok());
  ASSERT_TRUE((*sink)->Append("x").ok());
  (*sink)->Abort();
  EXPECT_FALSE(V(storage_->Exists("aborted")));
  EXPECT_EQ((*sink)->Commit().code(), Code::kInvalidState);
}

TEST_F(S3StorageTest, LargeFileGoesMultipartAndReadsBackByRange) {
  std::string data((11u << 20) + 7, '\0');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>((i * 131) >> 3);
  auto sink = storage_->Create("big/events");
  ASSERT_TRUE(sink.ok());
  ASSERT_TRUE((*sink)->Append(data).ok());
  Status st = (*sink)->Commit();
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(V(storage_->FileSize("big/events")), data.size());
  std::string piece(4096, '\0');
  ASSERT_TRUE(storage_->ReadRange("big/events", (10u << 20) + 5, 4096, piece.data()).ok());
  EXPECT_EQ(piece, data.substr((10u << 20) + 5, 4096));
  Status past = storage_->ReadRange("big/events", data.size() - 10, 20, piece.data());
  EXPECT_EQ(past.code(), Code::kCorrupt) << past.message();
}

// A file appended to in many pieces of odd sizes (a step's records) is kept in blocks of the part
// size, each uploaded as one part: the object holds exactly the bytes appended, in order, and the
// memory held is about the bytes appended (no contiguous buffer growing by doubling).
TEST_F(S3StorageTest, ManyAppendsAreUploadedAsTheirPartsExactly) {
  std::string data;
  auto sink = storage_->Create("pieces/events");
  ASSERT_TRUE(sink.ok());
  uint64_t seed = 7;
  while (data.size() < (12u << 20) + 3) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    std::string piece((seed >> 33) % (700u << 10) + 1, '\0');
    for (size_t i = 0; i < piece.size(); ++i) piece[i] = static_cast<char>((data.size() + i) * 131 >> 3);
    ASSERT_TRUE((*sink)->Append(piece).ok());
    data += piece;
    EXPECT_EQ((*sink)->size(), data.size());
  }
  Status st = (*sink)->Commit();
  ASSERT_TRUE(st.ok()) << st.message();
  auto back = storage_->ReadAll("pieces/events");
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_TRUE(*back == data) << back->size() << " bytes back of " << data.size();
  // Appends across a block's end.
  auto small = storage_->Create("pieces/small");
  ASSERT_TRUE(small.ok());
  const std::string a(3u << 20, 'a'), b(2u << 20, 'b'), c(100, 'c');
  ASSERT_TRUE((*small)->Append(a).ok());
  ASSERT_TRUE((*small)->Append(b).ok());  // crosses the 5 MiB block
  ASSERT_TRUE((*small)->Append(c).ok());
  ASSERT_TRUE((*small)->Commit().ok());
  EXPECT_TRUE(V(storage_->ReadAll("pieces/small")) == a + b + c);
}

TEST_F(S3StorageTest, WriteAtomicRemoveAndMissingFiles) {
  ASSERT_TRUE(storage_->WriteAtomic("training_job_end.ts", "").ok());
  EXPECT_TRUE(V(storage_->Exists("training_job_end.ts")));
  ASSERT_TRUE(storage_->WriteAtomic("collections/000000000/worker_0_collections.json", "{}").ok());
  EXPECT_EQ(V(storage_->ReadAll("collections/000000000/worker_0_collections.json")), "{}");
  ASSERT_TRUE(storage_->Remove("training_job_end.ts").ok());
  EXPECT_FALSE(V(storage_->Exists("training_job_end.ts")));
  EXPECT_TRUE(storage_->Remove("never-there").ok());
  auto missing = storage_->ReadAll("never-there");
  EXPECT_EQ(missing.status().code(), Code::kNotFound);
  EXPECT_NE(missing.status().message().find(uri_ + "/never-there"), std::string::npos)
      << missing.status().message();
  EXPECT_EQ(storage_->FileSize("never-there").status().code(), Code::kNotFound);
}

TEST_F(S3StorageTest, CreateExclusiveRefusesTheSecondCaller) {
  Status first = storage_->CreateExclusive("lock");
  ASSERT_TRUE(first.ok()) << first.message();
  Status second = storage_->CreateExclusive("lock");
  EXPECT_EQ(second.code(), Code::kAlreadyExists) << second.message();
  EXPECT_NE(second.message().find(uri_ + "/lock"), std::string::npos);
}

TEST_F(S3StorageTest, ListDirGivesNamesOfFilesAndFolders) {
  for (const char* rel : {"index/000000000/000000000000_worker_0.json",
                          "index/000000000/000000000001_worker_0.json",
                          "index/000000001/000000001000_worker_0.json", "index/top.json"})
    ASSERT_TRUE(storage_->WriteAtomic(rel, "{}").ok());
  auto top = storage_->ListDir("index");
  ASSERT_TRUE(top.ok()) << top.status().message();
  std::vector<std::string> names = *top;
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"000000000", "000000001", "top.json"}));
  auto inner = storage_->ListDir("index/000000000");
  ASSERT_TRUE(inner.ok());
  names = *inner;
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"000000000000_worker_0.json",
                                             "000000000001_worker_0.json"}));
  auto root = storage_->ListDir("");
  ASSERT_TRUE(root.ok());
  EXPECT_EQ(*root, std::vector<std::string>{"index"});
  EXPECT_EQ(storage_->ListDir("nothing-here").status().code(), Code::kNotFound);
}

TEST_F(S3StorageTest, ListDirPaginates) {
  // Pages of 4 keys: 15 files and 2 folders take 5 pages.
  s3::Config cfg = cfg_;
  cfg.list_max_keys = 4;
  auto c = s3::Client::Create(cfg);
  ASSERT_TRUE(c.ok());
  auto small_pages = MakeS3Storage(uri_, std::shared_ptr<s3::Client>(std::move(c).value()));
  ASSERT_TRUE(small_pages.ok());
  std::vector<std::string> want;
  for (int i = 0; i < 15; ++i) {
    char rel[64];
    snprintf(rel, sizeof rel, "many/%06d", i * 67);
    ASSERT_TRUE(storage_->WriteAtomic(rel, "x").ok());
    want.push_back(rel + 5);
  }
  ASSERT_TRUE(storage_->WriteAtomic("many/dir1/x", "x").ok());
  ASSERT_TRUE(storage_->WriteAtomic("many/dir2/y", "x").ok());
  want.push_back("dir1");
  want.push_back("dir2");
  auto names = (*small_pages)->ListDir("many");
  ASSERT_TRUE(names.ok()) << names.status().message();
  std::vector<std::string> got = *names;
  std::sort(got.begin(), got.end());
  std::sort(want.begin(), want.end());
  EXPECT_EQ(got, want);
}

TEST(S3Uri, ParsesAndRejectsMalformedUris) {
  auto ok = ParseS3Uri("s3://my-bucket/a//b/c/");
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ(ok->bucket, "my-bucket");
  EXPECT_EQ(ok->prefix, "a/b/c");
  for (const char* bad : {"s3://", "s3:///prefix", "s3://bucket", "s3://bucket/", "s3://bucket//",
                          "s3://Bad Bucket/p", "s3://ab/p", "http://bucket/p", "/local/path"}) {
    auto r = ParseS3Uri(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), Code::kInvalidArgument) << bad;
    EXPECT_NE(r.status().message().find(bad), std::string::npos) << r.status().message();
  }
}

TEST(S3Uri, MakeS3StorageWithoutCredentialsIsAnAuthError) {
  // No credentials anywhere: an empty environment for the AWS variables and no profile files.
  for (const char* v : {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
                        "AWS_PROFILE", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
                        "AWS_CONTAINER_CREDENTIALS_FULL_URI"})
    unsetenv(v);
  setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/credentials", 1);
  setenv("AWS_CONFIG_FILE", "/nonexistent/config", 1);
  setenv("AWS_EC2_METADATA_DISABLED", "true", 1);
  auto s = MakeS3Storage("s3://bucket/prefix");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), Code::kAuth) << s.status().message();
  EXPECT_EQ(MakeS3Storage("s3://bucket").status().code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace smd::io

// An appended file (TensorBoard's) becomes an object when flushed, not only when closed: a reader
// of a running job sees what was flushed.
namespace smd::io {
namespace {
TEST_F(S3StorageTest, AppendFileIsVisibleAfterFlush) {
  auto f = storage_->OpenForAppend("tensorboard/train/000000000000_1_host.tfevents");
  ASSERT_TRUE(f.ok()) << f.status().message();
  ASSERT_TRUE((*f)->Append("first ").ok());
  auto before = storage_->Exists("tensorboard/train/000000000000_1_host.tfevents");
  ASSERT_TRUE(before.ok());
  EXPECT_FALSE(*before) << "nothing is uploaded before a flush";
  ASSERT_TRUE((*f)->Flush().ok());
  auto got = storage_->ReadAll("tensorboard/train/000000000000_1_host.tfevents");
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ(*got, "first ");
  const uint64_t puts = client_->stats().requests;
  ASSERT_TRUE((*f)->Flush().ok());
  EXPECT_EQ(client_->stats().requests, puts) << "nothing new: no upload";
  ASSERT_TRUE((*f)->Append("second").ok());
  ASSERT_TRUE((*f)->Close().ok());
  auto all = storage_->ReadAll("tensorboard/train/000000000000_1_host.tfevents");
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(*all, "first second");
  EXPECT_EQ((*f)->Flush().code(), Code::kIO) << "flush after close";
}
}  // namespace
}  // namespace smd::io

// An appended file whose upload at Close failed: a second Close does not say OK (docs/s3.md:
// close never returns OK after a lost upload). No server needed: a scripted one answers the
// open's GET with 404 and every PUT with 500.
namespace smd::io {
namespace {
TEST(S3AppendFile, SecondCloseAfterAFailedUploadStillFails) {
  s3::ScriptedServer srv({{s3::Act::kRespond, 404, s3::ErrorXml("NoSuchKey")},
                          {s3::Act::kRespond, 500, s3::ErrorXml("InternalError")}});
  s3::Config cfg;
  cfg.endpoint = srv.endpoint();
  cfg.credentials = {"AKID", "SECRET", ""};
  cfg.max_attempts = 1;
  auto client = s3::Client::Create(cfg);
  ASSERT_TRUE(client.ok()) << client.status().message();
  auto storage = MakeS3Storage("s3://bucket/prefix",
                               std::shared_ptr<s3::Client>(std::move(client).value()));
  ASSERT_TRUE(storage.ok()) << storage.status().message();
  auto f = (*storage)->OpenForAppend("tensorboard/events");
  ASSERT_TRUE(f.ok()) << f.status().message();
  ASSERT_TRUE((*f)->Append("bytes").ok());
  const Status first = (*f)->Close();
  ASSERT_FALSE(first.ok());
  EXPECT_EQ(first.code(), Code::kHttp) << first.message();
  EXPECT_EQ(srv.served(), 2);
  const Status second = (*f)->Close();
  EXPECT_FALSE(second.ok()) << "the upload was lost; a second close must not say OK";
  EXPECT_EQ(second.code(), first.code());
  EXPECT_EQ(second.message(), first.message());
  EXPECT_EQ(srv.served(), 2) << "a closed file is not uploaded again";
}
}  // namespace
}  // namespace smd::io
