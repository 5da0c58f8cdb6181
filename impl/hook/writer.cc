#include "impl/hook/writer.h"

#include <sys/uio.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <limits>
#include <new>
#include <utility>

#include "impl/core/pages.h"
#include "impl/format/event.h"
#include "impl/format/layout.h"

namespace smd::hook {

// ------------------------------------------------------------------------------------------
// Payload and BufferPool

namespace {

constexpr size_t kMinBlock = 64;                // smallest block class
constexpr size_t kMaxPooledBytes = 256u << 20;  // idle blocks kept for reuse, at most
// Blocks of this size and more are mapped (MapPages), past malloc, which kept freed tensor
// buffers in its heaps (an S3 run with a 64 MiB budget peaked at 162 MiB resident).
constexpr size_t kMappedBlock = 1u << 20;

char* AllocBlock(size_t cap) {
  return cap < kMappedBlock ? static_cast<char*>(std::malloc(cap)) : MapPages(cap);
}

void FreeBlock(char* block, size_t cap) {
  if (cap < kMappedBlock) {
    std::free(block);
  } else {
    UnmapPages(block, cap);
  }
}

size_t BlockClass(size_t n) {
  // (a request no power of two can hold is no block's: refused as memory that cannot be had)
  if (n > (std::numeric_limits<size_t>::max() >> 1) + 1) throw std::bad_alloc();
  size_t c = kMinBlock;
  while (c < n) c <<= 1;
  return c;
}

int ClassIndex(size_t cap) { return 63 - __builtin_clzll(static_cast<unsigned long long>(cap)); }

}  // namespace

Payload& Payload::operator=(Payload&& o) noexcept {
  if (this != &o) {
    Release();
    data_ = o.data_;
    size_ = o.size_;
    charged_ = o.charged_;
    pool_ = o.pool_;
    block_ = o.block_;
    block_cap_ = o.block_cap_;
    managed_ = o.managed_;
    o.data_ = nullptr;
    o.size_ = o.charged_ = o.block_cap_ = 0;
    o.pool_ = nullptr;
    o.block_ = nullptr;
    o.managed_ = nullptr;
  }
  return *this;
}

void Payload::Release() {
  if (managed_ != nullptr) {
    DLManagedTensorVersioned* m = managed_;
    managed_ = nullptr;
    ReleaseDLPack(m);
  }
  if (pool_ != nullptr) {
    pool_->Return(block_, block_cap_, charged_);
  } else if (block_ != nullptr) {
    std::free(block_);
  }
  data_ = block_ = nullptr;
  pool_ = nullptr;
  size_ = charged_ = block_cap_ = 0;
}

BufferPool::~BufferPool() {
  for (int i = 0; i < 64; ++i) {
    for (char* b : free_[i]) FreeBlock(b, size_t(1) << i);
  }
}

void BufferPool::WaitForBudgetLocked(std::unique_lock<std::mutex>& lock, size_t n) {
  // Nothing in flight nor queued: granted whatever its size (what is left is a storage's bytes of
  // the step's open file, which only the caller's progress releases).
  auto room = [&] { return (in_flight_ == 0 && queued_ == 0) || in_flight_ + held_ + n <= budget_; };
  if (room()) return;
  if (on_wait_) {
    lock.unlock();
    on_wait_();
    lock.lock();
  }
  if (!room()) {
    ++waits_;
    ++waiting_;
    cv_.wait(lock, room);
    --waiting_;
  }
}

void BufferPool::Hold(size_t n, bool queued) {
  std::vector<std::pair<char*, size_t>> to_free;
  {
    std::lock_guard<std::mutex> lock(mu_);
    held_ += n;
    if (queued) queued_ += n;
    if (in_flight_ + held_ > peak_) peak_ = in_flight_ + held_;
    TrimLocked(&to_free);
  }
  for (const auto& [b, cap] : to_free) FreeBlock(b, cap);
}

// Idle blocks are kept within what the budget leaves: what is in flight, what is held (on S3, a
// step's files waiting for their upload) and the idle blocks stay within the budget together
// (idle blocks up to a whole budget beside a whole budget held made the hook's memory twice it).
size_t BufferPool::PoolRoomLocked() const {
  const size_t used = in_flight_ + held_;
  return std::min(kMaxPooledBytes, budget_ > used ? budget_ - used : 0);
}

void BufferPool::TrimLocked(std::vector<std::pair<char*, size_t>>* to_free) {
  const size_t room = PoolRoomLocked();
  for (int i = 63; i >= 0 && pooled_bytes_ > room; --i) {
    std::vector<char*>& list = free_[i];
    while (!list.empty() && pooled_bytes_ > room) {
      to_free->emplace_back(list.back(), size_t(1) << i);
      list.pop_back();
      pooled_bytes_ -= size_t(1) << i;
    }
  }
}

void BufferPool::Unhold(size_t n, bool queued) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    held_ -= std::min(n, held_);
    if (queued) queued_ -= std::min(n, queued_);
  }
  cv_.notify_all();
}

