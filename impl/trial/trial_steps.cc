// Trial: queries about steps, modes and tensor names, and waiting for steps.
#include "impl/trial/trial.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <thread>

#include "impl/core/reductions.h"
#include "impl/core/regex.h"
#include "impl/core/text.h"
#include "impl/format/event.h"
#include "impl/format/layout.h"
#include "impl/format/record.h"
#include "impl/format/index_parser.h"
#include "impl/trial/record_cache.h"
#include "impl/trial/parallel.h"
#include "impl/trial/trial_internal.h"

namespace smd::trial {

// ---------------------------------------------------------------------------------------------
// Trial queries

Result<std::vector<int64_t>> Trial::Steps(Mode mode, bool show_incomplete) {
  SMD_RETURN_IF_ERROR(MaybeRefresh());
  std::shared_lock<std::shared_mutex> lock(mu_);
  return tables_.Steps(mode, show_incomplete);
}

std::vector<Mode> Trial::Modes() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  return tables_.Modes();
}

Result<std::vector<std::string>> Trial::Workers() {
  SMD_RETURN_IF_ERROR(MaybeRefresh());
  std::shared_lock<std::shared_mutex> lock(mu_);
  return std::vector<std::string>(worker_set_.begin(), worker_set_.end());
}

Result<std::optional<int64_t>> Trial::GlobalStep(Mode mode, int64_t mode_step) {
  {
    std::shared_lock<std::shared_mutex> lock(mu_);
    if (auto g = tables_.GlobalStep(mode, mode_step)) return std::optional<int64_t>(g);
  }
  SMD_RETURN_IF_ERROR(MaybeRefresh());
  std::shared_lock<std::shared_mutex> lock(mu_);
  return tables_.GlobalStep(mode, mode_step);
}

Result<std::optional<std::pair<Mode, int64_t>>> Trial::ModeOf(int64_t global_step) {
  using R = std::optional<std::pair<Mode, int64_t>>;
  auto lookup = [&]() -> R {
    std::shared_lock<std::shared_mutex> lock(mu_);
    const StepInfo* si = tables_.Step(global_step);
    if (si == nullptr) return std::nullopt;
    return std::make_pair(si->mode, si->mode_step);
  };
  if (R r = lookup()) return r;
  SMD_RETURN_IF_ERROR(MaybeRefresh());
  return lookup();
}

Result<std::vector<std::string>> Trial::TensorNames(const TensorFilter& f) {
  if (!f.regexes.empty() && f.collection) {
    return InvalidArgument("Only one of `regex` or `collection` can be passed to this method");
  }
  std::vector<std::shared_ptr<const Regex>> regexes;
  for (const std::string& r : f.regexes) {
    SMD_ASSIGN_OR_RETURN(std::shared_ptr<const Regex> re, Regex::Compile(r));
    regexes.push_back(std::move(re));
  }
  SMD_RETURN_IF_ERROR(MaybeRefresh());
  std::shared_lock<std::shared_mutex> lock(mu_);
  std::vector<uint32_t> ids;
  if (!f.step) {
    ids = tables_.TensorsOfMode(f.mode);
  } else if (std::optional<int64_t> g = tables_.GlobalStep(f.mode, *f.step)) {
    if (const StepInfo* si = tables_.Step(*g)) ids = si->tensors;
  }
  if (f.collection) {
    auto cit = collections_.find(*f.collection);
    if (cit == collections_.end()) return std::vector<std::string>();
    const CollectionInfo& c = cit->second;
    std::unordered_set<std::string_view> members(c.tensor_names.begin(), c.tensor_names.end());
    for (const std::string& r : c.include_regex) {
      auto re = Regex::Compile(r);
      if (!re.ok()) {
        return Status(Code::kInvalidArgument, "collection '" + c.name + "' of the trial has " +
                                                  re.status().message());
      }
      regexes.push_back(std::move(re).value());
    }
    std::vector<uint32_t> kept;
    for (uint32_t id : ids) {
      const std::string& n = tables_.tensor_name(id);
      bool in = members.count(n) > 0;
      for (size_t k = 0; !in && k < regexes.size(); ++k) {
        Result<bool> m = regexes[k]->Search(n);
        if (!m.ok()) {  // the first one ends the query: one match limit's time, not one per name
          return Status(m.status().code(),
                        "collection '" + c.name + "' of the trial: " + m.status().message());
        }
        in = *m;
      }
      if (in) kept.push_back(id);
    }
    ids.swap(kept);
  } else if (!regexes.empty()) {
    std::vector<uint32_t> kept;
    for (uint32_t id : ids) {
      const std::string& n = tables_.tensor_name(id);
      for (const auto& re : regexes) {
        SMD_ASSIGN_OR_RETURN(bool m, re->Search(n));
        if (m) {
          kept.push_back(id);
          break;
        }
      }
    }
    ids.swap(kept);
  }
  std::vector<std::string> out;
  out.reserve(ids.size());
  for (uint32_t id : ids) out.push_back(tables_.tensor_name(id));
  std::sort(out.begin(), out.end());
  return out;
}

