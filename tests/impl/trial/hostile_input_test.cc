// The reader on hostile input (as opposed to a folder changing under it, hostile_test.cc):
// symbolic links that lead out of the trial, a file that is not a record file where an event file
// should be, a sparse event file with a huge index length, step numbers at the int64 edges, a
// tensor of too many dimensions, a regex that backtracks catastrophically. Every trial is built
// by the test itself.
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "impl/core/regex.h"
#include "impl/format/index_file.h"
#include "impl/format/layout.h"
#include "impl/trial/trial.h"
#include "impl/trial/value.h"
#include "tests/impl/trial/trial_builder.h"

namespace smd::trial {
namespace {

using testing::ReadFile;
using testing::TempDir;
using testing::TrialBuilder;
using testing::WriteFile;
using TrialPtr = std::shared_ptr<Trial>;

TrialPtr OpenOk(const std::string& dir) {
  auto t = Trial::Open(dir, TrialOptions());
  EXPECT_TRUE(t.ok()) << t.status().message();
  return t.ok() ? t.value() : nullptr;
}

Result<ValuePtr> ReadValue(Trial& t, const std::string& name, int64_t step) {
  SMD_ASSIGN_OR_RETURN(uint32_t id, t.TensorId(name));
  return t.TensorValue(id, step, Mode::kGlobal, nullptr);
}

// Two trials: "victim" holds a secret tensor; "evil" is a well-formed trial whose files can then
// be swapped for links into the victim.
struct TwoTrials {
  std::string victim, evil;
  explicit TwoTrials(const std::string& root) : victim(root + "/victim"), evil(root + "/evil") {
    TrialBuilder v(victim);
    v.WriteCollections({"worker_0"}, 1);
    v.AddFloats(0, "worker_0", Mode::kTrain, 0, "secret", {42.0f, 43.0f});
    v.FinishStep(0);
    v.End();
    TrialBuilder e(evil);
    e.WriteCollections({"worker_0"}, 1);
    e.AddFloats(0, "worker_0", Mode::kTrain, 0, "secret", {1.0f, 2.0f});
    e.FinishStep(0);
    e.End();
  }
};

void Replace(const std::string& path, const std::string& target) {
  std::string cmd = "rm -rf '" + path + "'";
  ASSERT_EQ(0, std::system(cmd.c_str()));
  ASSERT_EQ(0, ::symlink(target.c_str(), path.c_str())) << path;
}

// An event file that is a link to another trial's event file: refused, with a message that says
// why; the other trial's values are never returned.
TEST(HostileInput, EventFileLinkOutOfTheTrialIsRefused) {
  TwoTrials tt(TempDir("t"));
  const std::string rel = io::EventFileRelPath(0, "worker_0");
  Replace(tt.evil + "/" + rel, tt.victim + "/" + rel);
  TrialPtr t = OpenOk(tt.evil);
  ASSERT_TRUE(t);
  auto v = ReadValue(*t, "secret", 0);
  ASSERT_FALSE(v.ok()) << "read another trial's value through a link";
  EXPECT_NE(v.status().message().find("symbolic link that leads out of the trial folder"),
            std::string::npos)
      << v.status().message();
}

// The events/ folder itself a link to another trial's: refused the same way.
TEST(HostileInput, EventsFolderLinkOutOfTheTrialIsRefused) {
  TwoTrials tt(TempDir("t"));
  Replace(tt.evil + "/events", tt.victim + "/events");
  TrialPtr t = OpenOk(tt.evil);
  ASSERT_TRUE(t);
  auto v = ReadValue(*t, "secret", 0);
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.status().message().find("leads out of the trial folder"), std::string::npos)
      << v.status().message();
}

// A step folder of index/ that is a link out of the trial: its steps are not read (a warning
// names the folder and the reason).
TEST(HostileInput, IndexFolderLinkOutOfTheTrialIsSkippedWithAWarning) {
  TwoTrials tt(TempDir("t"));
  Replace(tt.evil + "/index/000000000", tt.victim + "/index/000000000");
  TrialPtr t = OpenOk(tt.evil);
  ASSERT_TRUE(t);
  auto steps = t->Steps(Mode::kGlobal, true);
  ASSERT_TRUE(steps.ok());
  EXPECT_TRUE(steps->empty());
  bool warned = false;
  for (const std::string& w : t->Warnings()) {
    warned = warned || w.find("leads out of the trial folder") != std::string::npos;
  }
  EXPECT_TRUE(warned);
}

// A file that is not a record file where the index points (here, any readable text): the error
// says the header is not a record header and quotes none of the file's bytes.
TEST(HostileInput, NonRecordFileBytesAreNotQuotedInErrors) {
  const std::string dir = TempDir("t");
  TrialBuilder b(dir);
  b.WriteCollections({"worker_0"}, 1);
  std::vector<io::IndexTensorEntry> entries;
  for (int i = 0; i < 8; ++i) {
    b.AddFloats(0, "worker_0", Mode::kTrain, 0, "t" + std::to_string(i), {1.0f});
  }
  b.FinishStep(0);
  b.End();
  // The same size as the real event file, full of text that must not leak.
  const std::string ev = dir + "/" + io::EventFileRelPath(0, "worker_0");
  const size_t size = ReadFile(ev).size();
  std::string secret;
  while (secret.size() < size) secret += "SECRET-PASSWORD-ABCD";
  secret.resize(size);
  WriteFile(ev, secret);
  TrialPtr t = OpenOk(dir);
  ASSERT_TRUE(t);
  for (int i = 0; i < 8; ++i) {
    auto v = ReadValue(*t, "t" + std::to_string(i), 0);
    ASSERT_FALSE(v.ok());
    const std::string& m = v.status().message();
    EXPECT_NE(m.find("not a valid TFRecord header"), std::string::npos) << m;
    EXPECT_EQ(m.find("0x"), std::string::npos) << m;
    for (const char* bit : {"SECR", "ET-P", "ASSW", "ORD-", "ABCD"}) {
      EXPECT_EQ(m.find(bit), std::string::npos) << m;
    }
  }
}

// A sparse event file (a few KB on disk, 3 GiB long) and an index length of 3 GiB: the record's
// header (66 payload bytes) is checked before anything that large is allocated or read.
TEST(HostileInput, SparseEventFileWithAHugeIndexLengthIsCheckedByItsHeader) {
  const std::string dir = TempDir("t");
  TrialBuilder b(dir);
  b.WriteCollections({"worker_0"}, 1);
  b.AddFloats(0, "worker_0", Mode::kTrain, 0, "big", {1.0f});
  b.FinishStep(0);
  b.End();
  const std::string ev_rel = io::EventFileRelPath(0, "worker_0");
  const uint64_t huge = uint64_t(3) << 30;
  ASSERT_EQ(0, ::truncate((dir + "/" + ev_rel).c_str(), static_cast<off_t>(huge + 4096)));
  io::IndexMeta meta;
  meta.mode = Mode::kTrain;
  meta.mode_step = 0;
  meta.event_file_name = ev_rel;
  WriteFile(dir + "/" + io::IndexFileRelPath(0, "worker_0"),
            io::BuildIndexJson(meta, {{"big", 0, huge}}, {}));
  TrialPtr t = OpenOk(dir);
  ASSERT_TRUE(t);
  auto v = ReadValue(*t, "big", 0);
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.status().message().find("payload bytes but the index gives " + std::to_string(huge - 16)),
            std::string::npos)
      << v.status().message();
  struct rusage ru;
  ASSERT_EQ(0, ::getrusage(RUSAGE_SELF, &ru));
  EXPECT_LT(ru.ru_maxrss, 1024L * 1024L) << "KiB at peak: the payload was read";  // < 1 GiB
}