size_t BufferPool::pooled() const {
  std::lock_guard<std::mutex> lock(mu_);
  return pooled_bytes_;
}

size_t BufferPool::held() const {
  std::lock_guard<std::mutex> lock(mu_);
  return held_;
}

bool BufferPool::waiting() const {
  std::lock_guard<std::mutex> lock(mu_);
  return waiting_ > 0;
}

Payload BufferPool::Acquire(size_t n) {
  // Blocks are reused through free lists, so the training thread and the writer thread never
  // pass memory through malloc/free (whose arena lock they would fight over).
  const size_t cap = BlockClass(n);
  Payload p;
  {
    std::unique_lock<std::mutex> lock(mu_);
    WaitForBudgetLocked(lock, n);
    in_flight_ += n;
    if (in_flight_ + held_ > peak_) peak_ = in_flight_ + held_;
    std::vector<char*>& list = free_[ClassIndex(cap)];
    if (!list.empty()) {
      p.block_ = list.back();
      list.pop_back();
      pooled_bytes_ -= cap;
    }
  }
  p.pool_ = this;
  p.charged_ = n;
  p.size_ = n;
  p.block_cap_ = cap;
  if (p.block_ == nullptr) p.block_ = AllocBlock(cap);
  if (p.block_ == nullptr) {
    p.Release();
    throw std::bad_alloc();
  }
  p.data_ = p.block_;
  return p;
}

Payload BufferPool::Unbudgeted(size_t n) {
  Payload p;
  p.block_ = static_cast<char*>(std::malloc(n > 0 ? n : 1));
  if (p.block_ == nullptr) throw std::bad_alloc();
  p.data_ = p.block_;
  p.size_ = n;
  return p;
}

Payload BufferPool::Adopt(DLManagedTensorVersioned* managed, char* data, size_t n) {
  {
    std::unique_lock<std::mutex> lock(mu_);
    WaitForBudgetLocked(lock, n);
    in_flight_ += n;
    if (in_flight_ + held_ > peak_) peak_ = in_flight_ + held_;
  }
  Payload p;
  p.pool_ = this;
  p.charged_ = n;
  p.size_ = n;
  p.data_ = data;
  p.managed_ = managed;
  return p;
}

void BufferPool::ReleaseAll(std::vector<Payload>* payloads) {
  std::vector<std::pair<char*, size_t>> to_free;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (Payload& p : *payloads) {
      if (p.pool_ != this || p.managed_ != nullptr) continue;  // adopted tensors: below
      in_flight_ -= p.charged_;
      if (p.block_ != nullptr && pooled_bytes_ + p.block_cap_ <= PoolRoomLocked()) {
        free_[ClassIndex(p.block_cap_)].push_back(p.block_);
        pooled_bytes_ += p.block_cap_;
      } else if (p.block_ != nullptr) {
        to_free.emplace_back(p.block_, p.block_cap_);
      }
      p.pool_ = nullptr;
      p.block_ = p.data_ = nullptr;
      p.size_ = p.charged_ = p.block_cap_ = 0;
    }
  }
  cv_.notify_all();
  for (const auto& [b, cap] : to_free) FreeBlock(b, cap);
  payloads->clear();  // the rest (adopted DLPack tensors) release themselves
}

void BufferPool::Return(char* block, size_t cap, size_t charged) {
  bool keep = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    in_flight_ -= charged;
    if (block != nullptr && pooled_bytes_ + cap <= PoolRoomLocked()) {
      free_[ClassIndex(cap)].push_back(block);
      pooled_bytes_ += cap;
      keep = true;
    }
  }
  cv_.notify_all();
  if (!keep) FreeBlock(block, cap);
}

size_t BufferPool::in_flight() const {
  std::lock_guard<std::mutex> lock(mu_);
  return in_flight_;
}
size_t BufferPool::peak_in_flight() const {
  std::lock_guard<std::mutex> lock(mu_);
  return peak_;
}
uint64_t BufferPool::waits() const {
  std::lock_guard<std::mutex> lock(mu_);
  return waits_;
}

