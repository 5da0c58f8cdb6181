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
  return tables_.loaded_all();
}

int64_t Trial::last_complete_step() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  return tables_.last_complete_step();
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
    if (tables_.loaded_all()) return Status::Ok();
  }
  std::lock_guard<std::mutex> lock(refresh_mu_);
  {
    std::shared_lock<std::shared_mutex> l(mu_);
    if (tables_.loaded_all()) return Status::Ok();
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
    num_workers = tables_.num_workers();
  }
  if (static_cast<int64_t>(known_workers) < num_workers) {
    SMD_ASSIGN_OR_RETURN(std::vector<std::string> files, ListCollectionFiles());
    AddCollectionWorkers(files);
  }
  SMD_RETURN_IF_ERROR(ListAndLoadIndex(first_problem, /*live=*/!ended));
  if (ended) {
    std::unique_lock<std::shared_mutex> lock(mu_);
    tables_.MarkLoadedAll();
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
      std::vector<std::vector<ResolvedTag>> resolved;
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
        tables_.Resolve(f.slot->parsed, &resolved.back());
      }
      tables_.Reserve(ok_files, resolved, n - end, live, &grown);
      size_t k = 0;
      for (size_t i = begin; i < end; ++i) {
        PendingFile& f = files[i];
        if (f.gone || f.unread || !f.status.ok()) continue;
        ++index_files_read_;
        tables_.Apply(f.slot->parsed, resolved[k++], f.name.step, f.name.worker);
      }
    }
    pipe.Consumed(end);
    for (const std::string& p : problems) AddWarning("skipped " + p);
  }
  if (!grown.empty()) {
    std::unique_lock<std::shared_mutex> lock(mu_);
    tables_.Shrink(grown);
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
    std::vector<ResolvedTag> resolved;
    std::string problem;
    {
      std::unique_lock<std::shared_mutex> lock(mu_);
      if (f.unread) {
        lister_->RememberUnread(f.name);
        ++still_unread;
        if (unread_error.ok()) {
          unread_error = Status(f.status.code(),
                                "index file '" + storage_->Describe(f.name.rel) +
                                    "' could not be read (" +
                                    (opened_ ? "it is read again by the next refresh"
                                             : "the trial opens once it can be read") +
                                    "): " + f.status.message());
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
        tables_.Resolve(slot.parsed, &resolved);
        ++index_files_read_;
        tables_.Apply(slot.parsed, resolved, f.name.step, f.name.worker);
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
  tables_.AdvanceCursor(lister_.get(), SerializeWorker(*worker_set_.rbegin()), window_);
}

}  // namespace smd::trial
