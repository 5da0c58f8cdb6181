#include "impl/hook/writer.h"

#include <sys/uio.h>

#include <cstdlib>
#include <cstring>

#include "impl/format/event.h"
#include "impl/format/layout.h"

namespace smd::hook {

// ------------------------------------------------------------------------------------------
// Payload and BufferPool

namespace {

constexpr size_t kMinPooledBlock = 64u << 10;  // smaller blocks come from malloc each time
constexpr size_t kMaxPooledBytes = 256u << 20;  // idle blocks kept for reuse, at most

size_t BlockClass(size_t n) {
  size_t c = kMinPooledBlock;
  while (c < n) c <<= 1;
  return c;
}

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
    if (m->deleter) m->deleter(m);
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
  for (auto& kv : free_) {
    for (char* b : kv.second) std::free(b);
  }
}

void BufferPool::Charge(size_t n) {
  std::unique_lock<std::mutex> lock(mu_);
  if (in_flight_ > 0 && in_flight_ + n > budget_) {
    ++waits_;
    cv_.wait(lock, [&] { return in_flight_ == 0 || in_flight_ + n <= budget_; });
  }
  in_flight_ += n;
  if (in_flight_ > peak_) peak_ = in_flight_;
}

Payload BufferPool::Acquire(size_t n) {
  Charge(n);
  Payload p;
  p.pool_ = this;
  p.charged_ = n;
  p.size_ = n;
  if (n >= kMinPooledBlock) {
    size_t cap = BlockClass(n);
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = free_.find(cap);
      if (it != free_.end() && !it->second.empty()) {
        p.block_ = it->second.back();
        it->second.pop_back();
        pooled_bytes_ -= cap;
      }
    }
    if (p.block_ == nullptr) p.block_ = static_cast<char*>(std::malloc(cap));
    p.block_cap_ = cap;
  } else {
    p.block_ = static_cast<char*>(std::malloc(n == 0 ? 1 : n));
    p.block_cap_ = 0;  // not pooled
  }
  if (p.block_ == nullptr) {
    Return(nullptr, 0, n);
    p.pool_ = nullptr;
    p.charged_ = 0;
    throw std::bad_alloc();
  }
  p.data_ = p.block_;
  return p;
}

Payload BufferPool::Adopt(DLManagedTensorVersioned* managed, char* data, size_t n) {
  Charge(n);
  Payload p;
  p.pool_ = this;
  p.charged_ = n;
  p.size_ = n;
  p.data_ = data;
  p.managed_ = managed;
  return p;
}

void BufferPool::Return(char* block, size_t cap, size_t charged) {
  bool keep = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    in_flight_ -= charged;
    if (block != nullptr && cap >= kMinPooledBlock && pooled_bytes_ + cap <= kMaxPooledBytes &&
        pooled_bytes_ + cap <= budget_) {
      free_[cap].push_back(block);
      pooled_bytes_ += cap;
      keep = true;
    }
  }
  cv_.notify_all();
  if (!keep) std::free(block);
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
// AsyncWriter

AsyncWriter::AsyncWriter(io::Storage* storage, WriterOptions options)
    : storage_(storage), options_(std::move(options)), pool_(options_.memory_budget) {
  thread_ = std::thread([this] { Run(); });
}

AsyncWriter::~AsyncWriter() { (void)Close(); }

void AsyncWriter::Push(Item item) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(item));
  }
  cv_work_.notify_one();
}

Status AsyncWriter::Enqueue(TensorJob job) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_) return InvalidState("the hook's writer is closed");
    if (!first_error_.ok()) return first_error_;
  }
  Item item;
  item.kind = Item::Kind::kTensor;
  item.job = std::move(job);
  Push(std::move(item));
  return Status::Ok();
}

void AsyncWriter::EndStep(int64_t step) {
  Item item;
  item.kind = Item::Kind::kEndStep;
  item.step = step;
  Push(std::move(item));
}

void AsyncWriter::WriteFile(std::string rel, std::string content) {
  Item item;
  item.kind = Item::Kind::kWriteFile;
  item.rel = std::move(rel);
  item.content = std::move(content);
  Push(std::move(item));
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
  Push(std::move(item));
  std::unique_lock<std::mutex> lock(mu_);
  cv_done_.wait(lock, [&] { return barrier_done_ >= id; });
  return first_error_;
}

Status AsyncWriter::Close() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_) return first_error_;
    closed_ = true;
    stopping_ = true;
  }
  cv_work_.notify_one();
  if (thread_.joinable()) thread_.join();
  // The thread finished the open step; release the claim.
  if (claimed_) {
    Status st = storage_->Remove(io::kClaimFile);
    if (!st.ok()) SetError(st);
  }
  std::lock_guard<std::mutex> lock(mu_);
  return first_error_;
}

Status AsyncWriter::error() const {
  std::lock_guard<std::mutex> lock(mu_);
  return first_error_;
}

WriterStats AsyncWriter::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

void AsyncWriter::SetError(const Status& st) {
  if (st.ok()) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (first_error_.ok()) first_error_ = st;
  failed_ = true;
}

