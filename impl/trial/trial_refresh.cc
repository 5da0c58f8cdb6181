// Trial: refreshing, i.e. listing, reading, parsing and applying index files.
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
// Refreshing

// Called without mu_ held.
void Trial::AddWarning(const std::string& message) {
  std::unique_lock<std::shared_mutex> lock(mu_);
  if (warned_.insert(message).second) warnings_.push_back(message);
}

std::vector<std::string> Trial::Warnings() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  return warnings_;
}

namespace {

// Keyed by the trial's serial number, not its address: an entry left behind (its scope ended on
// another thread) can never apply to a later trial allocated at the same address.
struct OverrideEntry {
  uint64_t trial;
  bool on;
  uint64_t id;
};

// This thread's overrides, innermost last.
std::vector<OverrideEntry>& ThreadOverrides() {
  thread_local std::vector<OverrideEntry> overrides;
  return overrides;
}

std::atomic<uint64_t> next_override_id{1};
std::atomic<uint64_t> next_trial_serial{1};

}  // namespace

Trial::RefreshOverride::RefreshOverride(const Trial* trial, bool on)
    : id_(next_override_id.fetch_add(1, std::memory_order_relaxed)) {
  ThreadOverrides().push_back(OverrideEntry{trial->serial_, on, id_});
}

Trial::RefreshOverride::~RefreshOverride() {
  if (id_ == 0) return;  // moved from
  // Normally the last entry; one ended out of order is taken out where it is.
  std::vector<OverrideEntry>& overrides = ThreadOverrides();
  for (auto it = overrides.rbegin(); it != overrides.rend(); ++it) {
    if (it->id == id_) {
      overrides.erase(std::next(it).base());
      return;
    }
  }
}

uint64_t Trial::NextSerial() { return next_trial_serial.fetch_add(1, std::memory_order_relaxed); }

bool Trial::auto_refresh() const {
  const std::vector<OverrideEntry>& overrides = ThreadOverrides();
  for (auto it = overrides.rbegin(); it != overrides.rend(); ++it) {
    if (it->trial == serial_) return it->on;
  }
  return auto_refresh_;
}

bool Trial::loaded_all_steps() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  return loaded_all_;
}

int64_t Trial::last_complete_step() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  return last_complete_step_;
}

std::string Trial::index_cursor() const {
  std::shared_lock<std::shared_mutex> lock(mu_);  // UpdateCursor writes it with mu_ held
  return lister_->cursor();
}

Result<bool> Trial::HasEnded() const { return storage_->Exists(io::kEndOfJobFile); }

Status Trial::Refresh() {
  std::lock_guard<std::mutex> lock(refresh_mu_);
  if (watcher_) watcher_->ConsumeChanges();
  Status problem;
  SMD_RETURN_IF_ERROR(RefreshLocked(&problem));
  return problem;
}

Status Trial::MaybeRefresh() {
  if (!auto_refresh()) return Status::Ok();
  {
    std::shared_lock<std::shared_mutex> lock(mu_);
    if (loaded_all_) return Status::Ok();
  }
  std::lock_guard<std::mutex> lock(refresh_mu_);
  {
    std::shared_lock<std::shared_mutex> l(mu_);
    if (loaded_all_) return Status::Ok();
  }
  // With trusted change events, nothing pending means nothing new: skip the listing (unless
  // an index file is still to be read again).
  if (watcher_ && !lister_->HasUnread() && !watcher_->ConsumeChanges()) return Status::Ok();
  return RefreshLocked(nullptr);
}

Status Trial::RefreshLocked(Status* first_problem, std::optional<bool> ended_before) {
  // The end marker is checked before listing: everything written before it is then visible.
  bool ended;
  if (ended_before) {
    ended = *ended_before;
  } else {
    SMD_ASSIGN_OR_RETURN(ended, storage_->Exists(io::kEndOfJobFile));
  }
  size_t known_workers;
  int64_t num_workers;
  {
    std::shared_lock<std::shared_mutex> lock(mu_);
    known_workers = worker_set_.size();
    num_workers = num_workers_;
  }
  if (static_cast<int64_t>(known_workers) < num_workers) {
    SMD_ASSIGN_OR_RETURN(std::vector<std::string> files, ListCollectionFiles());
    AddCollectionWorkers(files);
  }
  SMD_RETURN_IF_ERROR(ListAndLoadIndex(first_problem, /*live=*/!ended));
  if (ended) {
    std::unique_lock<std::shared_mutex> lock(mu_);
    if (!loaded_all_) {
      loaded_all_ = true;
      if (!steps_.empty()) last_complete_step_ = steps_.rbegin()->first;
    }
  }
  return Status::Ok();
}

