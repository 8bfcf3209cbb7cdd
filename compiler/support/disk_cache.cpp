#include "support/disk_cache.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>

#include "support/sha256.h"

namespace cj {
namespace {

constexpr size_t kHeaderSize = 8 + 4 + 4 + 8;
constexpr size_t kDigestSize = 32;

void putLE(std::string& out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(char((v >> (8 * i)) & 0xff));
}

uint64_t getLE(std::string_view in, size_t pos, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= uint64_t(uint8_t(in[pos + i])) << (8 * i);
  return v;
}

bool writeAll(int fd, std::string_view data) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += size_t(n);
  }
  return true;
}

std::string parentOf(const std::string& path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
}

bool endsWith(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

}  // namespace

bool makeDirs(const std::string& dir) {
  if (dir.empty()) return false;
  struct stat st;
  if (stat(dir.c_str(), &st) == 0) return S_ISDIR(st.st_mode);
  size_t slash = dir.find_last_of('/');
  if (slash != std::string::npos && slash > 0 && !makeDirs(dir.substr(0, slash))) return false;
  return mkdir(dir.c_str(), 0755) == 0 || errno == EEXIST;
}

ReadStatus readWholeFile(const std::string& path, std::string* out, size_t max_bytes) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno == ENOENT || errno == ENOTDIR ? ReadStatus::Missing : ReadStatus::Failed;
  struct stat st;
  bool ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && size_t(st.st_size) <= max_bytes;
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
  return ok ? ReadStatus::Ok : ReadStatus::Failed;
}

bool writeFileAtomic(const std::string& path, std::string_view data) {
  const std::string dir = parentOf(path);
  if (!makeDirs(dir)) return false;
  static std::atomic<unsigned> counter{0};
  const auto now = std::chrono::steady_clock::now().time_since_epoch().count();
  const std::string base = path.substr(dir.size() + 1);
  const std::string tmp = dir + "/." + base + "." + std::to_string(getpid()) + "." +
                          std::to_string(counter.fetch_add(1)) + "." +
                          std::to_string(static_cast<unsigned long long>(now) % 1000000007ull) + ".tmp";
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  bool ok = writeAll(fd, data);
  ok = (close(fd) == 0) && ok;
  if (ok) ok = rename(tmp.c_str(), path.c_str()) == 0;
  if (!ok) unlink(tmp.c_str());
  return ok;
}

bool appendToFile(const std::string& path, std::string_view record) {
  makeDirs(parentOf(path));
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  bool ok = writeAll(fd, record);
  return (close(fd) == 0) && ok;
}

std::string userCacheRoot() {
  if (const char* dir = std::getenv("CUDAJIT_CACHE_DIR"); dir && *dir) return dir;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return std::string(xdg) + "/cudajit";
  if (const char* home = std::getenv("HOME"); home && *home) return std::string(home) + "/.cache/cudajit";
  return "/tmp/cudajit-" + std::to_string(getuid());
}

std::string sealEntry(std::string_view magic8, uint32_t version, std::string_view body) {
  std::string out(magic8.substr(0, 8));
  out.resize(8, '\0');
  putLE(out, version, 4);
  putLE(out, 0, 4);
  putLE(out, body.size(), 8);
  out.append(body.data(), body.size());
  auto digest = sha256(out);
  out.append(reinterpret_cast<const char*>(digest.data()), digest.size());
  return out;
}

EntryCheck openEntry(std::string_view in, std::string_view magic8, uint32_t version,
                     std::string_view* body) {
  if (in.size() < kHeaderSize + kDigestSize) return EntryCheck::Corrupt;
  if (in.compare(0, 8, magic8.substr(0, 8)) != 0) return EntryCheck::Corrupt;
  if (getLE(in, 8, 4) != version) return EntryCheck::OtherVersion;
  const uint64_t size = getLE(in, 16, 8);
  if (size != in.size() - kHeaderSize - kDigestSize) return EntryCheck::Corrupt;
  const size_t covered = in.size() - kDigestSize;
  auto digest = sha256(in.substr(0, covered));
  if (std::memcmp(digest.data(), in.data() + covered, kDigestSize) != 0) return EntryCheck::Corrupt;
  *body = in.substr(kHeaderSize, size);
  return EntryCheck::Ok;
}

CacheLoad DiskCache::load(const std::string& key, std::string* body) const {
  std::string bytes;
  switch (readWholeFile(pathFor(key), &bytes)) {
    case ReadStatus::Missing: return CacheLoad::Missing;
    case ReadStatus::Failed: return CacheLoad::Corrupt;
    case ReadStatus::Ok: break;
  }
  std::string_view view;
  switch (openEntry(bytes, magic_, version_, &view)) {
    case EntryCheck::OtherVersion: return CacheLoad::Missing;
    case EntryCheck::Corrupt: return CacheLoad::Corrupt;
    case EntryCheck::Ok: break;
  }
  body->assign(view.data(), view.size());
  return CacheLoad::Hit;
}

bool DiskCache::store(const std::string& key, std::string_view body) const {
  if (cacheReadOnly(dir_)) return false;
  return writeFileAtomic(pathFor(key), sealEntry(magic_, version_, body));
}

bool cacheReadOnly(const std::string& dir) {
  if (const char* ro = std::getenv("CUDAJIT_CACHE_READONLY"); ro && *ro && std::strcmp(ro, "0") != 0) return true;
  std::string d = dir;
  while (!d.empty()) {
    struct stat st;
    if (stat(d.c_str(), &st) == 0) return S_ISDIR(st.st_mode) && access(d.c_str(), W_OK | X_OK) != 0;
    const size_t slash = d.find_last_of('/');
    if (slash == std::string::npos) return access(".", W_OK | X_OK) != 0;
    d = slash == 0 ? "/" : d.substr(0, slash);
  }
  return false;
}

bool DiskCache::remove(const std::string& key) const { return unlink(pathFor(key).c_str()) == 0; }

std::vector<std::string> DiskCache::entries() const {
  std::vector<std::string> out;
  DIR* d = opendir(dir_.c_str());
  if (!d) return out;
  while (dirent* e = readdir(d)) {
    std::string name = e->d_name;
    if (name.empty() || name[0] == '.' || !endsWith(name, ext_)) continue;
    out.push_back(dir_ + "/" + name);
  }
  closedir(d);
  return out;
}

}  // namespace cj
