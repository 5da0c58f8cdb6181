// A bounded, thread-safe LRU cache for what a trial reads from event files: decoded values keyed
// by (event file, record offset), and whole small event files keyed by file (so that reading many
// tensors of one step costs one read of the file). A value is kept with the tag its record was
// checked against (TagKey): asked for with another tag (a hostile index pointing two tensors at
// one record), it is a miss, and the read then fails the record's tag check, whatever was read
// first.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "impl/trial/value.h"

namespace smd::trial {

class RecordCache {
 public:
  explicit RecordCache(size_t capacity_bytes) : capacity_(capacity_bytes) {}

  static uint64_t TagKey(std::string_view tag) { return std::hash<std::string_view>{}(tag); }
  ValuePtr GetValue(uint32_t file, uint64_t offset, uint64_t tag);
  void PutValue(uint32_t file, uint64_t offset, uint64_t tag, ValuePtr value);
  std::shared_ptr<const std::string> GetBlock(uint32_t file);
  void PutBlock(uint32_t file, std::shared_ptr<const std::string> block);

  // Records that `file` was read from; true if it had been before. Reading a whole small event
  // file only from its second use on keeps a scan of one tensor over many steps reading just its
  // records, while reading many tensors of one step costs one read of the file.
  bool TouchFile(uint32_t file);

  // The same for many at once, under one lock (threads reading in bulk share nothing else).
  // GetValues: out[i] is the cached value of keys[i] or null.
  void GetValues(const std::vector<std::pair<uint32_t, uint64_t>>& keys, uint64_t tag,
                 std::vector<ValuePtr>* out);
  void PutValues(const std::vector<std::pair<uint32_t, uint64_t>>& keys, uint64_t tag,
                 const std::vector<ValuePtr>& values);  // null values are skipped
  void TouchFiles(const std::vector<uint32_t>& files);
  size_t capacity() const { return capacity_; }

 private:
  struct Key {
    uint32_t file;
    uint64_t offset;  // UINT64_MAX for a whole-file block
    bool operator==(const Key& o) const { return file == o.file && offset == o.offset; }
  };
  struct KeyHash {
    size_t operator()(const Key& k) const {  // splitmix64 of the two fields
      uint64_t h = k.offset + 0x9e3779b97f4a7c15ull * (uint64_t(k.file) + 1);
      h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ull;
      h = (h ^ (h >> 27)) * 0x94d049bb133111ebull;
      return static_cast<size_t>(h ^ (h >> 31));
    }
  };
  struct Item {
    Key key;
    uint64_t tag;  // TagKey of the value's record (0 for a block)
    ValuePtr value;
    std::shared_ptr<const std::string> block;
    size_t bytes;
  };

  void Insert(Item item);  // with mu_ held
  Item* Find(const Key& key);  // with mu_ held; moves it to the front

  const size_t capacity_;
  mutable std::mutex mu_;
  size_t used_ = 0;
  std::list<Item> lru_;  // front: most recently used
  std::unordered_map<Key, std::list<Item>::iterator, KeyHash> index_;
  std::unordered_set<uint32_t> touched_;
};

}  // namespace smd::trial
