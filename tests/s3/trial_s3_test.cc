// s3:// everywhere a trial path goes, through the C ABI and the `smd` tool, against the local
// S3 server of the ctest fixture: the hook writes a trial under s3://bucket/prefix, the trial API
// reads every value back (also while the job runs), the smd commands take the s3:// path, and bad
// input (URIs, credentials, buckets, endpoints) gets distinct codes whose messages never hold
// the secret key or the session token.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "smd/smd.h"
#include "tests/s3/s3_test_env.h"

namespace {

using smd::s3::Config;

// A unique prefix per test run, so reruns against one server never see an earlier trial.
std::string UniquePrefix(const std::string& name) {
  static std::atomic<int> n{0};
  return "it-" + std::to_string(::getpid()) + "-" + std::to_string(n++) + "-" + name;
}

struct Err {
  smd_code code = SMD_OK;
  std::string message;
};

Err Take(smd_error* e) {
  Err out;
  if (e != nullptr) {
    out.code = smd_error_code(e);
    out.message = smd_error_message(e);
    smd_error_free(e);
  }
  return out;
}

#define EXPECT_SMD_OK(expr)                                      \
  do {                                                           \
    Err e_ = Take(expr);                                         \
    EXPECT_EQ(e_.code, SMD_OK) << #expr << ": " << e_.message;   \
  } while (0)
#define ASSERT_SMD_OK(expr)                                      \
  do {                                                           \
    Err e_ = Take(expr);                                         \
    ASSERT_EQ(e_.code, SMD_OK) << #expr << ": " << e_.message;   \
  } while (0)

class S3Trial : public ::testing::Test {
 protected:
  void SetUp() override {
    SMD_REQUIRE_S3_SERVER(cfg_, bucket_);
    have_server_ = true;
  }

  // Hook options writing every step as worker_0 of 1, with the server's settings as options
  // (not the environment).
  smd_hook_options* HookOptions() {
    smd_hook_options* o = nullptr;
    smd_save_config* sc = nullptr;
    EXPECT_SMD_OK(smd_hook_options_create(&o));
    EXPECT_SMD_OK(smd_save_config_create(&sc));
    EXPECT_SMD_OK(smd_save_config_set(sc, SMD_MODE_ALL, 1, 0, -1, nullptr, 0));
    EXPECT_SMD_OK(smd_hook_options_set_save_config(o, sc));
    smd_save_config_free(sc);
    EXPECT_SMD_OK(smd_hook_options_set_worker(o, "worker_0"));
    EXPECT_SMD_OK(smd_hook_options_set_num_workers(o, 1));
    EXPECT_SMD_OK(smd_hook_options_set_save_all(o, true));
    EXPECT_SMD_OK(smd_hook_options_set_write_end_marker(o, true));
    smd_storage_options* st = Storage();
    EXPECT_SMD_OK(smd_hook_options_set_storage(o, st));
    smd_storage_options_free(st);
    return o;
  }
  // The test server's settings, as one storage-options object (the caller frees it).
  smd_storage_options* Storage() {
    smd_storage_options* st = nullptr;
    EXPECT_SMD_OK(smd_storage_options_create(&st));
    EXPECT_SMD_OK(smd_storage_options_set_s3_endpoint(st, cfg_.endpoint.c_str()));
    EXPECT_SMD_OK(smd_storage_options_set_s3_region(st, cfg_.region.c_str()));
    EXPECT_SMD_OK(smd_storage_options_set_s3_addressing_style(st, "path"));
    EXPECT_SMD_OK(smd_storage_options_set_s3_credentials(st, cfg_.credentials.access_key_id.c_str(),
                                                         cfg_.credentials.secret_access_key.c_str(),
                                                         nullptr));
    return st;
  }
  smd_trial_options* TrialOptions() {
    smd_trial_options* o = nullptr;
    EXPECT_SMD_OK(smd_trial_options_create(&o));
    // A live job writes its collections file from its writer thread: wait for it (polling S3).
    EXPECT_SMD_OK(smd_trial_options_set_collection_wait_ms(o, 10000));
    smd_storage_options* st = Storage();
    EXPECT_SMD_OK(smd_trial_options_set_storage(o, st));
    smd_storage_options_free(st);
    return o;
  }
  std::string Uri(const std::string& prefix) const { return "s3://" + bucket_ + "/" + prefix; }

