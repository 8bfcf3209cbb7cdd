// A map that keeps its most recently used entries: the bound on cudajit's
// in-memory caches of library instantiations (issue 15), whose entries
// (LTO-IR, hundreds of KB each) a long-running process would otherwise
// keep forever.
#pragma once
#include <cstddef>
#include <list>
#include <string>
#include <unordered_map>
#include <utility>

namespace cj {

// The most entries each bounded in-memory cache keeps: setMemoryCacheLimit()
// (Python: cudajit.set_memory_cache_limit), else $CUDAJIT_MEMORY_CACHE_ENTRIES,
// else 1024. 0: no bound. Evicted entries come back from the disk cache.
size_t memoryCacheLimit();
void setMemoryCacheLimit(size_t entries);

// Not thread-safe: its owner locks.
template <class V>
class LruMap {
 public:
  // The value, now the most recently used; null when absent.
  const V* find(const std::string& key) {
    auto it = index_.find(key);
    if (it == index_.end()) return nullptr;
    order_.splice(order_.begin(), order_, it->second);
    return &it->second->second;
  }
  // Inserts (or replaces) as the most recently used, then drops the least
  // recently used beyond `limit` (0: none); returns how many it dropped.
  size_t put(const std::string& key, V value, size_t limit) {
    auto it = index_.find(key);
    if (it != index_.end()) {
      it->second->second = std::move(value);
      order_.splice(order_.begin(), order_, it->second);
    } else {
      order_.emplace_front(key, std::move(value));
      index_.emplace(key, order_.begin());
    }
    size_t dropped = 0;
    while (limit > 0 && order_.size() > limit) {
      index_.erase(order_.back().first);
      order_.pop_back();
      ++dropped;
    }
    return dropped;
  }
  void clear() {
    order_.clear();
    index_.clear();
  }
  size_t size() const { return order_.size(); }

 private:
  std::list<std::pair<std::string, V>> order_;   // front: most recently used
  std::unordered_map<std::string, typename std::list<std::pair<std::string, V>>::iterator> index_;
};

}  // namespace cj
