// RecordReader: reading one event-file record, whole (through the value and block caches) or only
// its start (dtype and shape), and the messages of the reads that fail. The tests write event
// files with smd's encoder and say where the records are, as a trial's index tables would.
#include "impl/trial/record_reader.h"

#include <atomic>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "gtest/gtest.h"
#include "impl/format/event.h"
#include "impl/format/layout.h"
#include "impl/format/record.h"
#include "impl/storage/storage.h"
#include "impl/trial/trial_internal.h"
#include "tests/impl/storage/recording_storage.h"
#include "tests/impl/trial/trial_builder.h"

namespace smd::trial {
namespace {

using testing::BytesOf;
using testing::TempDir;
using testing::WriteFile;

// Where a test put a record in its event file.
struct Placed {
  uint64_t offset = 0;
  uint64_t length = 0;
};

// An event file's bytes, built one record at a time.
struct EventBytes {
  std::string bytes;

  Placed AddFloats(const std::string& tag, const std::vector<float>& v,
                   std::vector<int64_t> shape = {}) {
    if (shape.empty()) shape = {static_cast<int64_t>(v.size())};
    io::TensorEventFields f;
    f.wall_time = 1.7e9;
    f.step = 3;
    f.tag = tag;
    f.dtype = DType::kFloat32;
    f.shape = shape.data();
    f.ndim = shape.size();
    f.mode = Mode::kTrain;
    f.mode_step = 3;
    std::string prefix, suffix;
    const std::string content = BytesOf(v);
    io::EncodeTensorRecord(f, content, io::PayloadCrcKind::kSmdebugConstant, &prefix, &suffix);
    return Append(prefix + content + suffix);
  }
  Placed AddStrings(const std::string& tag, const std::vector<std::string>& v) {
    io::TensorEventFields f;
    f.wall_time = 1.7e9;
    f.step = 3;
    f.tag = tag;
    f.mode = Mode::kTrain;
    f.mode_step = 3;
    std::string record;
    io::EncodeStringTensorRecord(f, v, io::PayloadCrcKind::kSmdebugConstant, &record);
    return Append(record);
  }
  Placed Append(const std::string& record) {
    Placed p{bytes.size(), record.size()};
    bytes += record;
    return p;
  }
};

// One storage read, as the tests see it.
struct RangeRead {
  std::string rel;
  uint64_t offset, len;
  bool operator==(const RangeRead& o) const {
    return rel == o.rel && offset == o.offset && len == o.len;
  }
};
void PrintTo(const RangeRead& r, std::ostream* os) {
  *os << "{" << r.rel << " @" << r.offset << " +" << r.len << "}";
}

// A local storage that logs the ranges read and fails the chosen reads: a ReadRange of a file (at
// an offset and length, when given), or a FileSize, with a given status.
class ReadFaultStorage : public io::testing::RecordingStorage {
 public:
  explicit ReadFaultStorage(const std::string& dir)
      : RecordingStorage(io::MakeLocalStorage(dir), std::make_shared<io::testing::CallLog>()) {}

  // Fails ReadRange(rel, offset, len) (any offset or length when < 0) `times` times (-1: always).
  void FailRead(const std::string& rel, Status st, int64_t offset = -1, int64_t len = -1,
                int times = -1) {
    std::lock_guard<std::mutex> l(mu_);
    read_faults_.push_back({rel, offset, len, std::move(st), times});
  }
  void FailSize(const std::string& rel, Status st) {
    std::lock_guard<std::mutex> l(mu_);
    size_faults_[rel] = std::move(st);
  }
  std::vector<RangeRead> ranges() const {
    std::lock_guard<std::mutex> l(mu_);
    return ranges_;
  }
  void ClearLog() {
    std::lock_guard<std::mutex> l(mu_);
    ranges_.clear();
  }

  Status ReadRange(const std::string& rel, uint64_t o, uint64_t n, char* out) override {
    {
      std::lock_guard<std::mutex> l(mu_);
      ranges_.push_back({rel, o, n});
      for (Fault& f : read_faults_) {
        if (f.rel != rel || f.times == 0) continue;
        if (f.offset >= 0 && static_cast<uint64_t>(f.offset) != o) continue;
        if (f.len >= 0 && static_cast<uint64_t>(f.len) != n) continue;
        if (f.times > 0) --f.times;
        return f.status;
      }
    }
    return RecordingStorage::ReadRange(rel, o, n, out);
  }
  Result<uint64_t> FileSize(const std::string& rel) override {
    {
      std::lock_guard<std::mutex> l(mu_);
      auto it = size_faults_.find(rel);
      if (it != size_faults_.end()) return it->second;
    }
    return RecordingStorage::FileSize(rel);
  }

