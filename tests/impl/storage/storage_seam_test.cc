// The storage seam: every access to a trial's root (and to the other files smd writes: a
// TensorBoard folder, a rule's message file) goes through an io::Storage opened by
// io::OpenStorage or given to the Hook and the Trial; the factory is the one place that refuses
// unsupported roots and expands "~".
#include <sys/stat.h>

#include <cstdlib>
#include <fstream>

#include "gtest/gtest.h"
#include "impl/format/layout.h"
#include "impl/hook/hook.h"
#include "impl/rules/rule.h"
#include "impl/storage/open.h"
#include "impl/trial/trial.h"
#include "tests/impl/storage/recording_storage.h"
#include "tests/impl/trial/trial_builder.h"

namespace smd::io {
namespace {

using testing::CallLog;
using testing::RecordingStorage;
using trial::testing::TempDir;

bool IsDir(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::vector<std::string> Entries(const std::string& dir) {
  auto s = MakeLocalStorage(dir);
  auto r = s->List("", "");
  return r.ok() ? r.value() : std::vector<std::string>();
}

// Saves the scalar "loss" at steps 0..n-1 through `hook`, then closes it.
void SaveLosses(hook::Hook& hook, int n) {
  for (int s = 0; s < n; ++s) {
    ASSERT_TRUE(hook.BeginStep().ok());
    double v = 1.0 / (s + 1);
    int64_t shape[1] = {1};
    hook::Hook::SaveRequest r;
    r.name = "loss";
    r.dtype = DType::kFloat64;
    r.shape = shape;
    r.ndim = 1;
    r.data = &v;
    r.nbytes = sizeof v;
    Status st = hook.Save(r);
    ASSERT_TRUE(st.ok()) << st.message();
  }
  Status st = hook.Close();
  ASSERT_TRUE(st.ok()) << st.message();
}

hook::HookOptions EveryStep() {
  hook::HookOptions o;
  hook::SaveConfigMode every;
  every.save_interval = 1;
  o.save_config.SetAll(every);
  o.save_all = true;
  o.export_tensorboard = true;
  return o;
}

// Fires at step 2, with a finding for "loss".
class FiresAtTwo : public rules::Rule {
 public:
  explicit FiresAtTwo(std::vector<rules::TrialPtr> trials) : Rule("FiresAtTwo", std::move(trials)) {}
  Result<bool> InvokeAtStep(rules::RuleContext& ctx, int64_t step) override {
    if (step != 2) return false;
    ctx.Report("loss", "too low");
    return true;
  }
};

// The wrapper that OpenStorage applies while a test runs, removed at its end.
class WrapOpenedStorages {
 public:
  explicit WrapOpenedStorages(std::shared_ptr<CallLog> log) {
    SetStorageWrapperForTesting([log](std::unique_ptr<Storage> s) -> std::unique_ptr<Storage> {
      return std::make_unique<RecordingStorage>(std::move(s), log);
    });
  }
  ~WrapOpenedStorages() { SetStorageWrapperForTesting(nullptr); }
};

TEST(StorageSeam, TensorBoardStopSignalMessageFileAndListingsGoThroughIt) {
  const std::string dir = TempDir("run");
  auto log = std::make_shared<CallLog>();
  WrapOpenedStorages wrap(log);  // storages smd opens itself are recorded too

  // The hook over a given storage: the trial's files and <out_dir>/tensorboard through it.
  auto hook = hook::Hook::Create(
      std::make_shared<RecordingStorage>(MakeLocalStorage(dir), log), EveryStep());
  ASSERT_TRUE(hook.ok()) << hook.status().message();
  SaveLosses(**hook, 4);
  EXPECT_TRUE(log->Has("WriteAtomic", "index/", dir)) << log->Dump();
  EXPECT_TRUE(log->Has("Create", "events/", dir)) << log->Dump();
  EXPECT_TRUE(log->Has("OpenForAppend", "tensorboard/GLOBAL/", dir)) << log->Dump();
  EXPECT_TRUE(log->Has("WriteAtomic", kEndOfJobFile, dir)) << log->Dump();
  EXPECT_FALSE(Entries(dir + "/tensorboard/GLOBAL").empty());  // and the files are there

  // The trial over a given storage, and a rule that stops training and writes messages.
  auto t = trial::Trial::Open(std::make_unique<RecordingStorage>(MakeLocalStorage(dir), log),
                              trial::TrialOptions());
  ASSERT_TRUE(t.ok()) << t.status().message();
  // The job has ended: nothing will change, so the trial asks for no change watch (whose
  // inotify descriptor would cost ~10 ms to close when the trial is freed).
  EXPECT_FALSE(log->Has("WatchChanges", "", dir)) << log->Dump();
  EXPECT_TRUE(log->Has("List", "index", dir)) << log->Dump();
  FiresAtTwo rule({*t});
  rules::InvokeOptions o;
  o.stop_training = true;
  const std::string messages_dir = TempDir("messages");
  o.message_file = messages_dir + "/rules.log";
  Status st = rules::InvokeRules({&rule}, 0, -1, false, o);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_TRUE(log->Has("WriteAtomic", kStopTrainingFile, dir)) << log->Dump();
  EXPECT_TRUE(log->Has("OpenForAppend", "rules.log", messages_dir)) << log->Dump();
  EXPECT_NE(trial::testing::ReadFile(o.message_file).find("step 2, tensor 'loss': too low"),
            std::string::npos);
  EXPECT_NE(trial::testing::ReadFile(dir + "/" + kStopTrainingFile).find("\"step\": 2"),
            std::string::npos);

  // A refresh lists from where the previous one stopped, not the whole index again.
  const size_t before = log->calls().size();
  ASSERT_TRUE((*t)->Refresh().ok());
  bool from_cursor = false;
  for (size_t i = before; i < log->calls().size(); ++i) {
    const auto c = log->calls()[i];
    if (c.op == "List" && c.rel.rfind("index/", 0) == 0) {
      EXPECT_NE(c.rel.find(" from "), std::string::npos) << "listed without a start: " << c.rel;
      from_cursor = true;
    }
  }
  EXPECT_TRUE(from_cursor) << log->Dump();
}

TEST(StorageSeam, ARunningJobsTrialAsksItsStorageForAChangeWatch) {
  const std::string dir = TempDir("running");
  auto log = std::make_shared<CallLog>();
  hook::HookOptions o = EveryStep();
  o.write_end_marker = false;  // the job is still running for its readers
  auto hook = hook::Hook::Create(MakeLocalStorage(dir), o);
  ASSERT_TRUE(hook.ok()) << hook.status().message();
  SaveLosses(**hook, 2);
  auto t = trial::Trial::Open(std::make_unique<RecordingStorage>(MakeLocalStorage(dir), log),
                              trial::TrialOptions());
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_TRUE(log->Has("WatchChanges", "", dir)) << log->Dump();  // asked, and told it cannot: polls
  EXPECT_TRUE(log->Has("Exists", kEndOfJobFile, dir)) << log->Dump();
}

TEST(StorageSeam, TensorBoardFilesOfAHomeRelativeOutDirAreUnderHome) {
  const std::string home = TempDir("home");
  const std::string cwd = TempDir("cwd");
  const char* old_home = std::getenv("HOME");
  const std::string saved_home = old_home ? old_home : "";
  char old_cwd[4096];
  ASSERT_NE(::getcwd(old_cwd, sizeof old_cwd), nullptr);
  ASSERT_EQ(::setenv("HOME", home.c_str(), 1), 0);
  ASSERT_EQ(::chdir(cwd.c_str()), 0);
  {
    auto hook = hook::Hook::Create("~/run1", EveryStep());
    ASSERT_TRUE(hook.ok()) << hook.status().message();
    SaveLosses(**hook, 2);
  }
  ASSERT_EQ(::chdir(old_cwd), 0);
  if (old_home) ::setenv("HOME", saved_home.c_str(), 1); else ::unsetenv("HOME");
  EXPECT_TRUE(IsDir(home + "/run1/index"));
  EXPECT_FALSE(Entries(home + "/run1/tensorboard/GLOBAL").empty());
  EXPECT_FALSE(IsDir(cwd + "/~")) << "a literal '~' folder was created";
}

TEST(OpenStorage, IsTheOnePlaceThatRefusesRootsAndExpandsHome) {
  // s3://: a prefix is required (a trial is never a whole bucket); bucket names are checked.
  for (const char* bad : {"s3://", "s3:///x", "s3://bucket", "s3://bucket/", "s3://Bad Bucket/x",
                          "s3://ab/x", "s3://_legacy/x"}) {
    auto r = OpenStorage(bad);
    EXPECT_EQ(r.status().code(), Code::kInvalidArgument) << bad;
    EXPECT_NE(r.status().message().find(std::string("'") + bad + "'"), std::string::npos)
        << r.status().message();
  }
  StorageOptions so;
  so.s3_endpoint = "http://127.0.0.1:9";
  so.s3_access_key_id = "AKIDEXAMPLE";
  so.s3_secret_access_key = "never-shown-secret";
  auto s3 = OpenStorage("s3://bucket//prefix/", so);  // no request yet: nothing to reach
  ASSERT_TRUE(s3.ok()) << s3.status().message();
  EXPECT_EQ((*s3)->root(), "s3://bucket/prefix");
  EXPECT_EQ((*s3)->WatchChanges(), nullptr) << "an object store cannot notify: readers poll";
  EXPECT_TRUE((*s3)->RootAppearsWithFirstFile()) << "a prefix exists once an object is under it";
  // A legacy us-east-1 name (upper case, '_') is a bucket S3 still serves.
  auto legacy = OpenStorage("s3://Legacy_Bucket/prefix", so);
  ASSERT_TRUE(legacy.ok()) << legacy.status().message();
  EXPECT_EQ((*legacy)->root(), "s3://Legacy_Bucket/prefix");
  StorageOptions half = so;
  half.s3_secret_access_key.clear();
  auto h1 = OpenStorage("s3://bucket/prefix", half);
  EXPECT_EQ(h1.status().code(), Code::kInvalidArgument);
  StorageOptions style = so;
  style.s3_addressing_style = "sideways";
  EXPECT_EQ(OpenStorage("s3://bucket/prefix", style).status().code(), Code::kInvalidArgument);
  StorageOptions ftp = so;
  ftp.s3_endpoint = "ftp://127.0.0.1";
  auto e = OpenStorage("s3://bucket/prefix", ftp);
  EXPECT_EQ(e.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(e.status().message().find("never-shown-secret"), std::string::npos);
  auto gs = OpenStorage("gs://bucket/x");
  EXPECT_EQ(gs.status().code(), Code::kInvalidArgument);
  EXPECT_NE(gs.status().message().find("'gs://bucket/x'"), std::string::npos);
  EXPECT_EQ(OpenStorage("").status().code(), Code::kInvalidArgument);
  auto file = OpenStorage("file:///tmp/x");
  ASSERT_TRUE(file.ok());
  EXPECT_EQ((*file)->root(), "/tmp/x");
  auto rel = OpenStorage("a:b/c");  // a colon alone is part of a local name
  ASSERT_TRUE(rel.ok());
  EXPECT_EQ((*rel)->root(), "a:b/c");

  const char* home = std::getenv("HOME");
  if (home != nullptr && *home != '\0') {
    EXPECT_EQ(ExpandHome("~"), std::string(home));
    EXPECT_EQ(ExpandHome("~/x/y"), std::string(home) + "/x/y");
    auto h = OpenStorage("~/t");
    ASSERT_TRUE(h.ok());
    EXPECT_EQ((*h)->root(), std::string(home) + "/t");
  }
  EXPECT_EQ(ExpandHome("~user/x"), "~user/x");  // not ours to resolve
  EXPECT_EQ(ExpandHome("/a/~"), "/a/~");
  EXPECT_EQ(SplitFilePath("a/b/c.txt"), std::make_pair(std::string("a/b"), std::string("c.txt")));
  EXPECT_EQ(SplitFilePath("c.txt"), std::make_pair(std::string("."), std::string("c.txt")));
  EXPECT_EQ(SplitFilePath("/c.txt"), std::make_pair(std::string("/"), std::string("c.txt")));
}

TEST(LocalStorage, ListsFromANameAndAppends) {
  const std::string dir = TempDir("list");
  auto s = MakeLocalStorage(dir);
  for (const char* n : {"b", "a", "d", "c"}) ASSERT_TRUE(s->WriteAtomic(std::string("f/") + n, n).ok());
  auto all = s->List("f", "");
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all.value(), (std::vector<std::string>{"a", "b", "c", "d"}));
  auto from = s->List("f", "b");
  ASSERT_TRUE(from.ok());
  EXPECT_EQ(from.value(), (std::vector<std::string>{"b", "c", "d"}));  // `from` itself included
  EXPECT_EQ(s->List("nope", "").status().code(), Code::kNotFound);

  auto f = s->OpenForAppend("g/log.txt");  // parents created
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ((*f)->size(), 0u);
  ASSERT_TRUE((*f)->Append("one\n").ok());
  ASSERT_TRUE((*f)->Close().ok());
  auto g = s->OpenForAppend("g/log.txt");
  ASSERT_TRUE(g.ok());
  EXPECT_EQ((*g)->size(), 4u);  // what it held
  ASSERT_TRUE((*g)->Append("two\n").ok());
  EXPECT_EQ((*g)->size(), 8u);
  ASSERT_TRUE((*g)->Close().ok());
  EXPECT_EQ(trial::testing::ReadFile(dir + "/g/log.txt"), "one\ntwo\n");
  // A file where a folder must be: an error naming it.
  auto bad = s->OpenForAppend("g/log.txt/x");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("g/log.txt"), std::string::npos) << bad.status().message();
}

}  // namespace
}  // namespace smd::io