// An index that names one record for two tensors: the record's tag names one of them, so the
// other's value is refused (R6) whichever is read first (a value cached for the first used to be
// handed to the second), alone or in bulk.
TEST(HostileInput, TwoTensorsNamingOneRecordAreRefusedWhateverTheOrder) {
  const std::string dir = TempDir("t");
  TrialBuilder b(dir);
  b.WriteCollections({"worker_0"}, 1);
  b.AddFloats(0, "worker_0", Mode::kTrain, 0, "fc.weight", {1.0f, 2.0f});
  b.FinishStep(0);
  b.End();
  const std::string ev_rel = io::EventFileRelPath(0, "worker_0");
  const uint64_t len = ReadFile(dir + "/" + ev_rel).size();
  io::IndexMeta meta;
  meta.mode = Mode::kTrain;
  meta.mode_step = 0;
  meta.event_file_name = ev_rel;
  WriteFile(dir + "/" + io::IndexFileRelPath(0, "worker_0"),
            io::BuildIndexJson(meta, {{"fc.weight", 0, len}, {"loss", 0, len}}, {}));
  for (bool weight_first : {true, false}) {
    TrialPtr t = OpenOk(dir);
    ASSERT_TRUE(t);
    if (weight_first) ASSERT_TRUE(ReadValue(*t, "fc.weight", 0).ok());
    auto loss = ReadValue(*t, "loss", 0);
    ASSERT_FALSE(loss.ok()) << (weight_first ? "weight first" : "loss first");
    EXPECT_EQ(loss.status().code(), Code::kCorrupt) << loss.status().message();
    EXPECT_NE(loss.status().message().find("'fc.weight'"), std::string::npos) << loss.status().message();
    auto weight = ReadValue(*t, "fc.weight", 0);
    ASSERT_TRUE(weight.ok()) << weight.status().message();
    EXPECT_EQ((*weight)->count(), 2u);
    auto id = t->TensorId("loss");
    ASSERT_TRUE(id.ok());
    auto all = t->TensorValues(*id, Mode::kGlobal, nullptr);  // the bulk read, after the cache has fc.weight
    EXPECT_FALSE(all.ok());
  }
}

