// Trial and Tensor: the analysis side of smdebug (BEHAVIOR.md §6-7, §10) over a local folder,
// finished or still being written.
//
// Loading is index-first: opening a trial reads the collections file and every index file, and
// builds compact in-memory tables (steps per mode, the global <-> mode step maps, and per tensor
// the (mode step, worker) -> record location / saved shape / saved reductions). Event files are
// only read when a value is asked for, one record at a time. A refresh lists only index files
// after a cursor that trails the last complete step, so its cost follows the new data.
//
// The parts: IndexLister (index_lister.h) decides which index files a refresh reads,
// IndexTables (index_tables.h) holds what they say, RecordReader (record_reader.h) reads the
// event-file records behind them through the caches. The Trial composes them: locking, refresh
// and waiting policy, collections, and smdebug's errors.
//
// Thread safety: every method may be called from any thread concurrently; refreshes are
// serialized internally and readers see either the state before or after one.
#pragma once

#include <atomic>
#include <chrono>
#include <deque>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "impl/core/mode.h"
#include "impl/core/status.h"
#include "impl/storage/open.h"
#include "impl/storage/storage.h"
#include "impl/format/collections_file.h"
#include "impl/trial/index_lister.h"
#include "impl/trial/index_tables.h"
#include "impl/trial/record_reader.h"
#include "impl/trial/value.h"

namespace smd::trial {

struct ParsedIndex;

struct TrialOptions {
  // range_steps: only global steps begin <= s < end are loaded; -1 means no bound.
  int64_t range_begin = -1;
  int64_t range_end = -1;
  // Whether queries may refresh the trial when they need data it does not have yet.
  bool auto_refresh = true;
  // How long opening waits for the trial folder and the collections file(s) of a job that has not
  // ended (the whole open within it). 0: not at all (NotFound or MissingCollectionFiles at once);
  // never unbounded.
  int64_t collection_wait_ms = 0;
  // Bytes of decoded values and event-file blocks kept in memory.
  size_t cache_bytes = size_t(64) << 20;
  // smdebug's SMDEBUG_INCOMPLETE_STEP_WAIT_WINDOW; -1: the environment variable, else 1000.
  int64_t incomplete_step_window = -1;
  // Use file-system change notification (inotify) to skip listings when nothing changed and to
  // wake waits; off, every refresh lists and waits short-poll.
  bool watch = true;
  // How to reach an s3:// trial (endpoint, region, credentials, ...); empty fields come from the
  // AWS configuration chain.
  io::StorageOptions storage;
};

struct TensorFilter {
  std::optional<int64_t> step;  // a step of `mode` (a global step for GLOBAL)
  Mode mode = Mode::kGlobal;
  std::vector<std::string> regexes;          // any of them must match (search semantics)
  std::optional<std::string> collection;     // members of this collection
};

class Trial : public std::enable_shared_from_this<Trial> {
 public:
  // Opens the trial at `path` (a local folder; "~" is expanded, surrounding whitespace dropped).
  // Errors: kNotFound (no such folder), kMissingCollectionFiles, kCorrupt (a malformed
  // collections file), kIO, kAuth (S3 credentials refused or missing), kInvalidArgument (bad options or URI).
  static Result<std::shared_ptr<Trial>> Open(const std::string& path, const TrialOptions& options);
  // The same over a given storage (tests use it to count listings and reads).
  static Result<std::shared_ptr<Trial>> Open(std::unique_ptr<io::Storage> storage,
                                             const TrialOptions& options);
  ~Trial();
  Trial(const Trial&) = delete;
  Trial& operator=(const Trial&) = delete;

  const std::string& path() const { return path_; }
  // The options the trial was opened with.
  const TrialOptions& options() const { return options_; }
  // Where the trial lives. Everything read or written under its root (the stop-training signal
  // of a rule too) goes through it.
  io::Storage* storage() const { return storage_.get(); }

  // Reads whatever was added since the last refresh (always lists, whatever auto_refresh says).
  // Index files that cannot be parsed are skipped, remembered in Warnings(), and the first such
  // problem of this refresh is returned as kCorrupt after everything else was loaded. An index
  // file that could not be read (an I/O or S3 error after the storage's retries) is never
  // skipped: it is read again by every later refresh until that succeeds, its step is not
  // complete meanwhile (a wait for it waits; the trial is not loaded_all_steps), and the refresh
  // (and Open) returns that error (kIO, kHttp, ...) after loading everything else. A listing
  // that fails is an error too (nothing of that refresh is applied; the next one lists again).
  Status Refresh();
  // Whether queries refresh by themselves on the calling thread: the innermost RefreshOverride
  // of this trial alive on this thread, else the auto_refresh the trial was opened with.
  bool auto_refresh() const;

