// RecordCache: the bounded LRU cache of decoded values and whole small event files.
#include "impl/trial/record_cache.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "impl/trial/value.h"

namespace smd::trial {
namespace {

// A float32 value of n elements, all `x`.
ValuePtr Floats(size_t n, float x) {
  std::shared_ptr<Value> v = Value::MakeNumeric(DType::kFloat32, {static_cast<int64_t>(n)});
  float* p = static_cast<float*>(v->mutable_data());
  for (size_t i = 0; i < n; ++i) p[i] = x;
  return v;
}

// Values of 100 kB: what the cache adds for its own bookkeeping is small beside them, so a cache
// of 2.5 values holds two of them and not three.
constexpr size_t kElems = 25000;
size_t TwoAndAHalf() { return Floats(kElems, 0)->memory_size() * 5 / 2; }

const uint64_t kTag = RecordCache::TagKey("w");

// A value is found only under the tag its record was read for: a second tensor whose index entry
// names the same record misses, and its read then fails the record's tag check.
TEST(RecordCache, AValueIsFoundOnlyUnderItsTag) {
  RecordCache c(1 << 20);
  ValuePtr a = Floats(4, 1);
  c.PutValue(1, 0, RecordCache::TagKey("fc.weight"), a);
  EXPECT_EQ(c.GetValue(1, 0, RecordCache::TagKey("fc.weight")), a);
  EXPECT_EQ(c.GetValue(1, 0, RecordCache::TagKey("loss")), nullptr);
  std::vector<ValuePtr> out;
  c.GetValues({{1, 0}}, RecordCache::TagKey("loss"), &out);
  EXPECT_EQ(out, std::vector<ValuePtr>{nullptr});
  c.GetValues({{1, 0}}, RecordCache::TagKey("fc.weight"), &out);
  EXPECT_EQ(out, std::vector<ValuePtr>{a});
}

TEST(RecordCache, ValuesAreKeyedByFileAndOffset) {
  RecordCache c(1 << 20);
  EXPECT_EQ(c.GetValue(1, 0, kTag), nullptr);
  ValuePtr a = Floats(4, 1), b = Floats(4, 2), d = Floats(4, 3);
  c.PutValue(1, 0, kTag, a);
  c.PutValue(1, 64, kTag, b);
  c.PutValue(2, 0, kTag, d);
  EXPECT_EQ(c.GetValue(1, 0, kTag), a);
  EXPECT_EQ(c.GetValue(1, 64, kTag), b);
  EXPECT_EQ(c.GetValue(2, 0, kTag), d);
  EXPECT_EQ(c.GetValue(2, 64, kTag), nullptr);
  EXPECT_EQ(c.GetValue(3, 0, kTag), nullptr);
  // Put again: the new value replaces the old.
  ValuePtr a2 = Floats(4, 9);
  c.PutValue(1, 0, kTag, a2);
  EXPECT_EQ(c.GetValue(1, 0, kTag), a2);
  // A null value is not kept (and does not drop the one there).
  c.PutValue(1, 0, kTag, nullptr);
  EXPECT_EQ(c.GetValue(1, 0, kTag), a2);
  EXPECT_EQ(c.capacity(), size_t(1) << 20);
}

TEST(RecordCache, TheLeastRecentlyUsedIsEvictedFirst) {
  RecordCache c(TwoAndAHalf());
  ValuePtr a = Floats(kElems, 1), b = Floats(kElems, 2), d = Floats(kElems, 3);
  c.PutValue(1, 0, kTag, a);
  c.PutValue(1, 100, kTag, b);
  EXPECT_EQ(c.GetValue(1, 0, kTag), a);  // a is now the most recently used
  c.PutValue(1, 200, kTag, d);
  EXPECT_EQ(c.GetValue(1, 100, kTag), nullptr);
  EXPECT_EQ(c.GetValue(1, 0, kTag), a);
  EXPECT_EQ(c.GetValue(1, 200, kTag), d);
  // Replacing a value makes it the most recently used too.
  c.PutValue(1, 0, kTag, a);
  c.PutValue(1, 300, kTag, b);
  EXPECT_EQ(c.GetValue(1, 200, kTag), nullptr);
  EXPECT_EQ(c.GetValue(1, 0, kTag), a);
  EXPECT_EQ(c.GetValue(1, 300, kTag), b);
}

TEST(RecordCache, WhatIsLargerThanTheCacheIsNotKeptAndEvictsNothing) {
  RecordCache c(TwoAndAHalf());
  ValuePtr a = Floats(kElems, 1);
  c.PutValue(1, 0, kTag, a);
  c.PutValue(1, 100, kTag, Floats(kElems * 3, 2));
  EXPECT_EQ(c.GetValue(1, 100, kTag), nullptr);
  EXPECT_EQ(c.GetValue(1, 0, kTag), a);
  c.PutBlock(2, std::make_shared<const std::string>(kElems * 12, 'x'));
  EXPECT_EQ(c.GetBlock(2), nullptr);
  EXPECT_EQ(c.GetValue(1, 0, kTag), a);
}

TEST(RecordCache, ANoCapacityCacheKeepsNothing) {
  RecordCache c(0);
  c.PutValue(1, 0, kTag, Floats(1, 1));
  c.PutBlock(1, std::make_shared<const std::string>("abc"));
  EXPECT_EQ(c.GetValue(1, 0, kTag), nullptr);
  EXPECT_EQ(c.GetBlock(1), nullptr);
  EXPECT_EQ(c.capacity(), 0u);
}

TEST(RecordCache, BlocksAreKeptBesideTheValuesOfTheirFile) {
  RecordCache c(1 << 20);
  EXPECT_EQ(c.GetBlock(1), nullptr);
  auto block = std::make_shared<const std::string>("the bytes of event file 1");
  ValuePtr v = Floats(4, 1);
  c.PutBlock(1, block);
  c.PutValue(1, 0, kTag, v);
  EXPECT_EQ(c.GetBlock(1), block);
  EXPECT_EQ(c.GetValue(1, 0, kTag), v);
  EXPECT_EQ(c.GetBlock(2), nullptr);
  c.PutBlock(1, nullptr);  // ignored
  EXPECT_EQ(c.GetBlock(1), block);
  auto newer = std::make_shared<const std::string>("new bytes");
  c.PutBlock(1, newer);
  EXPECT_EQ(c.GetBlock(1), newer);
  EXPECT_EQ(c.GetValue(1, 0, kTag), v);
}

// Blocks and values share one budget: a block evicts the values used least recently, and the
// other way round.
TEST(RecordCache, BlocksAndValuesShareTheCapacity) {
  RecordCache c(TwoAndAHalf());
  const size_t value_bytes = Floats(kElems, 0)->memory_size();
  ValuePtr a = Floats(kElems, 1), b = Floats(kElems, 2);
  c.PutValue(1, 0, kTag, a);
  c.PutValue(1, 100, kTag, b);
  auto block = std::make_shared<const std::string>(value_bytes, 'x');
  c.PutBlock(5, block);
  EXPECT_EQ(c.GetBlock(5), block);
  EXPECT_EQ(c.GetValue(1, 0, kTag), nullptr);
  EXPECT_EQ(c.GetValue(1, 100, kTag), b);
  c.PutValue(1, 200, kTag, Floats(kElems, 3));  // evicts the block: b was used after it
  EXPECT_EQ(c.GetBlock(5), nullptr);
  EXPECT_EQ(c.GetValue(1, 100, kTag), b);
}

TEST(RecordCache, TouchFileSaysWhetherTheFileWasReadFromBefore) {
  RecordCache c(1 << 20);
  EXPECT_FALSE(c.TouchFile(1));
  EXPECT_TRUE(c.TouchFile(1));
  EXPECT_TRUE(c.TouchFile(1));
  EXPECT_FALSE(c.TouchFile(2));
  c.TouchFiles({3, 4, 3});
  EXPECT_TRUE(c.TouchFile(3));
  EXPECT_TRUE(c.TouchFile(4));
  EXPECT_FALSE(c.TouchFile(5));
  // Touching is not caching: no capacity needed.
  RecordCache none(0);
  EXPECT_FALSE(none.TouchFile(1));
  EXPECT_TRUE(none.TouchFile(1));
}

TEST(RecordCache, GetValuesAndPutValuesWorkOnManyKeys) {
  RecordCache c(1 << 20);
  ValuePtr a = Floats(4, 1), b = Floats(4, 2);
  c.PutValues({{1, 0}, {1, 64}, {2, 0}}, kTag, {a, nullptr, b});  // the null one is skipped
  std::vector<ValuePtr> out = {Floats(1, 0)};                // replaced whole
  c.GetValues({{2, 0}, {1, 64}, {1, 0}, {9, 9}}, kTag, &out);
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0], b);
  EXPECT_EQ(out[1], nullptr);
  EXPECT_EQ(out[2], a);
  EXPECT_EQ(out[3], nullptr);
  c.GetValues({}, kTag, &out);
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(c.GetValue(1, 0, kTag), a);
  EXPECT_EQ(c.GetValue(2, 0, kTag), b);
}

