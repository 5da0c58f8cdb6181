#include "impl/hook/hook.h"

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "impl/core/copy.h"
#include "impl/core/text.h"
#include "impl/format/collections_file.h"
#include "impl/format/layout.h"
#include "impl/core/environment.h"
#include "impl/storage/open.h"
#include "impl/tensorboard/sink.h"

namespace smd::hook {
namespace {

// Guards a DLPack tensor whose ownership was passed to us: deleted on scope exit unless taken.
class ManagedGuard {
 public:
  explicit ManagedGuard(DLManagedTensorVersioned* m) : m_(m) {}
  ~ManagedGuard() { ReleaseDLPack(m_); }
  DLManagedTensorVersioned* release() {
    DLManagedTensorVersioned* m = m_;
    m_ = nullptr;
    return m;
  }
  // The guarded pointer; whoever takes the tensor sets it to null.
  DLManagedTensorVersioned*& ref() { return m_; }

 private:
  DLManagedTensorVersioned* m_;
};

}  // namespace

std::string WorkerFromEnvironment() {
  if (std::optional<int64_t> rank = env::LauncherRank()) return "worker_" + std::to_string(*rank);
  return "worker_0";
}

int64_t NumWorkersFromEnvironment() { return env::LauncherWorldSize().value_or(1); }

// ------------------------------------------------------------------------------------------
// Creation

Result<std::shared_ptr<Hook>> Hook::Create(const std::string& out_dir, const HookOptions& opts) {
  if (out_dir.empty()) return InvalidArgument("out_dir is empty");
  if (StripAscii(out_dir).size() != out_dir.size()) {
    // smdebug's create_trial strips its path, and so does Trial::Open: the trial opened by this
    // same string would read another folder than the one written.
    return InvalidArgument("out_dir '" + out_dir +
                           "' begins or ends with whitespace, which a trial strips from its path "
                           "(as smdebug's create_trial does): it could not be read back by this name");
  }
  SMD_ASSIGN_OR_RETURN(std::unique_ptr<io::Storage> storage, io::OpenStorage(out_dir, opts.storage));
  return Create(std::shared_ptr<io::Storage>(std::move(storage)), opts);
}

Result<std::shared_ptr<Hook>> Hook::Create(std::shared_ptr<io::Storage> storage,
                                           const HookOptions& opts) {
  if (storage == nullptr) return InvalidArgument("no storage for the hook");
  std::shared_ptr<Hook> hook(new Hook());
  SMD_RETURN_IF_ERROR(hook->Init(std::move(storage), opts));
  return hook;
}

Status Hook::Init(std::shared_ptr<io::Storage> storage, const HookOptions& opts) {
  storage_ = std::move(storage);
  const std::string& out_dir = storage_->root();
  out_dir_ = out_dir;
  worker_ = opts.worker ? *opts.worker : WorkerFromEnvironment();
  SMD_RETURN_IF_ERROR(io::ValidateWorkerName(worker_));
  num_workers_ = opts.num_workers ? *opts.num_workers : NumWorkersFromEnvironment();
  if (num_workers_ < 1) return InvalidArgument("the number of workers must be at least 1");
  include_all_workers_ = opts.include_all_workers;
  dry_run_ = opts.dry_run;
  wall_time_base_ = opts.wall_time_base;
  write_end_marker_ = opts.write_end_marker ? *opts.write_end_marker : !env::InSageMakerJob();
  const bool chief = num_workers_ == 1 || worker_ == "worker_0";
  writes_ = !dry_run_ && (include_all_workers_ || chief);
  if (opts.memory_budget == 0) return InvalidArgument("the memory budget must be more than 0 bytes");
  if (opts.max_pending_steps < -1) {
    return InvalidArgument("max_pending_steps must be -1 (no bound) or >= 0, got " +
                           std::to_string(opts.max_pending_steps));
  }

  tensorboard_dir_ = tensorboard::ResolveTensorBoardDir(out_dir, opts.export_tensorboard,
                                                       opts.tensorboard_dir);
  // <out_dir>/tensorboard goes through the trial's storage; another folder through its own.
  std::shared_ptr<io::Storage> tb_storage;
  std::string tb_prefix;
  if (tensorboard_dir_) {
    if (!opts.tensorboard_dir || opts.tensorboard_dir->empty()) {
      tb_storage = storage_;
      tb_prefix = "tensorboard/";
    } else {
      Result<std::unique_ptr<io::Storage>> tb = io::OpenStorage(*tensorboard_dir_, opts.storage);
      if (!tb.ok()) return tb.status().WithContext("the TensorBoard folder");
      tb_storage = std::move(tb).value();
    }
  }
  fsync_ = opts.fsync;
  if (!dry_run_) {
    SMD_ASSIGN_OR_RETURN(bool ended, storage_->Exists(io::kEndOfJobFile));
    if (ended) {
      return Status(Code::kAlreadyExists,
                    "out_dir '" + out_dir + "' already holds a finished run (" +
                        storage_->Describe(io::kEndOfJobFile) + " exists); use a new folder");
    }
    SMD_RETURN_IF_ERROR(storage_->PrepareForWriting());
    // A stop-training signal left by a rule watching an earlier, unfinished run in this folder
    // is not meant for this one; while another process holds the folder (its claim), the
    // signal is that process's, and this hook will find the folder taken when it first writes.
    if (chief) {
      SMD_ASSIGN_OR_RETURN(bool stale, storage_->Exists(io::kStopTrainingFile));
      bool taken = false;
      if (stale && num_workers_ == 1) {
        SMD_ASSIGN_OR_RETURN(taken, storage_->Exists(io::kClaimFile));
      }
      if (stale && !taken) SMD_RETURN_IF_ERROR(storage_->Remove(io::kStopTrainingFile));
    }
    // This worker's end mark of an earlier run that never ended must not count for this one.
    if (writes_ && SharesEndOfJob()) {
      SMD_ASSIGN_OR_RETURN(bool left, storage_->Exists(EndMark(worker_)));
      if (left) SMD_RETURN_IF_ERROR(storage_->Remove(EndMark(worker_)));
    }
  }

  save_config_ = opts.save_config;
  reduction_config_ = opts.reduction_config;
  raw_only_.save_raw_tensor = true;
  for (const BuiltinSeed& seed : InitialCollections()) {
    size_t idx = GetOrCreateLocked(seed.name);
    if (seed.regex != nullptr) {
      SMD_ASSIGN_OR_RETURN(auto re, Regex::Compile(seed.regex));
      collections_[idx].regexes.push_back(std::move(re));
    }
  }
  include_names_.insert("losses");
  for (const std::string& name : opts.include_collections) {
    if (name.empty()) return InvalidArgument("an include_collections name is empty");
    if (!IsValidUtf8(name)) return InvalidArgument("an include_collections name is not valid UTF-8");
    include_names_.insert(name);
  }
  if (!opts.include_regex.empty()) {
    Collection& def = collections_[by_name_.at("default")];
    for (const std::string& pattern : opts.include_regex) {
      SMD_ASSIGN_OR_RETURN(auto re, Regex::Compile(pattern));
      def.regexes.push_back(std::move(re));
    }
    include_names_.insert("default");
  }
  if (opts.save_all) {
    SMD_ASSIGN_OR_RETURN(auto re, Regex::Compile(".*"));
    collections_[by_name_.at("all")].regexes.push_back(std::move(re));
    include_names_.insert("all");
  }

  if (writes_) {
    WriterOptions wo;
    wo.worker = worker_;
    wo.crc = opts.real_payload_crc ? io::PayloadCrcKind::kReal : io::PayloadCrcKind::kSmdebugConstant;
    wo.claim_out_dir = num_workers_ == 1;
    wo.memory_budget = opts.memory_budget;
    wo.max_pending_steps = opts.max_pending_steps;
    wo.tensorboard_storage = std::move(tb_storage);
    wo.tensorboard_prefix = tb_prefix;
    wo.fsync = opts.fsync;
    wo.keep_colon_index = opts.keep_colon_index;
    writer_.reset(new AsyncWriter(storage_.get(), std::move(wo)));
  }
  mode_steps_[ModeIndex(Mode::kGlobal)] = -1;
  RecomputeDueLocked();
  initialized_ = true;
  return Status::Ok();
}

Result<std::shared_ptr<Hook>> Hook::CreateFromJson(std::string_view json, const std::string& source,
                                                   const HookOptions& base) {
  SMD_ASSIGN_OR_RETURN(io::HookConfigSpec spec, io::ParseHookConfig(json, source));
  HookOptions opts = base;
  auto err = [&](const std::string& what) { return InvalidArgument(source + ": " + what); };

  // One mode's SaveConfigMode from (most specific first) the given key sets; nullopt if none has
  // any key, so that the mode stays unset.
  auto resolve = [](std::initializer_list<const io::SaveConfigModeSpec*> specs)
      -> std::optional<SaveConfigMode> {
    bool any = false;
    for (auto* s : specs) any = any || s->any();
    if (!any) return std::nullopt;
    SaveConfigMode m;
    for (auto it = std::rbegin(specs); it != std::rend(specs); ++it) {  // least specific first
      const io::SaveConfigModeSpec* s = *it;
      if (s->save_interval) m.save_interval = *s->save_interval;
      if (s->start_step) m.start_step = *s->start_step;
      if (s->end_step) m.end_step = *s->end_step;
      if (s->save_steps) m.save_steps = *s->save_steps;
    }
    return m;
  };
  auto check_interval = [&](const std::optional<SaveConfigMode>& m, const std::string& where) {
    if (m && m->save_interval < 1) {
      return err(where + ": save_interval must be at least 1, not " +
                 std::to_string(m->save_interval));
    }
    return Status::Ok();
  };
  for (Mode m : kAllModesInOrder) {
    auto sc = resolve({&spec.save.per_mode[ModeIndex(m)], &spec.save.generic});
    SMD_RETURN_IF_ERROR(check_interval(sc, "HookParameters"));
    if (sc) opts.save_config.mode(m) = sc;
  }
  auto reduction_from = [&](const io::ReductionSpec& rs, const std::string& where)
      -> Result<ReductionConfig> {
    Result<ReductionConfig> rc = ReductionConfig::Parse(rs.reductions);
    if (!rc.ok()) return err(where + ".reductions: " + rc.status().message());
    rc->save_raw_tensor = rs.save_raw_tensor;
    rc->save_shape = rs.save_shape;
    return rc;
  };
  if (spec.reduction) {
    SMD_ASSIGN_OR_RETURN(opts.reduction_config, reduction_from(*spec.reduction, "HookParameters"));
  }
  if (spec.save_all) opts.save_all = *spec.save_all;
  for (const std::string& r : spec.include_regex) opts.include_regex.push_back(r);
  if (spec.include_workers) opts.include_all_workers = *spec.include_workers == "all";
  if (spec.dry_run) opts.dry_run = *spec.dry_run;
  if (env::InSageMakerJob()) {
    // SageMaker: the TensorBoard configuration file decides, the hook parameters do not.
    SMD_ASSIGN_OR_RETURN(std::optional<std::string> tb, tensorboard::SageMakerTensorBoardDir());
    if (tb) opts.tensorboard_dir = tb;
  } else {
    if (spec.export_tensorboard) opts.export_tensorboard = *spec.export_tensorboard;
    if (spec.tensorboard_dir) opts.tensorboard_dir = spec.tensorboard_dir;
  }
  for (const io::CollectionSpec& cs : spec.collections) {
    if (!IsBuiltinCollection(cs.name) && cs.include_regex.empty()) {
      return err("collection '" + cs.name +
                 "' in CollectionConfigurations is not built in and has no include_regex");
    }
    opts.include_collections.push_back(cs.name);
  }

  SMD_ASSIGN_OR_RETURN(std::shared_ptr<Hook> hook, Create(spec.local_path, opts));
  for (const io::CollectionSpec& cs : spec.collections) {
    const std::string where = "CollectionConfigurations '" + cs.name + "'";
    SMD_ASSIGN_OR_RETURN(size_t idx, hook->GetCollection(cs.name));
    for (const std::string& r : cs.include_regex) {
      Status st = hook->CollectionIncludeRegex(idx, r);
      if (!st.ok()) return err(where + ": " + st.message());
    }
    // Per field: collection mode key > collection key > hook mode key > hook key > default.
    bool any = cs.save.generic.any();
    for (const auto& pm : cs.save.per_mode) any = any || pm.any();
    if (any) {
      SaveConfig sc;
      for (Mode m : kAllModesInOrder) {
        sc.mode(m) = resolve({&cs.save.per_mode[ModeIndex(m)], &cs.save.generic,
                              &spec.save.per_mode[ModeIndex(m)], &spec.save.generic});
        SMD_RETURN_IF_ERROR(check_interval(sc.mode(m), where));
      }
      SMD_RETURN_IF_ERROR(hook->CollectionSetSaveConfig(idx, sc));
    }
    if (cs.reduction) {
      SMD_ASSIGN_OR_RETURN(ReductionConfig rc, reduction_from(*cs.reduction, where));
      SMD_RETURN_IF_ERROR(hook->CollectionSetReductionConfig(idx, rc));
    }
    if (cs.save_histogram) SMD_RETURN_IF_ERROR(hook->CollectionSetSaveHistogram(idx, *cs.save_histogram));
  }
  return hook;
}

Hook::~Hook() { (void)Close(); }

// ------------------------------------------------------------------------------------------
// Steps and modes

int64_t Hook::global_step() const {
  std::shared_lock<std::shared_mutex> g(gate_);
  return step_;
}

Mode Hook::mode() const {
  std::shared_lock<std::shared_mutex> g(gate_);
  return mode_;
}

int64_t Hook::mode_step() const {
  std::shared_lock<std::shared_mutex> g(gate_);
  return mode_steps_[ModeIndex(mode_)].value_or(-1);
}

Result<bool> Hook::StopRequested() const {
  if (dry_run_) return false;
  return storage_->Exists(io::kStopTrainingFile);
}

bool Hook::closed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return closed_;
}

