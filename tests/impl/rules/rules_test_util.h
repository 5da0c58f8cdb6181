// Test helpers for the rule tests: trials written with smd's own hook (smd::hook::Hook), opened
// as trials, and invocations that record what happened.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "impl/hook/hook.h"
#include "impl/rules/builtin.h"
#include "impl/rules/rule.h"
#include "impl/trial/trial.h"
#include "tests/impl/trial/trial_builder.h"

namespace smd::rules::testing {

using trial::testing::TempDir;

// A trial written by the hook: every tensor offered is saved at every step (save_all, interval
// 1), raw values only unless a collection gets reductions.
class Writer {
 public:
  explicit Writer(const std::string& dir,
                  const std::function<void(hook::HookOptions&)>& tweak = nullptr)
      : dir_(dir) {
    hook::HookOptions o;
    hook::SaveConfigMode every;
    every.save_interval = 1;
    o.save_config.SetAll(every);
    o.save_all = true;
    o.wall_time_base = 1.7e9;
    if (tweak) tweak(o);
    auto h = hook::Hook::Create(dir, o);
    EXPECT_TRUE(h.ok()) << h.status().message();
    if (h.ok()) hook_ = h.value();
  }
  ~Writer() {
    if (hook_ && !hook_->closed()) (void)hook_->Close();
  }
  const std::string& dir() const { return dir_; }
  hook::Hook& hook() { return *hook_; }

  // Starts the next step (in `mode`).
  void Step(Mode mode = Mode::kGlobal) {
    if (mode != hook_->mode()) ASSERT_TRUE(hook_->SetMode(mode).ok());
    Status st = hook_->BeginStep();
    ASSERT_TRUE(st.ok()) << st.message();
  }
  template <typename T>
  void Save(const std::string& name, const std::vector<T>& v, std::vector<int64_t> shape = {},
            const std::vector<std::string>& collections = {}) {
    if (shape.empty()) shape = {static_cast<int64_t>(v.size())};
    hook::Hook::SaveRequest r;
    r.name = name.c_str();
    r.dtype = DTypeOf<T>();
    r.shape = shape.data();
    r.ndim = shape.size();
    r.data = v.data();
    r.nbytes = v.size() * sizeof(T);
    std::vector<const char*> cs;
    for (const std::string& c : collections) cs.push_back(c.c_str());
    r.collections = cs.data();
    r.n_collections = cs.size();
    Status st = hook_->Save(r);
    ASSERT_TRUE(st.ok()) << st.message();
  }
  void Scalar(const std::string& name, double v, const std::vector<std::string>& collections = {}) {
    Save<double>(name, {v}, {1}, collections);
  }
  // Saves only these reductions (no raw value) for the collection's tensors.
  void Reductions(const std::string& collection, const std::string& spec, bool raw = false) {
    auto idx = hook_->GetCollection(collection);
    ASSERT_TRUE(idx.ok());
    auto rc = hook::ReductionConfig::Parse(spec);
    ASSERT_TRUE(rc.ok()) << rc.status().message();
    rc.value().save_raw_tensor = raw;
    ASSERT_TRUE(hook_->CollectionSetReductionConfig(*idx, rc.value()).ok());
  }
  void Regex(const std::string& collection, const std::string& regex) {
    auto idx = hook_->GetCollection(collection);
    ASSERT_TRUE(idx.ok());
    ASSERT_TRUE(hook_->CollectionIncludeRegex(*idx, regex).ok());
  }
  void Flush() { ASSERT_TRUE(hook_->Flush().ok()); }
  void Close() {
    Status st = hook_->Close();
    ASSERT_TRUE(st.ok()) << st.message();
  }

 private:
  template <typename T>
  static DType DTypeOf() {
    if (std::is_same<T, float>::value) return DType::kFloat32;
    if (std::is_same<T, double>::value) return DType::kFloat64;
    if (std::is_same<T, int64_t>::value) return DType::kInt64;
    if (std::is_same<T, int32_t>::value) return DType::kInt32;
    return DType::kInvalid;
  }
  std::string dir_;
  std::shared_ptr<hook::Hook> hook_;
};

inline TrialPtr Open(const std::string& dir) {
  auto t = trial::Trial::Open(dir, trial::TrialOptions());
  EXPECT_TRUE(t.ok()) << t.status().message();
  return t.ok() ? t.value() : nullptr;
}

inline std::unique_ptr<Rule> Builtin(const std::string& name, TrialPtr base,
                                     const ParamList& params = {},
                                     std::vector<TrialPtr> others = {}) {
  auto r = CreateBuiltinRule(name, std::move(base), std::move(others), params);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? std::move(r).value() : nullptr;
}

// The outcome of one invocation.
struct RunResult {
  Status status;
  std::vector<Finding> findings;
  std::vector<int64_t> met_steps;  // steps with a met condition, in order
};

// Invokes `rule` over [start, end) without raising; records findings and met steps.
inline RunResult Invoke(Rule& rule, int64_t start = 0, int64_t end = -1, bool raise = false,
                  InvokeOptions opts = InvokeOptions()) {
  RunResult run;
  auto user_finding = opts.on_finding;
  opts.on_finding = [&](const Rule& r, const Finding& f) {
    run.findings.push_back(f);
    if (run.met_steps.empty() || run.met_steps.back() != f.step) run.met_steps.push_back(f.step);
    return user_finding ? user_finding(r, f) : 0;
  };
  run.status = InvokeRules({&rule}, start, end, raise, opts);
  return run;
}

// The first step at which `rule` fires over the whole trial (-1: never); fails the test on an
// invocation error.
inline int64_t FirstFire(Rule& rule, int64_t start = 0, int64_t end = -1) {
  RunResult r = Invoke(rule, start, end);
  EXPECT_TRUE(r.status.ok()) << r.status.message();
  return r.met_steps.empty() ? -1 : r.met_steps.front();
}

inline bool AnyFindingOn(const RunResult& r, const std::string& tensor) {
  for (const Finding& f : r.findings) {
    if (f.tensor == tensor) return true;
  }
  return false;
}

}  // namespace smd::rules::testing