// GetValues is a use like GetValue: what it found is kept over what it did not touch.
TEST(RecordCache, GetValuesCountsAsAUse) {
  RecordCache c(TwoAndAHalf());
  ValuePtr a = Floats(kElems, 1), b = Floats(kElems, 2);
  c.PutValues({{1, 0}, {1, 100}}, kTag, {a, b});
  std::vector<ValuePtr> out;
  c.GetValues({{1, 0}}, kTag, &out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0], a);
  c.PutValues({{1, 200}}, kTag, {Floats(kElems, 3)});
  EXPECT_EQ(c.GetValue(1, 0, kTag), a);
  EXPECT_EQ(c.GetValue(1, 100, kTag), nullptr);
  // PutValues within its own batch: the last put are the ones kept.
  RecordCache d(TwoAndAHalf());
  d.PutValues({{1, 0}, {1, 100}, {1, 200}}, kTag, {a, b, Floats(kElems, 3)});
  EXPECT_EQ(d.GetValue(1, 0, kTag), nullptr);
  EXPECT_EQ(d.GetValue(1, 100, kTag), b);
  EXPECT_NE(d.GetValue(1, 200, kTag), nullptr);
}

TEST(RecordCache, ConcurrentUseKeepsEveryEntryConsistent) {
  RecordCache c(64 << 10);  // small: entries are evicted all along
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 2000; ++i) {
        const uint32_t file = static_cast<uint32_t>((i + t) % 7);
        const uint64_t offset = static_cast<uint64_t>(i % 13) * 8;
        const float want = static_cast<float>(file * 1000 + offset);
        if (i % 3 == 0) {
          c.PutValue(file, offset, kTag, Floats(64, want));
        } else if (i % 3 == 1) {
          ValuePtr v = c.GetValue(file, offset, kTag);
          if (v && static_cast<const float*>(v->data())[63] != want) ++wrong;
        } else {
          std::vector<ValuePtr> out;
          c.GetValues({{file, offset}}, kTag, &out);
          if (out.size() != 1 || (out[0] && static_cast<const float*>(out[0]->data())[0] != want)) {
            ++wrong;
          }
          c.TouchFile(file);
          c.PutBlock(file, std::make_shared<const std::string>(100, static_cast<char>('a' + file)));
          auto block = c.GetBlock(file);
          if (block && (*block)[0] != static_cast<char>('a' + file)) ++wrong;
        }
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
}

}  // namespace
}  // namespace smd::trial