Status Hook::CheckOpenLocked() const {
  if (closed_) return InvalidState("the hook is closed");
  return Status::Ok();
}

Status Hook::SetMode(Mode mode) {
  if (!IsValidMode(static_cast<int>(mode))) {
    return InvalidArgument("invalid mode " + std::to_string(static_cast<int>(mode)));
  }
  std::unique_lock<std::shared_mutex> g(gate_);
  std::lock_guard<std::mutex> lock(mu_);
  SMD_RETURN_IF_ERROR(CheckOpenLocked());
  mode_ = mode;
  if (!mode_steps_[ModeIndex(mode)]) mode_steps_[ModeIndex(mode)] = -1;
  RecomputeDueLocked();
  return Status::Ok();
}

// The current step's scalars go last into its files, which are then completed (writer_ set).
void Hook::EndStepLocked() {
  for (TensorJob& job : pending_scalars_) {
    if (!writer_->Enqueue(std::move(job)).ok()) break;  // the writer's error is reported later
  }
  pending_scalars_.clear();
  if (step_with_data_) writer_->EndStep(*step_with_data_);
  step_with_data_.reset();
}

void Hook::EndOpenStepLocked() {
  if (!writer_) return;
  EndStepLocked();
  if (ever_saved_ && !collections_exported_) ExportCollectionsLocked();
}