 private:
  struct Fault {
    std::string rel;
    int64_t offset, len;
    Status status;
    int times;
  };
  mutable std::mutex mu_;
  std::vector<Fault> read_faults_;
  std::map<std::string, Status> size_faults_;
  std::vector<RangeRead> ranges_;
};

std::vector<float> Floats(const ValuePtr& v) {
  if (!v || v->dtype() != DType::kFloat32) return {};
  const float* p = static_cast<const float*>(v->data());
  return std::vector<float>(p, p + v->count());
}

std::vector<float> Seq(size_t n, float start) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = start + static_cast<float>(i);
  return v;
}

class RecordReaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = TempDir("t");
    storage_ = std::make_unique<ReadFaultStorage>(dir_);
  }

  // Writes the event file (span: its size).
  void Write(const EventBytes& e) {
    WriteFile(dir_ + "/" + rel_, e.bytes);
    span_ = e.bytes.size();
  }
  RecordLocation At(const Placed& p) const { return RecordLocation{file_, &rel_, span_, p.offset, p.length}; }
  RecordLocation At(uint64_t offset, uint64_t length) const {
    return RecordLocation{file_, &rel_, span_, offset, length};
  }
  RecordOwner Who() const { return RecordOwner{&tensor_, 3, Mode::kTrain}; }
  std::string Path() const { return dir_ + "/" + rel_; }
  // The message of a failed read's record context: file and offset.
  std::string Context(uint64_t offset) const {
    return "event file '" + Path() + "', record at offset " + std::to_string(offset) + ": ";
  }
  std::string Truncated(uint64_t size, uint64_t offset, uint64_t length) const {
    return "event file '" + Path() + "' is truncated: it has " + std::to_string(size) +
           " bytes, but the record of tensor 'w' at step 3 spans bytes " + std::to_string(offset) +
           " to " + std::to_string(offset + length) + " (its index file says so)";
  }
  std::string Missing() const {
    return "Value for tensor w is not available for step 3 with mode TRAIN as it was not saved. "
           "(its event file '" +
           Path() + "' is missing)";
  }

  std::string dir_;
  std::unique_ptr<ReadFaultStorage> storage_;
  const std::string rel_ = io::EventFileRelPath(3, "worker_0");
  const std::string tensor_ = "w";
  const uint32_t file_ = 7;
  uint64_t span_ = 0;
};

