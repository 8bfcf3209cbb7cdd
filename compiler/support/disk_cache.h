// On-disk caches: files written whole or not at all, and a directory of
// checksummed entries. Shared by every cache of cudajit (compiled kernels:
// runtime/kernel_cache.h; CUB LTO-IR can use it too).
//
// Entry format (integers little-endian):
//   8-byte magic  u32 format version  u32 0  u64 body size  body
//   32-byte SHA-256 of everything before it
// A reader sees a whole entry or none: writes go to a hidden temp file in the
// same directory, then rename(2) onto the final name. Several processes
// writing one key at once each rename a complete file; the last one wins and
// every reader in between sees one of them whole. A truncated or altered
// file fails its size or checksum test and reads as Corrupt, never as data.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cj {

// mkdir -p; true when the directory exists afterwards.
bool makeDirs(const std::string& dir);

enum class ReadStatus { Ok, Missing, Failed };
// The whole file (at most max_bytes: larger reads as Failed). Never throws.
ReadStatus readWholeFile(const std::string& path, std::string* out,
                         size_t max_bytes = size_t(1) << 30);

// Temp file + rename: `path` holds either its old content or all of `data`.
// False when the directory or file cannot be written. Never throws.
bool writeFileAtomic(const std::string& path, std::string_view data);

// Appends one record to a log shared by several processes: one write(2)
// with O_APPEND, so lines of different processes never interleave.
bool appendToFile(const std::string& path, std::string_view record);

// Whether `dir` is a read-only cache: it (or, where it does not exist yet,
// its nearest existing ancestor) is a directory on a read-only mount or
// without write permission, or CUDAJIT_CACHE_READONLY=1 says so (a shared
// cache that a fleet's processes only read). Such a cache is read and never
// written. (A path through a file is not read-only but broken: writes are
// tried, and fail.) Never throws.
bool cacheReadOnly(const std::string& dir);

// The root of cudajit's caches: $CUDAJIT_CACHE_DIR, else
// $XDG_CACHE_HOME/cudajit, else $HOME/.cache/cudajit, else /tmp/cudajit-<uid>.
// Read from the environment on each call.
std::string userCacheRoot();

// Checksummed framing of one entry (see the format above).
std::string sealEntry(std::string_view magic8, uint32_t version, std::string_view body);
enum class EntryCheck { Ok, Corrupt, OtherVersion };
EntryCheck openEntry(std::string_view bytes, std::string_view magic8, uint32_t version,
                     std::string_view* body);

enum class CacheLoad { Hit, Missing, Corrupt };

// A directory of entries named <key><extension>.
class DiskCache {
 public:
  DiskCache(std::string dir, std::string extension, std::string magic8, uint32_t version)
      : dir_(std::move(dir)), ext_(std::move(extension)), magic_(std::move(magic8)),
        version_(version) {}

  const std::string& dir() const { return dir_; }
  std::string pathFor(const std::string& key) const { return dir_ + "/" + key + ext_; }

  // Hit: `body` holds the entry's body. Corrupt: the file exists but is
  // truncated or fails its checksum. An entry of another format version
  // reads as Missing. Never throws.
  CacheLoad load(const std::string& key, std::string* body) const;
  // False when it could not be written (callers go on without the cache);
  // a read-only cache (cacheReadOnly) is not even tried.
  bool store(const std::string& key, std::string_view body) const;
  bool remove(const std::string& key) const;
  // Every file of this cache (full paths), hidden temp files excluded.
  std::vector<std::string> entries() const;

 private:
  std::string dir_, ext_, magic_;
  uint32_t version_;
};

}  // namespace cj