void Hook::AdvanceStepLocked() {
  step_with_data_.reset();
  made_due_.clear();
  ++step_;
  in_step_.store(true, std::memory_order_relaxed);
  int64_t& ms = *mode_steps_[ModeIndex(mode_)];
  ++ms;
  if (mode_ != Mode::kGlobal) mode_steps_[ModeIndex(Mode::kGlobal)] = step_;
  RecomputeDueLocked();
  // Scalars saved while no step was open belong to this one, with its mode and mode step.
  for (size_t i = 0; i < held_scalars_.size(); ++i) {
    TensorJob& job = held_scalars_[i];
    job.step = step_;
    job.mode = mode_;
    job.mode_step = ms;
    if (held_scalar_restamp_[i]) job.wall_time = WallTime();
    pending_scalars_.push_back(std::move(job));
    step_with_data_ = step_;
    ever_saved_ = true;
  }
  held_scalars_.clear();
  held_scalar_restamp_.clear();
}

Status Hook::ReplayHeldSaves() {
  std::vector<HeldSave> held;
  {
    std::lock_guard<std::mutex> lock(mu_);
    held.swap(held_saves_);
  }
  Status first;
  for (HeldSave& h : held) {
    std::vector<const char*> colls;
    for (const std::string& c : h.collections) colls.push_back(c.c_str());
    std::vector<const char*> strs;
    std::vector<size_t> lens;
    for (const std::string& x : h.strings) {
      strs.push_back(x.data());
      lens.push_back(x.size());
    }
    SaveRequest req;
    req.name = h.name.c_str();
    req.dtype = h.dtype;
    req.shape = h.shape.data();
    req.ndim = h.shape.size();
    req.data = h.data.data();
    req.nbytes = h.dtype == DType::kString ? 0 : h.data.size();
    req.collections = colls.data();
    req.n_collections = colls.size();
    req.strings = strs.data();
    req.string_lens = lens.data();
    size_t count = 1;
    for (int64_t d : h.shape) count *= static_cast<size_t>(d);
    if (h.dtype == DType::kString) {
      for (size_t len : lens) req.nbytes += len;
    }
    DLManagedTensorVersioned* none = nullptr;
    Status st = SaveUnderGate(req, count, none);
    if (first.ok()) first = st;
  }
  return first;
}

Status Hook::BeginStep() {
  {
    std::unique_lock<std::shared_mutex> g(gate_);
    bool replay = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      SMD_RETURN_IF_ERROR(CheckOpenLocked());
      EndOpenStepLocked();
      AdvanceStepLocked();
      replay = !held_saves_.empty();
    }
    // The saves made before the first step are offered to it before anyone else can save.
    if (replay) SMD_RETURN_IF_ERROR(ReplayHeldSaves());
  }
  if (!writer_) return Status::Ok();
  // The max_pending_steps bound holds the caller back, without the gate: saves from other
  // threads (into the step just begun) are not blocked while the writer catches up.
  writer_->WaitForPendingSteps();
  return writer_->error();
}