Status Trial::ListAndLoadIndex(Status* first_problem, bool live) {
  bool listed_any = false;
  SMD_ASSIGN_OR_RETURN(std::vector<IndexFileName> names,
                       lister_->ListNew(&listed_any, [this](const std::string& m) { AddWarning(m); }));
  std::vector<PendingFile> files(names.size());
  for (size_t i = 0; i < names.size(); ++i) files[i].name = std::move(names[i]);

  // Files are read at most kParseAhead ahead of the one applied, so file i can use slot
  // i % slots.size(): the file that used it before has been applied.
  std::vector<ParseSlot> slots(std::min(files.size(), kParseAhead));
  auto read_one_into = [this](PendingFile& f, ParseSlot* slot) {
    Status read = storage_->ReadAllInto(f.name.rel, &slot->text);
    if (!read.ok()) {
      if (read.code() == Code::kNotFound) {
        f.gone = true;
      } else {
        f.status = read;
        // Malformed (not a file at all): skipped as a parse error is. Anything else failed to
        // be read and is read again later.
        f.unread = read.code() != Code::kCorrupt;
      }
    }
  };
  auto read_one = [&slots, &read_one_into](PendingFile& f, size_t i) {
    ParseSlot& slot = slots[i % slots.size()];
    f.slot = &slot;
    read_one_into(f, &slot);
  };
  auto parse_one = [this](PendingFile& f) {
    if (f.gone || f.unread || !f.status.ok()) return;
    ParsedIndex& parsed = f.slot->parsed;
    Status st = ParseIndexFile(f.slot->text, &parsed);
    if (st.ok() && parsed.mode_step < 0) {
      st = Corrupt("mode step " + std::to_string(parsed.mode_step) + " can not be less than 0");
    }
    // An empty event_file_name (smdebug's tests write such index files) lists the steps and
    // tensors; their values are unavailable.
    if (st.ok() && parsed.has_event_file_name && !parsed.tensors.empty() &&
        !parsed.event_file_name.empty() && !IsSafeRelativePath(parsed.event_file_name)) {
      st = Corrupt("event_file_name '" + std::string(parsed.event_file_name) +
                   "' is not a path inside the trial");
    }
    if (!st.ok()) {
      f.status = Status(st.code(), "index file '" + storage_->Describe(f.name.rel) + "': " + st.message());
    }
  };

  // A helper thread reads the files ahead while this thread parses and applies them in order, a
  // chunk at a time under the lock. One reader: threads opening files of one folder at once
  // slow each other down (the folder's dentry is shared), more than they gain.
  const size_t n = files.size();
  const unsigned helpers = n >= kParallelMinFiles && std::thread::hardware_concurrency() > 1 ? 1 : 0;
  auto work = [&](size_t i) { read_one(files[i], i); };
  InOrderPipeline<decltype(work)> pipe(n, kParseAhead, helpers, work);
  std::vector<uint32_t> grown;
  std::vector<size_t> unread;  // files whose read failed in the pass below
  for (size_t begin = 0; begin < n; begin += kApplyChunk) {
    const size_t end = std::min(n, begin + kApplyChunk);
    for (size_t i = begin; i < end; ++i) {
      pipe.Get(i);
      parse_one(files[i]);
    }
    std::vector<std::string> problems;
    {
      std::unique_lock<std::shared_mutex> lock(mu_);
      // Names first, so that each tensor's tables grow once per chunk, to their final size
      // (not by doubling, which touches twice the memory).
      std::vector<const ParsedIndex*> ok_files;
      std::vector<std::vector<Prediction>> resolved;
      for (size_t i = begin; i < end; ++i) {
        PendingFile& f = files[i];
        if (f.gone) {
          lister_->ForgetUnread(f.name.rel);
          continue;
        }
        if (f.unread) {
          unread.push_back(i);
          continue;
        }
        lister_->ForgetUnread(f.name.rel);
        lister_->MarkRead(f.name.rel);
        if (!f.status.ok()) {
          if (first_problem != nullptr && first_problem->ok()) *first_problem = f.status;
          problems.push_back(f.status.message());
          continue;
        }
        ok_files.push_back(&f.slot->parsed);
        resolved.emplace_back();
        ResolveEntries(f.slot->parsed, &resolved.back());
      }
      ReserveForBatch(ok_files, resolved, n - end, live, &grown);
      size_t k = 0;
      for (size_t i = begin; i < end; ++i) {
        PendingFile& f = files[i];
        if (f.gone || f.unread || !f.status.ok()) continue;
        ++index_files_read_;
        ApplyIndexFile(f.slot->parsed, resolved[k++], f.name.step, f.name.worker);
      }
    }
    pipe.Consumed(end);
    for (const std::string& p : problems) AddWarning("skipped " + p);
  }
  if (!grown.empty()) {
    std::unique_lock<std::shared_mutex> lock(mu_);
    ShrinkTables(grown);
  }
  // The files whose read failed get one more try now (the storage's own retries were spent on
  // each, so this is a second round of them); those that fail again stay unread (IndexLister).
  Status unread_error;
  size_t still_unread = 0;
  for (size_t i : unread) {
    PendingFile& f = files[i];
    ParseSlot slot;
    f.slot = &slot;
    f.status = Status::Ok();
    f.unread = false;
    read_one_into(f, &slot);
    if (!f.gone && !f.unread) parse_one(f);
    std::vector<Prediction> resolved;
    std::string problem;
    {
      std::unique_lock<std::shared_mutex> lock(mu_);
      if (f.unread) {
        lister_->RememberUnread(f.name);
        ++still_unread;
        if (unread_error.ok()) {
          unread_error = Status(f.status.code(), "index file '" + storage_->Describe(f.name.rel) +
                                                     "' could not be read (it is read again by "
                                                     "the next refresh): " + f.status.message());
        }
        continue;
      }
      lister_->ForgetUnread(f.name.rel);
      if (f.gone) continue;
      lister_->MarkRead(f.name.rel);
      if (!f.status.ok()) {
        if (first_problem != nullptr && first_problem->ok()) *first_problem = f.status;
        problem = f.status.message();
      } else {
        ResolveEntries(slot.parsed, &resolved);
        ++index_files_read_;
        ApplyIndexFile(slot.parsed, resolved, f.name.step, f.name.worker);
      }
    }
    if (!problem.empty()) AddWarning("skipped " + problem);
  }
  if (still_unread > 1) {
    unread_error = Status(unread_error.code(), unread_error.message() + " (and " +
                                                   std::to_string(still_unread - 1) +
                                                   " more index file(s))");
  }
  if (listed_any || !lister_->cursor().empty()) {
    std::unique_lock<std::shared_mutex> lock(mu_);
    UpdateCursor();
  }
  lister_->ForgetReadBeforeCursor();
  return unread_error;
}