TEST_F(RecordReaderTest, ReadDecodesTheRecordAndCachesItsValue) {
  EventBytes e;
  e.AddFloats("a", {1, 2});
  Placed w = e.AddFloats("w", Seq(6, 10), {2, 3});
  e.AddFloats("b", {3});
  Write(e);
  RecordReader r(storage_.get(), 1 << 20);
  EXPECT_EQ(r.cache().GetValue(file_, w.offset, RecordCache::TagKey("w")), nullptr);
  auto v = r.Read(At(w), "w", Who());
  ASSERT_TRUE(v.ok()) << v.status().message();
  EXPECT_EQ((*v)->dtype(), DType::kFloat32);
  EXPECT_EQ((*v)->shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(Floats(*v), Seq(6, 10));
  EXPECT_EQ(r.cache().GetValue(file_, w.offset, RecordCache::TagKey("w")), *v);  // the very value, shared
  EXPECT_EQ(r.reads(), 1u);
  EXPECT_EQ(storage_->ranges(), (std::vector<RangeRead>{{rel_, w.offset, w.length}}));
}

TEST_F(RecordReaderTest, StringTensorsAreRead) {
  EventBytes e;
  Placed s = e.AddStrings("w", {"one", "", "three"});
  Write(e);
  RecordReader r(storage_.get(), 1 << 20);
  auto v = r.Read(At(s), "w", Who());
  ASSERT_TRUE(v.ok()) << v.status().message();
  ASSERT_TRUE((*v)->is_string());
  ASSERT_EQ((*v)->count(), 3u);
  EXPECT_EQ((*v)->string_at(0), "one");
  EXPECT_EQ((*v)->string_at(1), "");
  EXPECT_EQ((*v)->string_at(2), "three");
}

// The first record read from a small event file is read alone (a scan of one tensor over many
// steps reads only its records); from the file's second use on, the whole file is read once and
// kept, and its other records cost no read.
TEST_F(RecordReaderTest, ASmallFileIsReadWholeFromItsSecondUse) {
  EventBytes e;
  Placed a = e.AddFloats("a", {1});
  Placed b = e.AddFloats("b", {2, 2});
  Placed c = e.AddFloats("c", {3, 3, 3});
  Write(e);
  RecordReader r(storage_.get(), 1 << 20);
  auto va = r.Read(At(a), "a", Who());
  ASSERT_TRUE(va.ok()) << va.status().message();
  EXPECT_EQ(r.cache().GetBlock(file_), nullptr);
  auto vb = r.Read(At(b), "b", Who());
  ASSERT_TRUE(vb.ok()) << vb.status().message();
  auto vc = r.Read(At(c), "c", Who());
  ASSERT_TRUE(vc.ok()) << vc.status().message();
  auto va2 = r.Read(At(a), "a", Who());  // Read does not look in the value cache: the block has it
  ASSERT_TRUE(va2.ok()) << va2.status().message();
  EXPECT_EQ(Floats(*va), std::vector<float>{1});
  EXPECT_EQ(Floats(*vb), (std::vector<float>{2, 2}));
  EXPECT_EQ(Floats(*vc), (std::vector<float>{3, 3, 3}));
  EXPECT_EQ(Floats(*va2), std::vector<float>{1});
  EXPECT_EQ(storage_->ranges(),
            (std::vector<RangeRead>{{rel_, a.offset, a.length}, {rel_, 0, span_}}));
  EXPECT_EQ(r.reads(), 2u);
  auto block = r.cache().GetBlock(file_);
  ASSERT_NE(block, nullptr);
  EXPECT_EQ(*block, e.bytes);
}

// A live job: the file was kept whole while the index files read so far named its first records;
// a later index file names a record past that block (the span grew). The record is read from the
// file at the new span, not cut out of the old block (an internal error when it lay past the
// block's end, a false "corrupt" when it overlapped it).
TEST_F(RecordReaderTest, ABlockReadBeforeTheFileGrewIsReadAgain) {
  EventBytes e;
  Placed a = e.AddFloats("a", {1});
  Placed b = e.AddFloats("b", {2, 2});
  Write(e);  // span: a and b
  const uint64_t old_span = span_;
  Placed c = e.AddFloats("c", Seq(40, 5));
  Placed d = e.AddFloats("d", {4});
  WriteFile(Path(), e.bytes);  // the job wrote c and d; a later index file names them
  RecordReader r(storage_.get(), 1 << 20);
  ASSERT_TRUE(r.Read(At(a), "a", Who()).ok());
  ASSERT_TRUE(r.Read(At(b), "b", Who()).ok());
  ASSERT_NE(r.cache().GetBlock(file_), nullptr);
  EXPECT_EQ(r.cache().GetBlock(file_)->size(), old_span);
  span_ = e.bytes.size();
  for (const auto& [placed, tag, want] :
       {std::make_tuple(d, "d", std::vector<float>{4}), std::make_tuple(c, "c", Seq(40, 5))}) {
    auto v = r.Read(At(placed), tag, Who());
    ASSERT_TRUE(v.ok()) << tag << ": " << v.status().message();
    EXPECT_EQ(Floats(*v), want) << tag;
  }
  ASSERT_NE(r.cache().GetBlock(file_), nullptr);
  EXPECT_EQ(r.cache().GetBlock(file_)->size(), span_);  // kept again, whole
}

// Bulk readers: no value cache, no blocks, and the reads are counted for the caller to add.
TEST_F(RecordReaderTest, ReadUncachedWithoutBlocksReadsEachRecordAlone) {
  EventBytes e;
  Placed a = e.AddFloats("a", {1});
  Placed b = e.AddFloats("b", {2});
  Write(e);
  RecordReader r(storage_.get(), 1 << 20);
  for (int round = 0; round < 2; ++round) {
    for (const Placed& p : {a, b}) {
      int reads = 0;
      auto v = r.ReadUncached(At(p), p.offset == a.offset ? "a" : "b", Who(),
                              /*use_blocks=*/false, &reads);
      ASSERT_TRUE(v.ok()) << v.status().message();
      EXPECT_EQ(reads, 1);
      EXPECT_EQ(r.cache().GetValue(file_, p.offset, RecordCache::TagKey(p.offset == a.offset ? "a" : "b")), nullptr);
    }
  }
  EXPECT_EQ(r.cache().GetBlock(file_), nullptr);
  EXPECT_EQ(storage_->ranges(),
            (std::vector<RangeRead>{{rel_, a.offset, a.length}, {rel_, b.offset, b.length},
                                    {rel_, a.offset, a.length}, {rel_, b.offset, b.length}}));
  EXPECT_EQ(r.reads(), 0u);  // counted by the caller
  r.CountReads(4);
  EXPECT_EQ(r.reads(), 4u);

  // With blocks, ReadUncached reads the whole file from its second use too, and says so.
  RecordReader r2(storage_.get(), 1 << 20);
  storage_->ClearLog();
  int reads = 0;
  ASSERT_TRUE(r2.ReadUncached(At(a), "a", Who(), /*use_blocks=*/true, &reads).ok());
  EXPECT_EQ(reads, 1);
  reads = 0;
  ASSERT_TRUE(r2.ReadUncached(At(b), "b", Who(), /*use_blocks=*/true, &reads).ok());
  EXPECT_EQ(reads, 1);
  reads = 0;
  ASSERT_TRUE(r2.ReadUncached(At(a), "a", Who(), /*use_blocks=*/true, &reads).ok());
  EXPECT_EQ(reads, 0);
  EXPECT_EQ(storage_->ranges(), (std::vector<RangeRead>{{rel_, a.offset, a.length}, {rel_, 0, span_}}));
  EXPECT_EQ(r2.cache().GetValue(file_, a.offset, RecordCache::TagKey("a")), nullptr);
  EXPECT_EQ(r2.reads(), 0u);
}

// No whole-file reads: for an event file larger than a small one, for a record outside the span
// the index covers, and without a cache.
TEST_F(RecordReaderTest, OnlySmallFilesAreReadWhole) {
  EventBytes e;
  Placed a = e.AddFloats("a", {1});
  Placed b = e.AddFloats("b", {2});
  Write(e);
  auto three_reads = [&](RecordReader& r, const RecordLocation& at_a, const RecordLocation& at_b) {
    storage_->ClearLog();
    ASSERT_TRUE(r.Read(at_a, "a", Who()).ok());
    ASSERT_TRUE(r.Read(at_b, "b", Who()).ok());
    ASSERT_TRUE(r.Read(at_a, "a", Who()).ok());
    EXPECT_EQ(storage_->ranges(),
              (std::vector<RangeRead>{{rel_, a.offset, a.length}, {rel_, b.offset, b.length},
                                      {rel_, a.offset, a.length}}));
    EXPECT_EQ(r.cache().GetBlock(file_), nullptr);
  };
  {
    SCOPED_TRACE("large file");
    RecordReader r(storage_.get(), 64 << 20);
    RecordLocation at_a = At(a), at_b = At(b);
    at_a.span = at_b.span = kSmallEventFile + 1;
    three_reads(r, at_a, at_b);
  }
  {
    SCOPED_TRACE("whole-file read fails");
    RecordReader r(storage_.get(), 64 << 20);
    storage_->ClearLog();
    ASSERT_TRUE(r.Read(At(a), "a", Who()).ok());
    storage_->FailRead(rel_, Status(Code::kIO, "no"), 0, span_, 1);
    auto v = r.Read(At(b), "b", Who());  // the record is read alone instead
    ASSERT_TRUE(v.ok()) << v.status().message();
    EXPECT_EQ(Floats(*v), std::vector<float>{2});
    EXPECT_EQ(storage_->ranges(),
              (std::vector<RangeRead>{{rel_, a.offset, a.length}, {rel_, 0, span_},
                                      {rel_, b.offset, b.length}}));
    EXPECT_EQ(r.cache().GetBlock(file_), nullptr);
  }
  {
    SCOPED_TRACE("record outside the span");
    RecordReader r(storage_.get(), 64 << 20);
    RecordLocation at_a = At(a), at_b = At(b);
    at_a.span = at_b.span = b.offset;  // b lies beyond what the index covers
    storage_->ClearLog();
    ASSERT_TRUE(r.Read(at_a, "a", Who()).ok());
    ASSERT_TRUE(r.Read(at_b, "b", Who()).ok());
    ASSERT_TRUE(r.Read(at_b, "b", Who()).ok());
    EXPECT_EQ(storage_->ranges(),
              (std::vector<RangeRead>{{rel_, a.offset, a.length}, {rel_, b.offset, b.length},
                                      {rel_, b.offset, b.length}}));
  }
  {
    SCOPED_TRACE("no cache");
    RecordReader r(storage_.get(), 0);
    three_reads(r, At(a), At(b));
    EXPECT_EQ(r.cache().GetValue(file_, a.offset, RecordCache::TagKey("a")), nullptr);
  }
}

// Small records are read into a buffer the thread reuses: a value must not point into it.
TEST_F(RecordReaderTest, AValueOutlivesTheNextReadOnItsThread) {
  EventBytes e;
  Placed a = e.AddFloats("a", Seq(100, 0));
  Placed b = e.AddFloats("b", Seq(100, 1000));
  Placed s = e.AddStrings("s", {"first string", "second"});
  Write(e);
  RecordReader r(storage_.get(), 0);
  int reads = 0;
  auto va = r.ReadUncached(At(a), "a", Who(), false, &reads);
  auto vs = r.ReadUncached(At(s), "s", Who(), false, &reads);
  auto vb = r.ReadUncached(At(b), "b", Who(), false, &reads);
  ASSERT_TRUE(va.ok() && vb.ok() && vs.ok());
  EXPECT_EQ(Floats(*va), Seq(100, 0));
  EXPECT_EQ(Floats(*vb), Seq(100, 1000));
  EXPECT_EQ((*vs)->string_at(0), "first string");
}

// A record larger than the per-thread buffer: its header must agree with the index before that
// much is read.
TEST_F(RecordReaderTest, ALargeRecordIsReadAfterItsHeaderAgreesWithTheIndex) {
  EventBytes e;
  Placed small = e.AddFloats("small", {5});
  const std::vector<float> big = Seq(20000, 0.5f);  // 80 kB
  Placed w = e.AddFloats("w", big, {200, 100});
  Write(e);
  ASSERT_GT(w.length, kScratchRecordMax);
  RecordReader r(storage_.get(), 1 << 20);
  int reads = 0;
  auto v = r.ReadUncached(At(w), "w", Who(), false, &reads);
  ASSERT_TRUE(v.ok()) << v.status().message();
  EXPECT_EQ(Floats(*v), big);
  EXPECT_EQ((*v)->shape(), (std::vector<int64_t>{200, 100}));
  EXPECT_EQ(reads, 2);
  EXPECT_EQ(storage_->ranges(), (std::vector<RangeRead>{{rel_, w.offset, io::kRecordHeaderSize},
                                                        {rel_, w.offset, w.length}}));

  // The index gives 4 bytes more than the record holds: refused from the header alone.
  storage_->ClearLog();
  reads = 0;
  auto wrong = r.ReadUncached(At(w.offset, w.length + 4), "w", Who(), false, &reads);
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.status().code(), Code::kCorrupt);
  EXPECT_EQ(wrong.status().message(),
            Context(w.offset) + "record length field says " +
                std::to_string(w.length - io::kRecordOverhead) +
                " payload bytes but the index gives " + std::to_string(w.length + 4 - io::kRecordOverhead));
  EXPECT_EQ(storage_->ranges().size(), 1u);
  (void)small;
}

