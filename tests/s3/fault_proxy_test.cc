// Faults between smd and a real S3 server (the versitygw of the ctest fixture), injected by a
// proxy of ours on loopback (tests/s3/fault_proxy.h): 500, 503 SlowDown, a connection reset in
// the middle of the body, a truncated answer, a stalled connection, a lost answer, a wrong clock
// (RequestTimeTooSkewed) and expired credentials (ExpiredToken, then new ones from a container
// credentials endpoint served by the test).
//
// At hook level: a hook writes steps through the flaky proxy; afterwards a trial reading DIRECTLY
// from the server finds every step and every value. With faults beyond the retry budget, the hook
// reports an error naming the object and the S3 error code, never the secret. A trial reading
// through the proxy (open, values, wait, refresh) survives transient faults. And the cases a
// retry makes ambiguous: a conditional PUT whose answer was lost (the retry gets 412), a
// CompleteMultipartUpload whose answer was lost (the retry gets NoSuchUpload), and one answered
// 200 with an <Error> body.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <algorithm>
#include <cstdio>
#include <ctime>
#include <ostream>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "impl/hook/hook.h"
#include "impl/storage/open.h"
#include "impl/storage/s3/client.h"
#include "impl/storage/s3_storage.h"
#include "impl/trial/trial.h"
#include "tests/s3/fault_proxy.h"
#include "tests/s3/s3_test_env.h"

namespace smd {
namespace {

using s3::testing::Fault;
using s3::testing::FaultProxy;
using s3::testing::ProxyRequest;
using Kind = Fault::Kind;

constexpr int kSteps = 8;
constexpr int kWidth = 1024;

std::string UniquePrefix(const std::string& name) {
  static std::atomic<int> n{0};
  return "faults-" + std::to_string(::getpid()) + "-" + std::to_string(n++) + "-" + name;
}

float Expected(int step, int i) { return static_cast<float>(step * 10000 + i); }

// Faults the first `times` attempts of each distinct request (method and target) that `pick`
// selects; the retries after that pass. Requests are told apart by their bytes, so every
// object, listing and part is hit.
class FirstAttempts {
 public:
  FirstAttempts(Fault fault, int times, int every = 1) : fault_(fault), times_(times), every_(every) {}
  Fault operator()(const ProxyRequest& r) {
    std::lock_guard<std::mutex> l(mu_);
    const std::string id = r.method + " " + r.target;
    auto [it, fresh] = seen_.emplace(id, 0);
    if (fresh) it->second = (distinct_++ % every_ == 0) ? times_ : 0;
    if (it->second == 0) return Fault::None();
    --it->second;
    ++injected_;
    return fault_;
  }
  int injected() const {
    std::lock_guard<std::mutex> l(mu_);
    return injected_;
  }

 private:
  Fault fault_;
  int times_, every_;
  mutable std::mutex mu_;
  std::map<std::string, int> seen_;
  int distinct_ = 0;
  int injected_ = 0;
};

class S3Faults : public ::testing::Test {
 protected:
  void SetUp() override {
    SMD_REQUIRE_S3_SERVER(cfg_, bucket_);
    ASSERT_EQ(cfg_.endpoint.rfind("http://", 0), 0u) << "the proxy speaks plain HTTP";
    proxy_ = std::make_unique<FaultProxy>(FaultProxy::PortOf(cfg_.endpoint));
    ASSERT_TRUE(proxy_->Start());
  }
  void TearDown() override {
    if (proxy_) proxy_->Stop();
  }

  // Storage options for `endpoint`, with the server's keys unless `keys` is false (then the
  // environment's chain), and short timeouts so that a stalled connection is abandoned in 1 s.
  io::StorageOptions Via(const std::string& endpoint, bool keys = true) const {
    io::StorageOptions o;
    o.s3_endpoint = endpoint;
    o.s3_region = cfg_.region;
    o.s3_addressing_style = "path";
    if (keys) {
      o.s3_access_key_id = cfg_.credentials.access_key_id;
      o.s3_secret_access_key = cfg_.credentials.secret_access_key;
    }
    o.s3_max_attempts = 5;
    o.s3_backoff_base_ms = 5;
    o.s3_stall_timeout_ms = 1000;
    return o;
  }

  std::string Uri(const std::string& name) const {
    return "s3://" + bucket_ + "/" + UniquePrefix(name);
  }

  static hook::HookOptions HookOpts(const io::StorageOptions& storage) {
    hook::HookOptions o;
    hook::SaveConfigMode every;
    every.save_interval = 1;
    o.save_config.SetAll(every);
    o.save_all = true;
    o.worker = "worker_0";
    o.num_workers = 1;
    o.write_end_marker = true;
    o.storage = storage;
    return o;
  }

  // Saves steps [from, to): "dense/weight" (float32[kWidth]) and "loss" (float32[1]). `begun`:
  // step `from` has begun already.
  static Status SaveSteps(hook::Hook& h, int from, int to, bool begun = false) {
    return SaveStepsFor(h, from, to, begun);
  }

 public:
  static Status SaveStepsFor(hook::Hook& h, int from, int to, bool begun = false) {
    std::vector<float> w(kWidth);
    for (int s = from; s < to; ++s) {
      if (s != from || !begun) SMD_RETURN_IF_ERROR(h.BeginStep());
      for (int i = 0; i < kWidth; ++i) w[static_cast<size_t>(i)] = Expected(s, i);
      int64_t shape[1] = {kWidth};
      hook::Hook::SaveRequest r;
      r.name = "dense/weight";
      r.dtype = DType::kFloat32;
      r.shape = shape;
      r.ndim = 1;
      r.data = w.data();
      r.nbytes = w.size() * sizeof(float);
      SMD_RETURN_IF_ERROR(h.Save(r));
      float loss = static_cast<float>(s) + 0.5f;
      int64_t one[1] = {1};
      hook::Hook::SaveRequest l;
      l.name = "loss";
      l.dtype = DType::kFloat32;
      l.shape = one;
      l.ndim = 1;
      l.data = &loss;
      l.nbytes = sizeof loss;
      SMD_RETURN_IF_ERROR(h.Save(l));
    }
    return Status::Ok();
  }

