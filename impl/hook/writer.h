// The hook's asynchronous writer: the training thread queues tensors (copied into pooled buffers,
// or DLPack tensors whose ownership was taken); one writer thread computes reductions, encodes
// records, appends them to the step's event file and, at each step's end, completes the event file
// and then writes the index file. Memory held by queued tensors is bounded by a budget: when it is
// full, queueing waits. Nothing is dropped.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "impl/core/dlpack_owned.h"
#include "impl/core/dtype.h"
#include "impl/core/mode.h"
#include "impl/core/reductions.h"
#include "impl/core/small_vector.h"
#include "impl/core/status.h"
#include "impl/format/index_file.h"
#include "impl/format/record.h"
#include "impl/storage/storage.h"
#include "impl/tensorboard/sink.h"

namespace smd::hook {

class BufferPool;

// Bytes a queued tensor holds: a pooled block, a heap block, or a DLPack tensor (deleted on
// release). Move-only; releasing returns the memory to the pool's budget.
class Payload {
 public:
  Payload() = default;
  Payload(Payload&& o) noexcept { *this = std::move(o); }
  Payload& operator=(Payload&& o) noexcept;
  Payload(const Payload&) = delete;
  Payload& operator=(const Payload&) = delete;
  ~Payload() { Release(); }

  char* data() const { return data_; }
  size_t size() const { return size_; }
  void Release();

 private:
  friend class BufferPool;
  char* data_ = nullptr;
  size_t size_ = 0;
  size_t charged_ = 0;          // bytes counted against the budget
  BufferPool* pool_ = nullptr;  // null: nothing to return
  char* block_ = nullptr;       // owned block (pooled or heap)
  size_t block_cap_ = 0;
  DLManagedTensorVersioned* managed_ = nullptr;
};

// Memory budget and reusable blocks (so that big tensors do not fault in fresh pages each time).
class BufferPool {
 public:
  explicit BufferPool(size_t budget) : budget_(budget) {}
  ~BufferPool();
  // A block of at least n bytes, charged to the budget; waits while the budget is exhausted (a
  // request larger than the budget is granted once nothing else is held).
  Payload Acquire(size_t n);
  // Releases many payloads at once (one lock, one wake-up).
  void ReleaseAll(std::vector<Payload>* payloads);
  // Wraps a DLPack tensor: charges its size (waiting like Acquire) and deletes it on release.
  Payload Adopt(DLManagedTensorVersioned* managed, char* data, size_t n);
  // A heap block of n bytes outside any budget (never waits): for the few bytes the hook itself
  // holds until a step ends (scalars), which no writer progress would release.
  static Payload Unbudgeted(size_t n);
  // Bytes a storage keeps in memory for a file not yet committed (an S3 object is uploaded whole
  // at commit): counted in the budget from Hold to Unhold, never waiting themselves. Acquire
  // waits while queued + held + n exceed the budget, unless nothing is queued (so a step whose
  // file alone exceeds the budget still proceeds, one tensor at a time).
  // `queued`: bytes of the writer's own queue (steps encoded, not yet written); unlike a storage's
  // bytes, the committer releases them whatever the training thread does, so Acquire waits for
  // them even when no tensor is in flight (a fast loop of tiny steps ahead of a storage that
  // stands still is held back; it would otherwise queue steps without bound).
  void Hold(size_t n, bool queued = false);
  void Unhold(size_t n, bool queued = false);
  size_t held() const;
  size_t pooled() const;  // bytes of idle blocks kept for reuse
  // Called (without the pool's lock) before a caller starts waiting for budget.
  void set_on_wait(std::function<void()> fn) { on_wait_ = std::move(fn); }
  size_t in_flight() const;
  size_t peak_in_flight() const;
  bool waiting() const;  // a caller is waiting for budget
  uint64_t waits() const;