TEST_F(RecordReaderTest, NoEventFileNamedIsTensorUnavailableForStep) {
  RecordReader r(storage_.get(), 1 << 20);
  const std::string none;
  RecordLocation at{file_, &none, 0, 0, 100};
  const std::string want =
      "Value for tensor w is not available for step 3 with mode TRAIN as it was not saved. "
      "(its index file names no event file)";
  auto v = r.Read(at, "w", Who());
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().code(), Code::kTensorUnavailableForStep);
  EXPECT_EQ(v.status().message(), want);
  int reads = 0;
  auto u = r.ReadUncached(at, "w", Who(), false, &reads);
  ASSERT_FALSE(u.ok());
  EXPECT_EQ(u.status().message(), want);
  at.length = 100000;
  auto h = r.ReadHead(at, "w", Who());
  ASSERT_FALSE(h.ok());
  EXPECT_EQ(h.status().code(), Code::kTensorUnavailableForStep);
  EXPECT_EQ(h.status().message(), want);
  EXPECT_TRUE(storage_->ranges().empty());
}

// A missing event file, whatever the read that finds out: small record, whole file, large
// record's header, very large record's size check, record start.
TEST_F(RecordReaderTest, AMissingEventFileIsTensorUnavailableForStepNamingIt) {
  RecordReader r(storage_.get(), 1 << 20);
  span_ = 1000;
  auto expect_missing = [&](const Status& st, const char* what) {
    EXPECT_EQ(st.code(), Code::kTensorUnavailableForStep) << what << ": " << st.message();
    EXPECT_EQ(st.message(), Missing()) << what;
  };
  auto read = [&](uint64_t offset, uint64_t length) {
    auto v = r.Read(At(offset, length), "w", Who());
    return v.ok() ? Status::Ok() : v.status();
  };
  expect_missing(read(0, 100), "small record");
  expect_missing(read(100, 100), "small record, second use of the file (whole-file read)");
  expect_missing(read(0, 100000), "large record");
  expect_missing(read(0, uint64_t(1) << 30), "very large record");
  auto h = r.ReadHead(At(0, 100000), "w", Who());
  expect_missing(h.ok() ? Status::Ok() : h.status(), "record start");
  EXPECT_EQ(r.cache().GetBlock(file_), nullptr);
}