Status Hook::EndStep() {
  std::unique_lock<std::shared_mutex> g(gate_);
  std::lock_guard<std::mutex> lock(mu_);
  SMD_RETURN_IF_ERROR(CheckOpenLocked());
  if (!in_step_.load(std::memory_order_relaxed)) return Status::Ok();
  EndOpenStepLocked();
  in_step_.store(false, std::memory_order_relaxed);
  made_due_.clear();
  RecomputeDueLocked();
  return writer_ ? writer_->error() : Status::Ok();
}

std::string Hook::NoStepOpenLocked() const {
  return step_ < 0 ? "no step has begun" : "step " + std::to_string(step_) + " was ended";
}

Status Hook::Flush() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    SMD_RETURN_IF_ERROR(CheckOpenLocked());
  }
  return writer_ ? writer_->Flush() : Status::Ok();
}

Status Hook::Close() {
  std::unique_lock<std::shared_mutex> g(gate_);
  std::unique_lock<std::mutex> lock(mu_);
  if (closed_ || !initialized_) return Status::Ok();
  Status first;
  if (!in_step_.load(std::memory_order_relaxed) && (!held_saves_.empty() || !held_scalars_.empty())) {
    // Saves made while no step was open: a step begun for them takes them (before the first step,
    // smdebug writes them as step -1, which its own reader refuses).
    AdvanceStepLocked();
    lock.unlock();
    first = ReplayHeldSaves();
    lock.lock();
  }
  closed_ = true;
  closed_flag_.store(true, std::memory_order_relaxed);
  any_due_.store(false, std::memory_order_relaxed);
  if (writer_) {
    EndStepLocked();
    ExportCollectionsLocked();
    lock.unlock();
    // The writer writes the end marker itself, and only while it holds its claim on the folder.
    // In a job whose workers all write, the last worker to close writes it (EndSharedJob).
    Status st = writer_->Close(write_end_marker_ && !dry_run_ && !SharesEndOfJob());
    if (first.ok()) first = st;
    if (SharesEndOfJob() && !dry_run_) {
      st = EndSharedJob();
      if (first.ok()) first = st;
    }
    return first;
  }
  lock.unlock();
  // A worker that writes nothing (only the chief writes) does not end the chief's job.
  if (write_end_marker_ && !dry_run_ && num_workers_ == 1) {
    Status st = WriteWhole(io::kEndOfJobFile);
    if (first.ok()) first = st;
  }
  return first;
}

// Each worker leaves its mark; the one that then finds every worker's writes the end marker (two
// that finish together may both write it, which is harmless). A worker that died before its close
// leaves none: the job then has no end marker, as a single worker that died.
std::string Hook::EndMark(const std::string& worker) {
  return std::string(io::kWorkersEndedDir) + "/" + worker;
}

Status Hook::WriteWhole(const std::string& rel) {
  return fsync_ ? storage_->WriteDurably(rel, "") : storage_->WriteAtomic(rel, "");
}

Status Hook::EndSharedJob() {
  SMD_RETURN_IF_ERROR(WriteWhole(EndMark(worker_)));
  if (!write_end_marker_) return Status::Ok();
  SMD_ASSIGN_OR_RETURN(std::vector<std::string> ended, storage_->ListDir(io::kWorkersEndedDir));
  std::vector<std::string> marks;
  for (const std::string& name : ended) {
    const std::string_view tmp = io::kTmpSuffix;  // a mark being written
    if (name.size() < tmp.size() || name.compare(name.size() - tmp.size(), tmp.size(), tmp) != 0) {
      marks.push_back(name);
    }
  }
  if (static_cast<int64_t>(marks.size()) < num_workers_) return Status::Ok();
  SMD_RETURN_IF_ERROR(WriteWhole(io::kEndOfJobFile));
  // The job has ended: the marks have served (the folder then holds smdebug's files only).
  for (const std::string& name : marks) SMD_RETURN_IF_ERROR(storage_->Remove(EndMark(name)));
  return Status::Ok();
}

double Hook::WallTime() const {
  if (wall_time_base_ != 0) return wall_time_base_ + static_cast<double>(step_);
  using namespace std::chrono;
  return duration_cast<duration<double>>(system_clock::now().time_since_epoch()).count();
}

// ------------------------------------------------------------------------------------------
// What is due

bool Hook::IsIncludedLocked(const Collection& c) const {
  // Including "all" includes every collection, as in smdebug (save_all includes it); the "all"
  // collection itself matches every tensor only with save_all (its ".*").
  return include_names_.count("all") > 0 || include_names_.count(c.name) > 0;
}

void Hook::InvalidateLocked() {
  ++generation_;
  RecomputeDueLocked();
}

SaveConfigMode Hook::EffectiveSaveLocked(const Collection& c, Mode m) const {
  if (c.save_config) return c.save_config->Effective(m, &save_config_);
  return save_config_.Effective(m, nullptr);
}

const ReductionConfig& Hook::EffectiveReductionLocked(const Collection& c) const {
  if (IsNonReductionCollection(c.name)) return raw_only_;
  if (c.reduction_config) return *c.reduction_config;
  if (reduction_config_) return *reduction_config_;
  return raw_only_;
}

void Hook::RecomputeDueLocked() {
  due_.assign(collections_.size(), 0);
  bool any = false;
  if (in_step_.load(std::memory_order_relaxed)) {
    const int64_t ms = mode_steps_[ModeIndex(mode_)].value_or(-1);
    const bool eval_like = mode_ == Mode::kEval || mode_ == Mode::kPredict;
    for (size_t i = 0; i < collections_.size(); ++i) {
      const Collection& c = collections_[i];
      if (!IsIncludedLocked(c)) continue;
      if (i < made_due_.size() && made_due_[i]) {
        due_[i] = 1;
        any = true;
        continue;
      }
      if (eval_like && IsTrainOnlyCollection(c.name)) continue;
      if (EffectiveSaveLocked(c, mode_).ShouldSave(ms)) {
        due_[i] = 1;
        any = true;
      }
    }
  }
  any_due_.store(any, std::memory_order_relaxed);
}

