// A vector that keeps up to N elements inline (no allocation) and spills to the heap beyond.
// For trivially copyable element types only (shapes). Cheap to move.
#pragma once

#include <cstddef>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <type_traits>
#include <vector>

namespace smd {

template <typename T, size_t N>
class SmallVector {
  static_assert(std::is_trivially_copyable<T>::value, "SmallVector holds trivially copyable types");

 public:
  SmallVector() = default;
  SmallVector(std::initializer_list<T> init) { assign(init.begin(), init.end()); }
  SmallVector(SmallVector&& o) noexcept { *this = std::move(o); }
  SmallVector& operator=(SmallVector&& o) noexcept {
    if (this != &o) {
      size_ = o.size_;
      cap_ = o.cap_;
      heap_ = std::move(o.heap_);
      if (!heap_) std::memcpy(inline_, o.inline_, size_ * sizeof(T));
      o.size_ = 0;
      o.cap_ = N;
    }
    return *this;
  }
  SmallVector(const SmallVector& o) { assign(o.begin(), o.end()); }
  SmallVector& operator=(const SmallVector& o) {
    if (this != &o) assign(o.begin(), o.end());
    return *this;
  }

  void assign(const T* first, const T* last) {
    clear();
    reserve(static_cast<size_t>(last - first));
    for (; first != last; ++first) push_back(*first);
  }
  void reserve(size_t n) {
    if (n <= cap_) return;
    std::unique_ptr<T[]> p(new T[n]);
    std::memcpy(p.get(), data(), size_ * sizeof(T));
    heap_ = std::move(p);
    cap_ = n;
  }
  void push_back(const T& v) {
    const T copy = v;  // v may be one of our elements, which reserve() frees
    if (size_ == cap_) reserve(cap_ * 2);
    mutable_data()[size_++] = copy;
  }
  void clear() { size_ = 0; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const T* data() const { return heap_ ? heap_.get() : inline_; }
  const T* begin() const { return data(); }
  const T* end() const { return data() + size_; }
  const T& operator[](size_t i) const { return data()[i]; }
  std::vector<T> to_vector() const { return std::vector<T>(begin(), end()); }

 private:
  T* mutable_data() { return heap_ ? heap_.get() : inline_; }
  T inline_[N];
  std::unique_ptr<T[]> heap_;
  size_t size_ = 0;
  size_t cap_ = N;
};

}  // namespace smd