TEST_F(RecordReaderTest, ALengthShorterThanTheFramingIsCorrupt) {
  EventBytes e;
  e.AddFloats("w", {1});
  Write(e);
  RecordReader r(storage_.get(), 1 << 20);
  auto v = r.Read(At(0, 15), "w", Who());
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().code(), Code::kCorrupt);
  EXPECT_EQ(v.status().message(),
            Context(0) + "the index gives a record length of 15 bytes, less than the 16-byte framing");
  EXPECT_TRUE(storage_->ranges().empty());
}

TEST_F(RecordReaderTest, ARecordBeyondAnyFileSizeIsCorrupt) {
  EventBytes e;
  e.AddFloats("w", {1});
  Write(e);
  RecordReader r(storage_.get(), 1 << 20);
  for (auto [offset, length] : {std::pair<uint64_t, uint64_t>{1, INT64_MAX},
                                {uint64_t(INT64_MAX) - 15, 16},
                                {uint64_t(INT64_MAX), 16},
                                {0, uint64_t(INT64_MAX) + 2},  // (INT64_MAX - length would wrap)
                                {0, UINT64_MAX}}) {
    auto v = r.Read(At(offset, length), "w", Who());
    ASSERT_FALSE(v.ok()) << offset;
    EXPECT_EQ(v.status().code(), Code::kCorrupt);
    EXPECT_EQ(v.status().message(), Context(offset) + "the index gives a record beyond any file size");
    auto h = r.ReadHead(At(offset, length), "w", Who());  // nothing to read: the whole read says why
    ASSERT_TRUE(h.ok()) << offset;
    EXPECT_FALSE(h.value().has_value());
  }
  EXPECT_TRUE(storage_->ranges().empty());
}