const std::vector<uint32_t>& Hook::MembersLocked(const std::string& name, NameInfo& info) {
  if (info.generation != generation_) {
    info.members.clear();
    info.regex_error = Status::Ok();
    for (size_t i = 0; i < collections_.size(); ++i) {
      Collection& c = collections_[i];
      if (!IsIncludedLocked(c)) continue;
      Result<bool> m = c.Matches(name);
      if (!m.ok()) {
        if (info.regex_error.ok()) info.regex_error = m.status();
        continue;
      }
      if (*m) {
        info.members.push_back(static_cast<uint32_t>(i));
        c.tensor_names.insert(name);
      }
    }
    info.generation = generation_;
  }
  return info.members;
}

bool Hook::IsDue(const std::string& name) {
  if (!writes_ || !any_due_.load(std::memory_order_relaxed)) return false;
  std::shared_lock<std::shared_mutex> g(gate_);
  std::lock_guard<std::mutex> lock(mu_);
  // (a name that cannot be saved is not remembered: saving it must still be refused, and only the
  // first save of a name checks it)
  if (closed_ || name.empty() || !IsValidUtf8(name)) return false;
  NameInfo& info = names_[name];
  for (uint32_t i : MembersLocked(name, info)) {
    if (due_[i]) return true;
  }
  return !info.regex_error.ok();  // saving it reports the error
}

bool Hook::MaySave(const std::string& name, bool numbered) {
  if (!writes_) return false;
  std::shared_lock<std::shared_mutex> g(gate_);
  std::lock_guard<std::mutex> lock(mu_);
  if (closed_ || !IsValidUtf8(name)) return false;
  for (const Collection& c : collections_) {
    if (!IsIncludedLocked(c)) continue;
    Result<bool> m = numbered ? c.MayMatchNumbered(name) : c.Matches(name);
    if (!m.ok() || *m) return true;  // an error: saving the tensor reports it
  }
  return false;
}

uint64_t Hook::CollectionsVersion() {
  std::lock_guard<std::mutex> lock(mu_);
  return generation_;
}

Result<DuePlan> Hook::Plan(const std::string& name) {
  if (name.empty()) return InvalidArgument("tensor name is empty");
  if (!IsValidUtf8(name)) return InvalidArgument("tensor name is not valid UTF-8");
  DuePlan plan;
  std::shared_lock<std::shared_mutex> g(gate_);
  std::lock_guard<std::mutex> lock(mu_);
  SMD_RETURN_IF_ERROR(CheckOpenLocked());
  if (!in_step_.load(std::memory_order_relaxed)) {
    return InvalidState(NoStepOpenLocked() + ": cannot plan '" + name + "'");
  }
  if (!writes_ || !any_due_.load(std::memory_order_relaxed)) return plan;
  NameInfo& info = names_[name];
  const std::vector<uint32_t>& members = MembersLocked(name, info);
  if (!info.regex_error.ok()) {
    return info.regex_error.WithContext("cannot plan the reductions of tensor '" + name + "'");
  }
  for (uint32_t i : members) {
    if (!due_[i]) continue;
    const Collection& c = collections_[i];
    const ReductionConfig& rc = EffectiveReductionLocked(c);
    plan.value = plan.value || rc.save_raw_tensor;
    plan.shape = plan.shape || rc.save_shape;
    if (tensorboard_dir_) {
      if (IsScalarCollection(c.name)) {
        plan.value = true;
      } else if (c.save_histogram && !IsNonReductionCollection(c.name)) {
        plan.histogram = true;
      }
    }
    if (IsScalarCollection(c.name)) continue;
    for (ReductionOp op : rc.reductions()) plan.reductions.Add(op, false);
    for (ReductionOp op : rc.norms()) plan.reductions.Add(op, false);
    for (ReductionOp op : rc.abs_reductions()) plan.reductions.Add(op, true);
    for (ReductionOp op : rc.abs_norms()) plan.reductions.Add(op, true);
  }
  return plan;
}

// ------------------------------------------------------------------------------------------
// Saving

// Save: the arguments checked, then (SaveUnderGate) held for the next step, or in three parts:
// PlanLocked decides (under mu_) what the step needs of the tensor, CopyPayload takes its data
// for the writer (outside mu_), and the writer's queue takes the job (the hand-off).
Status Hook::Save(SaveRequest& req) {
  ManagedGuard guard(req.managed);
  // Arguments first, cheap checks only (inline: the fast path below is the cost of a save that
  // nothing wants). The caller has checked the pointers (name, shape when ndim > 0, data when
  // nbytes > 0, collections); the dtype is checked here, once.
  const DTypeInfo* info = GetDTypeInfo(static_cast<int>(req.dtype));
  if (info == nullptr) {
    return InvalidArgument("unknown dtype " + std::to_string(static_cast<int>(req.dtype)) +
                           " for tensor '" + req.name + "'");
  }
  const bool strings = req.dtype == DType::kString;
  if (strings && req.ndim != 1) {
    return InvalidArgument(std::string("string tensor '") + req.name + "' has " +
                           std::to_string(req.ndim) + " dimensions; string tensors are 1-D");
  }
  if (req.ndim > 255) return InvalidArgument("a tensor may have at most 255 dimensions");
  size_t count = 1;
  for (size_t i = 0; i < req.ndim; ++i) {
    if (req.shape[i] < 0) {
      return InvalidArgument("dimension " + std::to_string(i) + " of tensor '" + req.name +
                             "' is negative (" + std::to_string(req.shape[i]) + ")");
    }
    const uint64_t d = static_cast<uint64_t>(req.shape[i]);
    if (d != 0 && count > std::numeric_limits<size_t>::max() / d) {
      return InvalidArgument(std::string("the shape of tensor '") + req.name + "' is too large");
    }
    count *= static_cast<size_t>(d);
  }
  if (strings) {
    size_t total = 0;
    for (size_t i = 0; i < count; ++i) {
      if (req.string_lens[i] > std::numeric_limits<size_t>::max() - total) {
        return InvalidArgument(std::string("the strings of tensor '") + req.name + "' are too large");
      }
      total += req.string_lens[i];
    }
    req.nbytes = total;
  } else if (!req.reductions_only && (count > std::numeric_limits<size_t>::max() / info->size ||
                                      count * info->size != req.nbytes)) {
    std::string shape;
    for (size_t i = 0; i < req.ndim; ++i) shape += (i ? "," : "") + std::to_string(req.shape[i]);
    return InvalidArgument("tensor '" + std::string(req.name) + "': " + std::to_string(req.nbytes) +
                           " bytes given but a " + info->name + " tensor of shape [" + shape +
                           "] holds " + std::to_string(count) + " x " + std::to_string(info->size) +
                           " bytes");
  }
  for (size_t i = 0; i < req.n_collections; ++i) {
    if (req.collections[i][0] == '\0') {
      return InvalidArgument("collection name " + std::to_string(i) + " of tensor '" +
                             std::string(req.name) + "' is empty");
    }
    if (!IsValidUtf8(req.collections[i])) {
      return InvalidArgument("collection name " + std::to_string(i) + " of tensor '" +
                             std::string(req.name) + "' is not valid UTF-8");
    }
  }
  // Fast path: nothing at all is due at this step.
  if (req.n_collections == 0 && !any_due_.load(std::memory_order_relaxed) &&
      in_step_.load(std::memory_order_relaxed)) {
    return closed_flag_.load(std::memory_order_relaxed) ? InvalidState("the hook is closed")
                                                        : Status::Ok();
  }
  std::shared_lock<std::shared_mutex> gate(gate_);
  // The guard deletes the tensor unless the writer adopted it (nothing due, an error, or held as
  // a copy before the first step).
  return SaveUnderGate(req, count, guard.ref());
}