 protected:
  // A hook writes kSteps steps to `uri` through `opts`; returns the first error (saving or closing).
  static Status WriteJob(const std::string& uri, const hook::HookOptions& opts) {
    SMD_ASSIGN_OR_RETURN(std::shared_ptr<hook::Hook> h, hook::Hook::Create(uri, opts));
    Status st = SaveSteps(*h, 0, kSteps);
    Status closed = h->Close();
    return st.ok() ? closed : st;
  }

  // Every step [0, n) and every value of it, read by a trial that `opts` points at.
  static void ExpectSteps(trial::Trial& t, int n) {
    auto steps = t.Steps(Mode::kGlobal, false);
    ASSERT_TRUE(steps.ok()) << steps.status().message();
    std::vector<int64_t> want;
    for (int s = 0; s < n; ++s) want.push_back(s);
    EXPECT_EQ(*steps, want);
    auto wid = t.TensorId("dense/weight");
    auto lid = t.TensorId("loss");
    ASSERT_TRUE(wid.ok()) << wid.status().message();
    ASSERT_TRUE(lid.ok()) << lid.status().message();
    for (int s = 0; s < n; ++s) {
      auto v = t.TensorValue(*wid, s, Mode::kGlobal, nullptr);
      ASSERT_TRUE(v.ok()) << "step " << s << ": " << v.status().message();
      ASSERT_EQ((*v)->nbytes(), kWidth * sizeof(float));
      const float* f = static_cast<const float*>((*v)->data());
      int wrong = 0;
      for (int i = 0; i < kWidth; ++i) wrong += f[i] != Expected(s, i);
      EXPECT_EQ(wrong, 0) << "step " << s;
      auto l = t.TensorValue(*lid, s, Mode::kGlobal, nullptr);
      ASSERT_TRUE(l.ok()) << "step " << s << ": " << l.status().message();
      EXPECT_EQ(*static_cast<const float*>((*l)->data()), static_cast<float>(s) + 0.5f);
    }
  }

  // Reads the trial at `uri` directly from the server.
  void ExpectOnServer(const std::string& uri, int n) {
    trial::TrialOptions to;
    to.storage = Via(cfg_.endpoint);
    auto t = trial::Trial::Open(uri, to);
    ASSERT_TRUE(t.ok()) << t.status().message();
    auto ended = (*t)->HasEnded();
    ASSERT_TRUE(ended.ok());
    EXPECT_TRUE(*ended) << "the end-of-job marker is missing";
    ExpectSteps(**t, n);
  }