// A record the index places (partly) beyond the end of the event file: the message says the file
// is truncated, its size, the record's bytes, and whose record it is.
TEST_F(RecordReaderTest, ATruncatedEventFileNamesItsSizeAndTheRecord) {
  EventBytes e;
  Placed a = e.AddFloats("a", {1, 2, 3});
  Placed w = e.AddFloats("w", Seq(10, 0));
  Placed big = e.AddFloats("big", Seq(20000, 0));
  const uint64_t full = e.bytes.size();
  Write(e);
  // The file loses its last bytes (the index still covers all of them).
  const uint64_t size = big.offset + 5000;
  WriteFile(Path(), e.bytes.substr(0, size));
  RecordReader r(storage_.get(), 1 << 20);
  ASSERT_EQ(span_, full);

  auto expect = [&](const Result<ValuePtr>& v, uint64_t offset, uint64_t length, const char* what) {
    ASSERT_FALSE(v.ok()) << what;
    EXPECT_EQ(v.status().code(), Code::kCorrupt) << what;
    EXPECT_EQ(v.status().message(), Truncated(size, offset, length)) << what;
  };
  expect(r.Read(At(big), "big", Who()), big.offset, big.length, "large record");
  const uint64_t past = size + 100;
  expect(r.Read(At(past, 40), "w", Who()), past, 40, "small record past the end");
  expect(r.Read(At(past, 40), "w", Who()), past, 40, "small record, second use of the file");
  expect(r.Read(At(0, uint64_t(1) << 30), "w", Who()), 0, uint64_t(1) << 30, "very large record");
  expect(r.Read(At(uint64_t(1) << 62, 40), "w", Who()), uint64_t(1) << 62, 40, "far offset");
  // Nothing of the size of the very large record was read.
  for (const RangeRead& rr : storage_->ranges()) EXPECT_LE(rr.len, full) << rr.offset;

  auto h = r.ReadHead(At(size - 100, 8000), "w", Who());
  ASSERT_FALSE(h.ok());
  EXPECT_EQ(h.status().code(), Code::kCorrupt);
  EXPECT_EQ(h.status().message(), Truncated(size, size - 100, 8000));

  // The records the file still holds read (the whole-file read fails: each is read alone).
  auto va = r.Read(At(a), "a", Who());
  ASSERT_TRUE(va.ok()) << va.status().message();
  EXPECT_EQ(Floats(*va), (std::vector<float>{1, 2, 3}));
  auto vw = r.Read(At(w), "w", Who());
  ASSERT_TRUE(vw.ok()) << vw.status().message();
  EXPECT_EQ(Floats(*vw), Seq(10, 0));
}