// ------------------------------------------------------------------------------------------
// AsyncWriter: input side

namespace {
constexpr uint64_t kChunkBytes = 4u << 20;  // the encoder hands data over at least this often
constexpr size_t kChunkHeadersReserve = 64u << 10;
constexpr size_t kSpareHeaders = 8;  // header buffers kept for reuse, at most

double ThreadCpuSeconds() {
  struct timespec ts;
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return 0;
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}
}  // namespace

AsyncWriter::AsyncWriter(io::Storage* storage, WriterOptions options)
    : storage_(storage),
      options_(std::move(options)),
      pool_(options_.memory_budget),
      wake_threshold_(std::min<size_t>(4u << 20, options_.memory_budget / 4)) {
  pool_.set_on_wait([this] { Wake(); });
  if (options_.tensorboard_storage) {
    tb_ = std::make_unique<tensorboard::TensorBoardSink>(options_.tensorboard_storage,
                                                         options_.tensorboard_prefix);
  }
  committer_ = std::thread([this] { RunCommitter(); });
  encoder_ = std::thread([this] { RunEncoder(); });
}

AsyncWriter::~AsyncWriter() { (void)Close(); }

// What a queued item will hold once the encoder has made it into records (their headers, tags
// and footers, its index entries, a step's index file and bookkeeping), besides a tensor's own
// bytes, which Acquire charged. It counts in the memory budget from Push until the encoder has
// taken the item, and what the encoded chunk holds counts from then on (SendToCommitter).
// Without it a fast loop of tiny tensors ahead of the encoder is charged a few bytes a step, and
// the steps' metadata exceeds the budget once encoded (2.4x the budget was seen).
size_t AsyncWriter::QueuedEstimate(const Item& item) {
  switch (item.kind) {
    case Item::Kind::kTensor: {
      const TensorJob& j = item.job;
      const size_t records = (j.write_raw || j.write_shape ? 1 : 0) + j.reductions.size() +
                             (j.tb_any() ? 1 : 0);
      return 128 + records * (96 + 2 * j.name.size());
    }
    case Item::Kind::kEndStep:
      return 640;
    case Item::Kind::kWriteFile:
      return item.rel.capacity() + item.content.capacity();
    case Item::Kind::kBarrier:
      return 0;
  }
  return 0;
}

Status AsyncWriter::Push(Item&& item, size_t bytes) {
  bool wake = false;
  // Held before the item is queued: the encoder releases it once the item is encoded.
  const size_t estimate = item.estimate = QueuedEstimate(item);
  if (estimate > 0) pool_.Hold(estimate, /*queued=*/true);
  {
    std::unique_lock<std::mutex> lock(mu_);
    const bool tensor = item.kind == Item::Kind::kTensor;
    // Checked under the queue's lock. A tensor is refused once the writer failed too; anything
    // once it is closed (its encoder may have stopped: what is queued then would never be
    // written, and its estimate never released).
    if (closed_ || (tensor && !first_error_.ok())) {
      Status refused = closed_ ? InvalidState("the hook's writer is closed") : first_error_;
      lock.unlock();
      if (estimate > 0) pool_.Unhold(estimate, /*queued=*/true);
      return refused;
    }
    queue_.push_back(std::move(item));
    unannounced_bytes_ += bytes;
    if (writer_idle_ && (!tensor || unannounced_bytes_ >= wake_threshold_)) {
      writer_idle_ = false;
      unannounced_bytes_ = 0;
      wake = true;
    }
  }
  if (wake) cv_work_.notify_one();
  return Status::Ok();
}

void AsyncWriter::Wake() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    flush_requested_ = true;  // hand over what is encoded, so that its memory is released
    if (!writer_idle_) return;
    writer_idle_ = false;
    unannounced_bytes_ = 0;
  }
  cv_work_.notify_one();
}

Status AsyncWriter::Enqueue(TensorJob&& job) {
  Item item;
  item.kind = Item::Kind::kTensor;
  size_t bytes = job.data.size() + 256;
  item.job = std::move(job);
  return Push(std::move(item), bytes);
}

void AsyncWriter::EndStep(int64_t step) {
  Item item;
  item.kind = Item::Kind::kEndStep;
  item.step = step;
  const int64_t bound = options_.max_pending_steps;
  if (bound < 0) {  // no bound: nothing counted (the writer's hot path stays as it was)
    (void)Push(std::move(item), 0);  // only tensors are refused
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++pending_steps_;
  }
  (void)Push(std::move(item), 0);
}