Result<bool> Trial::HasTensor(const std::string& name) {
  {
    std::shared_lock<std::shared_mutex> lock(mu_);
    if (tables_.FindTensor(name)) return true;
  }
  SMD_RETURN_IF_ERROR(MaybeRefresh());
  std::shared_lock<std::shared_mutex> lock(mu_);
  return tables_.FindTensor(name).has_value();
}

Result<uint32_t> Trial::TensorId(const std::string& name) {
  SMD_ASSIGN_OR_RETURN(bool has, HasTensor(name));
  if (!has) return TensorUnavailableError(name);
  std::shared_lock<std::shared_mutex> lock(mu_);
  return *tables_.FindTensor(name);
}

const std::string& Trial::TensorName(uint32_t id) const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  return tables_.tensor_name(id);  // never moves, so the reference stays valid
}

std::optional<std::string> Trial::TensorOriginalName(uint32_t id) const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  return tables_.tensor_original_name(id);
}

std::vector<std::string> Trial::CollectionNames() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  std::vector<std::string> out;
  for (const auto& kv : collections_) out.push_back(kv.first);
  return out;
}

const CollectionInfo* Trial::Collection(const std::string& name) const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  auto it = collections_.find(name);
  return it == collections_.end() ? nullptr : &it->second;  // never changes after open
}

Result<StepState> Trial::HasPassedStep(int64_t step, Mode mode) {
  SMD_RETURN_IF_ERROR(MaybeRefresh());
  std::shared_lock<std::shared_mutex> lock(mu_);
  return tables_.HasPassedStep(step, mode);
}

Status Trial::WaitForSteps(const std::vector<int64_t>& steps, Mode mode, int64_t timeout_ms) {
  // Refresh is on for the duration on this thread (smdebug turns it on and leaves it off).
  RefreshOverride refresh_on(this, true);

  std::optional<Clock::time_point> deadline;
  if (timeout_ms >= 0) deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  WaitState wait;
  for (int64_t step : steps) {
    for (;;) {
      SMD_ASSIGN_OR_RETURN(StepState s, HasPassedStep(step, mode));
      if (s == StepState::kAvailable) break;
      if (s == StepState::kUnavailable) {
        std::shared_lock<std::shared_mutex> lock(mu_);
        if (!tables_.loaded_all()) return StepUnavailableError(step, mode);
        const int64_t last = tables_.LastStep(mode);
        if (step < last) return StepUnavailableError(step, mode);
        return NoMoreDataError(step, mode, last);
      }
      if (deadline && Clock::now() >= *deadline) {
        Status st = StepNotYetAvailableError(step, mode);
        return Status(st.code(), st.message() + " (waited " + std::to_string(timeout_ms) + " ms)");
      }
      // Sleep until the folder changes; the next HasPassedStep lists if a change event came.
      if (AwaitChange(deadline, &wait)) {
        std::lock_guard<std::mutex> lock(refresh_mu_);
        bool done;
        {
          std::shared_lock<std::shared_mutex> l(mu_);
          done = tables_.loaded_all();
        }
        if (!done) {
          watcher_->ConsumeChanges();
          SMD_RETURN_IF_ERROR(RefreshLocked(nullptr));
        }
      }
    }
  }
  return Status::Ok();
}

bool Trial::AwaitChange(const std::optional<std::chrono::steady_clock::time_point>& deadline,
                        WaitState* w) {
  if (!watcher_) {
    ShortPoll(&w->poll_ms, deadline);
    return false;  // without change events every refresh lists anyway
  }
  int ms = kWaitSliceMs;
  if (deadline) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - Clock::now()).count();
    ms = static_cast<int>(std::max<int64_t>(0, std::min<int64_t>(left, ms)));
  }
  if (watcher_->WaitForEvent(ms)) return false;
  // Events can be missed (a folder replaced between two listings): list anyway now and then.
  return ++w->quiet % kTrustedRelistEvery == 0;
}

}  // namespace smd::trial