  // The value saved for tensor t at step s (each tensor 4 floats).
  static std::vector<float> Expected(int t, int s) {
    return {float(t * 1000 + s), float(-s), 0.5f * float(t), float(s * s)};
  }
  static void SaveStep(smd_hook* h, int step) {
    ASSERT_SMD_OK(smd_hook_begin_step(h));
    for (int t = 0; t < 2; ++t) {
      std::vector<float> v = Expected(t, step);
      const int64_t shape[1] = {4};
      const std::string name = "layer" + std::to_string(t) + "/weight";
      ASSERT_SMD_OK(smd_hook_save_tensor(h, name.c_str(), SMD_DTYPE_FLOAT32, shape, 1, v.data(),
                                         v.size() * sizeof(float), nullptr, 0));
    }
  }
  // Every step of both tensors read back and compared.
  static void CheckValues(smd_trial* t, int steps) {
    for (int k = 0; k < 2; ++k) {
      smd_tensor* x = nullptr;
      const std::string name = "layer" + std::to_string(k) + "/weight";
      ASSERT_SMD_OK(smd_trial_tensor(t, name.c_str(), &x));
      for (int s = 0; s < steps; ++s) {
        smd_value* v = nullptr;
        ASSERT_SMD_OK(smd_tensor_value(x, s, SMD_MODE_GLOBAL, nullptr, &v));
        const float* f = static_cast<const float*>(smd_value_data(v));
        std::vector<float> got(f, f + 4);
        EXPECT_EQ(got, Expected(k, s)) << name << " step " << s;
        smd_value_free(v);
      }
      smd_tensor_free(x);
    }
  }