void AsyncWriter::WaitForPendingSteps() {
  const int64_t bound = options_.max_pending_steps;
  if (bound < 0) return;
  std::unique_lock<std::mutex> lock(mu_);
  auto done = [&] { return pending_steps_ <= bound || failed() || stopping_; };
  if (done()) return;
  ++pending_step_waits_;
  cv_done_.wait(lock, done);
}

int64_t AsyncWriter::pending_steps() const {
  std::lock_guard<std::mutex> lock(mu_);
  return pending_steps_;
}

void AsyncWriter::StepNoLongerPending() {
  std::lock_guard<std::mutex> lock(mu_);
  --pending_steps_;
  cv_done_.notify_all();
}

void AsyncWriter::WriteFile(std::string rel, std::string content) {
  Item item;
  item.kind = Item::Kind::kWriteFile;
  item.rel = std::move(rel);
  item.content = std::move(content);
  (void)Push(std::move(item), 0);
}

Status AsyncWriter::Flush() {
  uint64_t id;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_) return first_error_;
    id = ++barrier_issued_;
  }
  Item item;
  item.kind = Item::Kind::kBarrier;
  item.barrier_id = id;
  // Push refuses any item once the writer is closed (tested under the queue's lock): a barrier
  // it takes is answered by the encoder; one it refuses, by Close once its threads are gone.
  (void)Push(std::move(item), 0);
  std::unique_lock<std::mutex> lock(mu_);
  cv_done_.wait(lock, [&] { return barrier_done_ >= id; });
  return first_error_;
}

Status AsyncWriter::Close(bool write_end_marker) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_) return first_error_;
    closed_ = true;
    stopping_ = true;
    writer_idle_ = false;
  }
  cv_work_.notify_one();
  cv_done_.notify_all();
  if (encoder_.joinable()) encoder_.join();  // it finishes the open step and stops the committer
  if (committer_.joinable()) committer_.join();
  {
    // Both threads are gone: every barrier is answered (a Flush whose barrier was refused because
    // the writer closed in between waits for this).
    std::lock_guard<std::mutex> lock(mu_);
    barrier_done_ = barrier_issued_;
  }
  cv_done_.notify_all();
  // The end marker goes before the claim is released: another writer could claim the folder
  // in between otherwise, and find its run marked ended.
  if (write_end_marker && (claimed_ || !options_.claim_out_dir)) {
    SetError(WriteWhole(io::kEndOfJobFile, ""));
  }
  if (claimed_) SetError(storage_->Remove(io::kClaimFile));
  std::lock_guard<std::mutex> lock(mu_);
  return first_error_;
}

Status AsyncWriter::error() const {
  std::lock_guard<std::mutex> lock(mu_);
  return first_error_;
}

WriterStats AsyncWriter::stats() const {
  WriterStats s;
  s.records = stat_records_.load();
  s.bytes = stat_bytes_.load();
  s.steps = stat_steps_.load();
  s.budget_waits = pool_.waits();
  s.peak_pending_bytes = pool_.peak_in_flight();
  {
    std::lock_guard<std::mutex> lock(mu_);
    s.pending_step_waits = pending_step_waits_;
  }
  s.encoder_cpu_seconds = encoder_cpu_.load();
  s.committer_cpu_seconds = committer_cpu_.load();
  return s;
}

void AsyncWriter::SetError(const Status& st) {
  if (st.ok()) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (first_error_.ok()) first_error_ = st;
  failed_.store(true);
  cv_done_.notify_all();  // EndStep does not wait for a writer that failed
}

bool AsyncWriter::failed() const { return failed_.load(std::memory_order_relaxed); }

// ------------------------------------------------------------------------------------------
// Encoder thread