  // Overrides auto_refresh for one trial on the calling thread while it lives: smdebug's
  // no_refresh and refresh blocks, a rule evaluating a step, a wait for a step. The trial's own
  // setting never changes (it is fixed at open), and other threads are not affected, so a block
  // in one thread cannot stop another thread's refreshes. Overrides nest; the innermost wins.
  // Destroy it on the thread that made it (elsewhere it ends nothing).
  class RefreshOverride {
   public:
    RefreshOverride(const Trial* trial, bool on);
    ~RefreshOverride();
    RefreshOverride(RefreshOverride&& other) noexcept : id_(other.id_) { other.id_ = 0; }
    RefreshOverride(const RefreshOverride&) = delete;
    RefreshOverride& operator=(const RefreshOverride&) = delete;
    RefreshOverride& operator=(RefreshOverride&&) = delete;

   private:
    uint64_t id_;  // 0: moved from, ends nothing
  };
  // Messages about files skipped so far (malformed index files, unreadable collection files).
  std::vector<std::string> Warnings() const;

  // training_job_end.ts exists now.
  Result<bool> HasEnded() const;
  // Whether the trial has seen the end of the job and loaded everything (no more auto refresh).
  bool loaded_all_steps() const;
  int64_t num_workers() const;
  int64_t last_complete_step() const;
  // The index file (relative to the trial) that the next refresh lists after; empty before any
  // step is complete (BEHAVIOR.md §6.7: smdebug's last_index_token).
  std::string index_cursor() const;

  Result<std::vector<std::string>> Workers();
  std::vector<Mode> Modes() const;
  Result<std::vector<int64_t>> Steps(Mode mode, bool show_incomplete);
  // (mode, mode step) of a global step; nullopt if unknown even after a refresh.
  Result<std::optional<std::pair<Mode, int64_t>>> ModeOf(int64_t global_step);
  // The global step of a mode step (GLOBAL: the step itself); nullopt if unknown.
  Result<std::optional<int64_t>> GlobalStep(Mode mode, int64_t mode_step);

  Result<std::vector<std::string>> TensorNames(const TensorFilter& filter);
  Result<bool> HasTensor(const std::string& name);
  // Errors: kTensorUnavailable.
  Result<uint32_t> TensorId(const std::string& name);
  const std::string& TensorName(uint32_t id) const;
  // smdebug's Tensor.original_name: the "originalname" of the last shape entry loaded for the
  // tensor (the name itself when the entry has none); nullopt when no shape was saved for it.
  std::optional<std::string> TensorOriginalName(uint32_t id) const;

  std::vector<std::string> CollectionNames() const;  // sorted
  const CollectionInfo* Collection(const std::string& name) const;  // nullptr if absent

  Result<StepState> HasPassedStep(int64_t step, Mode mode);
  // Waits until each step is available. timeout_ms < 0 waits forever. Errors: kStepUnavailable,
  // kNoMoreData, kStepNotYetAvailable (timeout).
  Status WaitForSteps(const std::vector<int64_t>& steps, Mode mode, int64_t timeout_ms);

  // ---- per tensor (id from TensorId) ----
  Result<std::vector<int64_t>> TensorSteps(uint32_t id, Mode mode, bool show_incomplete);
  Result<ValuePtr> TensorValue(uint32_t id, int64_t step, Mode mode, const std::string* worker);
  Result<std::vector<std::pair<int64_t, ValuePtr>>> TensorValues(uint32_t id, Mode mode,
                                                                 const std::string* worker);
  // The dtype and shape of the value saved at a step, from the start of its record only (a
  // cached value, or a small record, is decoded whole). Errors: as TensorValue.
  using ValueInfo = trial::ValueInfo;
  Result<ValueInfo> TensorValueInfo(uint32_t id, int64_t step, Mode mode, const std::string* worker);
  Result<std::vector<int64_t>> TensorShape(uint32_t id, int64_t step, Mode mode,
                                           const std::string* worker);
  Result<std::vector<std::pair<int64_t, std::vector<int64_t>>>> TensorShapes(
      uint32_t id, Mode mode, const std::string* worker);
  // Reduction names as "min", "abs_l2", ... Any saved name is accepted, plus (computed from the
  // raw value when that is all there is) every spelling core/reductions.h parses.
  Result<ValuePtr> TensorReductionValue(uint32_t id, int64_t step, std::string_view reduction,
                                        Mode mode, const std::string* worker);
  // The reductions saved at that step for that worker, sorted by name.
  Result<std::vector<std::string>> TensorReductionNames(uint32_t id, int64_t step, Mode mode,
                                                        const std::string* worker);
  Result<std::vector<std::string>> TensorWorkers(uint32_t id, int64_t step, Mode mode);
  Result<std::vector<int64_t>> TensorPrevSteps(uint32_t id, int64_t step, size_t n, Mode mode);