Status Hook::SaveUnderGate(SaveRequest& req, size_t count, DLManagedTensorVersioned*& managed) {
  TensorJob job;
  {
    std::lock_guard<std::mutex> lock(mu_);
    SMD_RETURN_IF_ERROR(CheckOpenLocked());
    // No step is open (before the first, or after EndStep): held, with a copy of the data, for
    // the next step.
    if (!in_step_.load(std::memory_order_relaxed)) return HoldLocked(req, count);
    SMD_ASSIGN_OR_RETURN(const bool due, PlanLocked(req, count, &job));
    if (!due) return Status::Ok();
  }
  CopyPayload(req, count, managed, &job);
  return writer_->Enqueue(std::move(job));
}

Status Hook::HoldLocked(const SaveRequest& req, size_t count) {
  const bool strings = req.dtype == DType::kString;
  // Reductions the caller computed answer a plan, and plans need a step.
  if (req.reductions_only) {
    return InvalidState(NoStepOpenLocked() + ": reductions of '" + std::string(req.name) +
                        "' can be saved only in a step");
  }
  if (!writes_) return Status::Ok();
  SMD_RETURN_IF_ERROR(writer_->error());
  HeldSave h;
  h.name = req.name;
  if (h.name.empty() || !IsValidUtf8(h.name)) {
    return InvalidArgument(h.name.empty() ? "tensor name is empty" : "tensor name is not valid UTF-8");
  }
  h.dtype = req.dtype;
  h.shape.assign(req.shape, req.shape + req.ndim);
  if (strings) {
    for (size_t i = 0; i < count; ++i) h.strings.emplace_back(req.strings[i], req.string_lens[i]);
  } else if (req.nbytes > 0) {
    const char* p = static_cast<const char*>(req.data);
    h.data.assign(p, p + req.nbytes);
  }
  for (size_t i = 0; i < req.n_collections; ++i) h.collections.emplace_back(req.collections[i]);
  held_saves_.push_back(std::move(h));
  return Status::Ok();
}

Result<bool> Hook::PlanLocked(const SaveRequest& req, size_t count, TensorJob* out) {
  TensorJob& job = *out;
  const bool strings = req.dtype == DType::kString;
  std::string name(req.name);
  // One hash lookup per save: a name seen for the first time is checked once.
  auto [name_it, first_time] = names_.try_emplace(name);
  if (first_time && (name.empty() || !IsValidUtf8(name))) {
    names_.erase(name_it);
    return InvalidArgument(name.empty() ? "tensor name is empty" : "tensor name is not valid UTF-8");
  }
  for (size_t i = 0; i < req.n_collections; ++i) {
    size_t idx = GetOrCreateLocked(req.collections[i]);
    Collection& c = collections_[idx];
    bool changed = false;
    if (c.explicit_names.insert(name).second) {
      c.tensor_names.insert(name);
      changed = true;
    }
    if (!IsIncludedLocked(c)) {
      include_names_.insert(c.name);
      changed = true;
    }
    if (changed) InvalidateLocked();
  }
  bool raw = false, shape = false;
  ReductionList& reds = job.reductions;
  const Collection* tb_hist = nullptr;  // histogram: the first qualifying collection by name
  bool tb_scalar = false;
  const std::vector<uint32_t>& members = MembersLocked(name, name_it->second);
  if (!name_it->second.regex_error.ok()) {
    return name_it->second.regex_error.WithContext("tensor '" + name + "' was not saved");
  }
  for (uint32_t i : members) {
    if (!due_[i]) continue;
    const Collection& c = collections_[i];
    const ReductionConfig& rc = EffectiveReductionLocked(c);
    raw = raw || rc.save_raw_tensor;
    shape = shape || rc.save_shape;
    if (tensorboard_dir_) {
      if (IsScalarCollection(c.name)) {
        tb_scalar = true;
      } else if (c.save_histogram && !IsNonReductionCollection(c.name) &&
                 (tb_hist == nullptr || c.name < tb_hist->name)) {
        tb_hist = &c;
      }
    }
    if (IsScalarCollection(c.name)) continue;
    auto add = [&](const std::vector<ReductionOp>& ops, bool abs) {
      for (ReductionOp op : ops) reds.Add(op, abs);
    };
    add(rc.reductions(), false);
    add(rc.norms(), false);
    add(rc.abs_reductions(), true);
    add(rc.abs_norms(), true);
  }
  if (req.dtype == DType::kBool || count == 0) tb_hist = nullptr;
  tb_scalar = tb_scalar && count == 1;
  if (strings) {  // values only: no reductions or summaries of text (smdebug cannot make them)
    reds = ReductionList();
    tb_hist = nullptr;
    tb_scalar = false;
  }
  if (req.reductions_only) {
    if (raw || tb_scalar) {
      return InvalidState("tensor '" + name + "': its value is due at this step (" +
                          (raw ? std::string("a due collection saves raw tensors")
                               : std::string("a TensorBoard scalar summary is exported")) +
                          "): save the tensor itself");
    }
    if (tb_hist != nullptr) {
      if (req.histogram == nullptr) {
        return InvalidArgument("tensor '" + name +
                               "': a TensorBoard histogram of it is due at this step but none "
                               "was given");
      }
      const GivenHistogram& gh = *req.histogram;
      auto h = std::make_unique<tensorboard::Histogram>();
      Result<bool> any = tensorboard::HistogramFromCounts(gh.counts, gh.n_counts, count, gh.min,
                                                          gh.max, gh.sum, gh.sum_squares, h.get());
      if (!any.ok()) return any.status().WithContext("tensor '" + name + "', histogram");
      if (*any) {
        job.given_histogram = std::move(h);
      } else {
        tb_hist = nullptr;  // nothing within the buckets: no histogram, as when smd computes it
      }
    }
    job.given_reductions.reserve(reds.size());
    for (size_t ri = 0; ri < reds.size(); ++ri) {
      const ReductionName r = reds[ri];
      const GivenReduction* g = nullptr;
      for (size_t k = 0; k < req.n_given && g == nullptr; ++k) {
        if (req.given[k].name.op == r.op && req.given[k].name.abs == r.abs) g = &req.given[k];
      }
      const std::string rname = std::string(r.abs ? "abs_" : "") + ReductionOpName(r.op);
      if (g == nullptr) {
        return InvalidArgument("tensor '" + name + "': reduction " + rname +
                               " is due at this step but no value was given for it");
      }
      SMD_ASSIGN_OR_RETURN(DType rdt, ReductionResultDType(r.op, r.abs, req.dtype));
      Result<ReductionValue> v = ReductionValueFromDouble(rdt, g->value);
      if (!v.ok()) {
        return v.status().WithContext("tensor '" + name + "', reduction " + rname);
      }
      job.given_reductions.push_back(v.value());
    }
  }
  if (!raw && !shape && reds.empty() && tb_hist == nullptr && !tb_scalar) return false;
  if (!writes_) return false;
  if (tb_hist != nullptr) job.tb_histogram_tag = tb_hist->name + "/" + name;
  job.tb_scalar = tb_scalar;
  job.write_raw = raw;
  job.write_shape = shape;
  job.step = step_;
  job.mode = mode_;
  job.mode_step = mode_steps_[ModeIndex(mode_)].value_or(-1);
  job.wall_time = WallTime();
  job.name = std::move(name);
  step_with_data_ = step_;
  ever_saved_ = true;
  return true;
}