void AsyncWriter::RunEncoder() {
  std::vector<Item> batch;
  for (;;) {
    bool flush = false;
    {
      std::unique_lock<std::mutex> lock(mu_);
      if (queue_.empty() && !stopping_ && !flush_requested_) {
        writer_idle_ = true;
        cv_work_.wait(lock, [&] { return !writer_idle_ || stopping_; });
        writer_idle_ = false;
      }
      if (queue_.empty() && stopping_) break;
      batch.swap(queue_);
      flush = flush_requested_;
      flush_requested_ = false;
    }
    for (Item& item : batch) {
      encoded_estimates_ += item.estimate;  // released as its chunk is held (SendToCommitter)
      Encode(item);
    }
    batch.clear();
    if (!done_payloads_.empty()) pool_.ReleaseAll(&done_payloads_);
    // What is encoded but not yet handed over (an open step's records): its estimate goes, as
    // the part of a step in the making has never been counted.
    if (encoded_estimates_ > 0) pool_.Unhold(std::exchange(encoded_estimates_, 0), /*queued=*/true);
    encoder_cpu_.store(ThreadCpuSeconds(), std::memory_order_relaxed);
    // Someone waits for memory: hand over what is encoded so that the committer releases it.
    if (flush || pool_.waiting()) FlushChunk();
  }
  if (open_step_) FinishStepChunk();
  {
    std::lock_guard<std::mutex> lock(commit_mu_);
    commit_stopping_ = true;
    committer_idle_ = false;
  }
  commit_cv_.notify_one();
}

void AsyncWriter::Encode(Item& item) {
  switch (item.kind) {
    case Item::Kind::kTensor:
      if (!failed()) {
        Status st = EncodeTensor(item.job);
        if (!st.ok()) {
          SetError(st.WithContext("writing tensor '" + item.job.name + "' at step " +
                                  std::to_string(item.job.step)));
        }
      }
      // Not written raw (reductions, shape, TensorBoard only): nothing refers to it any more.
      if (item.job.data.data() != nullptr) done_payloads_.push_back(std::move(item.job.data));
      break;
    case Item::Kind::kEndStep:
      if (open_step_ && *open_step_ == item.step) {
        FinishStepChunk(/*ends_pending_step=*/options_.max_pending_steps >= 0);
      } else if (options_.max_pending_steps >= 0) {
        StepNoLongerPending();  // nothing was saved at it: nothing to write
      }
      break;
    case Item::Kind::kWriteFile: {
      Chunk c;
      c.kind = Chunk::Kind::kWriteFile;
      c.rel = std::move(item.rel);
      c.content = std::move(item.content);
      SendToCommitter(std::move(c));
      break;
    }
    case Item::Kind::kBarrier: {
      FlushChunk();
      Chunk c;
      c.kind = Chunk::Kind::kBarrier;
      c.barrier_id = item.barrier_id;
      SendToCommitter(std::move(c));
      break;
    }
  }
}

Status AsyncWriter::EncodeTensor(TensorJob& job) {
  if (open_step_ && *open_step_ != job.step) FinishStepChunk();
  if (!open_step_) {
    open_step_ = job.step;
    step_offset_ = 0;
    chunk_.step = job.step;
  }
  if (job.write_shape) {
    index_shapes_.push_back({job.name, job.name, job.shape.to_vector()});
    if (!meta_) meta_ = io::IndexMeta{job.mode, job.mode_step, std::nullopt};
  }
  for (size_t ri = 0; ri < job.reductions.size(); ++ri) {
    const ReductionName r = job.reductions[ri];
    Result<ReductionValue> rv =
        !job.given_reductions.empty()
            ? (job.num_elements == 0 && (r.op == ReductionOp::kMin || r.op == ReductionOp::kMax)
                   ? Result<ReductionValue>(InvalidArgument("no min or max of an empty tensor"))
                   : Result<ReductionValue>(job.given_reductions[ri]))
            : ComputeReduction(r.op, r.abs, job.dtype, job.data.data(), job.num_elements);
    if (!rv.ok()) {
      // As smdebug: a reduction that is undefined for this input (min of an empty tensor) is
      // skipped; anything else is an error.
      if (rv.status().code() == Code::kInvalidArgument) continue;
      return rv.status();
    }
    const int64_t one = 1;
    AddRecord(job, ReductionTag(job.name, r.op, r.abs, options_.keep_colon_index), rv->dtype,
              &one, 1,
              std::string_view(reinterpret_cast<const char*>(rv->bytes), DTypeSize(rv->dtype)));
  }
  if (job.tb_any() && tb_) {
    tensorboard::TensorSummaryRequest tr;
    tr.mode = job.mode;
    tr.step = job.step;
    tr.wall_time = job.wall_time;
    tr.histogram_tag = job.tb_histogram_tag;
    tr.histogram = job.given_histogram.get();
    if (job.tb_scalar) tr.scalar_tag = job.name;
    tr.dtype = job.dtype;
    tr.data = job.data.data();
    tr.num_elements = job.num_elements;
    SMD_RETURN_IF_ERROR(tensorboard::EncodeTensorSummaries(tr, &chunk_.tb));
  }
  if (job.write_raw && job.num_elements > 0 && job.dtype == DType::kString) {
    std::vector<std::string_view> values(job.string_ends.size());
    size_t begin = 0;
    for (size_t i = 0; i < values.size(); ++i) {
      values[i] = std::string_view(job.data.data() + begin, job.string_ends[i] - begin);
      begin = job.string_ends[i];
    }
    AddStringRecord(job, values);
  } else if (job.write_raw && job.num_elements > 0) {
    AddRecord(job, job.name, job.dtype, job.shape.data(), job.shape.size(),
              std::string_view(job.data.data(), job.data.size()));
    // A big tensor's record points into its buffer; a small one was copied next to its header.
    // Either way the buffer stays charged to the budget until the committer has written the
    // chunk, so that the budget bounds encoded bytes too, not only queued ones.
    chunk_.payloads.push_back(std::move(job.data));
  }
  if (chunk_.bytes + chunk_.tb.size() >= kChunkBytes) FlushChunk();
  return Status::Ok();
}

