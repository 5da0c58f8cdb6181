// The Hook: step and mode bookkeeping, collections, the per-step "what is due" decision, and the
// hand-off of due tensors to the AsyncWriter.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "impl/core/dtype.h"
#include "impl/core/mode.h"
#include "impl/core/status.h"
#include "impl/format/hook_config.h"
#include "impl/hook/collection.h"
#include "impl/hook/config.h"
#include "impl/hook/writer.h"
#include "impl/storage/open.h"
#include "impl/storage/storage.h"
#include "impl/core/dlpack_owned.h"

namespace smd::hook {

struct HookOptions {
  SaveConfig save_config;
  std::optional<ReductionConfig> reduction_config;
  std::vector<std::string> include_regex;
  std::vector<std::string> include_collections;
  bool save_all = false;
  bool include_all_workers = false;
  std::optional<std::string> worker;
  std::optional<int64_t> num_workers;
  bool dry_run = false;
  bool real_payload_crc = false;
  // Keep ":<digits>" of tensor names in reduction tags ("smdebug/reductions/min/dense/kernel:0"),
  // as smdebug's TensorFlow hooks do; smdebug's other hooks drop it (the default).
  bool keep_colon_index = false;
  double wall_time_base = 0;
  size_t memory_budget = 256u << 20;
  // The most steps the writer may fall behind: ending a step (BeginStep, Close) waits while more
  // ended steps than this are still being written. -1: no bound (only the memory budget holds
  // training back); 0: each step is written before the next begins. A rule that stops training
  // from a live job's files sees training at most this many steps past the step it flags.
  int64_t max_pending_steps = -1;
  std::optional<bool> write_end_marker;
  // TensorBoard export (FORMAT.md §11): into tensorboard_dir if set, else <out_dir>/tensorboard
  // if export_tensorboard.
  bool export_tensorboard = false;
  std::optional<std::string> tensorboard_dir;
  // fsync every event, index and collections file and training_job_end.ts before its rename,
  // and its folder after it (smdebug does not; off by default).
  bool fsync = false;
  // How to reach out_dir and tensorboard_dir when they are s3:// URIs (endpoint, region,
  // credentials, ...); empty fields come from the AWS configuration chain.
  io::StorageOptions storage;
};

// The worker name and count the launcher's environment gives (OpenMPI, torch.distributed,
// Horovod, MPICH/PMI), else worker_0 of 1.
std::string WorkerFromEnvironment();
int64_t NumWorkersFromEnvironment();

// A reduction computed by the caller, as a double (smd_hook_save_reductions).
struct GivenReduction {
  ReductionName name;
  double value = 0;
};

// A TensorBoard histogram computed by the caller over tensorboard::DefaultBucketEdges()
// (smd_hook_save_reductions): counts[i] elements in bucket i, and the statistics of all elements.
struct GivenHistogram {
  double min = 0, max = 0, sum = 0, sum_squares = 0;
  const uint64_t* counts = nullptr;
  size_t n_counts = 0;
};

// What saving a tensor of some name would write at the current step (Hook::DuePlan).
struct DuePlan {
  ReductionList reductions;  // in write order
  bool value = false;        // its elements are needed: the raw value or a TensorBoard scalar
  bool histogram = false;    // a TensorBoard histogram of it (from its elements, or given)
  bool shape = false;        // save_shape
};

class Hook : public std::enable_shared_from_this<Hook> {
 public:
  static Result<std::shared_ptr<Hook>> Create(const std::string& out_dir, const HookOptions& opts);
  // The same over a given storage (out_dir is its root): tests record what goes through it.
  // <out_dir>/tensorboard, when that is the TensorBoard folder, is written through it too.
  static Result<std::shared_ptr<Hook>> Create(std::shared_ptr<io::Storage> storage,
                                              const HookOptions& opts);
  // From the JSON hook configuration (FORMAT.md §12); opts supplies the rest.
  static Result<std::shared_ptr<Hook>> CreateFromJson(std::string_view json,
                                                      const std::string& source,
                                                      const HookOptions& opts);
  ~Hook();

  Status SetMode(Mode mode);
  Status BeginStep();
  // Ends the current step without beginning another: its files are completed in the background
  // (Flush waits for them) and the collections file is written once something was saved. Until
  // the next BeginStep the hook is between steps, where saves are held as before the first step
  // and go to the next step (Close begins one for them). Nothing to do between steps.
  Status EndStep();
  Status Flush();
  Status Close();

  int64_t global_step() const;
  Mode mode() const;
  int64_t mode_step() const;
  const std::string& worker() const { return worker_; }
  // Whether a rule raised the stop-training signal (io::kStopTrainingFile in out_dir). False for
  // dry runs. Errors: kIO.
  Result<bool> StopRequested() const;
  bool closed() const;
  // Whether a step is open (begun, and not ended by EndStep).
  bool in_step() const { return in_step_.load(std::memory_order_relaxed); }