// BEHAVIOR.md §6.7: the cursor trails the last complete step; too many incomplete steps make the
// trial give up on the oldest half of them. Called with mu_ held exclusively.
void Trial::UpdateCursor() {
  if (worker_set_.empty()) return;
  lister_->Advance(SerializeWorker(*worker_set_.rbegin()), &last_complete_step_,
                   static_cast<int64_t>(steps_.size()), window_);
}

uint32_t Trial::InternWorker(const std::string& w) {
  auto it = worker_ids_.find(w);
  if (it != worker_ids_.end()) return it->second;
  uint32_t id = static_cast<uint32_t>(workers_.size());
  workers_.push_back(w);
  worker_ids_.emplace(w, id);
  return id;
}

uint32_t Trial::InternTensor(std::string_view name) {
  auto it = tensor_ids_.find(name);
  if (it != tensor_ids_.end()) return it->second;
  uint32_t id = static_cast<uint32_t>(tensors_.size());
  auto t = std::make_unique<TensorData>();
  t->name.assign(name.data(), name.size());
  tensor_ids_.emplace(std::string_view(t->name), id);
  tensors_.push_back(std::move(t));
  return id;
}

uint32_t Trial::InternReduction(std::string_view name) {
  std::string n(name);
  auto it = red_ids_.find(n);
  if (it != red_ids_.end()) return it->second;
  uint32_t id = static_cast<uint32_t>(red_names_.size());
  red_names_.push_back(n);
  red_ids_.emplace(std::move(n), id);
  return id;
}

uint32_t Trial::InternShape(const int64_t* dims, uint32_t ndim) {
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

uint32_t Trial::InternEventFile(std::string_view rel) {
  auto it = event_file_ids_.find(rel);
  if (it != event_file_ids_.end()) return it->second;
  uint32_t id = static_cast<uint32_t>(event_files_.size());
  event_files_.emplace_back(rel);
  event_file_span_.push_back(0);
  event_file_ids_.emplace(std::string_view(event_files_.back()), id);
  return id;
}

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

// Resolves the tags of an index file to (tensor, reduction) ids. Called with mu_ held exclusively.
void Trial::ResolveEntries(const ParsedIndex& p, std::vector<Prediction>* out) {
  if (predicted_.size() < p.tensors.size()) predicted_.resize(p.tensors.size());
  out->reserve(p.tensors.size());
  for (size_t i = 0; i < p.tensors.size(); ++i) {
    const IndexTensorRef& e = p.tensors[i];
    Prediction& pr = predicted_[i];
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

void Trial::ReserveForBatch(const std::vector<const ParsedIndex*>& files,
                            const std::vector<std::vector<Prediction>>& resolved,
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
    for (const Prediction& pr : resolved[k]) count(pr.tensor, mi, k, pr.red != kNone);
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

// Returns what a guess of ReserveForBatch left unused (a tensor that stopped appearing).
void Trial::ShrinkTables(const std::vector<uint32_t>& grown) {
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

// Registers one index file (BEHAVIOR.md §6.6). Called with mu_ held exclusively.
void Trial::ApplyIndexFile(const ParsedIndex& p, const std::vector<Prediction>& resolved,
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
    const Prediction& pr = resolved[i];
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
  }
  if (!std::is_sorted(si.tensors.begin(), si.tensors.end())) std::sort(si.tensors.begin(), si.tensors.end());
  si.tensors.erase(std::unique(si.tensors.begin(), si.tensors.end()), si.tensors.end());
  auto wit = std::lower_bound(si.workers.begin(), si.workers.end(), w);
  if (wit == si.workers.end() || *wit != w) si.workers.insert(wit, w);
  if (static_cast<int64_t>(si.workers.size()) == num_workers_ && global_step > last_complete_step_) {
    last_complete_step_ = global_step;
  }
}

}  // namespace smd::trial