  s3::Config cfg_;
  std::string bucket_;
  std::unique_ptr<FaultProxy> proxy_;
};

// ---- Transient faults: nothing the hook accepted is lost ----

struct TransientCase {
  const char* name;
  Fault fault;
  int times;  // faulted attempts per selected request (< 5 attempts)
  int every;  // one request in `every` is selected
};

void PrintTo(const TransientCase& c, std::ostream* os) { *os << c.name; }

Fault Forwarded(Fault f) {
  f.forward = true;
  return f;
}

std::vector<TransientCase> TransientCases() {
  Fault stall = Fault::Of(Kind::kStall);
  stall.stall_ms = 2500;
  return {
      {"InternalError500", Fault::Reply(500, "InternalError"), 2, 1},
      {"SlowDown503", Fault::Reply(503, "SlowDown"), 3, 1},
      {"ResetMidBody", Fault::Of(Kind::kResetMidBody), 2, 1},
      {"TruncatedAnswer", Fault::Of(Kind::kTruncate), 2, 1},
      {"StalledConnection", stall, 1, 8},
      {"LostAnswer", Fault::Of(Kind::kLoseAnswer), 1, 1},
      {"ErrorAfterTheServerApplied", Forwarded(Fault::Reply(500, "InternalError")), 2, 1},
  };
}

class S3HookTransient : public S3Faults, public ::testing::WithParamInterface<TransientCase> {};

TEST_P(S3HookTransient, EveryAcceptedStepReachesTheServer) {
  const TransientCase& c = GetParam();
  auto script = std::make_shared<FirstAttempts>(c.fault, c.times, c.every);
  proxy_->SetScript([script](const ProxyRequest& r, int) { return (*script)(r); });
  const std::string uri = Uri(c.name);
  Status st = WriteJob(uri, HookOpts(Via(proxy_->endpoint())));
  ASSERT_TRUE(st.ok()) << c.name << ": " << st.message();
  EXPECT_GT(script->injected(), 0) << "the proxy injected nothing";
  if (c.every == 1) EXPECT_GE(script->injected(), 2 * kSteps) << "every object is hit";
  ExpectOnServer(uri, kSteps);
}

INSTANTIATE_TEST_SUITE_P(Faults, S3HookTransient, ::testing::ValuesIn(TransientCases()),
                         [](const auto& info) { return std::string(info.param.name); });

// A server whose clock is 10 minutes ahead of ours and that refuses requests signed more than 5
// minutes away from its time: the client learns the offset from the Date of the first refusal
// and signs every later request with the server's time (versitygw itself accepts 10 minutes).
TEST_F(S3Faults, HookWritesThroughAServerWithAnotherClock) {
  const std::time_t ahead = 600;
  std::atomic<int> refused{0};
  proxy_->SetScript([&](const ProxyRequest& r, int) {
    std::tm tm{};
    const std::string d = r.Header("x-amz-date");
    const std::time_t server_now = std::time(nullptr) + ahead;
    if (strptime(d.c_str(), "%Y%m%dT%H%M%SZ", &tm) == nullptr ||
        std::llabs(static_cast<long long>(timegm(&tm) - server_now)) > 300) {
      ++refused;
      Fault f = Fault::Reply(403, "RequestTimeTooSkewed");
      f.headers.emplace_back("Date", s3::testing::HttpDate(server_now));
      return f;
    }
    return Fault::None();
  });
  const std::string uri = Uri("skew");
  Status st = WriteJob(uri, HookOpts(Via(proxy_->endpoint())));
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_GE(refused.load(), 1);
  // Learnt once per client (requests already under way when it was learnt may be refused too).
  EXPECT_LE(refused.load(), 6) << "the client did not keep the server's clock";
  EXPECT_GT(proxy_->requests(), 3 * kSteps);
  ExpectOnServer(uri, kSteps);
}

// Temporary credentials from a container credentials endpoint (served here, on loopback). The
// proxy answers ExpiredToken to every request from some point until the client has fetched new
// credentials, twice during the job; the hook loses nothing. (versitygw refuses session tokens,
// so the endpoint hands out the server's keys without one.)
TEST_F(S3Faults, HookRefreshesExpiredCredentialsFromTheContainerEndpoint) {
  std::atomic<int> fetches{0};
  std::atomic<bool> expired{false};
  FaultProxy creds(0);
  ASSERT_TRUE(creds.Start());
  const std::string key = cfg_.credentials.access_key_id, secret = cfg_.credentials.secret_access_key;
  creds.SetScript([&](const ProxyRequest& r, int) {
    Fault f;
    f.kind = Kind::kReply;
    f.forward = false;
    f.status = r.Path() == "/creds" && r.Header("Authorization") == "Bearer test-token" ? 200 : 403;
    f.body = "{\"AccessKeyId\": \"" + key + "\", \"SecretAccessKey\": \"" + secret +
             "\", \"Expiration\": \"2099-01-01T00:00:00Z\"}";
    if (f.status == 200) {
      ++fetches;
      expired = false;
    }
    return f;
  });
  std::atomic<int> rejected{0};
  proxy_->SetScript([&](const ProxyRequest&, int index) {
    if (index == 6 || index == 20) expired = true;
    if (expired.load()) {
      ++rejected;
      return Fault::Reply(400, "ExpiredToken");
    }
    return Fault::None();
  });
  // Only the container endpoint may provide credentials.
  for (const char* v : {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
                        "AWS_PROFILE", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
                        "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE"})
    ::unsetenv(v);
  ::setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/credentials", 1);
  ::setenv("AWS_CONFIG_FILE", "/nonexistent/config", 1);
  ::setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", (creds.endpoint() + "/creds").c_str(), 1);
  ::setenv("AWS_CONTAINER_AUTHORIZATION_TOKEN", "Bearer test-token", 1);
  const std::string uri = Uri("expired");
  Status st = WriteJob(uri, HookOpts(Via(proxy_->endpoint(), /*keys=*/false)));
  ::unsetenv("AWS_CONTAINER_CREDENTIALS_FULL_URI");
  ::unsetenv("AWS_CONTAINER_AUTHORIZATION_TOKEN");
  creds.Stop();
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_GE(rejected.load(), 2);
  EXPECT_GE(fetches.load(), 3) << "one fetch at start and one per expiry";
  ExpectOnServer(uri, kSteps);
}

// ---- Faults beyond the retry budget: a clear error, never the secret ----

struct PersistentCase {
  const char* name;
  Fault fault;
  const char* must_name;  // in the message, besides the object
  Code code;
};

void PrintTo(const PersistentCase& c, std::ostream* os) { *os << c.name; }

class S3HookPersistent : public S3Faults, public ::testing::WithParamInterface<PersistentCase> {};

TEST_P(S3HookPersistent, CloseOrBeginStepNamesTheObjectAndTheCode) {
  const PersistentCase& c = GetParam();
  const Fault fault = c.fault;
  // Every upload of an index object fails, every time.
  proxy_->SetScript([fault](const ProxyRequest& r, int) {
    return r.method == "PUT" && r.target.find("/index/") != std::string::npos ? fault
                                                                               : Fault::None();
  });
  const std::string uri = Uri(c.name);
  auto h = hook::Hook::Create(uri, HookOpts(Via(proxy_->endpoint())));
  ASSERT_TRUE(h.ok()) << h.status().message();
  Status st = SaveSteps(**h, 0, kSteps);
  Status closed = (*h)->Close();
  const Status& err = st.ok() ? closed : st;
  ASSERT_FALSE(closed.ok()) << "close must report the lost upload";
  EXPECT_EQ(err.code(), c.code) << err.message();
  EXPECT_NE(err.message().find(uri + "/index/000000000/000000000000_worker_0.json"),
            std::string::npos)
      << err.message();
  EXPECT_NE(err.message().find(c.must_name), std::string::npos) << err.message();
  EXPECT_EQ(err.message().find(cfg_.credentials.secret_access_key), std::string::npos);
  EXPECT_EQ(closed.message().find(cfg_.credentials.secret_access_key), std::string::npos);
  // Five attempts of the first index object, then the writer stops (sticky error).
  int index_puts = 0;
  for (const std::string& line : proxy_->log())
    if (line.rfind("PUT ", 0) == 0 && line.find("/index/") != std::string::npos) ++index_puts;
  EXPECT_EQ(index_puts, 5);
}

INSTANTIATE_TEST_SUITE_P(
    Faults, S3HookPersistent,
    ::testing::Values(PersistentCase{"SlowDown", Fault::Reply(503, "SlowDown"), "SlowDown", Code::kHttp},
                      PersistentCase{"InternalError", Fault::Reply(500, "InternalError"),
                                     "InternalError", Code::kHttp},
                      PersistentCase{"Reset", Fault::Of(Kind::kResetMidBody), "failed", Code::kIO}),
    [](const auto& info) { return std::string(info.param.name); });

// ---- A trial reading through the proxy ----

TEST_F(S3Faults, TrialOpensReadsWaitsAndRefreshesThroughTransientFaults) {
  const std::string uri = Uri("reader");
  // The job, written directly: steps 0-3 now, 4-7 later.
  auto h = hook::Hook::Create(uri, HookOpts(Via(cfg_.endpoint)));
  ASSERT_TRUE(h.ok()) << h.status().message();
  ASSERT_TRUE(SaveSteps(**h, 0, 4).ok());
  ASSERT_TRUE((*h)->BeginStep().ok());  // ends step 3, begins step 4
  ASSERT_TRUE((*h)->Flush().ok());

  // The first attempt of every request fails, in turn with each kind of fault.
  std::mutex mu;
  std::set<std::string> seen;
  std::atomic<int> injected{0};
  const Fault kinds[] = {Fault::Reply(500, "InternalError"), Fault::Of(Kind::kResetMidBody),
                         Fault::Of(Kind::kTruncate), Fault::Reply(503, "SlowDown")};
  proxy_->SetScript([&](const ProxyRequest& r, int) {
    std::lock_guard<std::mutex> l(mu);
    if (!seen.insert(r.method + " " + r.target).second) return Fault::None();
    return kinds[injected++ % 4];
  });
  trial::TrialOptions to;
  to.storage = Via(proxy_->endpoint());
  to.watch = false;
  to.collection_wait_ms = 10000;
  auto t = trial::Trial::Open(uri, to);
  ASSERT_TRUE(t.ok()) << t.status().message();
  ASSERT_TRUE((*t)->WaitForSteps({0, 1, 2, 3}, Mode::kGlobal, 20000).ok());
  {
    auto steps = (*t)->Steps(Mode::kGlobal, false);
    ASSERT_TRUE(steps.ok());
    ASSERT_GE(steps->size(), 4u);
  }
  const int before = injected.load();
  EXPECT_GT(before, 0);

  // The job goes on and ends; the trial refreshes through the proxy and sees all of it.
  ASSERT_TRUE(SaveSteps(**h, 4, kSteps, /*begun=*/true).ok());
  ASSERT_TRUE((*h)->Close().ok());
  ASSERT_TRUE((*t)->Refresh().ok());
  ExpectSteps(**t, kSteps);
  EXPECT_GT(injected.load(), before) << "the refresh and the reads went through faults too";
}

// ---- The cases a retry makes ambiguous ----

// The conditional PUT of a claim reaches the server, its answer is lost, the retry gets 412: the
// object is ours, so the claim succeeded. A second claimant is still refused.
TEST_F(S3Faults, ConditionalPutWhoseAnswerWasLostIsStillOurs) {
  std::atomic<int> lost{0};
  proxy_->SetScript([&](const ProxyRequest& r, int) {
    if (r.method == "PUT" && !r.Header("If-None-Match").empty() && lost.fetch_add(1) == 0)
      return Fault::Of(Kind::kLoseAnswer);
    return Fault::None();
  });
  const std::string uri = Uri("claim");
  auto storage = io::OpenStorage(uri, Via(proxy_->endpoint()));
  ASSERT_TRUE(storage.ok()) << storage.status().message();
  Status st = (*storage)->CreateExclusive("claim.smd");
  EXPECT_TRUE(st.ok()) << st.message();
  EXPECT_GE(lost.load(), 2) << "the PUT was retried";
  auto other = io::OpenStorage(uri, Via(cfg_.endpoint));
  ASSERT_TRUE(other.ok());
  Status again = (*other)->CreateExclusive("claim.smd");
  EXPECT_EQ(again.code(), Code::kAlreadyExists) << again.message();

  // At hook level: the first upload claims out_dir; a lost answer must not make the hook say
  // "another process is writing".
  lost = 0;
  const std::string uri2 = Uri("claim-hook");
  Status job = WriteJob(uri2, HookOpts(Via(proxy_->endpoint())));
  EXPECT_TRUE(job.ok()) << job.message();
  EXPECT_GE(lost.load(), 2);
  ExpectOnServer(uri2, kSteps);
}

// The same, but the object cannot be read back (every GET fails): whose it is cannot be told, so
// the claim fails with the read's error, never "already exists" (which sends the user to remove
// another process's file, and may be our own).
TEST_F(S3Faults, AClaimThatCannotBeReadBackIsNotAnotherProcesss) {
  std::atomic<int> lost{0};
  proxy_->SetScript([&](const ProxyRequest& r, int) {
    if (r.method == "PUT" && !r.Header("If-None-Match").empty() && lost.fetch_add(1) == 0)
      return Fault::Of(Kind::kLoseAnswer);
    if (r.method == "GET" && r.Path().find("claim.smd") != std::string::npos) return Fault::Reply(503, "SlowDown");
    return Fault::None();
  });
  auto storage = io::OpenStorage(Uri("claim-unread"), Via(proxy_->endpoint()));
  ASSERT_TRUE(storage.ok()) << storage.status().message();
  Status st = (*storage)->CreateExclusive("claim.smd");
  EXPECT_NE(st.code(), Code::kAlreadyExists) << st.message();
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("cannot tell whose"), std::string::npos) << st.message();
}

class S3MultipartFaults : public S3Faults {
 protected:
  // A client through the proxy with 5 MiB parts, and an 11 MiB body (three parts).
  void SetUp() override {
    S3Faults::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    s3::Config c = cfg_;
    c.endpoint = proxy_->endpoint();
    c.multipart_threshold = 5u << 20;
    c.part_size = 5u << 20;
    c.max_attempts = 4;
    c.backoff_base_ms = 5;
    auto client = s3::Client::Create(c);
    ASSERT_TRUE(client.ok()) << client.status().message();
    client_ = std::move(*client);
    body_.resize((11u << 20) + 123);
    for (size_t i = 0; i < body_.size(); ++i) body_[i] = static_cast<char>((i * 7919) >> 3);
  }
  void ExpectObject(const std::string& key) {
    s3::Config direct = cfg_;
    auto c = s3::Client::Create(direct);
    ASSERT_TRUE(c.ok());
    auto got = (*c)->Get(bucket_, key);
    ASSERT_TRUE(got.ok()) << got.status().message();
    EXPECT_TRUE(*got == body_) << "the object differs from what was uploaded";
  }
  int Completes() const {
    int n = 0;
    for (const std::string& line : proxy_->log())
      if (line.rfind("POST ", 0) == 0 && line.find("uploadId=") != std::string::npos) ++n;
    return n;
  }
  std::unique_ptr<s3::Client> client_;
  std::string body_;
};

// CompleteMultipartUpload reaches the server, its answer is lost; the retry finds the upload gone
// (NoSuchUpload, as AWS answers; the proxy says it, since versitygw may answer otherwise). The
// object is there with our size and multipart ETag: the upload succeeded.
TEST_F(S3MultipartFaults, CompleteWhoseAnswerWasLostSucceeds) {
  std::atomic<int> completes{0};
  proxy_->SetScript([&](const ProxyRequest& r, int) {
    if (r.method == "POST" && r.Query().find("uploadId=") != std::string::npos) {
      const int n = completes.fetch_add(1);
      if (n == 0) return Fault::Of(Kind::kLoseAnswer);
      return Fault::Reply(404, "NoSuchUpload");
    }
    return Fault::None();
  });
  const std::string key = UniquePrefix("mp-lost") + "/object";
  Status st = client_->Put(bucket_, key, body_);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(Completes(), 2);
  ExpectObject(key);
}

// A CompleteMultipartUpload answered 200 whose body is an <Error> (S3 does this when it fails
// after it started answering) is retried.
TEST_F(S3MultipartFaults, CompleteAnswered200WithAnErrorIsRetried) {
  std::atomic<int> completes{0};
  proxy_->SetScript([&](const ProxyRequest& r, int) {
    if (r.method == "POST" && r.Query().find("uploadId=") != std::string::npos &&
        completes.fetch_add(1) == 0) {
      Fault f = Fault::Reply(200, "");
      f.body = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>InternalError</Code>"
               "<Message>We encountered an internal error. Please try again.</Message></Error>";
      return f;
    }
    return Fault::None();
  });
  const std::string key = UniquePrefix("mp-200-error") + "/object";
  Status st = client_->Put(bucket_, key, body_);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(Completes(), 2);
  ExpectObject(key);
}

// An upload whose Complete keeps failing is reported (naming the object and the code) and
// aborted, and a NoSuchUpload for an upload that did not complete stays an error.
TEST_F(S3MultipartFaults, CompleteThatKeepsFailingIsReportedAndAborted) {
  proxy_->SetScript([&](const ProxyRequest& r, int) {
    if (r.method == "POST" && r.Query().find("uploadId=") != std::string::npos)
      return Fault::Reply(404, "NoSuchUpload");
    return Fault::None();
  });
  const std::string key = UniquePrefix("mp-gone") + "/object";
  Status st = client_->Put(bucket_, key, body_);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("s3://" + bucket_ + "/" + key), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("NoSuchUpload"), std::string::npos) << st.message();
  int aborts = 0;
  for (const std::string& line : proxy_->log())
    if (line.rfind("DELETE ", 0) == 0 && line.find("uploadId=") != std::string::npos) ++aborts;
  EXPECT_EQ(aborts, 1);
  auto head = client_->Head(bucket_, key);
  EXPECT_EQ(head.status().code(), Code::kNotFound);
}


