// Trial: opening a trial (collections files), and its statistics.
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
#include "impl/storage/open.h"
#include "impl/trial/parallel.h"
#include "impl/trial/trial_internal.h"

namespace smd::trial {

// ---------------------------------------------------------------------------------------------
// Opening

Trial::Trial(std::string path, std::unique_ptr<io::Storage> storage, const TrialOptions& options,
             bool ended)
    : path_(std::move(path)),
      storage_(std::move(storage)),
      options_(options),
      watcher_(options.watch && !ended ? storage_->WatchChanges() : nullptr),
      lister_(std::make_unique<IndexLister>(storage_.get(), watcher_.get(), options.range_begin,
                                            options.range_end)),
      tables_(lister_.get()) {
  window_ = options.incomplete_step_window >= 0 ? options.incomplete_step_window : WindowFromEnv();
  auto_refresh_ = options.auto_refresh;
  records_ = std::make_unique<RecordReader>(storage_.get(), options.cache_bytes);
}

Trial::~Trial() = default;

// Set while opening, before the trial is shared, and never after: read without the lock.
int64_t Trial::num_workers() const { return tables_.num_workers(); }

Result<std::shared_ptr<Trial>> Trial::Open(const std::string& raw_path, const TrialOptions& options) {
  std::string path(StripAscii(raw_path));
  if (path.empty()) return InvalidArgument("empty trial path");
  SMD_ASSIGN_OR_RETURN(std::unique_ptr<io::Storage> storage, io::OpenStorage(path, options.storage));
  return Open(std::move(storage), options);
}

Result<std::shared_ptr<Trial>> Trial::Open(std::unique_ptr<io::Storage> storage,
                                           const TrialOptions& options) {
  if (options.range_begin < -1 || options.range_end < -1) {
    return InvalidArgument("range_steps bounds must be >= 0 (or -1 for no bound)");
  }
  if (options.range_begin >= 0 && options.range_end >= 0 && options.range_end <= options.range_begin) {
    return InvalidArgument("range_steps must be (begin, end) with begin < end, got (" +
                           std::to_string(options.range_begin) + ", " +
                           std::to_string(options.range_end) + ")");
  }
  if (options.collection_wait_ms < 0) {
    return InvalidArgument("the collection file wait must be >= 0 ms (waits are never unbounded)");
  }
  // With a collection wait the whole open, folder and collections file, waits up to it.
  const Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(options.collection_wait_ms);
  SMD_ASSIGN_OR_RETURN(bool exists, storage->Exists(""));
  // A job that has not started yet has no folder (and on S3 a prefix exists only once an object is
  // under it), so it looks like no trial at all: with a collection wait, wait for it (polling) too.
  if (!exists && options.collection_wait_ms > 0) {
    std::chrono::milliseconds pause(50);
    while (!exists && Clock::now() < deadline) {
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, std::chrono::milliseconds(1000));
      SMD_ASSIGN_OR_RETURN(exists, storage->Exists(""));
    }
  }
  if (!exists) return NotFound("trial folder '" + storage->root() + "' does not exist");
  SMD_ASSIGN_OR_RETURN(bool ended, storage->Exists(io::kEndOfJobFile));
  std::string root = storage->root();
  std::shared_ptr<Trial> t(new Trial(root, std::move(storage), options, ended));
  SMD_RETURN_IF_ERROR(t->LoadCollections(deadline));
  {
    std::lock_guard<std::mutex> lock(t->refresh_mu_);
    if (t->watcher_) t->watcher_->ConsumeChanges();
    // An end marker found above, before LoadCollections listed anything, holds for the listing
    // (one request fewer on S3); a job seen running is checked again, as it may have ended since.
    SMD_RETURN_IF_ERROR(t->RefreshLocked(nullptr, ended ? std::optional<bool>(true) : std::nullopt));
    t->opened_ = true;
  }
  return t;
}

