// A vector that keeps up to N elements inline (no allocation) and spills to the heap beyond.
// For trivially copyable element types only (shapes, reduction lists).
#pragma once

#include <cstddef>
#include <cstring>
#include <initializer_list>
#include <type_traits>
#include <vector>

namespace smd {

template <typename T, size_t N>
class SmallVector {
  static_assert(std::is_trivially_copyable<T>::value, "SmallVector holds trivially copyable types");

 public:
  SmallVector() = default;
  SmallVector(std::initializer_list<T> init) { assign(init.begin(), init.end()); }

  void assign(const T* first, const T* last) {
    clear();
    for (; first != last; ++first) push_back(*first);
  }
  void push_back(const T& v) {
    if (heap_.empty() && size_ < N) {
      inline_[size_++] = v;
      return;
    }
    if (heap_.empty()) heap_.assign(inline_, inline_ + size_);
    heap_.push_back(v);
    ++size_;
  }
  void clear() {
    size_ = 0;
    heap_.clear();
  }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const T* data() const { return heap_.empty() ? inline_ : heap_.data(); }
  const T* begin() const { return data(); }
  const T* end() const { return data() + size_; }
  const T& operator[](size_t i) const { return data()[i]; }
  std::vector<T> to_vector() const { return std::vector<T>(begin(), end()); }

 private:
  T inline_[N] = {};
  size_t size_ = 0;
  std::vector<T> heap_;
};

}  // namespace smd