// Step numbers at the int64 edges: a step named INT64_MAX is a step like any other; a negative
// one is not a step (smdebug refuses them) and is reported as a skipped file.
TEST(HostileInput, StepNamesAtTheInt64Edges) {
  const std::string dir = TempDir("t");
  TrialBuilder b(dir);
  b.WriteCollections({"worker_0"}, 1);
  b.SimpleStep(0, {"loss"});
  b.SimpleStep(INT64_MAX, {"loss"});
  b.End();
  WriteFile(dir + "/index/-000000001/-00000000001_worker_0.json",
            ReadFile(dir + "/" + io::IndexFileRelPath(0, "worker_0")));
  WriteFile(dir + "/index/000000000/-9223372036854775808_worker_0.json",
            ReadFile(dir + "/" + io::IndexFileRelPath(0, "worker_0")));
  TrialPtr t = OpenOk(dir);
  ASSERT_TRUE(t);
  auto steps = t->Steps(Mode::kGlobal, true);
  ASSERT_TRUE(steps.ok());
  EXPECT_EQ(*steps, (std::vector<int64_t>{0, INT64_MAX}));
  auto v = ReadValue(*t, "loss", INT64_MAX);
  ASSERT_TRUE(v.ok()) << v.status().message();
  int negative = 0;
  for (const std::string& w : t->Warnings()) negative += w.find("is negative") != std::string::npos;
  EXPECT_EQ(negative, 2);
  EXPECT_EQ(t->last_complete_step(), INT64_MAX);
}