void AsyncWriter::AddStringRecord(const TensorJob& job, const std::vector<std::string_view>& values) {
  io::TensorEventFields f;
  f.wall_time = job.wall_time;
  f.step = job.step;
  f.tag = job.name;
  f.dtype = DType::kString;
  f.mode = job.mode;
  f.mode_step = job.mode_step;
  const size_t off = chunk_.headers.size();
  io::AppendStringTensorRecord(f, values.data(), values.size(), options_.crc, &chunk_.headers);
  const size_t len = chunk_.headers.size() - off;
  Chunk::Piece* last = chunk_.pieces.empty() ? nullptr : &chunk_.pieces.back();
  if (last != nullptr && last->from_headers && last->off + last->len == off) {
    last->len += len;
  } else {
    chunk_.pieces.push_back({true, nullptr, off, len});
  }
  NoteRecord(job, job.name, len);
}

void AsyncWriter::NoteRecord(const TensorJob& job, const std::string& tag, uint64_t length) {
  index_tensors_.push_back({tag, step_offset_, length});
  step_offset_ += length;
  chunk_.bytes += length;
  if (!meta_ || !meta_->event_file_name) {
    meta_ = io::IndexMeta{job.mode, job.mode_step, io::EventFileRelPath(job.step, options_.worker)};
  }
  stat_records_.fetch_add(1, std::memory_order_relaxed);
  stat_bytes_.fetch_add(length, std::memory_order_relaxed);
}

void AsyncWriter::AddRecord(const TensorJob& job, const std::string& tag, DType dtype,
                            const int64_t* shape, size_t ndim, std::string_view content) {
  io::TensorEventFields f;
  f.wall_time = job.wall_time;
  f.step = job.step;
  f.tag = tag;
  f.dtype = dtype;
  f.shape = shape;
  f.ndim = ndim;
  f.mode = job.mode;
  f.mode_step = job.mode_step;
  if (chunk_.headers.capacity() < kChunkHeadersReserve) {
    {
      std::lock_guard<std::mutex> lock(commit_mu_);
      if (!spare_headers_.empty() && chunk_.headers.empty()) {
        chunk_.headers.swap(spare_headers_.back());
        spare_headers_.pop_back();
      }
    }
    chunk_.headers.reserve(kChunkHeadersReserve);
  }
  const size_t off = chunk_.headers.size();
  size_t prefix_len, suffix_len;
  // Small contents (reductions, small tensors) are copied next to their headers: fewer pieces.
  const bool inline_content = content.size() <= 4096;
  io::AppendTensorRecord(f, content, options_.crc, inline_content, &chunk_.headers, &prefix_len,
                         &suffix_len);
  if (inline_content) {
    chunk_.inline_bytes += content.size();
    const size_t len = prefix_len + content.size() + suffix_len;
    Chunk::Piece* last = chunk_.pieces.empty() ? nullptr : &chunk_.pieces.back();
    if (last != nullptr && last->from_headers && last->off + last->len == off) {
      last->len += len;  // contiguous with the previous record: one piece, one iovec
    } else {
      chunk_.pieces.push_back({true, nullptr, off, len});
    }
  } else {
    chunk_.pieces.push_back({true, nullptr, off, prefix_len});
    chunk_.pieces.push_back({false, content.data(), 0, content.size()});
    chunk_.pieces.push_back({true, nullptr, off + prefix_len, suffix_len});
  }
  NoteRecord(job, tag, prefix_len + content.size() + suffix_len);
}

