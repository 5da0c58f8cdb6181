// Unit tests for impl/core/small_vector.h: inline storage up to N, the heap beyond, and copies and
// moves between the two.
#include "impl/core/small_vector.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <utility>
#include <vector>

namespace smd {
namespace {

using Shape = SmallVector<int64_t, 4>;

std::vector<int64_t> Iota(size_t n, int64_t from = 1) {
  std::vector<int64_t> v;
  for (size_t i = 0; i < n; ++i) v.push_back(from + static_cast<int64_t>(i));
  return v;
}

Shape Make(const std::vector<int64_t>& v) {
  Shape s;
  s.assign(v.data(), v.data() + v.size());
  return s;
}

// Whether the elements live inside the object itself (no allocation).
template <typename V>
bool IsInline(const V& v) {
  auto p = reinterpret_cast<uintptr_t>(v.data());
  auto o = reinterpret_cast<uintptr_t>(&v);
  return p >= o && p < o + sizeof v;
}

TEST(SmallVector, EmptyByDefault) {
  Shape s;
  EXPECT_TRUE(s.empty());
  EXPECT_EQ(s.size(), 0u);
  EXPECT_EQ(s.begin(), s.end());
  EXPECT_TRUE(s.to_vector().empty());
  EXPECT_TRUE(IsInline(s));
  Shape e{};
  EXPECT_TRUE(e.empty());
}

TEST(SmallVector, InlineUpToNThenHeap) {
  Shape s;
  for (int64_t i = 1; i <= 4; ++i) {
    s.push_back(i);
    EXPECT_TRUE(IsInline(s)) << i;
  }
  s.push_back(5);
  EXPECT_FALSE(IsInline(s));
  EXPECT_EQ(s.to_vector(), Iota(5));
  for (int64_t i = 6; i <= 1000; ++i) s.push_back(i);
  EXPECT_EQ(s.size(), 1000u);
  EXPECT_EQ(s.to_vector(), Iota(1000));
  EXPECT_EQ(s[999], 1000);
  EXPECT_EQ(std::vector<int64_t>(s.begin(), s.end()), Iota(1000));
}

TEST(SmallVector, InitializerList) {
  Shape four = {7, 8, 9, 10};
  EXPECT_TRUE(IsInline(four));
  EXPECT_EQ(four.to_vector(), (std::vector<int64_t>{7, 8, 9, 10}));
  Shape five = {1, 2, 3, 4, 5};
  EXPECT_FALSE(IsInline(five));
  EXPECT_EQ(five.to_vector(), Iota(5));
}

TEST(SmallVector, AssignReplacesTheContents) {
  Shape s = Make(Iota(9));
  const std::vector<int64_t> two = {-1, -2};
  s.assign(two.data(), two.data() + 2);
  EXPECT_EQ(s.to_vector(), two);
  s.assign(two.data(), two.data());  // empty range
  EXPECT_TRUE(s.empty());
  s.assign(nullptr, nullptr);
  EXPECT_TRUE(s.empty());
}

TEST(SmallVector, AssignFromItsOwnElements) {
  for (size_t n : {3, 9}) {
    SCOPED_TRACE(n);
    Shape s = Make(Iota(n));
    s.assign(s.begin(), s.end());
    EXPECT_EQ(s.to_vector(), Iota(n));
    s.assign(s.begin() + 1, s.end());  // a suffix: shifts left
    EXPECT_EQ(s.to_vector(), Iota(n - 1, 2));
  }
}

// Like std::vector::push_back: the argument may be an element of the vector itself, also when the
// push has to grow the storage.
TEST(SmallVector, PushBackOfOwnElementWhileGrowing) {
  Shape s = Make(Iota(4));  // full, inline
  s.push_back(s[0]);
  EXPECT_EQ(s.to_vector(), (std::vector<int64_t>{1, 2, 3, 4, 1}));
  Shape h = Make(Iota(8));  // full, on the heap (capacity 8)
  h.push_back(h[0]);
  h.push_back(h[7]);
  EXPECT_EQ(h.to_vector(), (std::vector<int64_t>{1, 2, 3, 4, 5, 6, 7, 8, 1, 8}));
}

TEST(SmallVector, ReserveKeepsTheContents) {
  Shape s = {1, 2, 3};
  s.reserve(2);  // smaller: nothing happens
  EXPECT_TRUE(IsInline(s));
  s.reserve(100);
  EXPECT_FALSE(IsInline(s));
  EXPECT_EQ(s.to_vector(), Iota(3));
  const int64_t* before = s.data();
  for (int64_t i = 4; i <= 100; ++i) s.push_back(i);
  EXPECT_EQ(s.data(), before);  // no reallocation within the reserved capacity
  EXPECT_EQ(s.to_vector(), Iota(100));
}

TEST(SmallVector, ClearThenReuse) {
  Shape s = Make(Iota(10));
  s.clear();
  EXPECT_TRUE(s.empty());
  s.push_back(42);
  EXPECT_EQ(s.to_vector(), (std::vector<int64_t>{42}));
}

TEST(SmallVector, CopiesAreIndependent) {
  for (size_t n : {0, 2, 4, 5, 50}) {
    SCOPED_TRACE(n);
    const Shape original = Make(Iota(n));
    Shape copy(original);
    EXPECT_EQ(copy.to_vector(), Iota(n));
    if (n > 0) {
      EXPECT_NE(copy.data(), original.data());
    }
    copy.push_back(-1);
    copy.push_back(-2);
    EXPECT_EQ(original.to_vector(), Iota(n));
    copy.clear();
    EXPECT_EQ(original.to_vector(), Iota(n));
  }
}

TEST(SmallVector, CopyAssignBetweenInlineAndHeap) {
  Shape small = Make(Iota(2)), big = Make(Iota(20, 100));
  Shape a = big;
  a = small;  // heap target, inline-sized source
  EXPECT_EQ(a.to_vector(), Iota(2));
  Shape b = small;
  b = big;  // inline target, heap-sized source
  EXPECT_EQ(b.to_vector(), Iota(20, 100));
  Shape& self = b;
  b = self;
  EXPECT_EQ(b.to_vector(), Iota(20, 100));
  EXPECT_EQ(small.to_vector(), Iota(2));
  EXPECT_EQ(big.to_vector(), Iota(20, 100));
}

TEST(SmallVector, MoveFromHeapStealsTheBuffer) {
  Shape src = Make(Iota(10));
  const int64_t* buffer = src.data();
  Shape dst(std::move(src));
  EXPECT_EQ(dst.data(), buffer);
  EXPECT_EQ(dst.to_vector(), Iota(10));
  EXPECT_TRUE(src.empty());  // NOLINT(bugprone-use-after-move): moved-from is empty and usable
  for (int64_t i = 1; i <= 6; ++i) src.push_back(i);
  EXPECT_EQ(src.to_vector(), Iota(6));
  EXPECT_EQ(dst.to_vector(), Iota(10));
}

TEST(SmallVector, MoveFromInlineCopiesTheElements) {
  Shape src = {5, 6, 7};
  Shape dst(std::move(src));
  EXPECT_EQ(dst.to_vector(), (std::vector<int64_t>{5, 6, 7}));
  EXPECT_TRUE(IsInline(dst));
  EXPECT_TRUE(src.empty());  // NOLINT(bugprone-use-after-move)
  src.push_back(1);
  EXPECT_EQ(dst.to_vector(), (std::vector<int64_t>{5, 6, 7}));
}

TEST(SmallVector, MoveAssignBetweenInlineAndHeap) {
  Shape heap_target = Make(Iota(30));
  heap_target = Make(Iota(3, 50));  // the old heap buffer goes; the inline elements come
  EXPECT_EQ(heap_target.to_vector(), Iota(3, 50));
  EXPECT_TRUE(IsInline(heap_target));
  heap_target.push_back(53);
  heap_target.push_back(54);  // grows again from the inline state
  EXPECT_EQ(heap_target.to_vector(), Iota(5, 50));

  Shape inline_target = {1};
  inline_target = Make(Iota(12, 7));
  EXPECT_EQ(inline_target.to_vector(), Iota(12, 7));
  EXPECT_FALSE(IsInline(inline_target));

  Shape& self = inline_target;
  inline_target = std::move(self);
  EXPECT_EQ(inline_target.to_vector(), Iota(12, 7));
}

TEST(SmallVector, VectorOfSmallVectorsSurvivesReallocation) {
  std::vector<Shape> shapes;
  for (size_t i = 0; i < 64; ++i) shapes.push_back(Make(Iota(i % 9, static_cast<int64_t>(i))));
  for (size_t i = 0; i < 64; ++i) {
    EXPECT_EQ(shapes[i].to_vector(), Iota(i % 9, static_cast<int64_t>(i))) << i;
  }
}

struct Dim {
  int32_t size;
  uint8_t flag;
};

TEST(SmallVector, OtherTriviallyCopyableTypesAndN1) {
  SmallVector<Dim, 1> v;
  v.push_back({3, 1});
  EXPECT_TRUE(IsInline(v));
  v.push_back({4, 0});
  v.push_back({5, 1});
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0].size, 3);
  EXPECT_EQ(v[1].size, 4);
  EXPECT_EQ(v[2].flag, 1);
  SmallVector<Dim, 1> w = std::move(v);
  EXPECT_EQ(w[2].size, 5);
}

}  // namespace
}  // namespace smd