Result<std::vector<std::string>> Trial::ListCollectionFiles() {
  static const std::string kDir = io::CollectionsDirRelPath();
  if (watcher_) {
    watcher_->Watch("");
    watcher_->Watch("collections");
    watcher_->Watch(kDir);
  }
  auto names = storage_->ListDir(kDir);
  std::vector<std::string> out;
  if (!names.ok()) {
    if (names.status().code() == Code::kNotFound) return out;
    return names.status();
  }
  for (const std::string& n : names.value()) {
    if (EndsWith(n, "collections.json")) out.push_back(kDir + "/" + n);
  }
  std::sort(out.begin(), out.end());
  return out;
}

void Trial::AddCollectionWorkers(const std::vector<std::string>& files) {
  std::unique_lock<std::shared_mutex> lock(mu_);
  for (const std::string& f : files) {
    std::string_view base = BaseName(f);
    constexpr std::string_view kSuffix = "_collections.json";
    if (base.size() <= kSuffix.size() || !EndsWith(base, kSuffix)) continue;
    std::string w(base.substr(0, base.size() - kSuffix.size()));
    if (w[0] == '_') w = DeserializeWorker(std::move(w));
    worker_set_.insert(std::move(w));
  }
}

Status Trial::LoadCollections(Clock::time_point wait_until) {
  const std::optional<Clock::time_point> deadline = wait_until;
  WaitState wait;
  auto wait_for_change = [&] {  // then list again, whatever it says
    AwaitChange(deadline, &wait);
    if (watcher_) watcher_->ConsumeChanges();  // (a pending event would end every later wait)
  };
  const std::string where = storage_->Describe(io::CollectionsDirRelPath());

  SMD_ASSIGN_OR_RETURN(std::vector<std::string> files, ListCollectionFiles());
  while (files.empty()) {
    SMD_ASSIGN_OR_RETURN(bool ended, storage_->Exists(io::kEndOfJobFile));
    if (ended) return MissingCollectionFilesError("no collections file in '" + where + "'");
    if (Clock::now() >= *deadline) {
      return Status(Code::kMissingCollectionFiles,
                    "No collections file in '" + where + "' and the training job has not ended" +
                        (options_.collection_wait_ms > 0
                             ? " (waited " + std::to_string(options_.collection_wait_ms) + " ms)"
                             : std::string()) +
                        "; the job may not have saved anything yet");
    }
    wait_for_change();
    SMD_ASSIGN_OR_RETURN(files, ListCollectionFiles());
  }
  SMD_RETURN_IF_ERROR(ReadCollectionsFile(files[0]));
  while (static_cast<int64_t>(files.size()) < num_workers()) {
    SMD_ASSIGN_OR_RETURN(bool ended, storage_->Exists(io::kEndOfJobFile));
    if (ended) {
      return MissingCollectionFilesError(std::to_string(files.size()) + " collection file(s) in '" +
                                         where + "' but _meta.num_workers is " +
                                         std::to_string(num_workers()));
    }
    if (Clock::now() >= *deadline) break;  // a running job: the others may still come
    wait_for_change();
    SMD_ASSIGN_OR_RETURN(files, ListCollectionFiles());
  }
  AddCollectionWorkers(files);
  return Status::Ok();
}

Status Trial::ReadCollectionsFile(const std::string& rel) {
  const std::string file = storage_->Describe(rel);
  SMD_ASSIGN_OR_RETURN(std::string text, storage_->ReadAll(rel));
  SMD_ASSIGN_OR_RETURN(CollectionsFile parsed, ParseCollectionsFile(text, file));
  if (!parsed.num_workers) {
    AddWarning("collections file '" + file + "' has no valid _meta.num_workers; assuming 1");
  }
  for (const std::string& w : parsed.warnings) AddWarning(w);
  std::unique_lock<std::shared_mutex> lock(mu_);
  collections_ = std::move(parsed.collections);
  tables_.set_num_workers(parsed.num_workers.value_or(1));
  return Status::Ok();
}

Trial::Stats Trial::GetStats() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  Stats s;
  s.index_files_read = index_files_read_.load();
  s.listings = lister_->listings();
  s.records_read = records_->reads();
  const IndexTables::Stats t = tables_.GetStats();
  s.entries = t.entries;
  s.reduction_entries = t.reduction_entries;
  s.table_bytes = t.table_bytes;
  return s;
}

}  // namespace smd::trial