 private:
  friend class Payload;
  void WaitForBudgetLocked(std::unique_lock<std::mutex>& lock, size_t n);
  void Return(char* block, size_t cap, size_t charged);
  size_t PoolRoomLocked() const;
  // Takes the idle blocks beyond PoolRoomLocked (block, capacity) for the caller to free.
  void TrimLocked(std::vector<std::pair<char*, size_t>>* to_free);

  const size_t budget_;
  std::function<void()> on_wait_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  size_t in_flight_ = 0;
  size_t held_ = 0;    // every Hold
  size_t queued_ = 0;  // the queued ones among them
  size_t peak_ = 0;
  uint64_t waits_ = 0;
  int waiting_ = 0;
  size_t pooled_bytes_ = 0;
  std::vector<char*> free_[64];  // by log2 of the block capacity
};

// The reductions to write for a tensor, in order, one byte each (op, and abs in the top bit).
class ReductionList {
 public:
  size_t size() const { return n_; }
  bool empty() const { return n_ == 0; }
  ReductionName operator[](size_t i) const {
    return {static_cast<ReductionOp>(v_[i] & 0x7f), (v_[i] & 0x80) != 0};
  }
  bool Contains(ReductionOp op, bool abs) const {
    const uint8_t b = Code(op, abs);
    for (size_t i = 0; i < n_; ++i) {
      if (v_[i] == b) return true;
    }
    return false;
  }
  // Adds it unless present.
  void Add(ReductionOp op, bool abs) {
    if (!Contains(op, abs) && n_ < sizeof v_) v_[n_++] = Code(op, abs);
  }

 private:
  static uint8_t Code(ReductionOp op, bool abs) {
    return static_cast<uint8_t>(static_cast<int>(op) | (abs ? 0x80 : 0));
  }
  uint8_t v_[2 * kNumReductionOps] = {};
  uint8_t n_ = 0;
};

// One tensor to write at a step.
struct TensorJob {
  int64_t step = 0;  // global step (file name and Event.step)
  Mode mode = Mode::kGlobal;
  int64_t mode_step = 0;
  double wall_time = 0;
  std::string name;
  DType dtype = DType::kFloat32;
  SmallVector<int64_t, 6> shape;
  size_t num_elements = 0;
  Payload data;
  // String tensors (dtype kString, 1-D): element i is data[string_ends[i-1] .. string_ends[i]).
  std::vector<size_t> string_ends;
  bool write_raw = false;
  bool write_shape = false;
  ReductionList reductions;  // in write order
  // Values the caller computed (smd_hook_save_reductions), one per entry of `reductions` in its
  // order, already in their result dtype; empty: computed here from `data`.
  std::vector<ReductionValue> given_reductions;
  // TensorBoard export, decided by the hook: a histogram under "<collection>/<name>" (empty:
  // none) and a scalar summary of the single element.
  std::string tb_histogram_tag;
  // The histogram the caller computed (smd_hook_save_reductions); null: computed from `data`.
  std::unique_ptr<tensorboard::Histogram> given_histogram;
  bool tb_scalar = false;
  bool tb_any() const { return tb_scalar || !tb_histogram_tag.empty(); }
};

struct WriterOptions {
  std::string worker;
  io::PayloadCrcKind crc = io::PayloadCrcKind::kSmdebugConstant;
  bool claim_out_dir = false;  // create claim.smd before the first file (single-worker jobs)
  size_t memory_budget = 256u << 20;
  // The most ended steps with data that may wait to be written: EndStep waits while more do.
  // -1: no bound (training may run any number of steps ahead, within the memory budget); 0:
  // every step is written before EndStep returns.
  int64_t max_pending_steps = -1;
  // TensorBoard export: the log folder's storage (null: no export) and the folder in it ("" or
  // ending in '/').
  std::shared_ptr<io::Storage> tensorboard_storage;
  std::string tensorboard_prefix;
  // fsync each event, index and collections file before its rename, and its folder after it.
  bool fsync = false;
  // Reduction tags keep ":<digits>" of the tensor name (smdebug's TensorFlow hooks).
  bool keep_colon_index = false;
};

struct WriterStats {
  uint64_t records = 0;
  uint64_t bytes = 0;
  uint64_t steps = 0;
  uint64_t budget_waits = 0;
  uint64_t peak_pending_bytes = 0;
  uint64_t pending_step_waits = 0;  // EndStep calls that waited for max_pending_steps
  double encoder_cpu_seconds = 0;
  double committer_cpu_seconds = 0;
};

// Two threads: the encoder takes queued items in order, computes reductions and encodes records
// into step chunks (record headers plus the tensors' own buffers, not copied again); the committer
// appends chunks to the step's event file, and at the step's end completes the event file and then
// writes the index file. The encoder thus works on step N+1 while the committer does step N's file
// system work, which is what bounds small-tensor workloads.
class AsyncWriter {
 public:
  AsyncWriter(io::Storage* storage, WriterOptions options);
  ~AsyncWriter();  // Close()s if needed; errors are dropped