  bool IsDue(const std::string& name);
  // Whether a tensor called `name` (numbered: any name made of `name` and a decimal index) can
  // belong to a collection the hook saves, whatever the step: false only when none can. The
  // answer holds until CollectionsVersion() changes. False when closed, for a dry run, and for
  // a name that is not valid UTF-8 (IsDue is false for it too).
  bool MaySave(const std::string& name, bool numbered);
  // Changes whenever collections, their regexes, names or the included set change.
  uint64_t CollectionsVersion();
  bool AnyDue() const { return any_due_.load(std::memory_order_relaxed) && writes_; }

  // A tensor to offer. `data` is copied (or `managed` adopted) only when something is due. The
  // pointers are valid (name, shape when ndim > 0, data when nbytes > 0, collections and their
  // names) and dtype is a known DType: the C boundary checks them.
  struct SaveRequest {
    const char* name = nullptr;
    DType dtype = DType::kFloat32;
    const int64_t* shape = nullptr;
    size_t ndim = 0;
    const void* data = nullptr;
    size_t nbytes = 0;
    const char* const* collections = nullptr;
    size_t n_collections = 0;
    DLManagedTensorVersioned* managed = nullptr;  // ownership taken when non-null
    // dtype kString: a 1-D tensor of shape[0] strings, string i being string_lens[i] bytes at
    // strings[i] (data and nbytes unused).
    const char* const* strings = nullptr;
    const size_t* string_lens = nullptr;
    // smd_hook_save_reductions: the caller computed the reductions (data and nbytes unused; the
    // shape gives the element count). Every due reduction must be among the n_given ones (others
    // are ignored), a due TensorBoard histogram must be given, and the tensor's elements must not
    // be due (raw value, TensorBoard scalar).
    bool reductions_only = false;
    const GivenReduction* given = nullptr;
    size_t n_given = 0;
    const GivenHistogram* histogram = nullptr;  // ignored when no histogram is due
  };
  // While no step is open (before the first step has begun, or after EndStep), the save is held
  // (its data copied) and offered to the next step when BeginStep (or Close, which then begins
  // one) starts it, as smdebug keeps such saves for its next step.
  Status Save(SaveRequest& req);
  // What a save of `name` (with no extra collections) would write now; nothing due: an empty
  // plan. The TensorBoard part is decided without the tensor's shape and dtype, so `value` and
  // `histogram` may be true where a save would write no summary (a histogram needs a non-empty,
  // non-bool tensor, a scalar summary one element). Errors: closed, no step.
  Result<DuePlan> Plan(const std::string& name);
  // A scalar "scalar/<name>" of shape [1] in the current step, whatever the save configuration:
  // `value` holds one element of `dtype` (any numeric dtype or bool; not kString). `timestamp`
  // is the record's wall time in seconds since the epoch (smdebug's save_scalar timestamp); 0
  // means the clock at the call (or the wall time base). Before the first step the scalar is held
  // for step 0, like a save.
  Status SaveScalar(const std::string& name, DType dtype, const void* value, double timestamp = 0);
  Status SaveScalar(const std::string& name, double value) {
    return SaveScalar(name, DType::kFloat64, &value);
  }

  // Collections. Indices are stable for the hook's lifetime.
  Result<size_t> GetCollection(const std::string& name);
  std::string CollectionName(size_t idx) const;
  std::vector<std::string> CollectionNames() const;
  Status IncludeCollection(const std::string& name);
  // Makes an included collection due for the rest of the current step, whatever its save
  // configuration says (smdebug's "force save": its Keras hook writes an epoch's logs this way).
  // The next BeginStep or EndStep ends it. Errors: kNotFound (no such collection), kInvalidState
  // (closed; no step open).
  Status MakeDue(const std::string& name);
  Status CollectionIncludeRegex(size_t idx, const std::string& regex);
  // Takes every include regex out of the collection (its built-in one too); the tensor names
  // added to it, and those it already holds, stay.
  Status CollectionClearIncludeRegex(size_t idx);
  Status CollectionAddTensorName(size_t idx, const std::string& name);
  Status CollectionSetSaveConfig(size_t idx, const std::optional<SaveConfig>& cfg);
  Status CollectionSetReductionConfig(size_t idx, const std::optional<ReductionConfig>& cfg);
  Status CollectionSetSaveHistogram(size_t idx, bool save);
  Result<std::vector<std::string>> CollectionTensorNames(size_t idx) const;

  WriterStats writer_stats() const;
  // The TensorBoard log folder, if the hook exports (even when this worker does not write).
  const std::optional<std::string>& tensorboard_dir() const { return tensorboard_dir_; }

 private:
  Hook() = default;
  Status Init(std::shared_ptr<io::Storage> storage, const HookOptions& opts);

