#include "impl/trial/record_cache.h"

namespace smd::trial {
namespace {
constexpr uint64_t kBlockOffset = UINT64_MAX;
constexpr size_t kItemOverhead = 96;  // list node, map node, control blocks (approximate)
}  // namespace

RecordCache::Item* RecordCache::Find(const Key& key) {
  auto it = index_.find(key);
  if (it == index_.end()) return nullptr;
  lru_.splice(lru_.begin(), lru_, it->second);
  return &*it->second;
}

void RecordCache::Insert(Item item) {
  if (item.bytes > capacity_) return;  // larger than the whole cache: not kept
  auto it = index_.find(item.key);
  if (it != index_.end()) {
    used_ -= it->second->bytes;
    lru_.erase(it->second);
    index_.erase(it);
  }
  while (used_ + item.bytes > capacity_ && !lru_.empty()) {
    used_ -= lru_.back().bytes;
    index_.erase(lru_.back().key);
    lru_.pop_back();
  }
  used_ += item.bytes;
  lru_.push_front(std::move(item));
  index_[lru_.front().key] = lru_.begin();
}

ValuePtr RecordCache::GetValue(uint32_t file, uint64_t offset, uint64_t tag) {
  std::lock_guard<std::mutex> lock(mu_);
  Item* item = Find(Key{file, offset});
  return item && item->tag == tag ? item->value : nullptr;
}

void RecordCache::PutValue(uint32_t file, uint64_t offset, uint64_t tag, ValuePtr value) {
  if (!value) return;
  size_t bytes = value->memory_size() + kItemOverhead;
  std::lock_guard<std::mutex> lock(mu_);
  Insert(Item{Key{file, offset}, tag, std::move(value), nullptr, bytes});
}

std::shared_ptr<const std::string> RecordCache::GetBlock(uint32_t file) {
  std::lock_guard<std::mutex> lock(mu_);
  Item* item = Find(Key{file, kBlockOffset});
  return item ? item->block : nullptr;
}

void RecordCache::PutBlock(uint32_t file, std::shared_ptr<const std::string> block) {
  if (!block) return;
  size_t bytes = block->capacity() + kItemOverhead;
  std::lock_guard<std::mutex> lock(mu_);
  Insert(Item{Key{file, kBlockOffset}, 0, nullptr, std::move(block), bytes});
}

bool RecordCache::TouchFile(uint32_t file) {
  std::lock_guard<std::mutex> lock(mu_);
  if (touched_.size() > (1u << 20)) touched_.clear();  // bounded; forgetting is harmless
  return !touched_.insert(file).second;
}

void RecordCache::GetValues(const std::vector<std::pair<uint32_t, uint64_t>>& keys, uint64_t tag,
                            std::vector<ValuePtr>* out) {
  out->assign(keys.size(), nullptr);
  std::lock_guard<std::mutex> lock(mu_);
  for (size_t i = 0; i < keys.size(); ++i) {
    Item* item = Find(Key{keys[i].first, keys[i].second});
    if (item && item->tag == tag) (*out)[i] = item->value;
  }
}

void RecordCache::PutValues(const std::vector<std::pair<uint32_t, uint64_t>>& keys, uint64_t tag,
                            const std::vector<ValuePtr>& values) {
  std::lock_guard<std::mutex> lock(mu_);
  for (size_t i = 0; i < keys.size() && i < values.size(); ++i) {
    if (!values[i]) continue;
    const size_t bytes = values[i]->memory_size() + kItemOverhead;
    Insert(Item{Key{keys[i].first, keys[i].second}, tag, values[i], nullptr, bytes});
  }
}

void RecordCache::TouchFiles(const std::vector<uint32_t>& files) {
  std::lock_guard<std::mutex> lock(mu_);
  if (touched_.size() > (1u << 20)) touched_.clear();
  touched_.insert(files.begin(), files.end());
}

}  // namespace smd::trial