void AsyncWriter::Run() {
  std::deque<Item> batch;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_work_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty() && stopping_) break;
      batch.swap(queue_);
    }
    for (Item& item : batch) Process(item);
    batch.clear();
  }
  if (open_step_ && !failed_) SetError(FinishStep());
  if (sink_) sink_->Abort();
}

void AsyncWriter::Process(Item& item) {
  switch (item.kind) {
    case Item::Kind::kTensor:
      if (!failed_) {
        Status st = WriteTensor(item.job);
        if (!st.ok()) {
          SetError(st.WithContext("writing tensor '" + item.job.name + "' at step " +
                                  std::to_string(item.job.step)));
        }
      }
      item.job.data.Release();
      break;
    case Item::Kind::kEndStep:
      if (!failed_ && open_step_ && *open_step_ == item.step) SetError(FinishStep());
      break;
    case Item::Kind::kWriteFile:
      if (!failed_) {
        Status st = EnsureClaim();
        if (st.ok()) st = storage_->WriteAtomic(item.rel, item.content);
        SetError(st);
      }
      break;
    case Item::Kind::kBarrier: {
      std::lock_guard<std::mutex> lock(mu_);
      barrier_done_ = item.barrier_id;
      cv_done_.notify_all();
      break;
    }
  }
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

Status AsyncWriter::WriteTensor(TensorJob& job) {
  if (open_step_ && *open_step_ != job.step) SMD_RETURN_IF_ERROR(FinishStep());
  if (!open_step_) {
    open_step_ = job.step;
    index_tensors_.clear();
    index_shapes_.clear();
    meta_.reset();
  }
  if (job.write_shape) {
    index_shapes_.push_back({job.name, job.name, job.shape});
    if (!meta_) meta_ = io::IndexMeta{job.mode, job.mode_step, std::nullopt};
  }
  for (const ReductionName& r : job.reductions) {
    Result<ReductionValue> rv =
        ComputeReduction(r.op, r.abs, job.dtype, job.data.data(), job.num_elements);
    if (!rv.ok()) {
      // As smdebug: a reduction that is undefined for this input (min of an empty tensor) is
      // skipped; anything else is an error.
      if (rv.status().code() == Code::kInvalidArgument) continue;
      return rv.status();
    }
    const int64_t one = 1;
    size_t sz = DTypeSize(rv->dtype);
    SMD_RETURN_IF_ERROR(AppendRecord(job, ReductionTag(job.name, r.op, r.abs), rv->dtype, &one, 1,
                                     std::string_view(reinterpret_cast<const char*>(rv->bytes), sz)));
  }
  if (job.write_raw && job.num_elements > 0) {
    SMD_RETURN_IF_ERROR(AppendRecord(job, job.name, job.dtype, job.shape.data(), job.shape.size(),
                                     std::string_view(job.data.data(), job.data.size())));
  }
  return Status::Ok();
}

Status AsyncWriter::AppendRecord(const TensorJob& job, const std::string& tag, DType dtype,
                                 const int64_t* shape, size_t ndim, std::string_view content) {
  if (!sink_) {
    SMD_RETURN_IF_ERROR(EnsureClaim());
    SMD_ASSIGN_OR_RETURN(sink_, storage_->Create(io::EventFileRelPath(job.step, options_.worker)));
  }
  io::TensorEventFields f;
  f.wall_time = job.wall_time;
  f.step = job.step;
  f.tag = tag;
  f.dtype = dtype;
  f.shape = shape;
  f.ndim = ndim;
  f.mode = job.mode;
  f.mode_step = job.mode_step;
  io::EncodeTensorRecord(f, content, options_.crc, &prefix_buf_, &suffix_buf_);
  uint64_t start = sink_->size();
  struct iovec v[3] = {{prefix_buf_.data(), prefix_buf_.size()},
                       {const_cast<char*>(content.data()), content.size()},
                       {suffix_buf_.data(), suffix_buf_.size()}};
  SMD_RETURN_IF_ERROR(sink_->Append(v, 3));
  uint64_t length = prefix_buf_.size() + content.size() + suffix_buf_.size();
  index_tensors_.push_back({tag, start, length});
  if (!meta_ || !meta_->event_file_name) {
    meta_ = io::IndexMeta{job.mode, job.mode_step, io::EventFileRelPath(job.step, options_.worker)};
  }
  std::lock_guard<std::mutex> lock(mu_);
  ++stats_.records;
  stats_.bytes += length;
  return Status::Ok();
}

Status AsyncWriter::FinishStep() {
  int64_t step = *open_step_;
  open_step_.reset();
  Status st;
  if (sink_) {
    st = sink_->Commit();
    if (!st.ok()) sink_->Abort();
    sink_.reset();
  }
  if (st.ok() && meta_) {
    st = EnsureClaim();
    if (st.ok()) {
      st = storage_->WriteAtomic(io::IndexFileRelPath(step, options_.worker),
                                 io::BuildIndexJson(*meta_, index_tensors_, index_shapes_));
    }
  }
  index_tensors_.clear();
  index_shapes_.clear();
  meta_.reset();
  if (st.ok()) {
    std::lock_guard<std::mutex> lock(mu_);
    ++stats_.steps;
  }
  return st.WithContext("completing step " + std::to_string(step));
}

}  // namespace smd::hook
