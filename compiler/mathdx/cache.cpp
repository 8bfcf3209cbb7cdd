// The caches in front of libmathdx (an instantiation costs an NVRTC compile
// of cuBLASDx, ~20 s): this process's results by spec, then a
// support/disk_cache.h directory <cache root>/mathdx of <sha256>.cjmdx
// entries, keyed by the spec and libmathdx's identity (version, file size
// and mtime of libmathdx and of the NVRTC it runs on).
//
// Entry body: "key value..." lines (traits, LTO-IR sizes), an empty line,
// then the LTO-IR modules back to back. The stored spec must equal the
// requested one (a key collision reads as corrupt and is recompiled).
#include <atomic>
#include <map>
#include <mutex>
#include <cstdlib>

#include "mathdx/library.h"
#include "mathdx/mathdx.h"
#include "mathdx/matmul.h"
#include "support/disk_cache.h"
#include "support/sha256.h"

namespace cj::mathdx {
namespace {

constexpr uint32_t kFormatVersion = 1;

std::mutex g_mutex;
std::map<std::string, std::shared_ptr<const MatmulResult>> g_memory;
std::map<std::string, std::shared_ptr<const MatmulResult>> g_by_key;   // specKey -> result
std::atomic<int64_t> g_memory_hits{0}, g_disk_hits{0}, g_compiles{0};

DiskCache diskCache() { return DiskCache(cacheDirectory(), ".cjmdx", "CJMATHDX", kFormatVersion); }

// The array fields of MatmulResult, by their names in the entry.
struct ArrayField {
  const char* name;
  std::array<int64_t, 3> MatmulResult::*field;
};
const ArrayField kArrays[] = {
    {"value_size", &MatmulResult::value_size},
    {"size", &MatmulResult::size},
    {"block_dim", &MatmulResult::block_dim},
    {"suggested_block_dim", &MatmulResult::suggested_block_dim},
    {"leading_dimension", &MatmulResult::leading_dimension},
    {"suggested_leading_dimension", &MatmulResult::suggested_leading_dimension},
    {"alignment", &MatmulResult::alignment},
};
struct NameField {
  const char* name;
  std::array<std::string, 3> MatmulResult::*field;
};
const NameField kNames[] = {
    {"value_type", &MatmulResult::value_type},
    {"arrangement", &MatmulResult::arrangement},
};

// No iostreams (spec.cpp says why): integers through std::to_string and strtoll.
std::string serialize(const MatmulResult& r) {
  std::string out = "spec " + r.spec + "\nsymbol " + r.symbol + "\nmax_threads_per_block " +
                    std::to_string(r.max_threads_per_block) + "\nshared_memory_size " +
                    std::to_string(r.shared_memory_size) + "\n";
  for (const auto& f : kArrays) {
    const auto& v = r.*f.field;
    out += std::string(f.name) + " " + std::to_string(v[0]) + " " + std::to_string(v[1]) + " " +
           std::to_string(v[2]) + "\n";
  }
  for (const auto& f : kNames) {
    const auto& v = r.*f.field;
    out += std::string(f.name) + " " + v[0] + " " + v[1] + " " + v[2] + "\n";
  }
  out += "ltoir";
  for (const auto& m : r.ltoir) out += " " + std::to_string(m.size());
  out += "\n\n";
  for (const auto& m : r.ltoir) out.append(m.data(), m.size());
  return out;
}

// The space-separated words of a line.
std::vector<std::string> words(const std::string& line) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at < line.size()) {
    size_t end = line.find(' ', at);
    if (end == std::string::npos) end = line.size();
    out.push_back(line.substr(at, end - at));
    at = end + 1;
  }
  return out;
}

int64_t number(const std::string& s) { return std::strtoll(s.c_str(), nullptr, 10); }