void Hook::CopyPayload(const SaveRequest& req, size_t count, DLManagedTensorVersioned*& managed,
                       TensorJob* out) {
  TensorJob& job = *out;
  const bool strings = req.dtype == DType::kString;
  job.dtype = req.dtype;
  job.shape.assign(req.shape, req.shape + req.ndim);
  job.num_elements = count;
  const bool need_data =
      !req.reductions_only && (job.write_raw || !job.reductions.empty() || job.tb_any());
  if (need_data && strings) {
    job.data = writer_->pool().Acquire(req.nbytes);
    job.string_ends.resize(count);
    size_t end = 0;
    for (size_t i = 0; i < count; ++i) {
      if (req.string_lens[i] > 0) std::memcpy(job.data.data() + end, req.strings[i], req.string_lens[i]);
      end += req.string_lens[i];
      job.string_ends[i] = end;
    }
  } else if (need_data && managed != nullptr) {
    DLManagedTensorVersioned* m = managed;
    managed = nullptr;
    job.data = writer_->pool().Adopt(m, static_cast<char*>(const_cast<void*>(req.data)), req.nbytes);
  } else if (need_data) {
    job.data = writer_->pool().Acquire(req.nbytes);
    if (req.nbytes > 0) CopyForHandOff(job.data.data(), req.data, req.nbytes);
  }
}

Status Hook::SaveScalar(const std::string& name, DType dtype, const void* value, double timestamp) {
  const DTypeInfo* info = GetDTypeInfo(static_cast<int>(dtype));
  if (info == nullptr || info->size == 0) {
    return InvalidArgument("scalar '" + name + "' has dtype " + std::to_string(static_cast<int>(dtype)) +
                           "; a scalar is one number or bool");
  }
  if (name.empty()) return InvalidArgument("scalar name is empty");
  if (!IsValidUtf8(name)) return InvalidArgument("scalar name is not valid UTF-8");
  if (!std::isfinite(timestamp)) {
    return InvalidArgument("scalar '" + name + "': the timestamp is not a finite number");
  }
  std::shared_lock<std::shared_mutex> gate(gate_);
  std::lock_guard<std::mutex> lock(mu_);
  SMD_RETURN_IF_ERROR(CheckOpenLocked());
  if (!writes_) return Status::Ok();
  SMD_RETURN_IF_ERROR(writer_->error());
  TensorJob job;
  job.step = step_;
  job.mode = mode_;
  job.mode_step = mode_steps_[ModeIndex(mode_)].value_or(-1);
  job.wall_time = timestamp != 0 ? timestamp : WallTime();
  job.name = "scalar/" + name;
  job.dtype = dtype;
  job.shape = {1};
  job.num_elements = 1;
  job.write_raw = true;
  job.tb_scalar = tensorboard_dir_.has_value() && dtype != DType::kComplex64 &&
                  dtype != DType::kComplex128;
  // Outside the budget: a scalar is held by the hook until its step ends, which a saver waiting
  // for budget (this thread, or another holding the step lock) would keep from happening.
  job.data = BufferPool::Unbudgeted(info->size);
  std::memcpy(job.data.data(), value, info->size);
  if (!in_step_.load(std::memory_order_relaxed)) {  // held for the next step (stamped then)
    held_scalar_restamp_.push_back(timestamp == 0 && wall_time_base_ != 0);
    held_scalars_.push_back(std::move(job));
    return Status::Ok();
  }
  pending_scalars_.push_back(std::move(job));
  step_with_data_ = step_;
  ever_saved_ = true;
  return Status::Ok();
}