// ---- Faults while a trial READS: nothing skipped, nothing different ----

// Writes kSteps steps directly to the server (no faults), the end marker included.
void WriteDirect(const std::string& uri, const hook::HookOptions& opts) {
  auto h = hook::Hook::Create(uri, opts);
  ASSERT_TRUE(h.ok()) << h.status().message();
  ASSERT_TRUE(S3Faults::SaveStepsFor(**h, 0, kSteps).ok());
  ASSERT_TRUE((*h)->Close().ok());
}

// The GET of one index file fails every attempt while a trial opens (503, connection closed,
// RequestTimeTooSkewed): the open fails with that error, naming the file, instead of opening a
// trial that silently lacks the step. A running trial: the refresh fails, the step stays
// "not yet available", and once the server answers again the next refresh has it.
TEST_F(S3Faults, IndexFileUnreadableOnEveryAttemptIsNeverSkipped) {
  const std::string uri = Uri("index-dead");
  WriteDirect(uri, HookOpts(Via(cfg_.endpoint)));
  const std::string dead = "/index/000000000/000000000003_worker_0.json";
  const Fault kinds[] = {Fault::Reply(503, "SlowDown"), Fault::Of(Kind::kTruncate),
                         Fault::Reply(403, "RequestTimeTooSkewed")};
  for (const Fault& fault : kinds) {
    std::atomic<bool> broken{true};
    std::atomic<int> hits{0};
    proxy_->SetScript([&](const ProxyRequest& r, int) {
      if (broken.load() && r.method == "GET" && r.Path().find(dead) != std::string::npos) {
        ++hits;
        return fault;
      }
      return Fault::None();
    });
    trial::TrialOptions to;
    to.storage = Via(proxy_->endpoint());
    auto t = trial::Trial::Open(uri, to);
    ASSERT_FALSE(t.ok()) << "the trial opened without step 3";
    EXPECT_NE(t.status().message().find("000000000003_worker_0.json"), std::string::npos)
        << t.status().message();
    EXPECT_GE(hits.load(), 5);
    broken = false;
    auto again = trial::Trial::Open(uri, to);
    ASSERT_TRUE(again.ok()) << again.status().message();
    ExpectSteps(**again, kSteps);
  }
}