  BufferPool& pool() { return pool_; }

  // Queues a tensor. Returns the sticky error if the writer has failed.
  Status Enqueue(TensorJob&& job);
  // Ends a step: its files are completed in order after everything queued before. Never waits.
  void EndStep(int64_t step);
  // With max_pending_steps set, waits while more ended steps than that are still to be written
  // (returns early if the writer failed or is closing); without, returns at once. The hook calls
  // it after BeginStep released its locks, so other threads' saves go on meanwhile.
  void WaitForPendingSteps();
  // Ended steps whose files are not yet complete (counted only with max_pending_steps set).
  int64_t pending_steps() const;
  // Writes a whole file (collections JSON, markers) after everything queued before.
  void WriteFile(std::string rel, std::string content);
  // Waits until everything queued so far is in the step's (still open) file; returns the sticky
  // error.
  Status Flush();
  // Processes everything, stops both threads, writes training_job_end.ts if asked, then
  // removes claim.smd if it created it. Returns the first error met. Idempotent. A writer that
  // claims the folder (claim_out_dir) writes the end marker only if it holds the claim: one
  // that lost it to another process never marks that process's live folder as ended.
  Status Close(bool write_end_marker = false);
  // The first error met so far (OK if none).
  Status error() const;
  WriterStats stats() const;

 private:
  struct Item {
    enum class Kind { kTensor, kEndStep, kWriteFile, kBarrier } kind = Kind::kBarrier;
    TensorJob job;
    int64_t step = 0;
    std::string rel, content;
    uint64_t barrier_id = 0;
    size_t estimate = 0;  // bytes held in the budget while queued (QueuedEstimate)
  };
  static size_t QueuedEstimate(const Item& item);
  size_t encoded_estimates_ = 0;  // encoder thread: estimates of items encoded, chunk not held yet
  // What the encoder hands to the committer.
  struct Chunk {
    enum class Kind { kData, kFinishStep, kWriteFile, kBarrier } kind = Kind::kData;
    int64_t step = 0;
    std::string headers;  // encoded record headers and footers
    struct Piece {
      bool from_headers;
      const char* ptr;  // when !from_headers
      size_t off, len;  // offset into headers when from_headers
    };
    std::vector<Piece> pieces;
    std::vector<Payload> payloads;  // released once written
    uint64_t bytes = 0;
    std::string rel, content;  // kWriteFile; for kFinishStep: the index file and its JSON
    uint64_t barrier_id = 0;
    bool ends_pending_step = false;  // kFinishStep of an EndStep: one fewer pending step when done
    tensorboard::RecordBatch tb;  // TensorBoard records, written before the chunk's step ends
    size_t charged = 0;  // its own memory (BufferPool::Hold), until the committer is done with it
    size_t inline_bytes = 0;  // tensor contents copied into `headers` (their buffers stay charged)
  };

