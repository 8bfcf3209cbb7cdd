#include "cub/cub.h"

#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <sstream>
#include <unordered_map>

#include "cub/disk_cache.h"
#include "cub/nvrtc.h"
#include "support/sha256.h"
#include "cub/toolkit.h"
#include "support/error.h"
#include "support/lru_map.h"

namespace cj::cub {
namespace {

// Bump when the generated code or entry format changes meaning.
constexpr const char* kKeyVersion = "cudajit-cub-2";

std::string readText(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

// Which NVRTC, without loading it (dlopen of the 100 MB library costs ~30 ms,
// most of a warm-cache lookup): its real path, size and mtime. Any other
// NVRTC build, even of the same version, gives other keys. If the library is
// only reachable by soname, it is loaded and its version used instead.
std::string nvrtcIdentity() {
  std::string path = findNvrtcLibrary();
  char real[PATH_MAX];
  struct stat st;
  if (realpath(path.c_str(), real) && stat(real, &st) == 0)
    return std::string("file ") + real + " " + std::to_string(st.st_size) + " " +
           std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec);
  return "version " + Nvrtc::get().version();
}

// What the compiler is, once per process: NVRTC and the CCCL headers.
struct Toolchain {
  std::string nvrtc_identity;
  std::string cccl_dir;
  std::string cccl_identity;  // the version headers' text: part of every key
};

const Toolchain& toolchain() {
  static const Toolchain t = [] {
    Toolchain t;
    t.nvrtc_identity = nvrtcIdentity();
    t.cccl_dir = findCcclIncludeDir();
    t.cccl_identity = readText(t.cccl_dir + "/cub/version.cuh") +
                      readText(t.cccl_dir + "/cuda/std/__cccl/version.h");
    return t;
  }();
  return t;
}

bool pchEnabled() {
  const char* v = std::getenv("CUDAJIT_CUB_PCH");
  return !(v && std::string(v) == "0");
}

struct State {
  std::mutex mutex;
  LruMap<Instance> memory;   // entry name @ arch -> instance, the most recently used (lru_map.h)
  CacheStats stats;
};
State& state() {
  static State s;
  return s;
}

std::string memoryKey(const Spec& s) { return entryName(s) + "@" + std::to_string(s.arch); }

std::string keyOf(const Generated& g) {
  const Toolchain& t = toolchain();
  Sha256 h;
  auto field = [&](const std::string& name, const std::string& value) {
    h.update(name + " " + std::to_string(value.size()) + "\n");
    h.update(value);
  };
  field("version", kKeyVersion);
  field("source", g.source);
  field("nvrtc", t.nvrtc_identity);
  field("cccl", t.cccl_identity);
  for (const auto& o : compileOptions(g.spec.arch)) field("option", o);
  auto d = h.digest();
  return toHex(d.data(), d.size());
}

Instance compile(const Generated& g) {
  const Toolchain& t = toolchain();
  std::vector<std::string> options = compileOptions(g.spec.arch);
  options.push_back("-I" + t.cccl_dir);
  // NVRTC otherwise seeds TU-local symbol names randomly: the same spec
  // would give different bytes in each process.
  options.push_back("-frandom-seed=" + sha256Hex(g.entry.name).substr(0, 16));
  if (pchEnabled()) options.push_back("-pch");
  NvrtcOutput out = Nvrtc::get().compileToLtoIr(g.source, g.entry.name, options, {g.layout_expression});
  Instance inst;
  if (!layoutFromLoweredName(out.lowered_names.at(0), &inst.temp_bytes, &inst.temp_align))
    throw ToolchainError("cannot read the temp-storage layout of " + g.entry.name +
                         " from NVRTC's lowered name '" + out.lowered_names[0] + "'");
  inst.ltoir = std::make_shared<const std::vector<char>>(std::move(out.ltoir));
  return inst;
}

}  // namespace

std::vector<std::string> compileOptions(int arch) {
  return {"-arch=compute_" + std::to_string(arch), "-dlto", "-std=c++17", "-default-device"};
}

std::string toolchainIdentity() {
  const Toolchain& t = toolchain();
  return "nvrtc " + t.nvrtc_identity + "\ncccl " + t.cccl_identity;
}

std::string ccclIncludeDir() { return toolchain().cccl_dir; }

std::string toolchainDescription() {
  const Toolchain& t = toolchain();
  const Nvrtc& nvrtc = Nvrtc::get();
  return "NVRTC " + nvrtc.version() + " (" + nvrtc.path() + "), CCCL headers " + t.cccl_dir;
}

std::string cacheDirectory() { return defaultCubCacheDir(); }

std::string cacheKey(const Spec& spec) { return keyOf(generate(spec)); }

std::string cachePath(const Spec& spec) { return CubDiskCache(cacheDirectory()).pathFor(cacheKey(spec)); }

Instance instantiate(const Spec& spec) {
  Generated g = generate(spec);  // validates; cheap
  State& st = state();
  std::string mkey = memoryKey(g.spec);
  {
    std::lock_guard<std::mutex> lock(st.mutex);
    if (const Instance* found = st.memory.find(mkey)) {
      ++st.stats.memory_hits;
      Instance hit = *found;
      hit.from = Instance::From::Memory;
      return hit;
    }
  }

  Instance inst;
  CubDiskCache disk(cacheDirectory());
  std::string key = keyOf(g);
  CacheEntry entry;
  CacheLoad loaded = disk.load(key, g.source, &entry);
  if (loaded == CacheLoad::Hit) {
    inst.temp_bytes = entry.temp_bytes;
    inst.temp_align = entry.temp_align;
    inst.ltoir = std::make_shared<const std::vector<char>>(std::move(entry.ltoir));
    inst.from = Instance::From::Disk;
  } else {
    auto start = std::chrono::steady_clock::now();
    inst = compile(g);  // outside the lock: NVRTC takes a while
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    entry.source = g.source;
    entry.ltoir = *inst.ltoir;
    entry.temp_bytes = inst.temp_bytes;
    entry.temp_align = inst.temp_align;
    bool written = disk.store(key, entry);
    std::lock_guard<std::mutex> lock(st.mutex);
    ++st.stats.compiles;
    st.stats.compile_seconds += seconds;
    if (loaded == CacheLoad::Corrupt) ++st.stats.corrupt_entries;
    if (!written) ++st.stats.write_failures;
  }
  inst.spec = g.spec;
  inst.entry = g.entry;
  inst.source = std::move(g.source);

  std::lock_guard<std::mutex> lock(st.mutex);
  if (inst.from == Instance::From::Disk) ++st.stats.disk_hits;
  st.stats.evictions += st.memory.put(mkey, inst, memoryCacheLimit());
  st.stats.memory_entries = st.memory.size();
  return inst;
}

CacheStats cacheStats() {
  std::lock_guard<std::mutex> lock(state().mutex);
  return state().stats;
}

void clearMemoryCache() {
  std::lock_guard<std::mutex> lock(state().mutex);
  state().memory.clear();
  state().stats.memory_entries = 0;
}

}  // namespace cj::cub
