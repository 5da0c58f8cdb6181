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
#include "impl/trial/index_parser.h"
#include "impl/trial/record_cache.h"
#include "impl/trial/watcher.h"

namespace smd::trial {

// ---------------------------------------------------------------------------------------------
// Errors with smdebug's messages (BEHAVIOR.md §8)

Status TensorUnavailableForStepError(const std::string& tensor, int64_t step, Mode mode,
                                     bool has_reductions) {
  std::string m = "Value for tensor " + tensor + " is not available for step " +
                  std::to_string(step) + " with mode " + ModeName(mode) + " as it was not saved.";
  if (has_reductions) {
    m += " This tensor has reductions saved for this step. You might want to query for the "
         "reductions.";
  }
  return Status(Code::kTensorUnavailableForStep, m);
}
Status TensorUnavailableError(const std::string& tensor) {
  return Status(Code::kTensorUnavailable, "Tensor " + tensor + " was not saved.");
}
Status StepUnavailableError(int64_t step, Mode mode) {
  return Status(Code::kStepUnavailable, "Step " + std::to_string(step) + " of mode " +
                                            ModeName(mode) + " is not available as it was not saved");
}
Status StepNotYetAvailableError(int64_t step, Mode mode) {
  return Status(Code::kStepNotYetAvailable,
                "Step " + std::to_string(step) + " of mode " + ModeName(mode) + " not yet available");
}
Status NoMoreDataError(int64_t step, Mode mode, int64_t last_step) {
  return Status(Code::kNoMoreData, "Looking for step " + std::to_string(step) + " of mode " +
                                       ModeName(mode) +
                                       " and reached end of training. Max step available is " +
                                       std::to_string(last_step));
}
Status ShapeUnavailableForStepError(const std::string& tensor, int64_t step, Mode mode) {
  return Status(Code::kShapeUnavailableForStep,
                "Shape for tensor " + tensor + " is not available for step " + std::to_string(step) +
                    " with mode " + ModeName(mode) + " as it was not saved.");
}
Status InvalidWorkerError(const std::string& worker) {
  return Status(Code::kInvalidWorker, "Invalid Worker: " + worker);
}
Status MissingCollectionFilesError(const std::string& detail) {
  return Status(Code::kMissingCollectionFiles,
                "Training job has ended. All the collection files could not be loaded" +
                    (detail.empty() ? std::string() : " (" + detail + ")"));
}

// ---------------------------------------------------------------------------------------------
// Internal tables

namespace {

constexpr uint32_t kNone = UINT32_MAX;
constexpr std::string_view kReductionPrefix = "smdebug/reductions/";
constexpr size_t kApplyChunk = 64;             // index files applied under one lock
constexpr size_t kParseAhead = 256;            // index files read ahead of parsing and applying
static_assert(kParseAhead >= kApplyChunk, "a chunk's files are read into distinct slots");
constexpr size_t kParallelMinFiles = 48;       // fewer: read on the calling thread
constexpr size_t kParallelMinValues = 32;      // values() reads fewer on the calling thread
constexpr size_t kParallelBlock = 16;          // values() a thread reads at a time
constexpr uint64_t kSmallEventFile = 256 << 10;  // event files read (and cached) whole
constexpr uint64_t kScratchRecordMax = 64 << 10;  // records read into a per-thread buffer
constexpr size_t kRecordHeadBytes = 4096;      // read to learn a large record's dtype and shape
constexpr uint64_t kWholeRecordInfoMax = 64 << 10;  // smaller records are decoded whole for that
constexpr int kWaitSliceMs = 100;              // longest sleep between checks while waiting
constexpr int kTrustedRelistEvery = 10;        // with events: list anyway every N slices

using Clock = std::chrono::steady_clock;

// A reduction record's tag: "smdebug/reductions/[abs_]<reduction>/<tensor>". Only a tag that
// starts with the prefix is one (smdebug also misreads names that merely contain it).
bool ParseReductionTag(std::string_view tag, std::string_view* base, std::string_view* red,
                       bool* abs) {
  if (tag.size() <= kReductionPrefix.size() ||
      tag.compare(0, kReductionPrefix.size(), kReductionPrefix) != 0) {
    return false;
  }
  std::string_view rest = tag.substr(kReductionPrefix.size());
  size_t slash = rest.find('/');
  if (slash == std::string_view::npos || slash == 0 || slash + 1 == rest.size()) return false;
  std::string_view part = rest.substr(0, slash);
  *base = rest.substr(slash + 1);
  if (part.size() > 4 && part.compare(0, 4, "abs_") == 0) {
    *abs = true;
    *red = part.substr(4);
  } else {
    *abs = false;
    *red = part;
  }
  return true;
}

std::string ReductionTagOf(std::string_view red, bool abs, std::string_view base) {
  std::string t(kReductionPrefix);
  if (abs) t += "abs_";
  t.append(red.data(), red.size());
  t += '/';
  t.append(base.data(), base.size());
  return t;
}

// smdebug's TF device (de)serialization of worker names in file names.
std::string DeserializeWorker(std::string w) {
  for (char& c : w) {
    if (c == '_') c = '/';
    else if (c == '-') c = ':';
  }
  return w;
}
std::string SerializeWorker(std::string w) {
  for (char& c : w) {
    if (c == '/') c = '_';
    else if (c == ':') c = '-';
  }
  return w;
}

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string_view BaseName(std::string_view p) {
  size_t slash = p.rfind('/');
  return slash == std::string_view::npos ? p : p.substr(slash + 1);
}

// event_file_name must stay inside the trial: relative, no "..", no NUL.
bool IsSafeRelativePath(std::string_view p) {
  if (p.empty() || p[0] == '/') return false;
  size_t start = 0;
  while (start <= p.size()) {
    size_t end = p.find('/', start);
    if (end == std::string_view::npos) end = p.size();
    if (p.substr(start, end - start) == "..") return false;
    start = end + 1;
  }
  return p.find('\0') == std::string_view::npos;
}

uint64_t HashDims(const int64_t* dims, uint32_t n) {
  uint64_t h = 1469598103934665603ull ^ n;
  for (uint32_t i = 0; i < n; ++i) {
    h ^= static_cast<uint64_t>(dims[i]);
    h *= 1099511628211ull;
    h ^= h >> 31;
  }
  return h;
}

int64_t WindowFromEnv() {
  const char* v = std::getenv("SMDEBUG_INCOMPLETE_STEP_WAIT_WINDOW");
  if (v != nullptr) {
    std::optional<int64_t> n = ParseInt64(v);
    if (n && *n >= 0) return *n;
  }
  return 1000;
}

// Runs fn(i) for i in [begin, end) on up to `max_threads` threads (the caller's included) when
// there are at least min_items items; otherwise on the calling thread. Threads take `block`
// consecutive items at a time (so that what they write next to each other is not written by two
// threads at once). An exception thrown by fn (bad_alloc) stops the work and is rethrown on the
// calling thread.
template <typename Fn>
void ParallelFor(size_t begin, size_t end, size_t min_items, unsigned max_threads, size_t block,
                 Fn fn) {
  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  const unsigned threads = end - begin >= min_items ? std::min(hw, max_threads) : 1;
  if (threads <= 1) {
    for (size_t i = begin; i < end; ++i) fn(i);
    return;
  }
  std::atomic<size_t> next{begin};
  std::mutex error_mu;
  std::exception_ptr error;
  auto work = [&] {
    try {
      for (size_t b; (b = next.fetch_add(block)) < end;) {
        for (size_t i = b; i < std::min(end, b + block); ++i) fn(i);
      }
    } catch (...) {
      next.store(end);
      std::lock_guard<std::mutex> lock(error_mu);
      if (!error) error = std::current_exception();
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(threads - 1);
  for (unsigned k = 1; k < threads; ++k) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

// Does work(i) for every i in [0, n) on helper threads, in order and at most `lookahead` items
// ahead of what the caller has consumed, while the caller takes the results in order: Get(i)
// returns once item i is done, and does it on the calling thread when no helper has started it
// (so the caller never waits for an idle helper). An exception thrown by work() stops the helpers
// and is rethrown by Get().
template <typename Work>
class InOrderPipeline {
 public:
  InOrderPipeline(size_t n, size_t lookahead, unsigned helpers, Work work)
      : n_(n), lookahead_(lookahead), work_(std::move(work)),
        state_(new std::atomic<uint8_t>[n == 0 ? 1 : n]()) {
    for (unsigned k = 0; k < helpers; ++k) threads_.emplace_back([this] { Help(); });
  }
  ~InOrderPipeline() {
    stop_.store(true);
    Notify();
    for (std::thread& t : threads_) t.join();
  }
  InOrderPipeline(const InOrderPipeline&) = delete;
  InOrderPipeline& operator=(const InOrderPipeline&) = delete;

  void Get(size_t i) {
    uint8_t expected = kTodo;
    if (state_[i].compare_exchange_strong(expected, kRunning)) {
      work_(i);  // an exception goes straight to the caller
      state_[i].store(kDone);
      return;
    }
    // A helper is doing it, and will be done within microseconds: spin a little before sleeping
    // (a futex sleep and wake-up cost about as much as parsing a file).
    for (int k = 0; k < kSpins && !stop_.load(); ++k) {
      if (state_[i].load() == kDone) return;
      CpuRelax();
    }
    // Waiters announce themselves, so that the helpers take the lock and notify only when
    // someone waits.
    std::unique_lock<std::mutex> lock(mu_);
    waiters_.fetch_add(1);
    cv_.wait(lock, [&] { return state_[i].load() == kDone || stop_.load(); });
    waiters_.fetch_sub(1);
    if (error_) std::rethrow_exception(error_);  // (stop_ is only set early by an error)
  }

  // Items before `count` are consumed: the helpers may run further ahead.
  void Consumed(size_t count) {
    consumed_.store(count);
    Notify();
  }

 private:
  static constexpr uint8_t kTodo = 0, kRunning = 1, kDone = 2;
  static constexpr int kSpins = 20000;  // about 50-100 us

  static void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
  }

  // Wakes the waiters, if any. Sequentially consistent: a waiter registers, then checks its
  // condition; this runs after the condition changed, then looks for waiters.
  void Notify() {
    if (waiters_.load() == 0) return;
    std::lock_guard<std::mutex> lock(mu_);
    cv_.notify_all();
  }

  void Help() {
    for (;;) {
      size_t i = next_.load();
      if (i >= n_ || stop_.load()) return;
      if (i >= consumed_.load() + lookahead_) {  // far enough ahead: wait for the consumer
        std::unique_lock<std::mutex> lock(mu_);
        waiters_.fetch_add(1);
        cv_.wait(lock, [&] { return stop_.load() || next_.load() < consumed_.load() + lookahead_; });
        waiters_.fetch_sub(1);
        continue;
      }
      if (!next_.compare_exchange_weak(i, i + 1)) continue;
      uint8_t expected = kTodo;
      if (!state_[i].compare_exchange_strong(expected, kRunning)) continue;  // the caller took it
      try {
        work_(i);
      } catch (...) {  // item i stays unfinished; Get(i) rethrows
        {
          std::lock_guard<std::mutex> lock(mu_);
          if (!error_) error_ = std::current_exception();
        }
        stop_.store(true);
        Notify();
        return;
      }
      state_[i].store(kDone);
      Notify();
    }
  }

  const size_t n_, lookahead_;
  Work work_;
  std::unique_ptr<std::atomic<uint8_t>[]> state_;
  std::vector<std::thread> threads_;
  std::atomic<size_t> next_{0};      // the next item a helper takes
  std::atomic<size_t> consumed_{0};  // items the caller is done with
  std::atomic<bool> stop_{false};
  std::atomic<int> waiters_{0};
  std::mutex mu_;
  std::condition_variable cv_;
  std::exception_ptr error_;  // guarded by mu_
};

// Sleeps for a short poll slice: 5 ms doubling to kWaitSliceMs, never past the deadline.
void ShortPoll(int* slice_ms, std::optional<Clock::time_point> deadline) {
  int ms = *slice_ms;
  if (deadline) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - Clock::now()).count();
    if (left < ms) ms = left > 0 ? static_cast<int>(left) : 0;
  }
  if (ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(ms));
  *slice_ms = std::min(*slice_ms * 2, kWaitSliceMs);
}

}  // namespace

struct Trial::StepEntry {
  int64_t mode_step;
  uint32_t worker;
  uint32_t file;  // kNone: no raw value location
  uint64_t offset;
  uint64_t length;
  uint32_t shape;  // kNone: no saved shape
  uint32_t reserved;
};

struct Trial::RedEntry {
  int64_t mode_step;
  uint32_t worker;
  uint16_t red;
  uint8_t abs;
  uint8_t reserved;
  uint32_t file;
  uint32_t reserved2;
  uint64_t offset;
  uint64_t length;
};

struct Trial::TensorData {
  std::string name;
  std::vector<StepEntry> by_mode[kNumModes];  // sorted by (mode_step, worker id)
  std::vector<RedEntry> reds[kNumModes];      // sorted by (mode_step, worker id, red, abs)
  uint8_t mode_mask = 0;
};

struct Trial::StepInfo {
  Mode mode = Mode::kGlobal;  // of the first index file seen for the step
  int64_t mode_step = 0;
  std::vector<uint32_t> workers;  // sorted ids of the workers with an index file for it
  std::vector<uint32_t> tensors;  // sorted ids of the tensors saved at it
};

struct Trial::Found {
  Mode mode = Mode::kGlobal;
  int64_t mode_step = 0;
  StepEntry entry{};
  std::vector<RedEntry> reds;
};

// Where an index file is read and parsed. A refresh keeps a ring of these (as many as files may
// be parsed ahead) and reuses their buffers: no allocation per file in the steady state, and none
// freed on another thread than the one that allocated it (which made malloc's arena locks the
// bottleneck of opening with helper threads).
struct Trial::ParseSlot {
  std::string text;
  ParsedIndex parsed;  // views into text
};

struct Trial::PendingFile {
  std::string rel;
  int64_t step = 0;
  std::string worker;
  ParseSlot* slot = nullptr;  // set when it was parsed
  Status status;
  bool gone = false;  // vanished between listing and reading
};

struct Trial::Prediction {
  uint32_t tensor = kNone;
  uint32_t red = kNone;  // kNone: a raw tensor entry
  bool abs = false;
};

// ---------------------------------------------------------------------------------------------
// Opening

Trial::Trial(std::string path, std::unique_ptr<io::Storage> storage, const TrialOptions& options)
    : path_(std::move(path)), storage_(std::move(storage)), options_(options) {
  window_ = options.incomplete_step_window >= 0 ? options.incomplete_step_window : WindowFromEnv();
  auto_refresh_ = options.auto_refresh;
  cache_ = std::make_unique<RecordCache>(options.cache_bytes);
  if (options.watch) watcher_ = DirWatcher::Create(path_);
}

Trial::~Trial() = default;

Result<std::shared_ptr<Trial>> Trial::Open(const std::string& raw_path, const TrialOptions& options) {
  std::string path(StripAscii(raw_path));
  if (path.empty()) return InvalidArgument("empty trial path");
  SMD_ASSIGN_OR_RETURN(std::unique_ptr<io::Storage> storage, io::Storage::Open(path));
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
  SMD_ASSIGN_OR_RETURN(bool exists, storage->Exists(""));
  if (!exists) return NotFound("trial folder '" + storage->root() + "' does not exist");
  std::string root = storage->root();
  std::shared_ptr<Trial> t(new Trial(root, std::move(storage), options));
  SMD_RETURN_IF_ERROR(t->LoadCollections());
  {
    std::lock_guard<std::mutex> lock(t->refresh_mu_);
    if (t->watcher_) t->watcher_->ConsumeChanges();
    SMD_RETURN_IF_ERROR(t->RefreshLocked(nullptr));
  }
  return t;
}

Result<std::vector<std::string>> Trial::ListCollectionFiles() {
  static const std::string kDir = "collections/000000000";
  if (watcher_) {
    watcher_->Watch(storage_->Describe(""));
    watcher_->Watch(storage_->Describe("collections"));
    watcher_->Watch(storage_->Describe(kDir));
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

Status Trial::LoadCollections() {
  const std::optional<Clock::time_point> deadline =
      Clock::now() + std::chrono::milliseconds(options_.collection_wait_ms);
  WaitState wait;
  auto wait_for_change = [&] {  // then list again, whatever it says
    AwaitChange(deadline, &wait);
    if (watcher_) watcher_->ConsumeChanges();  // (a pending event would end every later wait)
  };
  const std::string where = storage_->Describe("collections/000000000");

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
  while (static_cast<int64_t>(files.size()) < num_workers_) {
    SMD_ASSIGN_OR_RETURN(bool ended, storage_->Exists(io::kEndOfJobFile));
    if (ended) {
      return MissingCollectionFilesError(std::to_string(files.size()) + " collection file(s) in '" +
                                         where + "' but _meta.num_workers is " +
                                         std::to_string(num_workers_));
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
  std::unique_lock<std::shared_mutex> lock(mu_);
  collections_ = std::move(parsed.collections);
  num_workers_ = parsed.num_workers.value_or(1);
  return Status::Ok();
}

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

bool Trial::SetAutoRefresh(bool on) { return auto_refresh_.exchange(on); }

bool Trial::loaded_all_steps() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  return loaded_all_;
}

int64_t Trial::last_complete_step() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  return last_complete_step_;
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
  if (!auto_refresh_.load()) return Status::Ok();
  {
    std::shared_lock<std::shared_mutex> lock(mu_);
    if (loaded_all_) return Status::Ok();
  }
  std::lock_guard<std::mutex> lock(refresh_mu_);
  {
    std::shared_lock<std::shared_mutex> l(mu_);
    if (loaded_all_) return Status::Ok();
  }
  // With trusted change events, nothing pending means nothing new: skip the listing.
  if (watcher_ && !watcher_->ConsumeChanges()) return Status::Ok();
  return RefreshLocked(nullptr);
}

Status Trial::RefreshLocked(Status* first_problem) {
  // The end marker is checked before listing: everything written before it is then visible.
  SMD_ASSIGN_OR_RETURN(bool ended, storage_->Exists(io::kEndOfJobFile));
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

Result<std::vector<Trial::PendingFile>> Trial::ListNewIndexFiles(bool* listed_any) {
  *listed_any = false;
  std::vector<PendingFile> out;
  if (watcher_) {
    watcher_->Watch(storage_->Describe(""));
    watcher_->Watch(storage_->Describe("index"));
  }
  auto dirs = storage_->ListDir("index");
  if (!dirs.ok()) {
    if (dirs.status().code() == Code::kNotFound) return out;
    return dirs.status();
  }
  // Folders in the order of the paths under them ("index/<d>/..."), names sorted within each:
  // the files come out in path order without sorting them afterwards.
  std::sort(dirs->begin(), dirs->end(),
            [](const std::string& a, const std::string& b) { return a + '/' < b + '/'; });
  // Files sort before `floor` are not listed again: those before the cursor, and (a pure
  // shortcut) those of steps before range_steps' begin, which are never read.
  std::string floor = cursor_;
  if (options_.range_begin > 0) {
    std::string range_floor =
        io::IndexDirRelPath(options_.range_begin) + ZeroPad(options_.range_begin, 12);
    if (range_floor > floor) floor = std::move(range_floor);
  }
  std::string cursor_dir;
  if (!floor.empty()) {
    size_t a = floor.find('/');
    size_t b = floor.find('/', a + 1);
    cursor_dir = floor.substr(a + 1, b - a - 1);
  }
  ++listings_;
  for (const std::string& d : dirs.value()) {
    if (d < cursor_dir) continue;  // every path in it sorts before the cursor
    const std::string dir_rel = "index/" + d;
    if (watcher_) watcher_->Watch(storage_->Describe(dir_rel));
    auto names = storage_->ListDir(dir_rel);
    if (!names.ok()) continue;  // vanished, or not a folder
    std::sort(names->begin(), names->end());
    for (const std::string& name : names.value()) {
      if (name.size() <= 5 || !EndsWith(name, ".json")) continue;
      std::string rel = dir_rel + "/" + name;
      if (rel < floor) {
        if (rel >= cursor_) *listed_any = true;  // listed by smdebug, skipped by the range
        continue;
      }
      *listed_any = true;
      if (read_files_.count(rel)) continue;
      std::optional<int64_t> step = io::StepFromFileName(name);
      std::optional<std::string> worker = io::WorkerFromFileName(name);
      if (!step || !worker || worker->empty()) {
        AddWarning("skipped index file '" + storage_->Describe(rel) +
                   "': its name is not <step>_<worker>.json");
        read_files_.insert(rel);
        continue;
      }
      if ((options_.range_begin >= 0 && *step < options_.range_begin) ||
          (options_.range_end >= 0 && *step >= options_.range_end)) {
        continue;  // outside range_steps: never read (and not remembered, as in smdebug)
      }
      PendingFile f;
      f.rel = std::move(rel);
      f.step = *step;
      f.worker = (*worker)[0] == '_' ? DeserializeWorker(std::move(*worker)) : std::move(*worker);
      out.push_back(std::move(f));
    }
  }
  return out;
}

Status Trial::ListAndLoadIndex(Status* first_problem, bool live) {
  bool listed_any = false;
  SMD_ASSIGN_OR_RETURN(std::vector<PendingFile> files, ListNewIndexFiles(&listed_any));

  // Files are read at most kParseAhead ahead of the one applied, so file i can use slot
  // i % slots.size(): the file that used it before has been applied.
  std::vector<ParseSlot> slots(std::min(files.size(), kParseAhead));
  auto read_one = [this, &slots](PendingFile& f, size_t i) {
    ParseSlot& slot = slots[i % slots.size()];
    f.slot = &slot;
    Status read = storage_->ReadAllInto(f.rel, &slot.text);
    if (!read.ok()) {
      if (read.code() == Code::kNotFound) {
        f.gone = true;
      } else {
        f.status = read;
      }
    }
  };
  auto parse_one = [this](PendingFile& f) {
    if (f.gone || !f.status.ok()) return;
    ParsedIndex& parsed = f.slot->parsed;
    Status st = ParseIndexFile(f.slot->text, &parsed);
    if (st.ok() && parsed.mode_step < 0) {
      st = Corrupt("mode step " + std::to_string(parsed.mode_step) + " can not be less than 0");
    }
    if (st.ok() && parsed.has_event_file_name && !parsed.tensors.empty() &&
        !IsSafeRelativePath(parsed.event_file_name)) {
      st = Corrupt("event_file_name '" + std::string(parsed.event_file_name) +
                   "' is not a path inside the trial");
    }
    if (!st.ok()) {
      f.status = Status(st.code(), "index file '" + storage_->Describe(f.rel) + "': " + st.message());
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
        if (f.gone) continue;
        read_files_.insert(f.rel);
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
        if (f.gone || !f.status.ok()) continue;
        ++index_files_read_;
        ApplyIndexFile(f.slot->parsed, resolved[k++], f.step, f.worker);
      }
    }
    pipe.Consumed(end);
    for (const std::string& p : problems) AddWarning("skipped " + p);
  }
  if (!grown.empty()) {
    std::unique_lock<std::shared_mutex> lock(mu_);
    ShrinkTables(grown);
  }
  if (listed_any || !cursor_.empty()) {
    std::unique_lock<std::shared_mutex> lock(mu_);
    UpdateCursor();
  }
  if (!cursor_.empty()) {
    for (auto it = read_files_.begin(); it != read_files_.end();) {
      it = *it < cursor_ ? read_files_.erase(it) : std::next(it);
    }
  }
  return Status::Ok();
}

// BEHAVIOR.md §6.7: the cursor trails the last complete step; too many incomplete steps make the
// trial give up on the oldest half of them. Called with mu_ held exclusively.
void Trial::UpdateCursor() {
  if (worker_set_.empty()) return;
  const std::string last_worker = SerializeWorker(*worker_set_.rbegin());
  int64_t token_step = 0;
  if (!cursor_.empty()) token_step = io::StepFromFileName(BaseName(cursor_)).value_or(0);
  if (last_complete_step_ >= token_step) {
    cursor_ = io::IndexFileRelPath(last_complete_step_, last_worker);
  }
  if (static_cast<int64_t>(steps_.size()) - (last_complete_step_ + 1) > window_) {
    const int64_t step = last_complete_step_ + window_ / 2;
    cursor_ = io::IndexFileRelPath(step, last_worker);
    last_complete_step_ = step;
  }
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

// ---------------------------------------------------------------------------------------------
// Trial queries

bool Trial::IsCompleteLocked(int64_t g) const {
  if (loaded_all_ || last_complete_step_ >= g) return true;
  auto it = steps_.find(g);
  return it != steps_.end() && static_cast<int64_t>(it->second.workers.size()) == num_workers_;
}

std::vector<int64_t> Trial::StepsLocked(Mode mode, bool show_incomplete) const {
  std::vector<int64_t> out;
  if (mode == Mode::kGlobal) {
    out.reserve(steps_.size());
    for (const auto& kv : steps_) {
      if (show_incomplete || IsCompleteLocked(kv.first)) out.push_back(kv.first);
    }
  } else {
    for (const auto& kv : mode_to_global_[ModeIndex(mode)]) {
      if (show_incomplete || IsCompleteLocked(kv.second)) out.push_back(kv.first);
    }
  }
  return out;
}

Result<std::vector<int64_t>> Trial::Steps(Mode mode, bool show_incomplete) {
  SMD_RETURN_IF_ERROR(MaybeRefresh());
  std::shared_lock<std::shared_mutex> lock(mu_);
  return StepsLocked(mode, show_incomplete);
}

std::vector<Mode> Trial::Modes() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  std::vector<Mode> out;
  for (Mode m : {Mode::kTrain, Mode::kEval, Mode::kPredict}) {
    if (!mode_to_global_[ModeIndex(m)].empty()) out.push_back(m);
  }
  return out;
}

Result<std::vector<std::string>> Trial::Workers() {
  SMD_RETURN_IF_ERROR(MaybeRefresh());
  std::shared_lock<std::shared_mutex> lock(mu_);
  return std::vector<std::string>(worker_set_.begin(), worker_set_.end());
}

std::optional<int64_t> Trial::GlobalStepLocked(Mode mode, int64_t mode_step) const {
  if (mode == Mode::kGlobal) return mode_step;
  const auto& m = mode_to_global_[ModeIndex(mode)];
  auto it = m.find(mode_step);
  if (it == m.end()) return std::nullopt;
  return it->second;
}

Result<std::optional<int64_t>> Trial::GlobalStep(Mode mode, int64_t mode_step) {
  {
    std::shared_lock<std::shared_mutex> lock(mu_);
    if (auto g = GlobalStepLocked(mode, mode_step)) return std::optional<int64_t>(g);
  }
  SMD_RETURN_IF_ERROR(MaybeRefresh());
  std::shared_lock<std::shared_mutex> lock(mu_);
  return GlobalStepLocked(mode, mode_step);
}

Result<std::optional<std::pair<Mode, int64_t>>> Trial::ModeOf(int64_t global_step) {
  using R = std::optional<std::pair<Mode, int64_t>>;
  auto lookup = [&]() -> R {
    std::shared_lock<std::shared_mutex> lock(mu_);
    auto it = steps_.find(global_step);
    if (it == steps_.end()) return std::nullopt;
    return std::make_pair(it->second.mode, it->second.mode_step);
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
    for (uint32_t id = 0; id < tensors_.size(); ++id) {
      if (f.mode == Mode::kGlobal || (tensors_[id]->mode_mask & (1u << ModeIndex(f.mode)))) {
        ids.push_back(id);
      }
    }
  } else if (std::optional<int64_t> g = GlobalStepLocked(f.mode, *f.step)) {
    auto it = steps_.find(*g);
    if (it != steps_.end()) ids = it->second.tensors;
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
      const std::string& n = tensors_[id]->name;
      bool in = members.count(n) > 0;
      for (size_t k = 0; !in && k < regexes.size(); ++k) in = regexes[k]->Search(n);
      if (in) kept.push_back(id);
    }
    ids.swap(kept);
  } else if (!regexes.empty()) {
    std::vector<uint32_t> kept;
    for (uint32_t id : ids) {
      const std::string& n = tensors_[id]->name;
      for (const auto& re : regexes) {
        if (re->Search(n)) {
          kept.push_back(id);
          break;
        }
      }
    }
    ids.swap(kept);
  }
  std::vector<std::string> out;
  out.reserve(ids.size());
  for (uint32_t id : ids) out.push_back(tensors_[id]->name);
  std::sort(out.begin(), out.end());
  return out;
}

Result<bool> Trial::HasTensor(const std::string& name) {
  {
    std::shared_lock<std::shared_mutex> lock(mu_);
    if (tensor_ids_.count(name)) return true;
  }
  SMD_RETURN_IF_ERROR(MaybeRefresh());
  std::shared_lock<std::shared_mutex> lock(mu_);
  return tensor_ids_.count(name) > 0;
}

Result<uint32_t> Trial::TensorId(const std::string& name) {
  SMD_ASSIGN_OR_RETURN(bool has, HasTensor(name));
  if (!has) return TensorUnavailableError(name);
  std::shared_lock<std::shared_mutex> lock(mu_);
  return tensor_ids_.find(name)->second;
}

const std::string& Trial::TensorName(uint32_t id) const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  return tensors_[id]->name;  // TensorData never moves, so the reference stays valid
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

std::optional<std::pair<int64_t, int64_t>> Trial::StepAtOrAfterLocked(Mode mode, int64_t step) const {
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

int64_t Trial::LastStepLocked(Mode mode) const {
  if (mode == Mode::kGlobal) return steps_.empty() ? -1 : steps_.rbegin()->first;
  const std::map<int64_t, int64_t>& m = mode_to_global_[ModeIndex(mode)];
  return m.empty() ? -1 : m.rbegin()->first;
}

StepState Trial::HasPassedStepLocked(int64_t step, Mode mode) const {
  // The first step of the mode at or after `step`, and its global step (no copy of the step list:
  // this runs on every poll of wait_for_steps and on every miss of a value read).
  const auto at = StepAtOrAfterLocked(mode, step);
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

Result<StepState> Trial::HasPassedStep(int64_t step, Mode mode) {
  SMD_RETURN_IF_ERROR(MaybeRefresh());
  std::shared_lock<std::shared_mutex> lock(mu_);
  return HasPassedStepLocked(step, mode);
}

Status Trial::WaitForSteps(const std::vector<int64_t>& steps, Mode mode, int64_t timeout_ms) {
  // Refresh is on for the duration and restored afterwards (smdebug leaves it off).
  const bool previous = auto_refresh_.exchange(true);
  struct Restore {
    std::atomic<bool>& flag;
    bool value;
    ~Restore() { flag.store(value); }
  } restore{auto_refresh_, previous};

  std::optional<Clock::time_point> deadline;
  if (timeout_ms >= 0) deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  WaitState wait;
  for (int64_t step : steps) {
    for (;;) {
      SMD_ASSIGN_OR_RETURN(StepState s, HasPassedStep(step, mode));
      if (s == StepState::kAvailable) break;
      if (s == StepState::kUnavailable) {
        std::shared_lock<std::shared_mutex> lock(mu_);
        if (!loaded_all_) return StepUnavailableError(step, mode);
        const int64_t last = LastStepLocked(mode);
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
          done = loaded_all_;
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

// ---------------------------------------------------------------------------------------------
// Tensor queries

std::vector<int64_t> Trial::TensorStepsLocked(uint32_t id, Mode mode, bool show_incomplete) const {
  const TensorData& t = *tensors_[id];
  std::vector<int64_t> out;
  if (mode == Mode::kGlobal) {
    for (Mode m : kAllModesInOrder) {
      const auto& v = t.by_mode[ModeIndex(m)];
      for (size_t i = 0; i < v.size(); ++i) {
        if (i > 0 && v[i].mode_step == v[i - 1].mode_step) continue;
        std::optional<int64_t> g = GlobalStepLocked(m, v[i].mode_step);
        if (g && (show_incomplete || IsCompleteLocked(*g))) out.push_back(*g);
      }
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
  } else {
    const auto& v = t.by_mode[ModeIndex(mode)];
    for (size_t i = 0; i < v.size(); ++i) {
      if (i > 0 && v[i].mode_step == v[i - 1].mode_step) continue;
      if (!show_incomplete) {
        std::optional<int64_t> g = GlobalStepLocked(mode, v[i].mode_step);
        if (!g || !IsCompleteLocked(*g)) continue;
      }
      out.push_back(v[i].mode_step);
    }
  }
  return out;
}

Result<std::vector<int64_t>> Trial::TensorSteps(uint32_t id, Mode mode, bool show_incomplete) {
  SMD_RETURN_IF_ERROR(MaybeRefresh());
  std::shared_lock<std::shared_mutex> lock(mu_);
  return TensorStepsLocked(id, mode, show_incomplete);
}

int Trial::FindLocked(uint32_t id, int64_t step, Mode mode, const std::string* worker,
                      Found* out) const {
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
    if (it == steps_.end()) return 1;
    m = it->second.mode;
    ms = it->second.mode_step;
    r = range_of(m, ms);
  }
  if (r.first == r.second) return 1;
  const StepEntry* chosen = nullptr;
  for (auto it = r.first; it != r.second; ++it) {
    const std::string& wn = workers_[it->worker];
    if (worker != nullptr) {
      if (wn == *worker) chosen = &*it;
    } else if (chosen == nullptr || wn < workers_[chosen->worker]) {
      chosen = &*it;  // no worker given: the lexicographically smallest
    }
  }
  if (chosen == nullptr) return 2;
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
  return 0;
}

// BEHAVIOR.md §7.1, with NoMoreData raised properly.
Result<Trial::Found> Trial::Resolve(uint32_t id, int64_t step, Mode mode, const std::string* worker) {
  Found f;
  int rc;
  {
    std::shared_lock<std::shared_mutex> lock(mu_);
    rc = FindLocked(id, step, mode, worker, &f);
  }
  if (rc == 0) return f;
  if (rc == 2) return InvalidWorkerError(*worker);
  SMD_RETURN_IF_ERROR(MaybeRefresh());
  std::shared_lock<std::shared_mutex> lock(mu_);
  switch (HasPassedStepLocked(step, mode)) {
    case StepState::kAvailable:
      rc = FindLocked(id, step, mode, worker, &f);
      if (rc == 0) return f;
      if (rc == 2) return InvalidWorkerError(*worker);
      return TensorUnavailableForStepError(tensors_[id]->name, step, mode);
    case StepState::kUnavailable:
      return StepUnavailableError(step, mode);
    case StepState::kNotYetAvailable:
      if (loaded_all_) {
        const std::vector<int64_t> done = StepsLocked(mode, false);
        return NoMoreDataError(step, mode, done.empty() ? -1 : done.back());
      }
      return StepNotYetAvailableError(step, mode);
  }
  return Internal("unreachable step state");
}

Result<ValuePtr> Trial::ReadRecord(uint32_t file, uint64_t offset, uint64_t length,
                                   const std::string& tag, uint32_t tensor_id, int64_t step,
                                   Mode mode) {
  if (ValuePtr v = cache_->GetValue(file, offset)) return v;
  const std::string* rel;  // event_files_ never moves its strings
  uint64_t span;
  {
    std::shared_lock<std::shared_mutex> lock(mu_);
    rel = &event_files_[file];
    span = event_file_span_[file];
  }
  int reads = 0;
  auto value = ReadRecordAt(*rel, span, file, offset, length, tag, tensor_id, step, mode,
                            /*use_blocks=*/true, &reads);
  records_read_ += static_cast<uint64_t>(reads);
  if (value.ok()) cache_->PutValue(file, offset, value.value());
  return value;
}

Result<ValuePtr> Trial::ReadRecordAt(const std::string& rel, uint64_t span, uint32_t file,
                                     uint64_t offset, uint64_t length, const std::string& tag,
                                     uint32_t tensor_id, int64_t step, Mode mode, bool use_blocks,
                                     int* reads) {
  // Messages are built only on failure.
  auto context = [&](const Status& st) { return RecordError(rel, offset, st); };
  auto missing = [&]() { return MissingEventFileError(rel, tensor_id, step, mode); };
  if (length < io::kRecordOverhead) {
    return context(Corrupt("the index gives a record length of " + std::to_string(length) +
                           " bytes, less than the 16-byte framing"));
  }
  if (offset > static_cast<uint64_t>(INT64_MAX) - length) {
    return context(Corrupt("the index gives a record beyond any file size"));
  }
  std::string_view record;
  std::shared_ptr<const std::string> block;
  std::unique_ptr<char[]> own;  // a large record (no zero-filling)
  if (use_blocks && span <= kSmallEventFile && offset + length <= span && cache_->capacity() > 0) {
    block = cache_->GetBlock(file);
    if (!block && cache_->TouchFile(file)) {
      std::string b(static_cast<size_t>(span), '\0');
      Status st = storage_->ReadRange(rel, 0, span, b.data());
      ++*reads;
      if (st.ok()) {
        block = std::make_shared<const std::string>(std::move(b));
        cache_->PutBlock(file, block);
      } else if (st.code() == Code::kNotFound) {
        return missing();
      }  // else: read just the record below, for a precise error
    }
    if (block) record = std::string_view(*block).substr(offset, length);
  }
  if (record.empty()) {
    if (length > (uint64_t(1) << 24)) {
      // A large record: check the file really holds it before allocating that much.
      auto size = storage_->FileSize(rel);
      if (!size.ok()) return size.status().code() == Code::kNotFound ? missing() : context(size.status());
      if (offset > size.value() || length > size.value() - offset) {
        return context(Corrupt("the record ends at byte " + std::to_string(offset + length) +
                               " but the file has " + std::to_string(size.value()) + " bytes"));
      }
    }
    // Small records go through a buffer each thread keeps; the value is decoded out of it
    // before the next read on this thread.
    thread_local std::string scratch;
    char* buf;
    if (length <= kScratchRecordMax) {
      if (scratch.size() < length) scratch.resize(static_cast<size_t>(length));
      buf = scratch.data();
    } else {
      own.reset(new char[static_cast<size_t>(length)]);
      buf = own.get();
    }
    Status st = storage_->ReadRange(rel, offset, length, buf);
    ++*reads;
    if (!st.ok()) return st.code() == Code::kNotFound ? missing() : context(st);
    record = std::string_view(buf, static_cast<size_t>(length));
  }
  auto payload = io::ParseRecord(record);
  if (!payload.ok()) return context(payload.status());
  auto value = DecodeValue(payload.value(), tag);
  if (!value.ok()) return context(value.status());
  return value;
}

Status Trial::RecordError(const std::string& rel, uint64_t offset, const Status& st) const {
  return Status(st.code(), "event file '" + storage_->Describe(rel) + "', record at offset " +
                               std::to_string(offset) + ": " + st.message());
}

Status Trial::MissingEventFileError(const std::string& rel, uint32_t tensor_id, int64_t step,
                                    Mode mode) const {
  Status st = TensorUnavailableForStepError(TensorName(tensor_id), step, mode);
  return Status(st.code(), st.message() + " (its event file '" + storage_->Describe(rel) +
                               "' is missing)");
}

Result<std::optional<Trial::ValueInfo>> Trial::ReadRecordHead(uint32_t file, uint64_t offset,
                                                              uint64_t length,
                                                              const std::string& tag,
                                                              uint32_t tensor_id, int64_t step,
                                                              Mode mode) {
  const std::string* rel_ptr;  // event_files_ never moves its strings
  {
    std::shared_lock<std::shared_mutex> lock(mu_);
    rel_ptr = &event_files_[file];
  }
  const std::string& rel = *rel_ptr;
  if (length <= kRecordHeadBytes || offset > static_cast<uint64_t>(INT64_MAX) - length) {
    return std::optional<ValueInfo>();  // the whole read reports it
  }
  char head[kRecordHeadBytes];
  Status st = storage_->ReadRange(rel, offset, kRecordHeadBytes, head);
  ++records_read_;
  if (!st.ok()) {
    if (st.code() == Code::kNotFound) return MissingEventFileError(rel, tensor_id, step, mode);
    return RecordError(rel, offset, st);
  }
  auto len = io::ParseRecordHeader(reinterpret_cast<const unsigned char*>(head));
  if (!len.ok()) return RecordError(rel, offset, len.status());
  if (len.value() != length - io::kRecordOverhead) {
    return RecordError(rel, offset,
                       Corrupt("record length field says " + std::to_string(len.value()) +
                               " payload bytes but the index gives " +
                               std::to_string(length - io::kRecordOverhead)));
  }
  io::TensorEventHead h;
  if (!io::DecodeTensorEventHead(
          std::string_view(head + io::kRecordHeaderSize, kRecordHeadBytes - io::kRecordHeaderSize),
          &h)) {
    return std::optional<ValueInfo>();
  }
  const DTypeInfo* info = GetDTypeInfo(h.dtype);
  size_t count = 1;
  for (int64_t d : h.shape) {
    if (d != 0 && count > SIZE_MAX / static_cast<size_t>(d)) return std::optional<ValueInfo>();
    count *= static_cast<size_t>(d);
  }
  if (h.tag != tag || info == nullptr || info->size == 0 ||
      (count != 0 && info->size > SIZE_MAX / count) || count * info->size != h.content_size) {
    return std::optional<ValueInfo>();  // decoding the whole record says what is wrong
  }
  ValueInfo out;
  out.dtype = info->dtype;
  out.shape = std::move(h.shape);
  return std::optional<ValueInfo>(std::move(out));
}

Result<Trial::ValueInfo> Trial::TensorValueInfo(uint32_t id, int64_t step, Mode mode,
                                                const std::string* worker) {
  SMD_ASSIGN_OR_RETURN(Found f, Resolve(id, step, mode, worker));
  const StepEntry& e = f.entry;
  if (e.file != kNone && e.length > kWholeRecordInfoMax && !cache_->GetValue(e.file, e.offset)) {
    SMD_ASSIGN_OR_RETURN(std::optional<ValueInfo> head,
                         ReadRecordHead(e.file, e.offset, e.length, TensorName(id), id, step, mode));
    if (head) return std::move(*head);
  }
  SMD_ASSIGN_OR_RETURN(ValuePtr v, ValueOf(id, f, step, mode));
  ValueInfo out;
  out.dtype = v->dtype();
  out.shape = v->shape();
  return out;
}

Result<ValuePtr> Trial::ValueOf(uint32_t id, const Found& f, int64_t step, Mode mode) {
  const std::string& name = TensorName(id);
  if (f.entry.file == kNone) {
    return TensorUnavailableForStepError(name, step, mode, !f.reds.empty());
  }
  return ReadRecord(f.entry.file, f.entry.offset, f.entry.length, name, id, step, mode);
}

Result<ValuePtr> Trial::TensorValue(uint32_t id, int64_t step, Mode mode, const std::string* worker) {
  SMD_ASSIGN_OR_RETURN(Found f, Resolve(id, step, mode, worker));
  return ValueOf(id, f, step, mode);
}

Result<std::vector<std::pair<int64_t, ValuePtr>>> Trial::TensorValues(uint32_t id, Mode mode,
                                                                      const std::string* worker) {
  SMD_ASSIGN_OR_RETURN(std::vector<int64_t> steps, TensorSteps(id, mode, false));
  std::vector<Found> found;
  found.reserve(steps.size());
  for (int64_t s : steps) {
    SMD_ASSIGN_OR_RETURN(Found f, Resolve(id, s, mode, worker));
    found.push_back(std::move(f));
  }
  // The records live in different event files: read them in parallel. What the reading threads
  // would otherwise share (the cache, the trial's lock, the read counter) is done before and
  // after, once for all: shared state bounced between cores costs more than the reads gain.
  const size_t n = steps.size();
  const std::string& name = TensorName(id);
  std::vector<std::pair<uint32_t, uint64_t>> keys(n);
  for (size_t i = 0; i < n; ++i) keys[i] = {found[i].entry.file, found[i].entry.offset};
  std::vector<ValuePtr> values;
  cache_->GetValues(keys, &values);
  std::vector<const std::string*> rels(n, nullptr);
  std::vector<uint64_t> spans(n, 0);
  {
    std::shared_lock<std::shared_mutex> lock(mu_);
    for (size_t i = 0; i < n; ++i) {
      if (found[i].entry.file == kNone) continue;
      rels[i] = &event_files_[found[i].entry.file];
      spans[i] = event_file_span_[found[i].entry.file];
    }
  }
  std::vector<Status> errors(n);
  std::vector<ValuePtr> fresh(n);
  std::vector<uint8_t> reads(n, 0);
  ParallelFor(0, n, kParallelMinValues, 4, kParallelBlock, [&](size_t i) {
    const StepEntry& e = found[i].entry;
    if (e.file == kNone) {
      errors[i] = TensorUnavailableForStepError(name, steps[i], mode, !found[i].reds.empty());
      return;
    }
    if (values[i]) return;  // cached
    int r = 0;
    auto v = ReadRecordAt(*rels[i], spans[i], e.file, e.offset, e.length, name, id, steps[i], mode,
                          /*use_blocks=*/false, &r);
    reads[i] = static_cast<uint8_t>(r);
    if (v.ok()) {
      fresh[i] = std::move(v).value();
    } else {
      errors[i] = v.status();
    }
  });
  cache_->PutValues(keys, fresh);
  std::vector<uint32_t> touched;
  uint64_t total_reads = 0;
  for (size_t i = 0; i < n; ++i) {
    total_reads += reads[i];
    if (fresh[i]) {
      touched.push_back(keys[i].first);
      values[i] = std::move(fresh[i]);
    }
  }
  cache_->TouchFiles(touched);
  records_read_ += total_reads;
  std::vector<std::pair<int64_t, ValuePtr>> out;
  out.reserve(steps.size());
  for (size_t i = 0; i < n; ++i) {
    if (!errors[i].ok()) return errors[i];  // the first failing step, as a loop would report
    out.emplace_back(steps[i], std::move(values[i]));
  }
  return out;
}

Result<std::vector<int64_t>> Trial::TensorShape(uint32_t id, int64_t step, Mode mode,
                                                const std::string* worker) {
  SMD_ASSIGN_OR_RETURN(Found f, Resolve(id, step, mode, worker));
  if (f.entry.shape != kNone) {
    std::shared_lock<std::shared_mutex> lock(mu_);
    const auto& s = shapes_[f.entry.shape];
    return std::vector<int64_t>(shape_dims_.begin() + s.first,
                                shape_dims_.begin() + s.first + s.second);
  }
  auto v = ValueOf(id, f, step, mode);
  if (!v.ok()) {
    if (v.status().code() == Code::kTensorUnavailableForStep) {
      return ShapeUnavailableForStepError(TensorName(id), step, mode);
    }
    return v.status();
  }
  return v.value()->shape();
}

Result<std::vector<std::pair<int64_t, std::vector<int64_t>>>> Trial::TensorShapes(
    uint32_t id, Mode mode, const std::string* worker) {
  SMD_ASSIGN_OR_RETURN(std::vector<int64_t> steps, TensorSteps(id, mode, false));
  std::vector<std::pair<int64_t, std::vector<int64_t>>> out;
  out.reserve(steps.size());
  for (int64_t s : steps) {
    SMD_ASSIGN_OR_RETURN(std::vector<int64_t> shape, TensorShape(id, s, mode, worker));
    out.emplace_back(s, std::move(shape));
  }
  return out;
}

Result<std::vector<std::string>> Trial::TensorReductionNames(uint32_t id, int64_t step, Mode mode,
                                                             const std::string* worker) {
  SMD_ASSIGN_OR_RETURN(Found f, Resolve(id, step, mode, worker));
  std::vector<std::string> out;
  std::shared_lock<std::shared_mutex> lock(mu_);
  for (const RedEntry& r : f.reds) out.push_back((r.abs ? "abs_" : "") + red_names_[r.red]);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

Result<ValuePtr> Trial::TensorReductionValue(uint32_t id, int64_t step, std::string_view reduction,
                                             Mode mode, const std::string* worker) {
  SMD_ASSIGN_OR_RETURN(Found f, Resolve(id, step, mode, worker));
  const std::string& name = TensorName(id);
  // The saved one: "abs_<r>" or "<r>", with "l1_norm"/"l2_norm" accepted for l1/l2.
  bool abs = false;
  std::string_view base = reduction;
  if (base.size() > 4 && base.compare(0, 4, "abs_") == 0) {
    abs = true;
    base.remove_prefix(4);
  }
  if (base == "l1_norm" || base == "l2_norm") base = base.substr(0, 2);
  const RedEntry* saved = nullptr;
  {
    std::shared_lock<std::shared_mutex> lock(mu_);
    for (const RedEntry& r : f.reds) {
      if ((r.abs != 0) == abs && red_names_[r.red] == base) saved = &r;
    }
  }
  if (saved != nullptr) {
    return ReadRecord(saved->file, saved->offset, saved->length,
                      ReductionTagOf(base, abs, name), id, step, mode);
  }
  // Not saved: compute it from the raw value, if that was saved.
  auto parsed = ParseReductionName(reduction);
  if (!parsed.ok()) {
    return InvalidArgument("Invalid reduction type " + std::string(reduction) + " (" +
                           parsed.status().message() + ")");
  }
  if (f.entry.file == kNone) return TensorUnavailableForStepError(name, step, mode, !f.reds.empty());
  SMD_ASSIGN_OR_RETURN(ValuePtr raw, ValueOf(id, f, step, mode));
  if (raw->is_string()) {
    return Unsupported("cannot compute reduction " + std::string(reduction) + " of string tensor " +
                       name);
  }
  auto rv = ComputeReduction(parsed->op, parsed->abs, raw->dtype(), raw->data(), raw->count());
  if (!rv.ok()) {
    return Status(rv.status().code(), "reduction " + std::string(reduction) + " of tensor " + name +
                                          " at step " + std::to_string(step) + ": " +
                                          rv.status().message());
  }
  std::shared_ptr<Value> out = Value::MakeNumeric(rv->dtype, {1});
  std::memcpy(out->mutable_data(), rv->bytes, DTypeSize(rv->dtype));
  return ValuePtr(std::move(out));
}

Result<std::vector<std::string>> Trial::TensorWorkers(uint32_t id, int64_t step, Mode mode) {
  auto find_all = [&](std::vector<std::string>* out) {
    std::shared_lock<std::shared_mutex> lock(mu_);
    Found f;
    if (FindLocked(id, step, mode, nullptr, &f) != 0) return false;
    const auto& v = tensors_[id]->by_mode[ModeIndex(f.mode)];
    for (const StepEntry& e : v) {
      if (e.mode_step == f.mode_step) out->push_back(workers_[e.worker]);
    }
    return true;
  };
  std::vector<std::string> out;
  if (!find_all(&out)) {
    SMD_RETURN_IF_ERROR(MaybeRefresh());
    if (!find_all(&out)) return TensorUnavailableForStepError(TensorName(id), step, mode);
  }
  std::sort(out.begin(), out.end());
  return out;
}

Result<std::vector<int64_t>> Trial::TensorPrevSteps(uint32_t id, int64_t step, size_t n, Mode mode) {
  SMD_ASSIGN_OR_RETURN(std::vector<int64_t> steps, TensorSteps(id, mode, false));
  auto end = std::upper_bound(steps.begin(), steps.end(), step);
  auto begin = steps.begin();
  if (n > 0 && static_cast<size_t>(end - begin) > n) begin = end - static_cast<ptrdiff_t>(n);
  return std::vector<int64_t>(begin, end);
}

Trial::Stats Trial::GetStats() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  Stats s;
  s.index_files_read = index_files_read_.load();
  s.listings = listings_.load();
  s.records_read = records_read_.load();
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
