#include "support/lru_map.h"

#include <atomic>
#include <cstdlib>
#include <string>

namespace cj {
namespace {

constexpr size_t kDefaultEntries = 1024;

size_t fromEnvironment() {
  const char* v = std::getenv("CUDAJIT_MEMORY_CACHE_ENTRIES");
  if (!v || !*v) return kDefaultEntries;
  char* end = nullptr;
  unsigned long long n = std::strtoull(v, &end, 10);
  return end && *end == '\0' ? static_cast<size_t>(n) : kDefaultEntries;   // malformed: the default
}

std::atomic<size_t>& limit() {
  static std::atomic<size_t> value{fromEnvironment()};
  return value;
}

}  // namespace

size_t memoryCacheLimit() { return limit().load(); }
void setMemoryCacheLimit(size_t entries) { limit().store(entries); }

}  // namespace cj