// When the file's size cannot be had, the failed read's own message is given, with the file and
// offset.
TEST_F(RecordReaderTest, ATruncatedReadWhoseSizeIsUnknownGivesTheReadsMessage) {
  EventBytes e;
  Placed w = e.AddFloats("w", {1});
  Write(e);
  storage_->FailRead(rel_, Status(Code::kCorrupt, "the read came up short"));
  storage_->FailSize(rel_, Status(Code::kIO, "cannot stat"));
  RecordReader r(storage_.get(), 1 << 20);
  auto v = r.Read(At(w), "w", Who());
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().code(), Code::kCorrupt);
  EXPECT_EQ(v.status().message(), Context(w.offset) + "the read came up short");
  // A very large record whose size check fails: the size check's error.
  auto huge = r.Read(At(0, uint64_t(1) << 30), "w", Who());
  ASSERT_FALSE(huge.ok());
  EXPECT_EQ(huge.status().code(), Code::kIO);
  EXPECT_EQ(huge.status().message(), Context(0) + "cannot stat");
}

TEST_F(RecordReaderTest, CorruptRecordsNameTheFileAndOffset) {
  EventBytes e;
  Placed a = e.AddFloats("a", {1});
  Placed crc = e.AddFloats("crc", {2});
  Placed hdr = e.AddFloats("hdr", {3});
  Placed w = e.AddFloats("w", {4});
  e.bytes[crc.offset + crc.length - 1] ^= 0x5a;            // payload CRC
  e.bytes[hdr.offset + io::kRecordHeaderSize - 1] ^= 0x5a;  // length CRC
  Write(e);
  auto expect = [&](const Result<ValuePtr>& v, uint64_t offset, const std::string& why) {
    ASSERT_FALSE(v.ok()) << why;
    EXPECT_EQ(v.status().code(), Code::kCorrupt) << v.status().message();
    EXPECT_EQ(v.status().message(), Context(offset) + why);
  };
  // Each record read alone (no cache), then out of the whole file.
  for (size_t cache : {size_t(0), size_t(1) << 20}) {
    SCOPED_TRACE(cache ? "from the whole file" : "read alone");
    RecordReader r(storage_.get(), cache);
    if (cache) ASSERT_TRUE(r.Read(At(a), "a", Who()).ok());  // the file's first use
    expect(r.Read(At(crc), "crc", Who()), crc.offset, "record payload CRC mismatch");
    EXPECT_EQ(r.cache().GetBlock(file_) != nullptr, cache != 0);
    expect(r.Read(At(hdr), "hdr", Who()), hdr.offset,
           "record length CRC mismatch (the record header is not a valid TFRecord header)");
    // The index gives a length that ends inside the next record.
    expect(r.Read(At(a.offset, a.length + 8), "a", Who()), a.offset,
           "record length field says " + std::to_string(a.length - io::kRecordOverhead) +
               " payload bytes but " + std::to_string(a.length + 8 - io::kRecordOverhead) +
               " are there");
    // The index's offset is another tensor's record.
    expect(r.Read(At(w), "a", Who()), w.offset,
           "the record holds tensor 'w' but the index names 'a'");
    EXPECT_EQ(r.cache().GetValue(file_, w.offset, RecordCache::TagKey("a")), nullptr);
  }
}

TEST_F(RecordReaderTest, StorageErrorsNameTheFileAndOffset) {
  EventBytes e;
  Placed a = e.AddFloats("a", {1});
  Placed big = e.AddFloats("big", Seq(20000, 0));
  Write(e);
  storage_->FailRead(rel_, Status(Code::kIO, "cannot read: Input/output error"));
  RecordReader r(storage_.get(), 1 << 20);
  for (int i = 0; i < 2; ++i) {  // the second: a whole-file read first
    auto v = r.Read(At(a), "a", Who());
    ASSERT_FALSE(v.ok());
    EXPECT_EQ(v.status().code(), Code::kIO);
    EXPECT_EQ(v.status().message(), Context(a.offset) + "cannot read: Input/output error");
  }
  auto v = r.Read(At(big), "big", Who());
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().code(), Code::kIO);
  EXPECT_EQ(v.status().message(), Context(big.offset) + "cannot read: Input/output error");
  auto h = r.ReadHead(At(big), "big", Who());
  ASSERT_FALSE(h.ok());
  EXPECT_EQ(h.status().code(), Code::kIO);
  EXPECT_EQ(h.status().message(), Context(big.offset) + "cannot read: Input/output error");
  // Nothing failed is kept; the value reads once the storage does.
  EXPECT_EQ(r.cache().GetValue(file_, a.offset, RecordCache::TagKey("a")), nullptr);
  EXPECT_EQ(r.cache().GetBlock(file_), nullptr);
  ReadFaultStorage healthy(dir_);
  RecordReader r2(&healthy, 1 << 20);
  auto ok = r2.Read(At(a), "a", Who());
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ(Floats(*ok), std::vector<float>{1});
}