// More dimensions than any writer writes (the hook's limit, 255): a clear error, found while the
// shape is parsed (30,000 dimensions used to be decoded, and crashed the printer).
TEST(HostileInput, TooManyDimensionsAreRefused) {
  const std::string dir = TempDir("t");
  TrialBuilder b(dir);
  b.WriteCollections({"worker_0"}, 1);
  b.AddFloats(0, "worker_0", Mode::kTrain, 0, "deep", {1.0f}, std::vector<int64_t>(30000, 1));
  b.AddFloats(0, "worker_0", Mode::kTrain, 0, "max", {1.0f}, std::vector<int64_t>(255, 1));
  b.AddFloats(0, "worker_0", Mode::kTrain, 0, "over", {1.0f}, std::vector<int64_t>(256, 1));
  b.FinishStep(0);
  b.End();
  TrialPtr t = OpenOk(dir);
  ASSERT_TRUE(t);
  auto ok = ReadValue(*t, "max", 0);
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ((*ok)->shape().size(), 255u);
  for (const char* n : {"deep", "over"}) {
    auto v = ReadValue(*t, n, 0);
    ASSERT_FALSE(v.ok()) << n;
    EXPECT_EQ(v.status().code(), Code::kCorrupt);
    EXPECT_NE(v.status().message().find("more than 255 dimensions"), std::string::npos)
        << v.status().message();
  }
  // The same limit for the shapes index files give (save_shape): an index file holding a deeper
  // one is skipped as malformed, with a warning (it was loaded, dimensions and all).
  const std::string dir2 = TempDir("t2");
  TrialBuilder s(dir2);
  s.WriteCollections({"worker_0"}, 1);
  s.AddShape(0, "worker_0", Mode::kTrain, 0, "ok", std::vector<int64_t>(255, 1));
  s.FinishStep(0);
  s.AddShape(1, "worker_0", Mode::kTrain, 1, "deep", std::vector<int64_t>(30000, 1));
  s.FinishStep(1);
  s.End();
  TrialPtr t2 = OpenOk(dir2);
  ASSERT_TRUE(t2);
  EXPECT_TRUE(t2->TensorId("ok").ok());
  EXPECT_FALSE(t2->TensorId("deep").ok());
  const std::vector<std::string> warnings = t2->Warnings();
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("more than 255 dimensions"), std::string::npos) << warnings[0];
}

// PCRE2's match limit is an error naming the regex, never "no match" (Python's re finds a match
// where PCRE2 gives up); the first such error ends a collection query.
TEST(HostileInput, RegexMatchLimitIsAnErrorNotANo) {
  auto re = Regex::Compile("(x+x+)+y|a$");
  ASSERT_TRUE(re.ok());
  const std::string name = std::string(40, 'x') + "a";
  auto m = (*re)->Search(name);
  ASSERT_FALSE(m.ok()) << "taken as " << (m.ok() && *m ? "a match" : "no match");
  EXPECT_EQ(m.status().code(), Code::kInvalidArgument);
  EXPECT_NE(m.status().message().find("(x+x+)+y|a$"), std::string::npos) << m.status().message();
  EXPECT_NE(m.status().message().find("limit"), std::string::npos) << m.status().message();
  auto short_name = (*re)->Search("xa");
  ASSERT_TRUE(short_name.ok());
  EXPECT_TRUE(*short_name);

  const std::string dir = TempDir("t");
  TrialBuilder b(dir);
  b.WriteCollections({"worker_0"}, 1,
                     "{\"evil\": {\"name\": \"evil\", \"include_regex\": [\"(x+x+)+y|a$\"], "
                     "\"tensor_names\": [], \"reduction_config\": null, \"save_config\": null, "
                     "\"save_histogram\": false}}");
  b.SimpleStep(0, {name, "other"});
  b.End();
  TrialPtr t = OpenOk(dir);
  ASSERT_TRUE(t);
  TensorFilter f;
  f.collection = "evil";
  auto names = t->TensorNames(f);
  ASSERT_FALSE(names.ok()) << names.value().size() << " member(s)";
  EXPECT_NE(names.status().message().find("collection 'evil'"), std::string::npos)
      << names.status().message();
  TensorFilter r;
  r.regexes = {"(x+x+)+y|a$"};
  EXPECT_FALSE(t->TensorNames(r).ok());
}

}  // namespace
}  // namespace smd::trial