  // Statistics for tests and benchmarks.
  struct Stats {
    uint64_t index_files_read = 0;
    uint64_t listings = 0;       // index folder listings done by refreshes
    uint64_t records_read = 0;   // event-file reads (records or small whole files)
    size_t entries = 0;          // (tensor, mode step, worker) entries
    size_t reduction_entries = 0;
    size_t table_bytes = 0;      // memory of the step and tensor tables
  };
  Stats GetStats() const;

 private:
  struct ParseSlot;
  struct PendingFile;

  // ended: training_job_end.ts was there at open, so the trial will not change and needs no
  // change watch (closing an inotify descriptor costs a kernel grace period, ~10 ms).
  Trial(std::string path, std::unique_ptr<io::Storage> storage, const TrialOptions& options,
        bool ended);

  // Reads the collections file(s), waiting for them until `wait_until` (the open's collection wait).
  Status LoadCollections(std::chrono::steady_clock::time_point wait_until);
  Status ReadCollectionsFile(const std::string& rel);
  Result<std::vector<std::string>> ListCollectionFiles();
  void AddCollectionWorkers(const std::vector<std::string>& files);

  struct WaitState {
    int poll_ms = 5;  // the next short poll (no change events)
    int quiet = 0;    // slices without an event
  };
  // Sleeps until the trial folder changes, or a short slice passes (never past the deadline).
  // Returns true when a listing is due although no change event came.
  bool AwaitChange(const std::optional<std::chrono::steady_clock::time_point>& deadline,
                   WaitState* w);
  Status MaybeRefresh();
  // With refresh_mu_ held. ended_before: whether training_job_end.ts was there, if the caller
  // checked it before anything was listed (Open does); otherwise it is checked here.
  Status RefreshLocked(Status* first_problem, std::optional<bool> ended_before = std::nullopt);
  Status ListAndLoadIndex(Status* first_problem, bool live);  // live: the job has not ended
  void UpdateCursor();
  void AddWarning(const std::string& message);

  // The tensor at a step, refreshing once if it is not known yet (BEHAVIOR.md §7.1).
  Result<FoundEntry> Resolve(uint32_t id, int64_t step, Mode mode, const std::string* worker);
  // Where record (file, offset, length) is, for the record reader (the event file's path and
  // span, read under mu_; the tables never move an event file's path).
  RecordLocation LocateRecord(uint32_t file, uint64_t offset, uint64_t length) const;
  // The value of a record, through the record reader.
  Result<ValuePtr> ReadRecord(uint32_t file, uint64_t offset, uint64_t length,
                              const std::string& tag, uint32_t tensor_id, int64_t step, Mode mode);
  Result<ValuePtr> ValueOf(uint32_t id, const FoundEntry& f, int64_t step, Mode mode);

  const std::string path_;
  std::unique_ptr<io::Storage> storage_;
  const TrialOptions options_;
  int64_t window_ = 1000;
  std::unique_ptr<io::ChangeWatch> watcher_;  // null: the storage cannot notify (poll)
  std::unique_ptr<RecordReader> records_;  // event-file records and their caches

  bool auto_refresh_ = true;  // fixed at open; RefreshOverride overrides it per thread
  bool opened_ = false;       // Open's own refresh is over (under refresh_mu_)
  static uint64_t NextSerial();
  const uint64_t serial_ = NextSerial();  // identifies the trial to RefreshOverride
  std::mutex refresh_mu_;  // serializes refreshes (listing, parsing, applying)

  mutable std::shared_mutex mu_;  // guards everything below
  std::map<std::string, CollectionInfo> collections_;
  std::set<std::string> worker_set_;  // from collection file names
  std::vector<std::string> warnings_;
  std::unordered_set<std::string> warned_;

  // Which index files refreshes read: the cursor, the files read after it and those to read
  // again. Used with refresh_mu_ held, and with mu_ held exclusively for what queries read (the
  // cursor, the steps of unread files: read under mu_).
  std::unique_ptr<IndexLister> lister_;
  // What the index files read say (impl/trial/index_tables.h).
  IndexTables tables_;
  std::atomic<uint64_t> index_files_read_{0};
};

// smdebug's messages (BEHAVIOR.md §8) with their codes.
Status TensorUnavailableForStepError(const std::string& tensor, int64_t step, Mode mode,
                                     bool has_reductions = false);
Status TensorUnavailableError(const std::string& tensor);
Status StepUnavailableError(int64_t step, Mode mode);
Status StepNotYetAvailableError(int64_t step, Mode mode);
Status NoMoreDataError(int64_t step, Mode mode, int64_t last_step);
Status ShapeUnavailableForStepError(const std::string& tensor, int64_t step, Mode mode);
Status InvalidWorkerError(const std::string& worker);
Status MissingCollectionFilesError(const std::string& detail);

}  // namespace smd::trial