  Config cfg_;
  std::string bucket_;
  bool have_server_ = false;
};

TEST_F(S3Trial, HookWritesAndTrialReadsBackEveryValue) {
  const std::string uri = Uri(UniquePrefix("roundtrip"));
  smd_hook_options* ho = HookOptions();
  smd_hook* h = nullptr;
  ASSERT_SMD_OK(smd_hook_create(uri.c_str(), ho, &h));
  for (int s = 0; s < 5; ++s) SaveStep(h, s);
  ASSERT_SMD_OK(smd_hook_close(h));
  smd_hook_free(h);

  smd_trial_options* to = TrialOptions();
  smd_trial* t = nullptr;
  ASSERT_SMD_OK(smd_trial_open(uri.c_str(), to, &t));
  bool ended = false;
  EXPECT_SMD_OK(smd_trial_has_ended(t, &ended));
  EXPECT_TRUE(ended) << "the end-of-job marker is an object too";
  int64_t* steps = nullptr;
  size_t n = 0;
  ASSERT_SMD_OK(smd_trial_steps(t, SMD_MODE_GLOBAL, false, &steps, &n));
  EXPECT_EQ(std::vector<int64_t>(steps, steps + n), (std::vector<int64_t>{0, 1, 2, 3, 4}));
  smd_free(steps);
  CheckValues(t, 5);
  smd_trial_free(t);

  // The finished job is refused as an out_dir on S3 too, naming the marker's object.
  Err again = Take(smd_hook_create(uri.c_str(), ho, &h));
  EXPECT_EQ(again.code, SMD_E_ALREADY_EXISTS) << again.message;
  EXPECT_NE(again.message.find(uri), std::string::npos) << again.message;
  smd_hook_options_free(ho);
  smd_trial_options_free(to);
}

// A built-in rule's other_trial_0 on S3 is opened as the base trial was: with its S3 settings
// (this process has no AWS variables, so the configuration chain reaches no server: the other
// trial could not be opened before).
TEST_F(S3Trial, OtherTrialOfARuleParameterIsOpenedWithTheBaseTrialsSettings) {
  const std::string a = Uri(UniquePrefix("run-a")), b = Uri(UniquePrefix("run-b"));
  smd_hook_options* ho = HookOptions();
  for (const std::string& uri : {a, b}) {
    smd_hook* h = nullptr;
    ASSERT_SMD_OK(smd_hook_create(uri.c_str(), ho, &h));
    for (int s = 0; s < 4; ++s) {
      ASSERT_SMD_OK(smd_hook_begin_step(h));
      const float w = (uri == b && s >= 2) ? 100.0f + s : float(s);
      const int64_t shape[1] = {1};
      ASSERT_SMD_OK(smd_hook_save_tensor(h, "fc.weight", SMD_DTYPE_FLOAT32, shape, 1, &w, sizeof w,
                                         nullptr, 0));
    }
    ASSERT_SMD_OK(smd_hook_close(h));
    smd_hook_free(h);
  }
  smd_hook_options_free(ho);
  smd_trial_options* to = TrialOptions();
  smd_trial* t = nullptr;
  ASSERT_SMD_OK(smd_trial_open(a.c_str(), to, &t));
  smd_trial_options_free(to);
  const char* keys[] = {"other_trial_0"};
  const char* values[] = {b.c_str()};
  smd_rule* rule = nullptr;
  ASSERT_SMD_OK(smd_rule_create_builtin("SimilarAcrossRuns", t, nullptr, 0, keys, values, 1, &rule));
  Err fired = Take(smd_rule_invoke(rule, 0, -1, true, nullptr));
  EXPECT_EQ(fired.code, SMD_E_RULE_CONDITION_MET) << fired.message;
  EXPECT_NE(fired.message.find("at step 2"), std::string::npos) << fired.message;
  smd_rule_free(rule);
  smd_trial_free(t);
}

TEST_F(S3Trial, OneStorageOptionsObjectServesTheTensorBoardWriterAndTheUploadListing) {
  smd_storage_options* st = Storage();
  const std::string uri = Uri(UniquePrefix("tb"));
  smd_tensorboard_writer* w = nullptr;
  ASSERT_SMD_OK(smd_tensorboard_writer_create(uri.c_str(), st, &w));
  EXPECT_SMD_OK(smd_tensorboard_writer_add_scalar(w, 3, SMD_MODE_TRAIN, 0, "loss", 0.5));
  EXPECT_SMD_OK(smd_tensorboard_writer_close(w));
  smd_tensorboard_writer_free(w);
  smd_strarray uploads = {nullptr, 0};
  EXPECT_SMD_OK(smd_s3_uploads_in_progress(uri.c_str(), st, false, &uploads));
  EXPECT_EQ(uploads.count, 0u);
  smd_strarray_free(&uploads);
  // The listing uses the object it is given: with a wrong secret S3 refuses it.
  EXPECT_SMD_OK(smd_storage_options_set_s3_credentials(st, cfg_.credentials.access_key_id.c_str(),
                                                       "wrong-secret", nullptr));
  Err e = Take(smd_s3_uploads_in_progress(uri.c_str(), st, false, &uploads));
  EXPECT_EQ(e.code, SMD_E_AUTH) << e.message;
  smd_storage_options_free(st);
}

TEST_F(S3Trial, JsonHookConfigurationWithAnS3LocalPath) {
  // smdebug's JSON has no key for the endpoint or credentials: they come with the options.
  const std::string uri = Uri(UniquePrefix("json"));
  const std::string json = "{\"LocalPath\": \"" + uri + "\"}";
  smd_hook_options* ho = HookOptions();
  smd_hook* h = nullptr;
  ASSERT_SMD_OK(smd_hook_create_from_json(json.data(), json.size(), ho, &h));
  for (int s = 0; s < 2; ++s) SaveStep(h, s);
  ASSERT_SMD_OK(smd_hook_close(h));
  smd_hook_free(h);
  smd_hook_options_free(ho);
  smd_trial_options* to = TrialOptions();
  smd_trial* t = nullptr;
  ASSERT_SMD_OK(smd_trial_open(uri.c_str(), to, &t));
  CheckValues(t, 2);
  smd_trial_free(t);
  smd_trial_options_free(to);
}

TEST_F(S3Trial, ARunningJobIsFollowedByPolling) {
  const std::string uri = Uri(UniquePrefix("live"));
  smd_hook_options* ho = HookOptions();
  EXPECT_SMD_OK(smd_hook_options_set_max_pending_steps(ho, 0));  // each step written at once
  smd_hook* h = nullptr;
  ASSERT_SMD_OK(smd_hook_create(uri.c_str(), ho, &h));
  for (int s = 0; s < 3; ++s) SaveStep(h, s);
  ASSERT_SMD_OK(smd_hook_begin_step(h));  // ends step 2: steps 0..2 are objects now (step 3 empty)

  smd_trial_options* to = TrialOptions();
  smd_trial* t = nullptr;
  ASSERT_SMD_OK(smd_trial_open(uri.c_str(), to, &t));
  bool ended = true;
  EXPECT_SMD_OK(smd_trial_has_ended(t, &ended));
  EXPECT_FALSE(ended);
  CheckValues(t, 3);

  // More steps while the reader holds the trial: a refresh (listing from its cursor) finds them
  // and wait_for_steps returns once they are there.
  for (int s = 4; s < 7; ++s) {
    ASSERT_SMD_OK(smd_hook_begin_step(h));
    (void)s;
  }
  const int64_t want[1] = {0};
  EXPECT_SMD_OK(smd_trial_wait_for_steps(t, want, 1, SMD_MODE_GLOBAL, 5000));
  ASSERT_SMD_OK(smd_hook_close(h));
  smd_hook_free(h);
  ASSERT_SMD_OK(smd_trial_refresh(t));
  EXPECT_SMD_OK(smd_trial_has_ended(t, &ended));
  EXPECT_TRUE(ended) << "refresh saw the end-of-job marker";
  smd_trial_free(t);
  smd_hook_options_free(ho);
  smd_trial_options_free(to);
}

TEST_F(S3Trial, WaitForStepsWakesOnStepsWrittenLater) {
  const std::string uri = Uri(UniquePrefix("wait"));
  smd_hook_options* ho = HookOptions();
  EXPECT_SMD_OK(smd_hook_options_set_max_pending_steps(ho, 0));
  smd_hook* h = nullptr;
  ASSERT_SMD_OK(smd_hook_create(uri.c_str(), ho, &h));
  SaveStep(h, 0);
  ASSERT_SMD_OK(smd_hook_flush(h));
  SaveStep(h, 1);  // ends step 0
  smd_trial_options* to = TrialOptions();
  smd_trial* t = nullptr;
  ASSERT_SMD_OK(smd_trial_open(uri.c_str(), to, &t));
  // Step 3 does not exist yet: a short wait times out.
  const int64_t later[1] = {3};
  Err early = Take(smd_trial_wait_for_steps(t, later, 1, SMD_MODE_GLOBAL, 300));
  EXPECT_NE(early.code, SMD_OK);
  SaveStep(h, 2);
  SaveStep(h, 3);
  ASSERT_SMD_OK(smd_hook_close(h));
  smd_hook_free(h);
  EXPECT_SMD_OK(smd_trial_wait_for_steps(t, later, 1, SMD_MODE_GLOBAL, 10000));
  CheckValues(t, 4);
  smd_trial_free(t);
  smd_hook_options_free(ho);
  smd_trial_options_free(to);
}

// ---- the smd tool on an s3:// path (configuration from the AWS environment variables) ------

class S3Tool : public S3Trial {
 protected:
  void SetUp() override {
    S3Trial::SetUp();
    if (!have_server_) return;
    ::setenv("AWS_ACCESS_KEY_ID", cfg_.credentials.access_key_id.c_str(), 1);
    ::setenv("AWS_SECRET_ACCESS_KEY", cfg_.credentials.secret_access_key.c_str(), 1);
    ::unsetenv("AWS_SESSION_TOKEN");
    ::unsetenv("AWS_PROFILE");
    ::setenv("AWS_ENDPOINT_URL_S3", cfg_.endpoint.c_str(), 1);
    ::setenv("AWS_REGION", cfg_.region.c_str(), 1);
    ::setenv("AWS_EC2_METADATA_DISABLED", "true", 1);
    if (!cfg_.ca_bundle.empty()) ::setenv("AWS_CA_BUNDLE", cfg_.ca_bundle.c_str(), 1);
  }
  void TearDown() override {
    for (const char* k : {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_ENDPOINT_URL_S3",
                          "AWS_REGION", "AWS_EC2_METADATA_DISABLED", "AWS_CA_BUNDLE"})
      ::unsetenv(k);
  }
  // Runs `smd args` (stdout and stderr together); returns the exit status.
  static int Smd(const std::string& args, std::string* out) {
    const std::string cmd = std::string(SMD_TOOL_PATH) + " " + args + " 2>&1";
    FILE* p = ::popen(cmd.c_str(), "r");
    if (p == nullptr) return -1;
    char buf[4096];
    out->clear();
    for (size_t k; (k = std::fread(buf, 1, sizeof buf, p)) > 0;) out->append(buf, k);
    int st = ::pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  }
  std::string WriteTrial(const std::string& name, int steps) {
    const std::string uri = Uri(UniquePrefix(name));
    smd_hook_options* ho = HookOptions();
    smd_hook* h = nullptr;
    Err e = Take(smd_hook_create(uri.c_str(), ho, &h));
    EXPECT_EQ(e.code, SMD_OK) << e.message;
    if (e.code == SMD_OK) {
      for (int s = 0; s < steps; ++s) SaveStep(h, s);
      EXPECT_SMD_OK(smd_hook_close(h));
      smd_hook_free(h);
    }
    smd_hook_options_free(ho);
    return uri;
  }
};

TEST_F(S3Tool, LsCatDumpRulesAndExportTakeAnS3Path) {
  const std::string uri = WriteTrial("tool", 4);
  std::string out;
  ASSERT_EQ(Smd("ls " + uri, &out), 0) << out;
  EXPECT_NE(out.find("layer1/weight"), std::string::npos) << out;
  EXPECT_NE(out.find("worker_0"), std::string::npos) << out;

  ASSERT_EQ(Smd("cat " + uri + " layer1/weight --step 3 --no-header", &out), 0) << out;
  EXPECT_NE(out.find("[ 1.003e+03, -3.000e+00,  5.000e-01,  9.000e+00]"), std::string::npos) << out;

  // The dump of the S3 trial is the dump of a local copy of it (written with the same values).
  std::string s3_dump;
  ASSERT_EQ(Smd("dump " + uri, &s3_dump), 0) << s3_dump;
  char tmpl[] = "/tmp/smd-s3-local-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::string local = std::string(tmpl) + "/trial";
  {
    smd_hook_options* ho = HookOptions();
    smd_hook* h = nullptr;
    ASSERT_SMD_OK(smd_hook_create(local.c_str(), ho, &h));
    for (int s = 0; s < 4; ++s) SaveStep(h, s);
    ASSERT_SMD_OK(smd_hook_close(h));
    smd_hook_free(h);
    smd_hook_options_free(ho);
  }
  std::string local_dump;
  ASSERT_EQ(Smd("dump " + local, &local_dump), 0) << local_dump;
  // The dump names no path; wall times differ between the two runs, so compare without them.
  auto strip = [](std::string s) {
    std::string r;
    for (size_t i = 0; i < s.size();) {
      size_t w = s.find("\"wall_time\"", i);
      if (w == std::string::npos) { r += s.substr(i); break; }
      r += s.substr(i, w - i);
      size_t end = s.find_first_of(",}", w);
      i = end == std::string::npos ? s.size() : end;
    }
    return r;
  };
  EXPECT_EQ(strip(s3_dump), strip(local_dump));
  if (!::testing::Test::HasFailure()) {
    const std::string rm = std::string("rm -rf '") + tmpl + "'";
    EXPECT_EQ(std::system(rm.c_str()), 0) << rm;
  }

  // rules, with --other on S3 as well.
  const std::string other = WriteTrial("tool-other", 4);
  int rc = Smd("rules " + uri + " --rule SimilarAcrossRuns --other " + other + " --no-progress", &out);
  EXPECT_TRUE(rc == 0 || rc == 6) << rc << ": " << out;
  EXPECT_EQ(out.find("not supported"), std::string::npos) << out;
  rc = Smd("rules " + uri + " --rule AllZero:tensor_regex=layer.* --no-progress", &out);
  EXPECT_TRUE(rc == 0 || rc == 6) << rc << ": " << out;

  // TensorBoard export from S3 into S3, then listed back with the storage-level reader (ls of the
  // TensorBoard prefix is not a trial; its objects must exist).
  const std::string tb = Uri(UniquePrefix("tb"));
  ASSERT_EQ(Smd("export-tensorboard --quiet " + uri + " " + tb, &out), 0) << out;
  auto storage = smd::s3::Client::Create(cfg_);
  ASSERT_TRUE(storage.ok());
  smd::s3::ListOptions lo;
  lo.prefix = tb.substr(("s3://" + bucket_ + "/").size()) + "/";
  auto listed = (*storage)->List(bucket_, lo);
  ASSERT_TRUE(listed.ok()) << listed.status().message();
  bool events = false;
  for (const auto& o : listed->objects)
    if (o.key.find("tfevents") != std::string::npos && o.size > 0) events = true;
  EXPECT_TRUE(events) << "no TensorBoard event object under " << tb;
}

TEST_F(S3Tool, RulesFollowARunningJobOnS3UntilItEnds) {
  const std::string uri = Uri(UniquePrefix("follow"));
  smd_hook_options* ho = HookOptions();
  EXPECT_SMD_OK(smd_hook_options_set_max_pending_steps(ho, 0));
  smd_hook* h = nullptr;
  ASSERT_SMD_OK(smd_hook_create(uri.c_str(), ho, &h));
  for (int s = 0; s < 3; ++s) SaveStep(h, s);
  ASSERT_SMD_OK(smd_hook_flush(h));

  // The rule starts on a running job (steps 0..1 complete), then the job writes steps with an
  // all-zero tensor at step 5 and ends: --follow polls S3 (no change notification there), finds
  // it and stops with the end-of-job marker.
  const std::string cmd = "timeout 120 " + std::string(SMD_TOOL_PATH) + " rules " + uri +
                          " --rule AllZero:tensor_regex=layer1.* --follow --no-progress 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  ::usleep(500 * 1000);
  for (int s = 3; s < 6; ++s) SaveStep(h, s);
  const float zeros[4] = {0, 0, 0, 0};
  const int64_t shape[1] = {4};
  ASSERT_SMD_OK(smd_hook_save_tensor(h, "layer1/zero", SMD_DTYPE_FLOAT32, shape, 1, zeros,
                                     sizeof zeros, nullptr, 0));
  SaveStep(h, 6);
  ASSERT_SMD_OK(smd_hook_close(h));
  smd_hook_free(h);
  smd_hook_options_free(ho);
  std::string out;
  char buf[4096];
  for (size_t k; (k = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, k);
  const int st = ::pclose(p);
  ASSERT_TRUE(WIFEXITED(st));
  EXPECT_EQ(WEXITSTATUS(st), 6) << out;  // IssuesFound (124 would be the timeout)
  EXPECT_NE(out.find("layer1/zero"), std::string::npos) << out;
  EXPECT_NE(out.find("IssuesFound"), std::string::npos) << out;
}

// ---- bad input: distinct codes, messages that name the bucket/key and never the secret -------

TEST_F(S3Trial, BadInputGetsDistinctCodesAndNeverShowsTheSecret) {
  const std::string secret = cfg_.credentials.secret_access_key;
  const std::string token = "SESSION-TOKEN-never-shown-1234567890";
  std::vector<std::string> messages;
  auto open_with = [&](const std::string& uri, smd_trial_options* o) {
    smd_trial* t = nullptr;
    Err e = Take(smd_trial_open(uri.c_str(), o, &t));
    if (t != nullptr) smd_trial_free(t);
    messages.push_back(e.message);
    return e;
  };

  // Malformed URIs.
  // (An upper-case or '_' name is a legacy bucket name: asked for, see below.)
  for (const char* bad : {"s3://", "s3://bucket", "s3://_not_a_bucket/x", "s3://Not A Bucket/x",
                          "s3://a/x"}) {
    smd_trial_options* o = TrialOptions();
    Err e = open_with(bad, o);
    EXPECT_EQ(e.code, SMD_E_INVALID_ARGUMENT) << bad << ": " << e.message;
    EXPECT_NE(e.message.find(bad), std::string::npos) << e.message;
    smd_trial_options_free(o);
  }

  // Wrong secret, with a session token: an auth error naming the bucket.
  {
    smd_trial_options* o = TrialOptions();
    const std::string wrong = secret + "-wrong";
    smd_storage_options* st = Storage();
    EXPECT_SMD_OK(smd_storage_options_set_s3_credentials(st, cfg_.credentials.access_key_id.c_str(),
                                                         wrong.c_str(), token.c_str()));
    EXPECT_SMD_OK(smd_trial_options_set_storage(o, st));
    Err e = open_with(Uri("any-prefix"), o);
    EXPECT_EQ(e.code, SMD_E_AUTH) << e.message;
    EXPECT_NE(e.message.find(bucket_), std::string::npos) << e.message;
    EXPECT_EQ(e.message.find(wrong), std::string::npos) << e.message;
    smd_trial_options_free(o);
    // The hook too.
    smd_hook_options* ho = HookOptions();
    EXPECT_SMD_OK(smd_hook_options_set_storage(ho, st));
    smd_storage_options_free(st);
    smd_hook* h = nullptr;
    Err he = Take(smd_hook_create(Uri(UniquePrefix("auth")).c_str(), ho, &h));
    messages.push_back(he.message);
    EXPECT_EQ(he.code, SMD_E_AUTH) << he.message;
    smd_hook_options_free(ho);
  }

  // No such bucket: an invalid argument naming it.
  {
    smd_trial_options* o = TrialOptions();
    Err e = open_with("s3://no-such-bucket-smd-test/p", o);
    EXPECT_EQ(e.code, SMD_E_INVALID_ARGUMENT) << e.message;
    EXPECT_NE(e.message.find("no-such-bucket-smd-test"), std::string::npos) << e.message;
    smd_trial_options_free(o);
  }

  // Unreachable endpoint (a closed port on loopback): an I/O error, after the retries.
  {
    smd_trial_options* o = TrialOptions();
    smd_storage_options* st = Storage();
    EXPECT_SMD_OK(smd_storage_options_set_s3_endpoint(st, "http://127.0.0.1:9"));
    EXPECT_SMD_OK(smd_trial_options_set_storage(o, st));
    smd_storage_options_free(st);
    Err e = open_with(Uri("p"), o);
    EXPECT_EQ(e.code, SMD_E_IO) << e.message;
    EXPECT_NE(e.message.find(bucket_), std::string::npos) << e.message;
    smd_trial_options_free(o);
  }

  // Missing credentials: nothing in the options, the environment or the profile files, and no
  // instance metadata.
  {
    const char* keep[] = {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
                          "AWS_PROFILE", "AWS_SHARED_CREDENTIALS_FILE", "AWS_CONFIG_FILE",
                          "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
                          "AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_EC2_METADATA_DISABLED"};
    std::vector<std::pair<std::string, std::string>> saved;
    for (const char* k : keep)
      if (const char* v = std::getenv(k)) saved.emplace_back(k, v);
    for (const char* k : keep) ::unsetenv(k);
    ::setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/smd-credentials", 1);
    ::setenv("AWS_CONFIG_FILE", "/nonexistent/smd-config", 1);
    ::setenv("AWS_EC2_METADATA_DISABLED", "true", 1);
    smd_trial_options* o = nullptr;
    EXPECT_SMD_OK(smd_trial_options_create(&o));
    smd_storage_options* st = nullptr;
    EXPECT_SMD_OK(smd_storage_options_create(&st));
    EXPECT_SMD_OK(smd_storage_options_set_s3_endpoint(st, cfg_.endpoint.c_str()));
    EXPECT_SMD_OK(smd_trial_options_set_storage(o, st));
    smd_storage_options_free(st);
    Err e = open_with(Uri("p"), o);
    EXPECT_EQ(e.code, SMD_E_AUTH) << e.message;
    EXPECT_NE(e.message.find(Uri("p")), std::string::npos) << e.message;
    smd_trial_options_free(o);
    for (const char* k : keep) ::unsetenv(k);
    for (auto& kv : saved) ::setenv(kv.first.c_str(), kv.second.c_str(), 1);
  }

  // The codes are distinct from each other, and no message holds a secret or the token.
  for (const std::string& m : messages) {
    EXPECT_EQ(m.find(secret), std::string::npos) << m;
    EXPECT_EQ(m.find(token), std::string::npos) << m;
  }
}

}  // namespace
