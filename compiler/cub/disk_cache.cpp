#include "cub/disk_cache.h"

namespace cj::cub {
namespace {

constexpr uint32_t kFormatVersion = 2;   // 2: the shared support/disk_cache framing
constexpr size_t kBodyHeader = 3 * 8;


bool parseBody(std::string_view body, CacheEntry* out) {
  if (body.size() < kBodyHeader) return false;
  const uint64_t source_size = getU64(body, 16);
  if (source_size > body.size() - kBodyHeader) return false;
  out->temp_bytes = getU64(body, 0);
  out->temp_align = getU64(body, 8);
  out->source.assign(body.substr(kBodyHeader, source_size));
  std::string_view ltoir = body.substr(kBodyHeader + source_size);
  out->ltoir.assign(ltoir.begin(), ltoir.end());
  return out->temp_align != 0 && out->temp_bytes != 0 && !out->ltoir.empty();
}

}  // namespace

CubDiskCache::CubDiskCache(std::string dir)
    : files_(std::move(dir), ".cjcub", "CJCUBLTO", kFormatVersion) {}

CacheLoad CubDiskCache::load(const std::string& key, const std::string& expected_source,
                             CacheEntry* out) const {
  std::string body;
  const CacheLoad status = files_.load(key, &body);
  if (status != CacheLoad::Hit) return status;
  CacheEntry e;
  if (!parseBody(body, &e) || e.source != expected_source) return CacheLoad::Corrupt;
  *out = std::move(e);
  return CacheLoad::Hit;
}

bool CubDiskCache::store(const std::string& key, const CacheEntry& e) const {
  std::string body;
  putU64(body, e.temp_bytes);
  putU64(body, e.temp_align);
  putU64(body, e.source.size());
  body += e.source;
  body.append(e.ltoir.data(), e.ltoir.size());
  return files_.store(key, body);
}

std::string defaultCubCacheDir() { return userCacheRoot() + "/cub"; }

}  // namespace cj::cub
