#include "cub/disk_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "cub/sha256.h"

namespace cj::cub {
namespace {

constexpr char kMagic[8] = {'C', 'J', 'C', 'U', 'B', 'L', 'T', 'O'};
constexpr uint32_t kFormatVersion = 1;
constexpr size_t kHeaderSize = 8 + 4 + 4 + 8 * 4;
constexpr size_t kMaxEntry = size_t(1) << 30;

void putU32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(char((v >> (8 * i)) & 0xff));
}
void putU64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(char((v >> (8 * i)) & 0xff));
}
uint64_t getLE(const std::string& in, size_t pos, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= uint64_t(uint8_t(in[pos + i])) << (8 * i);
  return v;
}

// mkdir -p; true if the directory exists afterwards.
bool makeDirs(const std::string& dir) {
  if (dir.empty()) return false;
  struct stat st;
  if (stat(dir.c_str(), &st) == 0) return S_ISDIR(st.st_mode);
  size_t slash = dir.find_last_of('/');
  if (slash != std::string::npos && slash > 0 && !makeDirs(dir.substr(0, slash))) return false;
  return mkdir(dir.c_str(), 0755) == 0 || errno == EEXIST;
}

bool readFile(const std::string& path, std::string* out, bool* missing) {
  *missing = false;
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    *missing = errno == ENOENT;
    return false;
  }
  struct stat st;
  bool ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && size_t(st.st_size) <= kMaxEntry;
  if (ok) {
    out->resize(size_t(st.st_size));
    size_t done = 0;
    while (ok && done < out->size()) {
      ssize_t n = read(fd, &(*out)[done], out->size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) ok = false;
      else done += size_t(n);
    }
  }
  close(fd);
  return ok;
}

bool writeAll(int fd, const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += size_t(n);
  }
  return true;
}

}  // namespace

std::string serializeEntry(const CacheEntry& e) {
  std::string out(kMagic, sizeof(kMagic));
  putU32(out, kFormatVersion);
  putU32(out, 0);
  putU64(out, e.temp_bytes);
  putU64(out, e.temp_align);
  putU64(out, e.source.size());
  putU64(out, e.ltoir.size());
  out += e.source;
  out.append(e.ltoir.data(), e.ltoir.size());
  auto digest = sha256(out);
  out.append(reinterpret_cast<const char*>(digest.data()), digest.size());
  return out;
}

bool deserializeEntry(const std::string& in, CacheEntry* out) {
  if (in.size() < kHeaderSize + 32) return false;
  if (std::memcmp(in.data(), kMagic, sizeof(kMagic)) != 0) return false;
  if (getLE(in, 8, 4) != kFormatVersion) return false;
  uint64_t source_size = getLE(in, 32, 8);
  uint64_t ltoir_size = getLE(in, 40, 8);
  if (source_size > kMaxEntry || ltoir_size > kMaxEntry) return false;
  if (in.size() != kHeaderSize + source_size + ltoir_size + 32) return false;
  size_t body = in.size() - 32;
  auto digest = sha256(std::string_view(in.data(), body));
  if (std::memcmp(digest.data(), in.data() + body, 32) != 0) return false;
  out->temp_bytes = getLE(in, 16, 8);
  out->temp_align = getLE(in, 24, 8);
  out->source.assign(in, kHeaderSize, source_size);
  out->ltoir.assign(in.begin() + long(kHeaderSize + source_size), in.begin() + long(body));
  return out->temp_align != 0 && out->temp_bytes != 0 && !out->ltoir.empty();
}

CacheLoad DiskCache::load(const std::string& key, const std::string& expected_source,
                          CacheEntry* out) const {
  std::string bytes;
  bool missing = false;
  if (!readFile(pathFor(key), &bytes, &missing)) return missing ? CacheLoad::Missing : CacheLoad::Corrupt;
  CacheEntry e;
  if (!deserializeEntry(bytes, &e) || e.source != expected_source) return CacheLoad::Corrupt;
  *out = std::move(e);
  return CacheLoad::Hit;
}

bool DiskCache::store(const std::string& key, const CacheEntry& e) const {
  if (!makeDirs(dir_)) return false;
  static std::atomic<unsigned> counter{0};
  std::string tmp = dir_ + "/." + key + "." + std::to_string(getpid()) + "." +
                    std::to_string(counter.fetch_add(1)) + ".tmp";
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  bool ok = writeAll(fd, serializeEntry(e));
  ok = (close(fd) == 0) && ok;
  if (ok) ok = rename(tmp.c_str(), pathFor(key).c_str()) == 0;
  if (!ok) unlink(tmp.c_str());
  return ok;
}

std::string defaultCubCacheDir() {
  const char* dir = std::getenv("CUDAJIT_CACHE_DIR");
  if (dir && *dir) return std::string(dir) + "/cub";
  const char* home = std::getenv("HOME");
  if (home && *home) return std::string(home) + "/.cache/cudajit/cub";
  return "/tmp/cudajit-" + std::to_string(getuid()) + "/cub";
}

}  // namespace cj::cub
