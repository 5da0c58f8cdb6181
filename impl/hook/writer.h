// The hook's asynchronous writer: the training thread queues tensors (copied into pooled buffers,
// or DLPack tensors whose ownership was taken); one writer thread computes reductions, encodes
// records, appends them to the step's event file and, at each step's end, completes the event file
// and then writes the index file. Memory held by queued tensors is bounded by a budget: when it is
// full, queueing waits. Nothing is dropped.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "smd/dlpack.h"
#include "impl/core/dtype.h"
#include "impl/core/mode.h"
#include "impl/core/reductions.h"
#include "impl/core/status.h"
#include "impl/format/index_file.h"
#include "impl/format/record.h"
#include "impl/storage/storage.h"

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
  // Wraps a DLPack tensor: charges its size (waiting like Acquire) and deletes it on release.
  Payload Adopt(DLManagedTensorVersioned* managed, char* data, size_t n);
  size_t in_flight() const;
  size_t peak_in_flight() const;
  uint64_t waits() const;

 private:
  friend class Payload;
  void Charge(size_t n);
  void Return(char* block, size_t cap, size_t charged);

  const size_t budget_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  size_t in_flight_ = 0;
  size_t peak_ = 0;
  uint64_t waits_ = 0;
  size_t pooled_bytes_ = 0;
  std::map<size_t, std::vector<char*>> free_;  // capacity class -> blocks
};

// One tensor to write at a step.
struct TensorJob {
  int64_t step = 0;  // global step (file name and Event.step)
  Mode mode = Mode::kGlobal;
  int64_t mode_step = 0;
  double wall_time = 0;
  std::string name;
  DType dtype = DType::kFloat32;
  std::vector<int64_t> shape;
  size_t num_elements = 0;
  Payload data;
  bool write_raw = false;
  bool write_shape = false;
  std::vector<ReductionName> reductions;  // in write order
};

struct WriterOptions {
  std::string worker;
  io::PayloadCrcKind crc = io::PayloadCrcKind::kSmdebugConstant;
  bool claim_out_dir = false;  // create claim.smd before the first file (single-worker jobs)
  size_t memory_budget = 256u << 20;
};

struct WriterStats {
  uint64_t records = 0;
  uint64_t bytes = 0;
  uint64_t steps = 0;
};

class AsyncWriter {
 public:
  AsyncWriter(io::Storage* storage, WriterOptions options);
  ~AsyncWriter();  // Close()s if needed; errors are dropped

  BufferPool& pool() { return pool_; }

  // Queues a tensor. Returns the sticky error if the writer has failed.
  Status Enqueue(TensorJob job);
  // Ends a step: its files are completed in order after everything queued before.
  void EndStep(int64_t step);
  // Writes a whole file (collections JSON, markers) after everything queued before.
  void WriteFile(std::string rel, std::string content);
  // Waits until everything queued so far has been processed; returns the sticky error.
  Status Flush();
  // Processes everything, stops the thread, removes claim.smd if it created it. Returns the first
  // error met. Idempotent.
  Status Close();
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
  };

  void Push(Item item);
  void Run();
  void Process(Item& item);
  Status WriteTensor(TensorJob& job);
  Status AppendRecord(const TensorJob& job, const std::string& tag, DType dtype,
                      const int64_t* shape, size_t ndim, std::string_view content);
  Status FinishStep();
  Status EnsureClaim();
  void SetError(const Status& st);

  io::Storage* storage_;
  const WriterOptions options_;
  BufferPool pool_;

  mutable std::mutex mu_;
  std::condition_variable cv_work_;
  std::condition_variable cv_done_;
  std::deque<Item> queue_;
  bool stopping_ = false;
  bool closed_ = false;
  uint64_t barrier_issued_ = 0;
  uint64_t barrier_done_ = 0;
  Status first_error_;
  WriterStats stats_;
  std::thread thread_;

  // Writer-thread state for the step being written.
  std::optional<int64_t> open_step_;
  std::unique_ptr<io::FileSink> sink_;
  std::vector<io::IndexTensorEntry> index_tensors_;
  std::vector<io::IndexShapeEntry> index_shapes_;
  std::optional<io::IndexMeta> meta_;
  bool claim_done_ = false;
  bool claimed_ = false;
  bool failed_ = false;  // after an error the writer stops touching storage
  std::string prefix_buf_, suffix_buf_;
};

}  // namespace smd::hook