  // All below with mu_ held.
  size_t GetOrCreateLocked(const std::string& name);
  bool IsIncludedLocked(const Collection& c) const;
  void InvalidateLocked();  // collections or inclusion changed
  void RecomputeDueLocked();
  SaveConfigMode EffectiveSaveLocked(const Collection& c, Mode m) const;
  const ReductionConfig& EffectiveReductionLocked(const Collection& c) const;
  struct NameInfo;
  const std::vector<uint32_t>& MembersLocked(const std::string& name, NameInfo& info);
  Status CheckOpenLocked() const;
  double WallTime() const;
  void ExportCollectionsLocked();
  // A job whose workers all write: whether it is one, and its end (workers_ended/, layout.h).
  bool SharesEndOfJob() const { return num_workers_ > 1 && include_all_workers_; }
  Status EndSharedJob();
  static std::string EndMark(const std::string& worker);  // workers_ended/<worker>
  Status WriteWhole(const std::string& rel);  // an empty file, fsync'ed with the fsync option
  // Hands the open step's scalars and end to the writer (mu_ held, writer_ set).
  void EndStepLocked();
  // The step boundary's first half, shared by BeginStep and EndStep: ends the open step and
  // writes the collections file once anything was saved (mu_ held; nothing without a writer).
  void EndOpenStepLocked();
  // Why a save or plan finds no step open: "no step has begun" or "step N was ended".
  std::string NoStepOpenLocked() const;
  // Advances the step and mode counters (gate_ held exclusively, mu_ held).
  void AdvanceStepLocked();
  // Saves held before the first step, offered to the step just begun (gate_ held exclusively,
  // mu_ not held). Returns the first error.
  Status ReplayHeldSaves();
  // Save's work once the gate is held (shared or exclusively): hold, or plan, copy, hand off.
  Status SaveUnderGate(SaveRequest& req, size_t count, DLManagedTensorVersioned*& managed);
  // No step is open: a copy is held for the next step (mu_ held).
  Status HoldLocked(const SaveRequest& req, size_t count);
  // The decision (mu_ held): the tensor's name checked once, its explicit collections recorded,
  // then what the due collections need of it (raw value, shape, reductions, TensorBoard
  // summaries) and, for reductions the caller computed, their values; fills *job's metadata.
  // false: nothing is due (or nothing is written), the save is done.
  Result<bool> PlanLocked(const SaveRequest& req, size_t count, TensorJob* job);
  // The copy (mu_ not held): the data the plan needs, copied into the writer's pool (or a
  // DLPack tensor adopted, `managed` then null), for the hand-off to the writer's queue.
  void CopyPayload(const SaveRequest& req, size_t count, DLManagedTensorVersioned*& managed,
                   TensorJob* job);
  std::string CollectionsJsonLocked() const;

  // Immutable after Init.
  std::shared_ptr<io::Storage> storage_;  // shared with the TensorBoard files under it
  std::string out_dir_;
  std::string worker_;
  int64_t num_workers_ = 1;
  bool include_all_workers_ = false;
  bool writes_ = true;  // false for dry runs and non-chief workers under include_workers=one
  bool dry_run_ = false;
  bool write_end_marker_ = true;
  bool fsync_ = false;
  double wall_time_base_ = 0;
  std::optional<std::string> tensorboard_dir_;  // set: TensorBoard export on
  std::unique_ptr<AsyncWriter> writer_;

  // Step gate: saves hold it shared for their whole duration; step and mode changes hold it
  // exclusively, so a save never straddles a step boundary.
  mutable std::shared_mutex gate_;
  int64_t step_ = -1;
  Mode mode_ = Mode::kGlobal;
  std::optional<int64_t> mode_steps_[kNumModes];

  // Collections and caches.
  mutable std::mutex mu_;
  bool closed_ = false;
  SaveConfig save_config_;
  std::optional<ReductionConfig> reduction_config_;
  ReductionConfig raw_only_;
  std::vector<Collection> collections_;
  std::unordered_map<std::string, size_t> by_name_;
  std::set<std::string> include_names_;
  uint64_t generation_ = 1;
  struct NameInfo {
    uint64_t generation = 0;
    std::vector<uint32_t> members;  // indices of included collections that hold the name
    Status regex_error;  // an include regex could not be matched against the name
  };
  std::unordered_map<std::string, NameInfo> names_;
  std::vector<char> due_;  // per collection index, for the current step and mode
  std::vector<char> made_due_;  // per collection index: MakeDue in the current step
  std::atomic<bool> any_due_{false};
  // A step is open: the first BeginStep opens one, EndStep closes it until the next BeginStep.
  std::atomic<bool> in_step_{false};
  std::atomic<bool> closed_flag_{false};  // closed_, readable without the lock
  bool initialized_ = false;
  std::vector<TensorJob> pending_scalars_;
  // Saves made while no step is open (before the first step, or after EndStep), with copies of
  // their data, offered to the next step.
  struct HeldSave {
    std::string name;
    DType dtype = DType::kFloat32;
    std::vector<int64_t> shape;
    std::vector<char> data;             // numeric tensors
    std::vector<std::string> strings;   // string tensors
    std::vector<std::string> collections;
  };
  std::vector<HeldSave> held_saves_;
  // Scalars saved while no step is open: stamped with the next step when it begins. A scalar whose wall
  // time is to come from the wall time base (no timestamp given) is restamped then.
  std::vector<TensorJob> held_scalars_;
  std::vector<bool> held_scalar_restamp_;
  bool ever_saved_ = false;  // something was queued at some step
  bool collections_exported_ = false;
  std::optional<int64_t> step_with_data_;  // current step has queued data
};

}  // namespace smd::hook