TEST_F(S3Faults, RunningTrialReadsAFailedIndexFileAgainAtTheNextRefresh) {
  const std::string uri = Uri("index-later");
  auto h = hook::Hook::Create(uri, HookOpts(Via(cfg_.endpoint)));
  ASSERT_TRUE(h.ok()) << h.status().message();
  ASSERT_TRUE(SaveStepsFor(**h, 0, 2).ok());
  ASSERT_TRUE((*h)->BeginStep().ok());
  ASSERT_TRUE((*h)->Flush().ok());
  std::atomic<bool> broken{true};
  const std::string dead = "/index/000000000/000000000004_worker_0.json";
  proxy_->SetScript([&](const ProxyRequest& r, int) {
    if (broken.load() && r.method == "GET" && r.Path().find(dead) != std::string::npos)
      return Fault::Reply(503, "SlowDown");
    return Fault::None();
  });
  trial::TrialOptions to;
  to.storage = Via(proxy_->endpoint());
  to.auto_refresh = false;
  auto t = trial::Trial::Open(uri, to);
  ASSERT_TRUE(t.ok()) << t.status().message();
  ASSERT_TRUE(SaveStepsFor(**h, 2, kSteps, /*begun=*/true).ok());
  ASSERT_TRUE((*h)->Close().ok());
  Status st = (*t)->Refresh();
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("000000000004_worker_0.json"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("SlowDown"), std::string::npos) << st.message();
  auto state = (*t)->HasPassedStep(4, Mode::kGlobal);
  ASSERT_TRUE(state.ok());
  EXPECT_EQ(*state, trial::StepState::kNotYetAvailable);
  EXPECT_FALSE((*t)->loaded_all_steps());
  broken = false;
  st = (*t)->Refresh();
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_TRUE((*t)->loaded_all_steps());
  ExpectSteps(**t, kSteps);
}