void AsyncWriter::FlushChunk() {
  if (chunk_.pieces.empty() && chunk_.tb.empty()) return;
  Chunk c = std::move(chunk_);
  chunk_ = Chunk();
  chunk_.step = c.step;
  c.kind = Chunk::Kind::kData;
  SendToCommitter(std::move(c));
}

void AsyncWriter::FinishStepChunk(bool ends_pending_step) {
  // The step's last data and its completion travel together.
  const int64_t step = *open_step_;
  Chunk c = std::move(chunk_);
  chunk_ = Chunk();
  c.kind = Chunk::Kind::kFinishStep;
  c.step = step;
  c.ends_pending_step = ends_pending_step;
  if (meta_) {
    c.rel = io::IndexFileRelPath(step, options_.worker);
    c.content = io::BuildIndexJson(*meta_, index_tensors_, index_shapes_);
  }
  SendToCommitter(std::move(c));
  open_step_.reset();
  index_tensors_.clear();
  index_shapes_.clear();
  meta_.reset();
}

void AsyncWriter::SendToCommitter(Chunk chunk) {
  // A small chunk gets a buffer of its own size; the encoder keeps the big one for the next
  // chunk (or drops it if it has one). Otherwise every queued step of a fast loop of tiny steps
  // would hold, and be charged, a 64 KiB buffer.
  if (chunk.headers.capacity() > 2 * chunk.headers.size() + 4096 &&
      chunk.headers.capacity() >= kChunkHeadersReserve) {
    std::string tight(chunk.headers);  // (pieces refer to it by offset: still valid)
    if (chunk_.headers.capacity() == 0) {
      chunk_.headers.swap(chunk.headers);
      chunk_.headers.clear();
    }
    chunk.headers.swap(tight);
  }
  // What the chunk itself holds (beyond the tensors' buffers, charged already) counts in the
  // memory budget until the committer is done with it: a fast loop of tiny steps ahead of a slow
  // storage is then held back by the budget like big tensors are, instead of queueing steps
  // without bound.
  constexpr size_t kAllocOverhead = 32;  // per heap block, about
  // (The tensor contents copied into the headers are charged already: their buffers stay charged
  // until the chunk is written.)
  chunk.charged = sizeof(Chunk) + chunk.headers.capacity() -
                  std::min(chunk.inline_bytes, chunk.headers.capacity()) + chunk.content.capacity() +
                  chunk.rel.capacity() + chunk.pieces.capacity() * sizeof(Chunk::Piece) +
                  chunk.payloads.capacity() * sizeof(Payload) + chunk.tb.size() +
                  6 * kAllocOverhead;
  pool_.Hold(chunk.charged, /*queued=*/true);
  // The encoded items' estimates give way to what their chunk holds (held first: the charge never
  // dips below what is queued).
  if (encoded_estimates_ > 0) pool_.Unhold(std::exchange(encoded_estimates_, 0), /*queued=*/true);
  bool wake;
  {
    std::lock_guard<std::mutex> lock(commit_mu_);
    commit_queue_.push_back(std::move(chunk));
    wake = committer_idle_;
    committer_idle_ = false;
  }
  if (wake) commit_cv_.notify_one();
}

// ------------------------------------------------------------------------------------------
// Committer thread

void AsyncWriter::RunCommitter() {
  std::vector<Chunk> batch;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(commit_mu_);
      if (commit_queue_.empty() && !commit_stopping_) {
        committer_idle_ = true;
        commit_cv_.wait(lock, [&] { return commit_stopping_ || !commit_queue_.empty(); });
        committer_idle_ = false;
      }
      if (commit_queue_.empty() && commit_stopping_) break;
      batch.swap(commit_queue_);
    }
    for (Chunk& c : batch) Commit(c);
    batch.clear();
    committer_cpu_.store(ThreadCpuSeconds(), std::memory_order_relaxed);
  }
  DropSink();
  if (tb_) SetError(tb_->Close());
}

void AsyncWriter::DropSink(bool abort) {
  if (sink_ && abort) sink_->Abort();
  sink_.reset();
  if (sink_held_ > 0) pool_.Unhold(sink_held_);
  sink_held_ = 0;
}