  // Queues an item; a tensor is refused (with the reason) once the writer is closed or failed.
  Status Push(Item&& item, size_t bytes);
  void Wake();
  void SetError(const Status& st);
  bool failed() const;

  // Encoder thread.
  void RunEncoder();
  void Encode(Item& item);
  Status EncodeTensor(TensorJob& job);
  void AddRecord(const TensorJob& job, const std::string& tag, DType dtype, const int64_t* shape,
                 size_t ndim, std::string_view content);
  // The raw record of a string tensor (encoded whole into the chunk's headers).
  void AddStringRecord(const TensorJob& job, const std::vector<std::string_view>& values);
  // Index entry, meta and counters of a record of `length` bytes just added to the chunk.
  void NoteRecord(const TensorJob& job, const std::string& tag, uint64_t length);
  void FlushChunk();
  void FinishStepChunk(bool ends_pending_step = false);
  void StepNoLongerPending();
  void SendToCommitter(Chunk chunk);

  // Committer thread.
  void RunCommitter();
  void Commit(Chunk& chunk);
  Status CommitData(Chunk& chunk);
  Status CommitFinish(Chunk& chunk);
  Status EnsureClaim();
  // A whole small file: atomically, and durably with options_.fsync.
  Status WriteWhole(const std::string& rel, std::string_view content);

  io::Storage* storage_;
  const WriterOptions options_;
  BufferPool pool_;

  mutable std::mutex mu_;  // the input queue, the error, stats, barriers
  std::condition_variable cv_work_;
  std::condition_variable cv_done_;
  std::vector<Item> queue_;
  bool stopping_ = false;
  bool closed_ = false;
  bool writer_idle_ = false;      // the encoder is waiting for work
  bool flush_requested_ = false;  // a caller waits for memory held by the open chunk
  size_t unannounced_bytes_ = 0;  // queued since the encoder was last woken
  size_t wake_threshold_;
  uint64_t barrier_issued_ = 0;
  uint64_t barrier_done_ = 0;
  int64_t pending_steps_ = 0;  // EndStep calls whose step is not yet written
  uint64_t pending_step_waits_ = 0;
  Status first_error_;
  std::atomic<bool> failed_{false};
  std::atomic<uint64_t> stat_records_{0}, stat_bytes_{0}, stat_steps_{0};
  std::atomic<double> encoder_cpu_{0}, committer_cpu_{0};

  std::mutex commit_mu_;  // the committer's queue
  std::condition_variable commit_cv_;
  std::vector<Chunk> commit_queue_;
  // Header buffers the committer has written, handed back for the encoder to fill again (a fresh
  // 64 KiB buffer per step would fault in new pages whenever malloc trims its heap).
  std::vector<std::string> spare_headers_;
  bool commit_stopping_ = false;
  bool committer_idle_ = false;

  std::thread encoder_, committer_;

  // Encoder state for the step being encoded.
  std::vector<Payload> done_payloads_;  // encoded (copied into the chunk): released per batch
  std::optional<int64_t> open_step_;
  uint64_t step_offset_ = 0;  // bytes of the step's event file so far
  Chunk chunk_;
  std::vector<io::IndexTensorEntry> index_tensors_;
  std::vector<io::IndexShapeEntry> index_shapes_;
  std::optional<io::IndexMeta> meta_;

  // Committer state.
  std::unique_ptr<io::FileSink> sink_;
  std::string event_rel_;  // sink_'s path
  size_t sink_held_ = 0;   // bytes of sink_ held in memory by the storage (BufferPool::Hold)
  void DropSink(bool abort = true);  // aborts (if asked) and releases sink_ and what it held
  std::vector<struct iovec> iov_;  // CommitData's pieces, reused
  bool claim_done_ = false;
  bool claimed_ = false;
  std::unique_ptr<tensorboard::TensorBoardSink> tb_;  // committer's; null without export
};

}  // namespace smd::hook