// ListObjectsV2 answers cut short with a Content-Length that matches the cut (incomplete XML):
// of the trial's root, of index/ and of a step folder. Each is retried; the trial opens with
// every step. Cut on every attempt, the open fails instead of opening fewer steps.
TEST_F(S3Faults, ListingsCutShortAreRetriedNotShorter) {
  const std::string uri = Uri("list-cut");
  WriteDirect(uri, HookOpts(Via(cfg_.endpoint)));
  std::mutex mu;
  std::set<std::string> seen;
  std::atomic<int> cuts{0};
  proxy_->SetScript([&](const ProxyRequest& r, int) {
    if (r.method != "GET" || r.Query().find("list-type=2") == std::string::npos) return Fault::None();
    std::lock_guard<std::mutex> l(mu);
    if (!seen.insert(r.target).second) return Fault::None();
    Fault f = Fault::Of(Kind::kCutBody);
    f.cut_at = 0.3 + 0.2 * (cuts++ % 3);
    return f;
  });
  trial::TrialOptions to;
  to.storage = Via(proxy_->endpoint());
  auto t = trial::Trial::Open(uri, to);
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_GE(cuts.load(), 3);
  ExpectSteps(**t, kSteps);

  // The step folder's listing cut on every attempt: an error, never 0 or fewer steps.
  proxy_->SetScript([&](const ProxyRequest& r, int) {
    if (r.method == "GET" && r.Query().find("list-type=2") != std::string::npos &&
        r.Query().find("index%2F000000000%2F") != std::string::npos)
      return Fault::Of(Kind::kCutBody);
    return Fault::None();
  });
  auto cut = trial::Trial::Open(uri, to);
  ASSERT_FALSE(cut.ok()) << "opened with a listing cut short";
  EXPECT_NE(cut.status().message().find("incomplete or malformed"), std::string::npos)
      << cut.status().message();
}

// The second writer with the same worker name loses the claim (S3 conditional PUT): its close
// says so and writes no training_job_end.ts into the winner's live prefix.
TEST_F(S3Faults, LoserOfTheClaimDoesNotEndTheWinnersRun) {
  const std::string uri = Uri("claim-loser");
  auto winner = hook::Hook::Create(uri, HookOpts(Via(cfg_.endpoint)));
  ASSERT_TRUE(winner.ok()) << winner.status().message();
  ASSERT_TRUE(SaveStepsFor(**winner, 0, 2).ok());
  ASSERT_TRUE((*winner)->Flush().ok());
  auto loser = hook::Hook::Create(uri, HookOpts(Via(cfg_.endpoint)));
  ASSERT_TRUE(loser.ok()) << loser.status().message();
  (void)SaveStepsFor(**loser, 0, 1);
  Status closed = (*loser)->Close();
  EXPECT_EQ(closed.code(), Code::kAlreadyExists) << closed.message();
  trial::TrialOptions to;
  to.storage = Via(cfg_.endpoint);
  auto t = trial::Trial::Open(uri, to);
  ASSERT_TRUE(t.ok()) << t.status().message();
  auto ended = (*t)->HasEnded();
  ASSERT_TRUE(ended.ok());
  EXPECT_FALSE(*ended) << "the loser marked the winner's live run as ended";
  ASSERT_TRUE(SaveStepsFor(**winner, 2, kSteps).ok());
  ASSERT_TRUE((*winner)->Close().ok());
  ExpectOnServer(uri, kSteps);
}

// A CreateMultipartUpload whose answer is lost (the server created the upload), and one
// answered 500 after the server applied it: the retry succeeds and no upload of the key is left
// in progress (the client aborted the one it never learnt the id of).
TEST_F(S3MultipartFaults, LostCreateLeavesNoUploadBehind) {
  const Fault kinds[] = {Fault::Of(Kind::kLoseAnswer), Forwarded(Fault::Reply(500, "InternalError")),
                         Fault::Of(Kind::kTruncate)};
  int n = 0;
  for (const Fault& fault : kinds) {
    std::atomic<int> creates{0};
    proxy_->SetScript([&](const ProxyRequest& r, int) {
      if (r.method == "POST" && r.Query() == "uploads=" && creates.fetch_add(1) == 0) return fault;
      return Fault::None();
    });
    const std::string key = UniquePrefix("mp-create-lost-" + std::to_string(n++)) + "/object";
    Status st = client_->Put(bucket_, key, body_);
    ASSERT_TRUE(st.ok()) << st.message();
    EXPECT_GE(creates.load(), 2);
    ExpectObject(key);
    auto left = client_->ListUploads(bucket_, key);
    ASSERT_TRUE(left.ok()) << left.status().message();
    EXPECT_TRUE(left->empty()) << left->size() << " upload(s) of " << key << " left in progress";
  }
}