void AsyncWriter::Commit(Chunk& chunk) {
  switch (chunk.kind) {
    case Chunk::Kind::kData:
      if (!failed() && !chunk.tb.empty()) SetError(tb_->Write(chunk.tb));
      if (!failed() && !chunk.pieces.empty()) {
        Status st = CommitData(chunk);
        if (!st.ok()) SetError(st.WithContext("writing step " + std::to_string(chunk.step)));
      }
      break;
    case Chunk::Kind::kFinishStep:
      if (!failed() && !chunk.tb.empty()) SetError(tb_->Write(chunk.tb));
      if (tb_ && !failed()) SetError(tb_->FinishStep(chunk.step));
      if (!failed() && !chunk.pieces.empty()) {
        Status st = CommitData(chunk);
        if (!st.ok()) SetError(st.WithContext("writing step " + std::to_string(chunk.step)));
      }
      if (!failed()) {
        Status st = CommitFinish(chunk);
        if (!st.ok()) SetError(st.WithContext("completing step " + std::to_string(chunk.step)));
      }
      DropSink();
      if (chunk.ends_pending_step) StepNoLongerPending();
      break;
    case Chunk::Kind::kWriteFile:
      if (!failed()) {
        Status st = EnsureClaim();
        if (st.ok()) st = WriteWhole(chunk.rel, chunk.content);
        SetError(st);
      }
      break;
    case Chunk::Kind::kBarrier: {
      if (tb_ && !failed()) SetError(tb_->Flush());
      std::lock_guard<std::mutex> lock(mu_);
      barrier_done_ = chunk.barrier_id;
      cv_done_.notify_all();
      break;
    }
  }
  pool_.ReleaseAll(&chunk.payloads);  // the tensors' buffers, and adopted DLPack tensors
  if (chunk.charged > 0) pool_.Unhold(chunk.charged, /*queued=*/true);
  chunk.charged = 0;
  if (chunk.headers.capacity() >= kChunkHeadersReserve && chunk.headers.capacity() <= 4 * kChunkHeadersReserve) {
    chunk.headers.clear();
    std::lock_guard<std::mutex> lock(commit_mu_);
    if (spare_headers_.size() < kSpareHeaders) spare_headers_.push_back(std::move(chunk.headers));
  }
}

Status AsyncWriter::CommitData(Chunk& chunk) {
  if (!sink_) {
    SMD_RETURN_IF_ERROR(EnsureClaim());
    event_rel_ = io::EventFileRelPath(chunk.step, options_.worker);
    SMD_ASSIGN_OR_RETURN(sink_, storage_->Create(event_rel_));
  }
  iov_.clear();
  for (const Chunk::Piece& p : chunk.pieces) {
    const char* base = p.from_headers ? chunk.headers.data() + p.off : p.ptr;
    iov_.push_back({const_cast<char*>(base), p.len});
  }
  const uint64_t before = sink_->size();
  Status st = sink_->Append(iov_.data(), static_cast<int>(iov_.size()));
  if (st.ok() && sink_->HoldsBytesInMemory()) {
    // The chunk's buffers go back to the pool after this; the storage's copy takes their place
    // in the budget until the file is committed.
    const size_t n = static_cast<size_t>(sink_->size() - before);
    pool_.Hold(n);
    sink_held_ += n;
  }
  return st;
}

Status AsyncWriter::CommitFinish(Chunk& chunk) {
  if (sink_) {
    Status st = options_.fsync ? storage_->CommitDurably(sink_.get(), event_rel_) : sink_->Commit();
    DropSink(/*abort=*/!st.ok());
    SMD_RETURN_IF_ERROR(st);
  }
  if (!chunk.rel.empty()) {
    SMD_RETURN_IF_ERROR(EnsureClaim());
    SMD_RETURN_IF_ERROR(WriteWhole(chunk.rel, chunk.content));
  }
  stat_steps_.fetch_add(1, std::memory_order_relaxed);
  return Status::Ok();
}

Status AsyncWriter::WriteWhole(const std::string& rel, std::string_view content) {
  return options_.fsync ? storage_->WriteDurably(rel, content) : storage_->WriteAtomic(rel, content);
}

Status AsyncWriter::EnsureClaim() {
  if (claim_done_ || !options_.claim_out_dir) return Status::Ok();
  claim_done_ = true;
  Status st = storage_->CreateExclusive(io::kClaimFile);
  if (st.code() == Code::kAlreadyExists) {
    return Status(Code::kAlreadyExists,
                  "another process is writing into '" + storage_->root() + "' (" +
                      storage_->Describe(io::kClaimFile) +
                      " exists; a single-worker job has one writer — set the worker count, or "
                      "remove the file if that process is gone)");
  }
  SMD_RETURN_IF_ERROR(st);
  claimed_ = true;
  return Status::Ok();
}

}  // namespace smd::hook
