// The on-disk cache of compiled CUB instantiations.
//
// Layout: <dir>/<key>.cjcub, key = 64 hex digits (cub.cpp: sha256 of the
// format version, generated source, NVRTC identity (its file: real path,
// size, mtime), the CCCL version headers and
// options). <dir> is $CUDAJIT_CACHE_DIR/cub, else ~/.cache/cudajit/cub.
//
// Entry format (integers little-endian):
//   "CJCUBLTO"  u32 format version  u32 0
//   u64 temp_bytes  u64 temp_align  u64 source size  u64 LTO-IR size
//   source bytes  LTO-IR bytes
//   32-byte SHA-256 of everything before it
// Loading checks the size fields, the checksum, and that the stored source
// is the source being compiled (a key collision or a stale format reads as
// a miss). Writes go to a hidden temp file in <dir> then rename(2) onto
// the final name, so readers in other processes see either no entry or a
// whole one; two processes compiling the same spec both write valid
// entries and the last rename wins.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace cj::cub {

struct CacheEntry {
  std::string source;
  std::vector<char> ltoir;
  uint64_t temp_bytes = 0;
  uint64_t temp_align = 0;
};

enum class CacheLoad { Hit, Missing, Corrupt };

std::string serializeEntry(const CacheEntry& e);
bool deserializeEntry(const std::string& bytes, CacheEntry* out);

class DiskCache {
 public:
  explicit DiskCache(std::string dir) : dir_(std::move(dir)) {}
  const std::string& dir() const { return dir_; }
  std::string pathFor(const std::string& key) const { return dir_ + "/" + key + ".cjcub"; }

  // Corrupt: the file exists but is truncated, fails its checksum, or holds
  // another source. Never throws.
  CacheLoad load(const std::string& key, const std::string& expected_source, CacheEntry* out) const;
  // False if the directory or file could not be written (the caller goes on
  // without a disk cache). Never throws.
  bool store(const std::string& key, const CacheEntry& e) const;

 private:
  std::string dir_;
};

// $CUDAJIT_CACHE_DIR/cub, else $HOME/.cache/cudajit/cub (read on each call).
std::string defaultCubCacheDir();

}  // namespace cj::cub
