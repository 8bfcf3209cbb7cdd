// The on-disk cache of compiled CUB instantiations, a support/disk_cache.h
// directory of checksummed entries written atomically.
//
// Layout: <dir>/<key>.cjcub, key = 64 hex digits (cub.cpp: sha256 of the
// format version, generated source, NVRTC identity (its file: real path,
// size, mtime), the CCCL version headers and options). <dir> is the user
// cache root's `cub` folder (support/disk_cache.h: $CUDAJIT_CACHE_DIR, ...).
//
// Entry body (integers little-endian, inside the "CJCUBLTO" framing):
//   u64 temp_bytes  u64 temp_align  u64 source size  source bytes  LTO-IR bytes
// Loading checks the framing's size and checksum, and that the stored source
// is the source being compiled (a key collision reads as Corrupt).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "support/disk_cache.h"

namespace cj::cub {

// Little-endian u64s of the entry bodies (this file's and the radix sort
// programs', device_radix_sort.cpp).
inline void putU64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(char((v >> (8 * i)) & 0xff));
}
inline uint64_t getU64(std::string_view in, size_t pos) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= uint64_t(uint8_t(in[pos + i])) << (8 * i);
  return v;
}

struct CacheEntry {
  std::string source;
  std::vector<char> ltoir;
  uint64_t temp_bytes = 0;
  uint64_t temp_align = 0;
};

class CubDiskCache {
 public:
  explicit CubDiskCache(std::string dir);
  const std::string& dir() const { return files_.dir(); }
  std::string pathFor(const std::string& key) const { return files_.pathFor(key); }

  // Corrupt: the file exists but is truncated, fails its checksum, or holds
  // another source. Never throws.
  CacheLoad load(const std::string& key, const std::string& expected_source, CacheEntry* out) const;
  // False if the directory or file could not be written (the caller goes on
  // without a disk cache). Never throws.
  bool store(const std::string& key, const CacheEntry& e) const;

 private:
  DiskCache files_;
};

// The user cache root's `cub` folder (read from the environment on each call).
std::string defaultCubCacheDir();

}  // namespace cj::cub
