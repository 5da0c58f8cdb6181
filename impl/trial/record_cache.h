// A bounded, thread-safe LRU cache for what a trial reads from event files: decoded values keyed
// by (event file, record offset), and whole small event files keyed by file (so that reading many
// tensors of one step costs one read of the file).
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "impl/trial/value.h"

namespace smd::trial {

class RecordCache {
 public:
  explicit RecordCache(size_t capacity_bytes) : capacity_(capacity_bytes) {}

  ValuePtr GetValue(uint32_t file, uint64_t offset);
  void PutValue(uint32_t file, uint64_t offset, ValuePtr value);
  std::shared_ptr<const std::string> GetBlock(uint32_t file);
  void PutBlock(uint32_t file, std::shared_ptr<const std::string> block);

  size_t used_bytes() const;

 private:
  struct Key {
    uint32_t file;
    uint64_t offset;  // UINT64_MAX for a whole-file block
    bool operator==(const Key& o) const { return file == o.file && offset == o.offset; }
  };
  struct KeyHash {
    size_t operator()(const Key& k) const {
      uint64_t h = k.offset * 0x9e3779b97f4a7c15ull ^ (uint64_t(k.file) << 1);
      return static_cast<size_t>(h ^ (h >> 29));
    }
  };
  struct Item {
    Key key;
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
};

}  // namespace smd::trial