// A writer that dies during a multipart upload leaves it in progress (here: its Complete is
// refused and its Abort fails every attempt, as if the process had been killed). `smd uploads`
// lists it under the trial's prefix, `smd uploads --abort` aborts it, and then none is left.
TEST_F(S3MultipartFaults, SmdUploadsListsAndAbortsWhatAKilledWriterLeft) {
  proxy_->SetScript([&](const ProxyRequest& r, int) {
    if (r.method == "POST" && r.Query().find("uploadId=") != std::string::npos)
      return Fault::Reply(400, "InvalidPart");
    if (r.method == "DELETE" && r.Query().find("uploadId=") != std::string::npos)
      return Fault::Reply(503, "SlowDown");
    return Fault::None();
  });
  const std::string prefix = UniquePrefix("mp-killed");
  const std::string key = prefix + "/events/000000000000/000000000000_worker_0.tfevents";
  ASSERT_FALSE(client_->Put(bucket_, key, body_).ok());
  auto left = client_->ListUploads(bucket_, prefix + "/");
  ASSERT_TRUE(left.ok()) << left.status().message();
  ASSERT_EQ(left->size(), 1u) << "the test could not leave an upload behind";

  ::setenv("AWS_ACCESS_KEY_ID", cfg_.credentials.access_key_id.c_str(), 1);
  ::setenv("AWS_SECRET_ACCESS_KEY", cfg_.credentials.secret_access_key.c_str(), 1);
  ::setenv("AWS_ENDPOINT_URL_S3", cfg_.endpoint.c_str(), 1);
  ::setenv("AWS_REGION", cfg_.region.c_str(), 1);
  ::setenv("AWS_EC2_METADATA_DISABLED", "true", 1);
  auto smd = [](const std::string& args, std::string* out) {
    FILE* p = ::popen((std::string(SMD_TOOL_PATH) + " " + args + " 2>&1").c_str(), "r");
    if (p == nullptr) return -1;
    char buf[4096];
    out->clear();
    for (size_t k; (k = std::fread(buf, 1, sizeof buf, p)) > 0;) out->append(buf, k);
    const int st = ::pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  };
  const std::string uri = "s3://" + bucket_ + "/" + prefix;
  std::string out;
  EXPECT_EQ(smd("uploads " + uri, &out), 0) << out;
  EXPECT_NE(out.find(key + "\t" + (*left)[0].upload_id), std::string::npos) << out;
  EXPECT_NE(out.find("1 upload(s) in progress"), std::string::npos) << out;
  EXPECT_EQ(smd("uploads " + uri + " --abort", &out), 0) << out;
  EXPECT_NE(out.find("aborted"), std::string::npos) << out;
  EXPECT_EQ(smd("uploads " + uri, &out), 0) << out;
  EXPECT_NE(out.find("0 upload(s) in progress"), std::string::npos) << out;
  EXPECT_EQ(smd("uploads /not/s3", &out), 2) << out;
  for (const char* k : {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_ENDPOINT_URL_S3",
                        "AWS_REGION", "AWS_EC2_METADATA_DISABLED"})
    ::unsetenv(k);
  left = client_->ListUploads(bucket_, prefix + "/");
  ASSERT_TRUE(left.ok());
  EXPECT_TRUE(left->empty());
}