TEST_F(RecordReaderTest, ReadHeadGivesDtypeAndShapeFromTheRecordsStart) {
  EventBytes e;
  Placed big = e.AddFloats("w", Seq(6000, 0), {60, 100});
  Write(e);
  ASSERT_GT(big.length, kRecordHeadBytes);
  RecordReader r(storage_.get(), 1 << 20);
  auto h = r.ReadHead(At(big), "w", Who());
  ASSERT_TRUE(h.ok()) << h.status().message();
  ASSERT_TRUE(h->has_value());
  EXPECT_EQ((*h)->dtype, DType::kFloat32);
  EXPECT_EQ((*h)->shape, (std::vector<int64_t>{60, 100}));
  EXPECT_EQ(storage_->ranges(), (std::vector<RangeRead>{{rel_, big.offset, kRecordHeadBytes}}));
  EXPECT_EQ(r.reads(), 1u);
  EXPECT_EQ(r.cache().GetValue(file_, big.offset, RecordCache::TagKey("w")), nullptr);
}

// When the start does not say (a small record, another tensor's record, strings), ReadHead gives
// nothing and the whole read says what there is.
TEST_F(RecordReaderTest, ReadHeadGivesNothingWhenTheStartDoesNotSuffice) {
  EventBytes e;
  Placed small = e.AddFloats("w", Seq(10, 0));
  Placed other = e.AddFloats("other", Seq(6000, 0));
  Placed strings = e.AddStrings("w", {std::string(3000, 'x'), std::string(3000, 'y')});
  Write(e);
  ASSERT_GT(strings.length, kRecordHeadBytes);
  RecordReader r(storage_.get(), 1 << 20);
  auto h = r.ReadHead(At(small), "w", Who());
  ASSERT_TRUE(h.ok()) << h.status().message();
  EXPECT_FALSE(h->has_value());
  EXPECT_TRUE(storage_->ranges().empty());  // not even read
  h = r.ReadHead(At(other), "w", Who());
  ASSERT_TRUE(h.ok()) << h.status().message();
  EXPECT_FALSE(h->has_value());
  h = r.ReadHead(At(strings), "w", Who());
  ASSERT_TRUE(h.ok()) << h.status().message();
  EXPECT_FALSE(h->has_value());
  auto whole = r.Read(At(strings), "w", Who());
  ASSERT_TRUE(whole.ok()) << whole.status().message();
  EXPECT_EQ((*whole)->shape(), std::vector<int64_t>{2});
}

TEST_F(RecordReaderTest, ReadHeadRefusesARecordThatDisagreesWithTheIndex) {
  EventBytes e;
  Placed big = e.AddFloats("w", Seq(6000, 0));
  e.bytes += std::string(100, '\0');
  Write(e);
  RecordReader r(storage_.get(), 1 << 20);
  auto h = r.ReadHead(At(big.offset, big.length + 8), "w", Who());
  ASSERT_FALSE(h.ok());
  EXPECT_EQ(h.status().code(), Code::kCorrupt);
  EXPECT_EQ(h.status().message(),
            Context(big.offset) + "record length field says " +
                std::to_string(big.length - io::kRecordOverhead) +
                " payload bytes but the index gives " +
                std::to_string(big.length + 8 - io::kRecordOverhead));
  // An offset in the middle of the record: no record header there.
  h = r.ReadHead(At(big.offset + 40, 5000), "w", Who());
  ASSERT_FALSE(h.ok());
  EXPECT_EQ(h.status().code(), Code::kCorrupt);
  EXPECT_EQ(h.status().message(),
            Context(big.offset + 40) +
                "record length CRC mismatch (the record header is not a valid TFRecord header)");
}

TEST_F(RecordReaderTest, ConcurrentReadsOfOneReaderAllGetTheirValues) {
  EventBytes e;
  std::vector<Placed> placed;
  std::vector<std::string> tags;
  for (int i = 0; i < 16; ++i) {
    tags.push_back("t" + std::to_string(i));
    placed.push_back(e.AddFloats(tags.back(), Seq(50, static_cast<float>(i * 100))));
  }
  Write(e);
  // A small cache: values and the block are evicted and read again meanwhile.
  RecordReader r(storage_.get(), 16 << 10);
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 50; ++round) {
        for (int k = 0; k < 16; ++k) {
          const int i = (k + t * 5 + round) % 16;
          int reads = 0;
          Result<ValuePtr> v = (round + t) % 3 == 0
                                   ? r.ReadUncached(At(placed[i]), tags[i], Who(), true, &reads)
                                   : r.Read(At(placed[i]), tags[i], Who());
          if (!v.ok() || Floats(*v) != Seq(50, static_cast<float>(i * 100))) ++bad;
        }
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(bad.load(), 0);
}

}  // namespace
}  // namespace smd::trial
