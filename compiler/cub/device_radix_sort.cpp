#include "cub/device_radix_sort.h"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <mutex>

#include "cub/cub.h"
#include "cub/disk_cache.h"
#include "cub/nvrtc.h"
#include "support/disk_cache.h"
#include "support/error.h"
#include "support/lru_map.h"
#include "support/sha256.h"

namespace cj::cub {
namespace {

// Bump when the generated source, the entry body or its meaning changes.
constexpr const char* kKeyVersion = "cudajit-radix-sort-1";
constexpr uint32_t kFormatVersion = 1;

struct KeyType {
  const char* name;
  const char* cpp;
};
// The key types cudajit.compute.radix_sort takes (as CUB sorts them:
// integers by value, floats in IEEE order with -0.0 == +0.0).
constexpr KeyType kKeys[] = {{"int32", "int"},           {"uint32", "unsigned int"},
                             {"int64", "long long"},     {"uint64", "unsigned long long"},
                             {"float32", "float"},       {"float64", "double"}};

const char* keyCpp(const std::string& key) {
  for (const auto& k : kKeys)
    if (key == k.name) return k.cpp;
  return nullptr;
}

// Values are only moved: a type of their size (the policy depends on the
// size alone for 4- and 8-byte keys).
const char* valueCpp(int bytes) {
  switch (bytes) {
    case 0: return "cub::NullType";
    case 1: return "unsigned char";
    case 2: return "unsigned short";
    case 4: return "unsigned int";
    case 8: return "unsigned long long";
    case 16: return "cj_bytes16";
    default: return nullptr;
  }
}

const char* order(const RadixSortSpec& s) { return s.descending ? "cub::SortOrder::Descending" : "cub::SortOrder::Ascending"; }

// The name expressions, in the order of `names` in compile(): the policy
// first, then the kernels. PortionOffsetT and AtomicOffsetT are int, as
// DispatchRadixSort::InvokeOnesweep has them.
std::vector<std::string> nameExpressions(const RadixSortSpec& s) {
  std::string o = order(s);
  return {
      "&cj_radix_policy<Active::ONESWEEP_RADIX_BITS, Active::OnesweepPolicy::BLOCK_THREADS, "
      "Active::OnesweepPolicy::ITEMS_PER_THREAD, Active::HistogramPolicy::BLOCK_THREADS, "
      "Active::HistogramPolicy::RADIX_BITS, Active::ExclusiveSumPolicy::BLOCK_THREADS, "
      "Active::ExclusiveSumPolicy::RADIX_BITS, Active::SingleTilePolicy::BLOCK_THREADS, "
      "Active::SingleTilePolicy::ITEMS_PER_THREAD, int(Active::ONESWEEP)>",
      "&cub::detail::radix_sort::DeviceRadixSortHistogramKernel<Hub::MaxPolicy, " + o + ", Key, Offset>",
      "&cub::detail::radix_sort::DeviceRadixSortExclusiveSumKernel<Hub::MaxPolicy, Offset>",
      "&cub::detail::radix_sort::DeviceRadixSortOnesweepKernel<Hub::MaxPolicy, " + o +
          ", Key, Value, Offset, int, int>",
      "&cub::detail::radix_sort::DeviceRadixSortSingleTileKernel<Hub::MaxPolicy, " + o +
          ", Key, Value, Offset>",
  };
}

std::vector<std::string> radixOptions(const RadixSortSpec& s) {
  return {"-arch=sm_" + std::to_string(s.arch), "-std=c++17", "-default-device"};
}

// "_Z15cj_radix_policyILi8ELi384E...EEvv" -> 8, 384, ...
bool templateInts(const std::string& lowered, std::vector<long>* out) {
  size_t at = lowered.find("cj_radix_policyI");
  if (at == std::string::npos) return false;
  at += std::strlen("cj_radix_policyI");
  while (lowered.compare(at, 2, "Li") == 0) {
    at += 2;
    bool negative = at < lowered.size() && lowered[at] == 'n';
    if (negative) ++at;
    size_t end = at;
    while (end < lowered.size() && lowered[end] >= '0' && lowered[end] <= '9') ++end;
    if (end == at || end >= lowered.size() || lowered[end] != 'E') return false;
    long v = std::stol(lowered.substr(at, end - at));
    out->push_back(negative ? -v : v);
    at = end + 1;
  }
  return true;
}

RadixSortPolicy policyFrom(const std::string& lowered, const RadixSortSpec& s) {
  std::vector<long> v;
  if (!templateInts(lowered, &v) || v.size() != 10)
    throw ToolchainError("cannot read CUB's radix sort policy for " + describe(s) + " from NVRTC's lowered name '" +
                         lowered + "'");
  RadixSortPolicy p;
  p.radix_bits = int(v[0]);
  p.onesweep_threads = int(v[1]);
  p.onesweep_items = int(v[2]);
  p.histogram_threads = int(v[3]);
  p.exclusive_sum_threads = int(v[5]);
  p.single_tile_threads = int(v[7]);
  p.single_tile_items = int(v[8]);
  p.onesweep = v[9] != 0;
  // The host dispatch below assumes what CUB's InvokeOnesweep does: one
  // digit width for the histogram, the sums and the passes.
  if (v[4] != v[0] || v[6] != v[0] || p.radix_bits < 1 || p.radix_bits > 16 || p.onesweep_threads <= 0 ||
      p.onesweep_items <= 0 || p.histogram_threads <= 0 || p.exclusive_sum_threads <= 0 ||
      p.single_tile_threads <= 0 || p.single_tile_items <= 0)
    throw ToolchainError("CUB's radix sort policy for " + describe(s) + " is not one cudajit's dispatch knows ('" +
                         lowered + "')");
  return p;
}

std::string policyText(const RadixSortPolicy& p) {
  return std::to_string(p.radix_bits) + " " + std::to_string(p.onesweep_threads) + " " +
         std::to_string(p.onesweep_items) + " " + std::to_string(p.histogram_threads) + " " +
         std::to_string(p.exclusive_sum_threads) + " " + std::to_string(p.single_tile_threads) + " " +
         std::to_string(p.single_tile_items) + " " + (p.onesweep ? "1" : "0");
}

bool parsePolicy(const std::string& text, RadixSortPolicy* p) {
  int onesweep = 0;
  if (std::sscanf(text.c_str(), "%d %d %d %d %d %d %d %d", &p->radix_bits, &p->onesweep_threads,
                  &p->onesweep_items, &p->histogram_threads, &p->exclusive_sum_threads,
                  &p->single_tile_threads, &p->single_tile_items, &onesweep) != 8)
    return false;
  p->onesweep = onesweep != 0;
  return p->radix_bits > 0 && p->onesweep_threads > 0 && p->histogram_threads > 0;
}

// Entry body: lines "policy ...", "histogram NAME", "exclusive_sum NAME",
// "onesweep NAME", "single_tile NAME", then an empty line; u64 source size,
// the source (a key collision reads as corrupt); the cubin.
std::string entryBody(const RadixSortProgram& p, const std::string& source) {
  std::string body = "policy " + policyText(p.policy) + "\nhistogram " + p.histogram + "\nexclusive_sum " +
                     p.exclusive_sum + "\nonesweep " + p.onesweep + "\nsingle_tile " + p.single_tile + "\n\n";
  putU64(body, source.size());
  body += source;
  body.append(p.cubin->data(), p.cubin->size());
  return body;
}

bool parseEntry(std::string_view body, const std::string& source, RadixSortProgram* p) {
  size_t end = body.find("\n\n");
  if (end == std::string_view::npos) return false;
  std::string header(body.substr(0, end + 1));
  size_t at = end + 2;
  if (body.size() < at + 8) return false;
  uint64_t source_size = getU64(body, at);
  at += 8;
  if (source_size > body.size() - at || body.substr(at, source_size) != source) return false;
  at += source_size;
  std::string_view cubin = body.substr(at);
  if (cubin.empty()) return false;
  size_t pos = 0;
  while (pos < header.size()) {
    size_t nl = header.find('\n', pos);
    std::string line = header.substr(pos, nl - pos);
    pos = nl + 1;
    size_t sp = line.find(' ');
    if (sp == std::string::npos) return false;
    std::string field = line.substr(0, sp), value = line.substr(sp + 1);
    if (field == "policy") {
      if (!parsePolicy(value, &p->policy)) return false;
    } else if (field == "histogram") {
      p->histogram = value;
    } else if (field == "exclusive_sum") {
      p->exclusive_sum = value;
    } else if (field == "onesweep") {
      p->onesweep = value;
    } else if (field == "single_tile") {
      p->single_tile = value;
    } else {
      return false;
    }
  }
  if (p->histogram.empty() || p->exclusive_sum.empty() || p->onesweep.empty() || p->single_tile.empty())
    return false;
  p->cubin = std::make_shared<const std::vector<char>>(cubin.begin(), cubin.end());
  return true;
}

std::string keyOf(const RadixSortSpec& s, const std::string& source) {
  Sha256 h;
  auto field = [&](const std::string& name, const std::string& value) {
    h.update(name + " " + std::to_string(value.size()) + "\n");
    h.update(value);
  };
  field("version", kKeyVersion);
  field("source", source);
  field("toolchain", toolchainIdentity());
  for (const auto& o : radixOptions(s)) field("option", o);
  for (const auto& e : nameExpressions(s)) field("name", e);
  auto d = h.digest();
  return toHex(d.data(), d.size());
}

DiskCache diskCache() { return DiskCache(cacheDirectory(), ".cjrsort", "CJRSORT1", kFormatVersion); }

RadixSortProgram compile(const RadixSortSpec& s, const std::string& source) {
  std::vector<std::string> options = radixOptions(s);
  options.push_back("-I" + ccclIncludeDir());
  std::string name = "cj_radix_sort_" + s.key + "_v" + std::to_string(s.value_bytes) +
                     (s.descending ? "_desc" : "_asc") + (s.offset64 ? "_o64" : "_o32");
  // NVRTC otherwise seeds TU-local symbol names randomly: the same spec
  // would give different bytes in each process.
  options.push_back("-frandom-seed=" + sha256Hex(name).substr(0, 16));
  NvrtcOutput out = Nvrtc::get().compileToCubin(source, name, options, nameExpressions(s));
  RadixSortProgram p;
  p.policy = policyFrom(out.lowered_names.at(0), s);
  p.histogram = out.lowered_names.at(1);
  p.exclusive_sum = out.lowered_names.at(2);
  p.onesweep = out.lowered_names.at(3);
  p.single_tile = out.lowered_names.at(4);
  p.cubin = std::make_shared<const std::vector<char>>(std::move(out.ltoir));
  return p;
}

struct State {
  std::mutex mutex;
  LruMap<RadixSortProgram> memory;
};
State& state() {
  static State s;
  return s;
}

}  // namespace

void checkRadixSortSpec(const RadixSortSpec& s) {
  if (!keyCpp(s.key))
    throw ToolchainError("radix_sort: CUB's kernels take keys int32, uint32, int64, uint64, float32, float64; got '" +
                         s.key + "'");
  if (!valueCpp(s.value_bytes))
    throw ToolchainError("radix_sort: CUB's kernels move values of 1, 2, 4, 8 or 16 bytes; got " +
                         std::to_string(s.value_bytes));
  if (s.arch < 50 || s.arch > 1300) throw ToolchainError("radix_sort: no GPU architecture sm_" + std::to_string(s.arch));
}

std::string describe(const RadixSortSpec& s) {
  return "radix_sort " + s.key + " v" + std::to_string(s.value_bytes) + (s.descending ? " descending" : " ascending") +
         (s.offset64 ? " o64" : " o32") + " sm_" + std::to_string(s.arch);
}

std::string radixSortSource(const RadixSortSpec& s) {
  checkRadixSortSpec(s);
  std::string src =
      "// cudajit: cub::DeviceRadixSort's kernels for " + describe(s) + "\n"
      "#include <cub/device/dispatch/kernels/radix_sort.cuh>\n"
      "#include <cub/device/dispatch/tuning/tuning_radix_sort.cuh>\n"
      "struct alignas(8) cj_bytes16 { unsigned long long lo, hi; };\n"
      "using Key = " + std::string(keyCpp(s.key)) + ";\n"
      "using Value = " + valueCpp(s.value_bytes) + ";\n"
      "using Offset = " + (s.offset64 ? "unsigned long long" : "unsigned int") + ";\n"
      "using Hub = cub::detail::radix::policy_hub<Key, Value, Offset>;\n"
      "// The policy the kernels take for this architecture (ChainedPolicy reads __CUDA_ARCH__)\n"
      "using Active = Hub::MaxPolicy::ActivePolicy;\n"
      "// Its numbers, read back by the host from this template's lowered name.\n"
      "template <int RadixBits, int OnesweepThreads, int OnesweepItems, int HistogramThreads, int HistogramBits,\n"
      "          int SumThreads, int SumBits, int SingleTileThreads, int SingleTileItems, int Onesweep>\n"
      "__global__ void cj_radix_policy() {}\n";
  return src;
}

void clearRadixSortMemoryCache() {
  std::lock_guard<std::mutex> lock(state().mutex);
  state().memory.clear();
}

std::string radixSortCachePath(const RadixSortSpec& s) {
  return diskCache().pathFor(keyOf(s, radixSortSource(s)));
}

RadixSortProgram radixSortProgram(const RadixSortSpec& spec) {
  std::string source = radixSortSource(spec);   // validates
  std::string mkey = describe(spec);
  State& st = state();
  {
    std::lock_guard<std::mutex> lock(st.mutex);
    if (const RadixSortProgram* found = st.memory.find(mkey)) {
      RadixSortProgram hit = *found;
      hit.from = RadixSortProgram::From::Memory;
      return hit;
    }
  }
  DiskCache disk = diskCache();
  std::string key = keyOf(spec, source);
  RadixSortProgram p;
  std::string body;
  if (disk.load(key, &body) == CacheLoad::Hit && parseEntry(body, source, &p)) {
    p.from = RadixSortProgram::From::Disk;
  } else {   // missing or corrupt: compiled again, and (re)written
    auto start = std::chrono::steady_clock::now();
    p = compile(spec, source);   // outside the lock: NVRTC takes seconds
    p.compile_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    p.from = RadixSortProgram::From::Compiled;
    disk.store(key, entryBody(p, source));   // a cache that cannot be written: the program still serves
  }
  p.spec = spec;
  p.key = key;
  std::lock_guard<std::mutex> lock(st.mutex);
  st.memory.put(mkey, p, memoryCacheLimit());
  return p;
}

}  // namespace cj::cub