// ---- A randomized round: write through faults, read back through faults, compare ----
//
// SMD_FAULT_SEED picks the seed (printed), SMD_FAULT_ROUNDS the rounds (3). Each round writes a
// trial through the proxy with random transient faults on the writes (at most 3 in a row per
// request, so every upload succeeds within its 5 attempts), then opens it through the proxy
// while it is still running, lets the job finish, and refreshes and reads every value with
// random faults on the reads: 500, 503, resets, truncated and lost answers, listings cut short
// under a matching Content-Length, and index files whose GET fails every attempt for a while.
// Open and refresh may fail (they say so); they are retried, a bounded number of times. Every
// value read is compared with what was written: none may be missing or different.
TEST_F(S3Faults, RandomizedRoundLosesNothing) {
  const char* seed_env = std::getenv("SMD_FAULT_SEED");
  const uint64_t seed = seed_env ? std::strtoull(seed_env, nullptr, 10)
                                 : static_cast<uint64_t>(std::time(nullptr));
  const char* rounds_env = std::getenv("SMD_FAULT_ROUNDS");
  const int rounds = rounds_env ? std::max(1, std::atoi(rounds_env)) : 3;
  std::printf("randomized fault round: SMD_FAULT_SEED=%llu SMD_FAULT_ROUNDS=%d\n",
              static_cast<unsigned long long>(seed), rounds);
  const auto started = std::chrono::steady_clock::now();
  long long faults_write = 0, faults_read = 0, values = 0, floats = 0, open_fail = 0,
            refresh_fail = 0, requests = 0;
  for (int round = 0; round < rounds; ++round) {
    if (std::chrono::steady_clock::now() - started > std::chrono::seconds(150)) break;
    std::mutex mu;
    std::mt19937_64 rng(seed * 1000003 + static_cast<uint64_t>(round));
    std::map<std::string, int> in_a_row;  // faults given in a row per request
    std::map<std::string, int> dead;      // index files whose GET fails N more times
    std::atomic<bool> reading{false};
    std::atomic<int> injected_w{0}, injected_r{0};
    const double p = 0.25;
    proxy_->SetScript([&](const ProxyRequest& r, int) {
      std::lock_guard<std::mutex> l(mu);
      const std::string id = r.method + " " + r.target + " " + r.Header("Range");
      const bool read = reading.load();
      std::uniform_real_distribution<double> u(0, 1);
      if (read && r.method == "GET" && r.Path().find("/index/") != std::string::npos) {
        auto it = dead.find(r.Path());
        if (it == dead.end() && u(rng) < 0.05)
          it = dead.emplace(r.Path(), 5 + static_cast<int>(rng() % 8)).first;  // 5-12 attempts
        if (it != dead.end() && it->second > 0) {
          --it->second;
          ++injected_r;
          return rng() % 2 ? Fault::Reply(503, "SlowDown") : Fault::Of(Kind::kResetMidBody);
        }
      }
      int& row = in_a_row[id];
      if (row >= 3 || u(rng) >= p) {
        row = 0;
        return Fault::None();
      }
      ++row;
      (read ? injected_r : injected_w)++;
      const bool listing = r.method == "GET" && r.Query().find("list-type=2") != std::string::npos;
      if (listing && rng() % 2 == 0) {
        Fault f = Fault::Of(Kind::kCutBody);
        f.cut_at = u(rng) * 0.95;
        return f;
      }
      switch (rng() % 6) {
        case 0: return Fault::Reply(500, "InternalError");
        case 1: return Fault::Reply(503, "SlowDown");
        case 2: return Fault::Of(Kind::kResetMidBody);
        case 3: return Fault::Of(Kind::kTruncate);
        case 4: return Fault::Of(Kind::kLoseAnswer);
        default: return Forwarded(Fault::Reply(500, "InternalError"));
      }
    });
    const int before = proxy_->requests();
    const std::string uri = Uri("random-" + std::to_string(round));
    const int half = kSteps / 2;
    auto h = hook::Hook::Create(uri, HookOpts(Via(proxy_->endpoint())));
    ASSERT_TRUE(h.ok()) << "seed " << seed << ": " << h.status().message();
    ASSERT_TRUE(SaveStepsFor(**h, 0, half).ok()) << "seed " << seed;
    ASSERT_TRUE((*h)->BeginStep().ok());
    ASSERT_TRUE((*h)->Flush().ok()) << "seed " << seed;

    // The reader opens the running trial through the faults (retrying a failed open).
    reading = true;
    trial::TrialOptions to;
    to.storage = Via(proxy_->endpoint());
    to.auto_refresh = false;
    std::shared_ptr<trial::Trial> t;
    for (int attempt = 0; attempt < 30 && !t; ++attempt) {
      auto opened = trial::Trial::Open(uri, to);
      if (opened.ok()) t = *opened;
      else ++open_fail;
    }
    ASSERT_TRUE(t) << "seed " << seed << ": the trial did not open in 30 tries";
    reading = false;
    ASSERT_TRUE(SaveStepsFor(**h, half, kSteps, /*begun=*/true).ok()) << "seed " << seed;
    ASSERT_TRUE((*h)->Close().ok()) << "seed " << seed;
    reading = true;
    Status st;
    for (int attempt = 0; attempt < 30; ++attempt) {
      st = t->Refresh();
      if (st.ok() && t->loaded_all_steps()) break;
      if (!st.ok()) ++refresh_fail;
    }
    ASSERT_TRUE(st.ok()) << "seed " << seed << ": " << st.message();
    ASSERT_TRUE(t->loaded_all_steps()) << "seed " << seed;
    // Every step, every value, exactly (a value read that fails is read again, bounded).
    auto steps = t->Steps(Mode::kGlobal, false);
    ASSERT_TRUE(steps.ok());
    std::vector<int64_t> want;
    for (int s = 0; s < kSteps; ++s) want.push_back(s);
    ASSERT_EQ(*steps, want) << "seed " << seed << ": steps lost";
    auto wid = t->TensorId("dense/weight");
    auto lid = t->TensorId("loss");
    ASSERT_TRUE(wid.ok() && lid.ok()) << "seed " << seed;
    for (int s = 0; s < kSteps; ++s) {
      Result<trial::ValuePtr> v = Status(Code::kIO, "not read");
      for (int a = 0; a < 10 && !v.ok(); ++a) v = t->TensorValue(*wid, s, Mode::kGlobal, nullptr);
      ASSERT_TRUE(v.ok()) << "seed " << seed << " step " << s << ": " << v.status().message();
      ASSERT_EQ((*v)->nbytes(), kWidth * sizeof(float));
      const float* f = static_cast<const float*>((*v)->data());
      for (int i = 0; i < kWidth; ++i) ASSERT_EQ(f[i], Expected(s, i)) << "seed " << seed;
      floats += kWidth;
      Result<trial::ValuePtr> l = Status(Code::kIO, "not read");
      for (int a = 0; a < 10 && !l.ok(); ++a) l = t->TensorValue(*lid, s, Mode::kGlobal, nullptr);
      ASSERT_TRUE(l.ok()) << "seed " << seed << " step " << s << ": " << l.status().message();
      ASSERT_EQ(*static_cast<const float*>((*l)->data()), static_cast<float>(s) + 0.5f);
      floats += 1;
      values += 2;
    }
    reading = false;
    faults_write += injected_w.load();
    faults_read += injected_r.load();
    requests += proxy_->requests() - before;
  }
  std::printf(
      "randomized fault round (seed %llu): %d rounds, %lld requests, %lld faults on writes, %lld "
      "on reads, %lld failed opens and %lld failed refreshes retried, %lld values (%lld floats) "
      "compared, 0 lost, 0 different\n",
      static_cast<unsigned long long>(seed), rounds, requests, faults_write, faults_read,
      open_fail, refresh_fail, values, floats);
  EXPECT_GT(faults_read, 0);
  EXPECT_GT(faults_write, 0);
}
}  // namespace
}  // namespace smd