bool deserialize(const std::string& body, const std::string& spec, MatmulResult* r) {
  size_t end = body.find("\n\n");
  if (end == std::string::npos) return false;
  std::vector<size_t> sizes;
  for (size_t at = 0; at < end;) {
    size_t eol = body.find('\n', at);
    if (eol == std::string::npos || eol > end) eol = end;
    std::string line = body.substr(at, eol - at);
    at = eol + 1;
    size_t space = line.find(' ');
    std::string key = line.substr(0, space);
    std::string rest = space == std::string::npos ? std::string() : line.substr(space + 1);
    std::vector<std::string> w = words(rest);
    if (key == "spec") r->spec = rest;
    else if (key == "symbol") r->symbol = rest;
    else if (key == "max_threads_per_block" && w.size() == 1) r->max_threads_per_block = number(w[0]);
    else if (key == "shared_memory_size" && w.size() == 1) r->shared_memory_size = number(w[0]);
    else if (key == "ltoir") for (const auto& s : w) sizes.push_back(size_t(number(s)));
    for (const auto& f : kArrays)
      if (key == f.name && w.size() == 3)
        for (int i = 0; i < 3; ++i) (r->*f.field)[i] = number(w[i]);
    for (const auto& f : kNames)
      if (key == f.name && w.size() == 3)
        for (int i = 0; i < 3; ++i) (r->*f.field)[i] = w[i];
  }
  size_t at = end + 2;
  for (size_t s : sizes) {
    if (at + s > body.size()) return false;
    r->ltoir.emplace_back(body.begin() + at, body.begin() + at + s);
    at += s;
  }
  return r->spec == spec && at == body.size() && !r->ltoir.empty() && !r->symbol.empty();
}

}  // namespace

std::string cacheDirectory() { return userCacheRoot() + "/mathdx"; }

std::string compileSerialized(const MatmulSpec& spec) { return serialize(compileMatmul(spec)); }

std::shared_ptr<const MatmulResult> matmul(const MatmulSpec& spec, const Instantiate& elsewhere) {
  const std::string text = spec.toString();
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    auto it = g_memory.find(text);
    if (it != g_memory.end()) {
      ++g_memory_hits;
      return it->second;
    }
  }
  const Api& a = api();   // LibraryMissing before any cache is read
  const std::string key = sha256Hex(std::to_string(kFormatVersion) + "\n" + a.identity + "\n" + text);
  DiskCache disk = diskCache();
  std::string body;
  auto result = std::make_shared<MatmulResult>();
  if (disk.load(key, &body) == CacheLoad::Hit && deserialize(body, text, result.get())) {
    ++g_disk_hits;
  } else {
    // One instantiation at a time: libmathdx does not say it is thread-safe.
    static std::mutex compile_mutex;
    std::lock_guard<std::mutex> lock(compile_mutex);
    body = elsewhere ? elsewhere(spec) : compileSerialized(spec);
    if (!deserialize(body, text, result.get()))
      throw ToolchainError("libmathdx: the instantiation of " + text + " came back malformed");
    ++g_compiles;
    disk.store(key, body);   // a failed write only costs the next process a compile
  }
  std::lock_guard<std::mutex> lock(g_mutex);
  auto served = g_memory.emplace(text, std::move(result)).first->second;
  g_by_key[specKey(text)] = served;
  return served;
}

// libmathdx's version is part of the key: a kernel cached on disk under it
// (the key is in its IR) is not reused with another libmathdx's code.
std::string specKey(const std::string& spec_text) {
  return sha256Hex("libmathdx " + api().version + "\n" + spec_text).substr(0, 16);
}

std::shared_ptr<const MatmulResult> servedResult(const std::string& key) {
  std::lock_guard<std::mutex> lock(g_mutex);
  auto it = g_by_key.find(key);
  return it == g_by_key.end() ? nullptr : it->second;
}

CacheStats cacheStats() { return {g_memory_hits.load(), g_disk_hits.load(), g_compiles.load()}; }

void clearMemoryCache() {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_memory.clear();
}

}  // namespace cj::mathdx
