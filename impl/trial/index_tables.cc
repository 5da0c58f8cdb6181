// A trial's in-memory index tables: applying index files, and the queries over them.
#include "impl/trial/index_tables.h"

#include <algorithm>
#include <tuple>

#include "impl/trial/trial_internal.h"

namespace smd::trial {

// ---------------------------------------------------------------------------------------------
// Completeness

void IndexTables::MarkLoadedAll() {
  if (loaded_all_) return;
  loaded_all_ = true;
  if (!steps_.empty()) last_complete_step_ = steps_.rbegin()->first;
}

// BEHAVIOR.md §6.7: the cursor trails the last complete step; too many incomplete steps make the
// trial give up on the oldest half of them.
void IndexTables::AdvanceCursor(IndexLister* lister, const std::string& last_worker,
                                int64_t window) {
  lister->Advance(last_worker, &last_complete_step_, static_cast<int64_t>(steps_.size()), window);
}

bool IndexTables::IsComplete(int64_t g) const {
  if (lister_->StepUnread(g)) return false;  // an index file to read again
  if (loaded_all_ || last_complete_step_ >= g) return true;
  auto it = steps_.find(g);
  return it != steps_.end() && static_cast<int64_t>(it->second.workers.size()) == num_workers_;
}

// ---------------------------------------------------------------------------------------------
// Interning

uint32_t IndexTables::InternWorker(const std::string& w) {
  auto it = worker_ids_.find(w);
  if (it != worker_ids_.end()) return it->second;
  uint32_t id = static_cast<uint32_t>(workers_.size());
  workers_.push_back(w);
  worker_ids_.emplace(w, id);
  return id;
}

uint32_t IndexTables::InternTensor(std::string_view name) {
  auto it = tensor_ids_.find(name);
  if (it != tensor_ids_.end()) return it->second;
  uint32_t id = static_cast<uint32_t>(tensors_.size());
  auto t = std::make_unique<TensorData>();
  t->name.assign(name.data(), name.size());
  tensor_ids_.emplace(std::string_view(t->name), id);
  tensors_.push_back(std::move(t));
  return id;
}

uint32_t IndexTables::InternReduction(std::string_view name) {
  std::string n(name);
  auto it = red_ids_.find(n);
  if (it != red_ids_.end()) return it->second;
  uint32_t id = static_cast<uint32_t>(red_names_.size());
  red_names_.push_back(n);
  red_ids_.emplace(std::move(n), id);
  return id;
}

uint32_t IndexTables::InternShape(const int64_t* dims, uint32_t ndim) {
  const uint64_t h = HashDims(dims, ndim);
  auto range = shape_ids_.equal_range(h);
  for (auto it = range.first; it != range.second; ++it) {
    const auto& s = shapes_[it->second];
    if (s.second == ndim &&
        std::equal(dims, dims + ndim, shape_dims_.begin() + s.first)) {
      return it->second;
    }
  }
  uint32_t id = static_cast<uint32_t>(shapes_.size());
  shapes_.emplace_back(static_cast<uint32_t>(shape_dims_.size()), ndim);
  shape_dims_.insert(shape_dims_.end(), dims, dims + ndim);
  shape_ids_.emplace(h, id);
  return id;
}

uint32_t IndexTables::InternEventFile(std::string_view rel) {
  auto it = event_file_ids_.find(rel);
  if (it != event_file_ids_.end()) return it->second;
  uint32_t id = static_cast<uint32_t>(event_files_.size());
  event_files_.emplace_back(rel);
  event_file_span_.push_back(0);
  event_file_ids_.emplace(std::string_view(event_files_.back()), id);
  return id;
}

// ---------------------------------------------------------------------------------------------
// Applying index files

namespace {

template <typename Vec, typename Key, typename Less, typename Eq, typename Make>
typename Vec::value_type& FindOrInsertSorted(Vec& v, const Key& key, Less less, Eq eq, Make make) {
  if (v.empty() || less(v.back(), key)) {
    v.push_back(make());
    return v.back();
  }
  if (eq(v.back(), key)) return v.back();
  auto it = std::lower_bound(v.begin(), v.end(), key, less);
  if (it != v.end() && eq(*it, key)) return *it;
  return *v.insert(it, make());
}

}  // namespace

void IndexTables::Resolve(const ParsedIndex& p, std::vector<ResolvedTag>* out) {
  if (predicted_.size() < p.tensors.size()) predicted_.resize(p.tensors.size());
  out->reserve(p.tensors.size());
  for (size_t i = 0; i < p.tensors.size(); ++i) {
    const IndexTensorRef& e = p.tensors[i];
    ResolvedTag& pr = predicted_[i];
    // Index files of consecutive steps list the same tags in the same order: check the guess
    // from the previous file before parsing and hashing the tag.
    bool hit = false;
    if (pr.tensor != kNone) {
      const std::string& tname = tensors_[pr.tensor]->name;
      if (pr.red == kNone) {
        hit = e.name == tname && (e.name.empty() || e.name[0] != 's' ||
                                  e.name.compare(0, kReductionPrefix.size(), kReductionPrefix) != 0);
      } else {
        const std::string& rname = red_names_[pr.red];
        const size_t want = kReductionPrefix.size() + (pr.abs ? 4 : 0) + rname.size() + 1 + tname.size();
        if (e.name.size() == want) {
          std::string_view rest = e.name;
          hit = rest.compare(0, kReductionPrefix.size(), kReductionPrefix) == 0;
          rest.remove_prefix(kReductionPrefix.size());
          if (hit && pr.abs) {
            hit = rest.compare(0, 4, "abs_") == 0;
            rest.remove_prefix(4);
          }
          hit = hit && rest.compare(0, rname.size(), rname) == 0 && rest[rname.size()] == '/' &&
                rest.substr(rname.size() + 1) == tname;
        }
      }
    }
    if (!hit) {
      std::string_view base, red;
      bool abs = false;
      if (ParseReductionTag(e.name, &base, &red, &abs)) {
        pr.tensor = InternTensor(base);
        pr.red = InternReduction(red);
        pr.abs = abs;
      } else {
        pr.tensor = InternTensor(e.name);
        pr.red = kNone;
        pr.abs = false;
      }
    }
    out->push_back(pr);
  }
}

void IndexTables::Reserve(const std::vector<const ParsedIndex*>& files,
                          const std::vector<std::vector<ResolvedTag>>& resolved,
                          size_t files_after, bool live, std::vector<uint32_t>* grown) {
  // Per (tensor, mode): the files of the batch that have it (one step entry each) and its
  // reduction entries.
  const size_t n = tensors_.size() * kNumModes;
  std::vector<uint32_t> step_count(n, 0), red_count(n, 0), stamp(n, UINT32_MAX);
  auto count = [&](uint32_t tensor, int mi, uint32_t file, bool red) {
    const size_t idx = static_cast<size_t>(tensor) * kNumModes + static_cast<size_t>(mi);
    if (stamp[idx] != file) {
      stamp[idx] = file;
      ++step_count[idx];
    }
    if (red) ++red_count[idx];
  };
  for (uint32_t k = 0; k < files.size(); ++k) {
    const int mi = ModeIndex(files[k]->mode);
    for (const ResolvedTag& pr : resolved[k]) count(pr.tensor, mi, k, pr.red != kNone);
    for (const IndexShapeRef& s : files[k]->shapes) {
      auto it = tensor_ids_.find(s.name);  // (new names are interned when applied; rare)
      if (it != tensor_ids_.end()) count(it->second, mi, k, false);
    }
  }
  for (size_t idx = 0; idx < n; ++idx) {
    if (step_count[idx] == 0) continue;
    TensorData& t = *tensors_[idx / kNumModes];
    const int mi = static_cast<int>(idx % kNumModes);
    // A tensor in every file of the batch is probably in every later file of this refresh too.
    const bool every = step_count[idx] == files.size();
    auto reserve = [&](auto& v, size_t add, size_t per_file) {
      if (v.capacity() >= v.size() + add) return;
      size_t want = v.size() + add;
      if (every && files_after > 0) {
        want += files_after * per_file;
        grown->push_back(static_cast<uint32_t>(idx));
      }
      // Growing by at least half keeps a live trial's refreshes (a few steps each) from copying
      // the whole table every time; a live trial also gets an eighth more room to begin with.
      if (live) want += want / 8;
      v.reserve(std::max(want, v.size() + v.size() / 2));
    };
    reserve(t.by_mode[mi], step_count[idx], 1);
    if (red_count[idx] > 0) reserve(t.reds[mi], red_count[idx], red_count[idx] / step_count[idx]);
  }
}

void IndexTables::Shrink(const std::vector<uint32_t>& grown) {
  for (uint32_t idx : grown) {
    TensorData& t = *tensors_[idx / kNumModes];
    const int mi = static_cast<int>(idx % kNumModes);
    auto shrink = [](auto& v) {
      if (v.capacity() > v.size() + v.size() / 4 + 16) v.shrink_to_fit();
    };
    shrink(t.by_mode[mi]);
    shrink(t.reds[mi]);
  }
}

// BEHAVIOR.md §6.6.
void IndexTables::Apply(const ParsedIndex& p, const std::vector<ResolvedTag>& resolved,
                        int64_t global_step, const std::string& worker) {
  if (p.tensors.empty() && p.shapes.empty()) return;
  const uint32_t w = InternWorker(worker);
  const Mode m = p.mode;
  const int mi = ModeIndex(m);
  const int64_t ms = p.mode_step;
  StepInfo& si = steps_.try_emplace(global_step).first->second;
  if (si.workers.empty() && si.tensors.empty()) {
    si.mode = m;  // the first file seen for a step decides its mode (smdebug: first writer wins)
    si.mode_step = ms;
  }
  if (m != Mode::kGlobal) mode_to_global_[mi].emplace(ms, global_step);
  const uint32_t file = p.tensors.empty() ? kNone : InternEventFile(p.event_file_name);

  using SE = StepEntry;
  auto entry_less = [](const SE& e, const std::pair<int64_t, uint32_t>& k) {
    return e.mode_step < k.first || (e.mode_step == k.first && e.worker < k.second);
  };
  auto entry_eq = [](const SE& e, const std::pair<int64_t, uint32_t>& k) {
    return e.mode_step == k.first && e.worker == k.second;
  };
  auto entry_for = [&](TensorData& t) -> SE& {
    return FindOrInsertSorted(t.by_mode[mi], std::make_pair(ms, w), entry_less, entry_eq,
                              [&] { return SE{ms, w, kNone, 0, 0, kNone, 0}; });
  };

  si.tensors.reserve(si.tensors.size() + p.tensors.size() + p.shapes.size());
  for (size_t i = 0; i < p.tensors.size(); ++i) {
    const IndexTensorRef& e = p.tensors[i];
    const ResolvedTag& pr = resolved[i];
    TensorData& t = *tensors_[pr.tensor];
    t.mode_mask |= static_cast<uint8_t>(1u << mi);
    if (si.tensors.empty() || si.tensors.back() != pr.tensor) si.tensors.push_back(pr.tensor);
    uint64_t end = e.start + e.length;
    if (end < e.start) end = UINT64_MAX;
    if (end > event_file_span_[file]) event_file_span_[file] = end;
    if (pr.red == kNone) {
      SE& se = entry_for(t);
      se.file = file;
      se.offset = e.start;
      se.length = e.length;
    } else {
      entry_for(t);  // a step record exists wherever anything was saved
      const uint16_t red = static_cast<uint16_t>(pr.red);
      const uint8_t abs = pr.abs ? 1 : 0;
      auto key = std::make_tuple(ms, w, red, abs);
      auto less = [](const RedEntry& r, const std::tuple<int64_t, uint32_t, uint16_t, uint8_t>& k) {
        return std::make_tuple(r.mode_step, r.worker, r.red, r.abs) < k;
      };
      auto eq = [](const RedEntry& r, const std::tuple<int64_t, uint32_t, uint16_t, uint8_t>& k) {
        return std::make_tuple(r.mode_step, r.worker, r.red, r.abs) == k;
      };
      RedEntry& re = FindOrInsertSorted(t.reds[mi], key, less, eq, [&] {
        return RedEntry{ms, w, red, abs, 0, kNone, 0, 0, 0};
      });
      re.file = file;
      re.offset = e.start;
      re.length = e.length;
    }
  }
  for (const IndexShapeRef& s : p.shapes) {
    std::string_view base, red;
    bool abs;
    if (ParseReductionTag(s.name, &base, &red, &abs)) continue;  // shapes of reductions: none
    const uint32_t id = InternTensor(s.name);
    TensorData& t = *tensors_[id];
    t.mode_mask |= static_cast<uint8_t>(1u << mi);
    si.tensors.push_back(id);
    entry_for(t).shape = InternShape(p.dims.data() + s.dims_begin, s.ndim);
    if (!t.original_name || *t.original_name != s.original_name) t.original_name = std::string(s.original_name);
  }
  if (!std::is_sorted(si.tensors.begin(), si.tensors.end())) std::sort(si.tensors.begin(), si.tensors.end());
  si.tensors.erase(std::unique(si.tensors.begin(), si.tensors.end()), si.tensors.end());
  auto wit = std::lower_bound(si.workers.begin(), si.workers.end(), w);
  if (wit == si.workers.end() || *wit != w) si.workers.insert(wit, w);
  if (static_cast<int64_t>(si.workers.size()) == num_workers_ && global_step > last_complete_step_) {
    last_complete_step_ = global_step;
  }
}

// ---------------------------------------------------------------------------------------------
// Steps

std::vector<Mode> IndexTables::Modes() const {
  std::vector<Mode> out;
  for (Mode m : {Mode::kTrain, Mode::kEval, Mode::kPredict}) {
    if (!mode_to_global_[ModeIndex(m)].empty()) out.push_back(m);
  }
  return out;
}

std::vector<int64_t> IndexTables::Steps(Mode mode, bool show_incomplete) const {
  std::vector<int64_t> out;
  if (mode == Mode::kGlobal) {
    out.reserve(steps_.size());
    for (const auto& kv : steps_) {
      if (show_incomplete || IsComplete(kv.first)) out.push_back(kv.first);
    }
  } else {
    for (const auto& kv : mode_to_global_[ModeIndex(mode)]) {
      if (show_incomplete || IsComplete(kv.second)) out.push_back(kv.first);
    }
  }
  return out;
}

std::optional<int64_t> IndexTables::GlobalStep(Mode mode, int64_t mode_step) const {
  if (mode == Mode::kGlobal) return mode_step;
  const auto& m = mode_to_global_[ModeIndex(mode)];
  auto it = m.find(mode_step);
  if (it == m.end()) return std::nullopt;
  return it->second;
}

const StepInfo* IndexTables::Step(int64_t global_step) const {
  auto it = steps_.find(global_step);
  return it == steps_.end() ? nullptr : &it->second;
}

std::optional<std::pair<int64_t, int64_t>> IndexTables::StepAtOrAfter(Mode mode, int64_t step) const {
  if (mode == Mode::kGlobal) {
    auto it = steps_.lower_bound(step);
    if (it == steps_.end()) return std::nullopt;
    return std::make_pair(it->first, it->first);
  }
  const std::map<int64_t, int64_t>& m = mode_to_global_[ModeIndex(mode)];
  auto it = m.lower_bound(step);
  if (it == m.end()) return std::nullopt;
  return *it;
}

int64_t IndexTables::LastStep(Mode mode) const {
  if (mode == Mode::kGlobal) return steps_.empty() ? -1 : steps_.rbegin()->first;
  const std::map<int64_t, int64_t>& m = mode_to_global_[ModeIndex(mode)];
  return m.empty() ? -1 : m.rbegin()->first;
}

StepState IndexTables::HasPassedStep(int64_t step, Mode mode) const {
  const StepState s = HasPassedStepIgnoringUnread(step, mode);
  // While an index file could not be read, a step that looks skipped may be in it (its mode
  // step is unknown until it is read): not yet available, never unavailable.
  if (lister_->HasUnread() && s != StepState::kAvailable) return StepState::kNotYetAvailable;
  if (mode == Mode::kGlobal && lister_->StepUnread(step)) return StepState::kNotYetAvailable;
  return s;
}

StepState IndexTables::HasPassedStepIgnoringUnread(int64_t step, Mode mode) const {
  // The first step of the mode at or after `step`, and its global step (no copy of the step list:
  // this runs on every poll of wait_for_steps and on every miss of a value read).
  const auto at = StepAtOrAfter(mode, step);
  if (at) {
    const int64_t g = at->second;
    if (at->first > step) {
      return last_complete_step_ >= g ? StepState::kUnavailable : StepState::kNotYetAvailable;
    }
    auto sit = steps_.find(g);
    const bool all_wrote =
        sit != steps_.end() && static_cast<int64_t>(sit->second.workers.size()) == num_workers_;
    if (all_wrote || loaded_all_ || g <= last_complete_step_) return StepState::kAvailable;
    return StepState::kNotYetAvailable;
  }
  return loaded_all_ ? StepState::kUnavailable : StepState::kNotYetAvailable;
}

// ---------------------------------------------------------------------------------------------
// Tensors

std::optional<uint32_t> IndexTables::FindTensor(std::string_view name) const {
  auto it = tensor_ids_.find(name);
  if (it == tensor_ids_.end()) return std::nullopt;
  return it->second;
}

std::vector<uint32_t> IndexTables::TensorsOfMode(Mode mode) const {
  std::vector<uint32_t> ids;
  for (uint32_t id = 0; id < tensors_.size(); ++id) {
    if (mode == Mode::kGlobal || (tensors_[id]->mode_mask & (1u << ModeIndex(mode)))) {
      ids.push_back(id);
    }
  }
  return ids;
}

std::vector<int64_t> IndexTables::TensorSteps(uint32_t id, Mode mode, bool show_incomplete) const {
  const TensorData& t = *tensors_[id];
  std::vector<int64_t> out;
  if (mode == Mode::kGlobal) {
    for (Mode m : kAllModesInOrder) {
      const auto& v = t.by_mode[ModeIndex(m)];
      for (size_t i = 0; i < v.size(); ++i) {
        if (i > 0 && v[i].mode_step == v[i - 1].mode_step) continue;
        std::optional<int64_t> g = GlobalStep(m, v[i].mode_step);
        if (g && (show_incomplete || IsComplete(*g))) out.push_back(*g);
      }
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
  } else {
    const auto& v = t.by_mode[ModeIndex(mode)];
    for (size_t i = 0; i < v.size(); ++i) {
      if (i > 0 && v[i].mode_step == v[i - 1].mode_step) continue;
      if (!show_incomplete) {
        std::optional<int64_t> g = GlobalStep(mode, v[i].mode_step);
        if (!g || !IsComplete(*g)) continue;
      }
      out.push_back(v[i].mode_step);
    }
  }
  return out;
}

IndexTables::FindResult IndexTables::Find(uint32_t id, int64_t step, Mode mode,
                                          const std::string* worker, FoundEntry* out) const {
  const TensorData& t = *tensors_[id];
  Mode m = mode;
  int64_t ms = step;
  auto range_of = [&](Mode mm, int64_t s) {
    const auto& v = t.by_mode[ModeIndex(mm)];
    auto lo = std::lower_bound(v.begin(), v.end(), s,
                               [](const StepEntry& e, int64_t k) { return e.mode_step < k; });
    auto hi = lo;
    while (hi != v.end() && hi->mode_step == s) ++hi;
    return std::make_pair(lo, hi);
  };
  auto r = range_of(m, ms);
  if (mode == Mode::kGlobal && r.first == r.second) {
    // Not saved in GLOBAL mode at that step: translate the global step to its mode step.
    auto it = steps_.find(step);
    if (it == steps_.end()) return FindResult::kNotFound;
    m = it->second.mode;
    ms = it->second.mode_step;
    r = range_of(m, ms);
  }
  if (r.first == r.second) return FindResult::kNotFound;
  const StepEntry* chosen = nullptr;
  for (auto it = r.first; it != r.second; ++it) {
    const std::string& wn = workers_[it->worker];
    if (worker != nullptr) {
      if (wn == *worker) chosen = &*it;
    } else if (chosen == nullptr || wn < workers_[chosen->worker]) {
      chosen = &*it;  // no worker given: the lexicographically smallest
    }
  }
  if (chosen == nullptr) return FindResult::kNoSuchWorker;
  out->mode = m;
  out->mode_step = ms;
  out->entry = *chosen;
  out->reds.clear();
  const auto& reds = t.reds[ModeIndex(m)];
  auto lo = std::lower_bound(reds.begin(), reds.end(), std::make_pair(ms, chosen->worker),
                             [](const RedEntry& e, const std::pair<int64_t, uint32_t>& k) {
                               return e.mode_step < k.first ||
                                      (e.mode_step == k.first && e.worker < k.second);
                             });
  for (; lo != reds.end() && lo->mode_step == ms && lo->worker == chosen->worker; ++lo) {
    out->reds.push_back(*lo);
  }
  return FindResult::kFound;
}

std::vector<std::string> IndexTables::WorkersOf(uint32_t id, const FoundEntry& f) const {
  std::vector<std::string> out;
  for (const StepEntry& e : tensors_[id]->by_mode[ModeIndex(f.mode)]) {
    if (e.mode_step == f.mode_step) out.push_back(workers_[e.worker]);
  }
  return out;
}

std::vector<int64_t> IndexTables::Shape(uint32_t shape) const {
  const auto& s = shapes_[shape];
  return std::vector<int64_t>(shape_dims_.begin() + s.first, shape_dims_.begin() + s.first + s.second);
}

IndexTables::Stats IndexTables::GetStats() const {
  Stats s;
  size_t bytes = 0;
  for (const auto& t : tensors_) {
    bytes += sizeof(TensorData) + t->name.capacity();
    for (int m = 0; m < kNumModes; ++m) {
      s.entries += t->by_mode[m].size();
      s.reduction_entries += t->reds[m].size();
      bytes += t->by_mode[m].capacity() * sizeof(StepEntry) + t->reds[m].capacity() * sizeof(RedEntry);
    }
  }
  for (const auto& kv : steps_) {
    bytes += 64 + sizeof(StepInfo) + kv.second.workers.capacity() * 4 + kv.second.tensors.capacity() * 4;
  }
  for (const auto& m : mode_to_global_) bytes += m.size() * 64;
  bytes += tensor_ids_.size() * 48 + event_files_.size() * 96 + shape_dims_.capacity() * 8;
  s.table_bytes = bytes;
  return s;
}

}  // namespace smd::trial
