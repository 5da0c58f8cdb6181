// The trial's two ways of using helper threads: a parallel for, and an in-order pipeline.
#pragma once

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace smd::trial {

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

}  // namespace smd::trial