// ------------------------------------------------------------------------------------------
// Collections

size_t Hook::GetOrCreateLocked(const std::string& name) {
  auto it = by_name_.find(name);
  if (it != by_name_.end()) return it->second;
  Collection c;
  c.name = name;
  collections_.push_back(std::move(c));
  by_name_[name] = collections_.size() - 1;
  ++generation_;
  due_.push_back(0);
  return collections_.size() - 1;
}

Result<size_t> Hook::GetCollection(const std::string& name) {
  if (name.empty()) return InvalidArgument("collection name is empty");
  if (!IsValidUtf8(name)) return InvalidArgument("collection name is not valid UTF-8");
  std::lock_guard<std::mutex> lock(mu_);
  size_t before = collections_.size();
  size_t idx = GetOrCreateLocked(name);
  if (collections_.size() != before) InvalidateLocked();
  return idx;
}

std::string Hook::CollectionName(size_t idx) const {
  std::lock_guard<std::mutex> lock(mu_);
  return collections_.at(idx).name;
}

std::vector<std::string> Hook::CollectionNames() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> out;
  for (const Collection& c : collections_) out.push_back(c.name);
  return out;
}

Status Hook::IncludeCollection(const std::string& name) {
  if (name.empty()) return InvalidArgument("collection name is empty");
  if (!IsValidUtf8(name)) return InvalidArgument("collection name is not valid UTF-8");
  std::lock_guard<std::mutex> lock(mu_);
  SMD_RETURN_IF_ERROR(CheckOpenLocked());
  GetOrCreateLocked(name);
  include_names_.insert(name);
  InvalidateLocked();
  return Status::Ok();
}

Status Hook::MakeDue(const std::string& name) {
  std::unique_lock<std::shared_mutex> g(gate_);
  std::lock_guard<std::mutex> lock(mu_);
  SMD_RETURN_IF_ERROR(CheckOpenLocked());
  if (!in_step_.load(std::memory_order_relaxed)) return InvalidState(NoStepOpenLocked());
  auto it = by_name_.find(name);
  if (it == by_name_.end()) return NotFound("no collection named '" + name + "'");
  made_due_.resize(collections_.size(), 0);  // collections created since the step began
  made_due_[it->second] = 1;
  RecomputeDueLocked();
  return Status::Ok();
}

Status Hook::CollectionIncludeRegex(size_t idx, const std::string& regex) {
  SMD_ASSIGN_OR_RETURN(auto re, Regex::Compile(regex));
  std::lock_guard<std::mutex> lock(mu_);
  SMD_RETURN_IF_ERROR(CheckOpenLocked());
  collections_.at(idx).regexes.push_back(std::move(re));
  InvalidateLocked();
  return Status::Ok();
}

Status Hook::CollectionClearIncludeRegex(size_t idx) {
  std::lock_guard<std::mutex> lock(mu_);
  SMD_RETURN_IF_ERROR(CheckOpenLocked());
  collections_.at(idx).regexes.clear();
  InvalidateLocked();
  return Status::Ok();
}

Status Hook::CollectionAddTensorName(size_t idx, const std::string& name) {
  if (name.empty()) return InvalidArgument("tensor name is empty");
  if (!IsValidUtf8(name)) return InvalidArgument("tensor name is not valid UTF-8");
  std::lock_guard<std::mutex> lock(mu_);
  SMD_RETURN_IF_ERROR(CheckOpenLocked());
  Collection& c = collections_.at(idx);
  c.explicit_names.insert(name);
  c.tensor_names.insert(name);
  InvalidateLocked();
  return Status::Ok();
}

Status Hook::CollectionSetSaveConfig(size_t idx, const std::optional<SaveConfig>& cfg) {
  std::lock_guard<std::mutex> lock(mu_);
  SMD_RETURN_IF_ERROR(CheckOpenLocked());
  collections_.at(idx).save_config = cfg;
  InvalidateLocked();
  return Status::Ok();
}

Status Hook::CollectionSetReductionConfig(size_t idx, const std::optional<ReductionConfig>& cfg) {
  std::lock_guard<std::mutex> lock(mu_);
  SMD_RETURN_IF_ERROR(CheckOpenLocked());
  collections_.at(idx).reduction_config = cfg;
  InvalidateLocked();
  return Status::Ok();
}

Status Hook::CollectionSetSaveHistogram(size_t idx, bool save) {
  std::lock_guard<std::mutex> lock(mu_);
  SMD_RETURN_IF_ERROR(CheckOpenLocked());
  collections_.at(idx).save_histogram = save;
  return Status::Ok();
}

Result<std::vector<std::string>> Hook::CollectionTensorNames(size_t idx) const {
  std::lock_guard<std::mutex> lock(mu_);
  const Collection& c = collections_.at(idx);
  return std::vector<std::string>(c.tensor_names.begin(), c.tensor_names.end());
}

std::string Hook::CollectionsJsonLocked() const {
  std::vector<trial::CollectionsFileEntry> entries(collections_.size());
  for (size_t i = 0; i < collections_.size(); ++i) {
    const Collection& c = collections_[i];
    trial::CollectionsFileEntry& e = entries[i];
    e.name = c.name;
    for (const auto& r : c.regexes) e.include_regex.push_back(r->pattern());
    e.tensor_names.assign(c.tensor_names.begin(), c.tensor_names.end());
    EffectiveReductionLocked(c).AppendJson(&e.reduction_config_json);
    for (size_t m = 0; m < kNumModes; ++m) {
      EffectiveSaveLocked(c, kAllModesInOrder[m]).AppendJson(&e.save_config_json[m]);
    }
    e.save_histogram = !IsNonReductionCollection(c.name) && c.save_histogram;
  }
  return trial::BuildCollectionsJson(entries, include_all_workers_ ? num_workers_ : 1);
}

void Hook::ExportCollectionsLocked() {
  writer_->WriteFile(io::CollectionsFileRelPath(worker_), CollectionsJsonLocked());
  collections_exported_ = true;
}

WriterStats Hook::writer_stats() const { return writer_ ? writer_->stats() : WriterStats(); }

}  // namespace smd::hook
