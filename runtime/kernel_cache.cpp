#include "runtime/kernel_cache.h"

#include <climits>
#include <cstdint>
#include <map>
#include <mutex>
#include <stdexcept>

#include "libcalls/foreign.h"
#include "support/error.h"
#include "types/signature.h"
#include "runtime/toolkit_identity.h"
#include "support/sha256.h"

namespace cj::rt {
namespace {

constexpr char kMagic[] = "CJKERNEL";
constexpr uint32_t kFormat = 1;

// The body: a sequence of named fields, each "u32 name size, name, u64 value
// size, value" (little-endian), so fields can be added without a new format.
class FieldWriter {
 public:
  void add(const std::string& name, const std::string& value) {
    put(name.size(), 4);
    out_ += name;
    put(value.size(), 8);
    out_ += value;
  }
  std::string take() { return std::move(out_); }

 private:
  void put(uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) out_.push_back(char((v >> (8 * i)) & 0xff));
  }
  std::string out_;
};

class FieldReader {
 public:
  explicit FieldReader(const std::string& in) : in_(in) {}
  // False at the end or on a malformed field (ok() tells which).
  bool next(std::string* name, std::string* value) {
    if (pos_ == in_.size()) return false;
    uint64_t n = 0, v = 0;
    if (!get(4, &n) || in_.size() - pos_ < n) return fail();
    name->assign(in_, pos_, n);
    pos_ += n;
    if (!get(8, &v) || in_.size() - pos_ < v) return fail();
    value->assign(in_, pos_, v);
    pos_ += v;
    return true;
  }
  bool ok() const { return ok_; }

 private:
  bool get(int bytes, uint64_t* v) {
    if (in_.size() - pos_ < size_t(bytes)) return false;
    *v = 0;
    for (int i = 0; i < bytes; ++i) *v |= uint64_t(uint8_t(in_[pos_ + i])) << (8 * i);
    pos_ += bytes;
    return true;
  }
  bool fail() {
    ok_ = false;
    return false;
  }
  const std::string& in_;
  size_t pos_ = 0;
  bool ok_ = true;
};

}  // namespace

KernelKey kernelKey(const KernelKeyParts& p) {
  const driver::CompileOptions& o = *p.options;
  std::string t = "cudajit kernel cache key v1\n";
  t += cudajitIdentity() + "\n";
  t += toolkitIdentity();
  t += "arch sm_" + std::to_string(p.arch) + "\n";
  t += "options opt=" + std::to_string(o.target.opt) + " fastmath=" + std::to_string(o.target.fastmath) +
       " debug=" + std::to_string(o.target.debug) + " lineinfo=" + std::to_string(o.target.lineinfo) + " fast_compile=" + o.target.fast_compile +
       " device=" + std::to_string(o.device) + " block=" + std::to_string(o.infer.block_dims[0]) + "," +
       std::to_string(o.infer.block_dims[1]) + "," + std::to_string(o.infer.block_dims[2]) + "\n";
  // The LLVM back end: its LLVM's version too (toolkitIdentity names libNVVM's).
  if (o.target.backend == link::BackendKind::Llvm) t += "backend llvm " + link::llvmBackendVersion() + "\n";
  if (!o.tile && (o.max_threads || o.occupancy || o.max_cluster_rank))   // launch_bounds
    t += "launch_bounds " + std::to_string(o.max_threads) + "," + std::to_string(o.occupancy) + "," +
         std::to_string(o.max_cluster_rank) + "\n";
  if (o.tile) {   // tile kernels: the model, the warp count asked for, the Constant values
    t += "tile num_warps=" + std::to_string(o.num_warps);
    if (o.occupancy) t += " occupancy=" + std::to_string(o.occupancy);
    for (const auto& [index, value] : o.constant_args) t += " " + std::to_string(index) + "=" + ir::constToString(value);
    t += "\n";
  }
  if (!o.link_files.empty()) {   // the files as they are now (a .cu edited since is another kernel)
    try {
      t += "link " + libcalls::foreign::linkIdentity(o.link_files) + "\n";
    } catch (const std::invalid_argument& e) {
      throw ToolchainError(e.what());
    }
  }
  std::string args;
  for (const Type* a : *p.args) args += typeToString(a) + ";";
  t += "args " + args + "\n";
  t += "ir\n" + *p.untyped_ir;
  return {t, sha256Hex(t)};
}

std::string kernelCacheDir() { return userCacheRoot() + "/kernels"; }

DiskCache kernelDiskCache() { return DiskCache(kernelCacheDir(), ".cjk", kMagic, kFormat); }

std::string serializeKernel(const CachedKernel& k) {
  const driver::CompiledKernel& c = k.compiled;
  FieldWriter w;
  w.add("key", k.key_text);
  w.add("qualname", k.qualname);
  w.add("filename", k.filename);
  w.add("signature", k.signature);
  w.add("arch", std::to_string(k.arch));
  w.add("created", std::to_string(k.created));
  w.add("compile_seconds", std::to_string(k.compile_seconds));
  w.add("symbol", c.symbol);
  w.add("return_type", c.return_type ? typeToString(c.return_type) : "");
  w.add("typed_ir", c.typed_ir);
  w.add("nvvm_ir", c.nvvm_ir);
  w.add("ptx", c.ptx);
  w.add("cubin", std::string(c.cubin.begin(), c.cubin.end()));
  if (c.block_threads) w.add("block_threads", std::to_string(c.block_threads));   // tile kernels
  if (c.arch_specific) w.add("arch_specific", "1");
  if (c.cooperative) w.add("cooperative", "1");
  if (c.dynamic_shared_bytes) w.add("dynamic_shared_bytes", std::to_string(c.dynamic_shared_bytes));
  if (!c.tensor_maps.empty()) w.add("tensor_maps", tensorMapsToString(c.tensor_maps));
  if (c.block_specialised) {   // block algorithms: the CUB specs it was linked with, one a line
    std::string specs;
    for (const auto& spec : c.cub_specs) specs += spec + "\n";
    w.add("cub_specs", specs);
  }
  return w.take();
}

bool deserializeKernel(const std::string& body, CachedKernel* out) {
  FieldReader r(body);
  std::string name, value;
  bool has_key = false, has_cubin = false, has_symbol = false;
  driver::CompiledKernel& c = out->compiled;
  try {
    while (r.next(&name, &value)) {
      if (name == "key") { out->key_text = value; has_key = true; }
      else if (name == "qualname") out->qualname = value;
      else if (name == "filename") out->filename = value;
      else if (name == "signature") out->signature = value;
      else if (name == "arch") out->arch = std::stoi(value);
      else if (name == "created") out->created = std::stoll(value);
      else if (name == "compile_seconds") out->compile_seconds = std::stod(value);
      else if (name == "symbol") { c.symbol = value; has_symbol = !value.empty(); }
      else if (name == "return_type") c.return_type = value.empty() ? nullptr : parseType(value);
      else if (name == "typed_ir") c.typed_ir = value;
      else if (name == "nvvm_ir") c.nvvm_ir = value;
      else if (name == "ptx") c.ptx = value;
      else if (name == "cubin") { c.cubin.assign(value.begin(), value.end()); has_cubin = !value.empty(); }
      else if (name == "block_threads") c.block_threads = std::stoi(value);
      else if (name == "arch_specific") c.arch_specific = value == "1";
      else if (name == "cooperative") c.cooperative = value == "1";
      else if (name == "dynamic_shared_bytes") c.dynamic_shared_bytes = std::stoi(value);
      else if (name == "tensor_maps") { if (!parseTensorMaps(value, &c.tensor_maps)) return false; }
      else if (name == "cub_specs") {
        c.block_specialised = true;
        for (size_t at = 0, nl; (nl = value.find('\n', at)) != std::string::npos; at = nl + 1)
          c.cub_specs.push_back(value.substr(at, nl - at));
      }
      // Unknown fields are skipped: a newer writer may add some.
    }
  } catch (const std::exception&) {
    return false;   // a number field that is not a number
  }
  return r.ok() && has_key && has_cubin && has_symbol;
}

CacheLoad loadKernel(const KernelKey& key, CachedKernel* out) {
  std::string body;
  const CacheLoad r = kernelDiskCache().load(key.hash, &body);
  if (r != CacheLoad::Hit) return r;
  if (!deserializeKernel(body, out)) return CacheLoad::Corrupt;
  if (out->key_text != key.text) return CacheLoad::Missing;   // a collision: not ours
  return CacheLoad::Hit;
}

bool storeKernel(const KernelKey& key, const CachedKernel& k) {
  return kernelDiskCache().store(key.hash, serializeKernel(k));
}

bool readKernelEntry(const std::string& path, CachedKernel* out, size_t* file_bytes) {
  std::string bytes;
  const bool read = readWholeFile(path, &bytes) == ReadStatus::Ok;
  if (file_bytes) *file_bytes = read ? bytes.size() : 0;
  std::string_view body;
  return read && openEntry(bytes, kMagic, kFormat, &body) == EntryCheck::Ok && deserializeKernel(std::string(body), out);
}

namespace {

// Calls f(part, line) for each line of a key text before its IR (kernelKey's
// lines, the header skipped), part naming what the line identifies:
// "cudajit", "toolkit (versions)", "toolkit (libnvvm)", ..., "arch",
// "options", "tile", "args"; then f("ir", the kernel's code).
template <class F>
void forEachKeyLine(const std::string& text, F f) {
  size_t at = text.find('\n');   // the header line
  while (at != std::string::npos && at + 1 < text.size()) {
    const size_t nl = text.find('\n', at + 1);
    std::string line = text.substr(at + 1, nl == std::string::npos ? std::string::npos : nl - at - 1);
    if (line == "ir") {   // the rest is the kernel's code
      f(std::string("ir"), nl == std::string::npos ? std::string() : text.substr(nl + 1));
      return;
    }
    std::string name = line.substr(0, line.find(' '));
    if (name == "libnvvm" || name == "nvjitlink" || name == "libdevice") name = "toolkit (" + name + ")";
    else if (name == "toolkit") name = "toolkit (versions)";
    f(name, line + "\n");
    at = nl;
  }
}

// The key's parts by name (forEachKeyLine's).
std::map<std::string, std::string> keyParts(const std::string& text) {
  std::map<std::string, std::string> parts;
  forEachKeyLine(text, [&](const std::string& name, const std::string& value) { parts[name] += value; });
  return parts;
}

std::mutex g_counters_mu;
CacheCounters g_counters;

}  // namespace

namespace {

std::string missReason(const KernelKey& key, const std::string& qualname, const std::string& signature, int arch) {
  const std::map<std::string, std::string> want = keyParts(key.text);
  std::string best;
  size_t best_count = SIZE_MAX;
  DiskCache disk = kernelDiskCache();
  for (const std::string& path : disk.entries()) {
    CachedKernel entry;
    // (An entry of this very key is the one the miss wrote afterwards.)
    if (!readKernelEntry(path, &entry) || entry.qualname != qualname || entry.signature != signature ||
        entry.arch != arch || entry.key_text == key.text)
      continue;
    const std::map<std::string, std::string> have = keyParts(entry.key_text);
    std::vector<std::string> differ;
    for (const auto& [name, value] : want) {
      auto it = have.find(name);
      if (it == have.end() || it->second != value) differ.push_back(name == "ir" ? "the kernel's code" : name);
    }
    for (const auto& [name, value] : have)
      if (!want.count(name)) differ.push_back(name);
    if (differ.size() < best_count) {
      best_count = differ.size();
      best.clear();
      for (const std::string& d : differ) best += (best.empty() ? "" : ", ") + d;
    }
  }
  if (best_count == SIZE_MAX) return "no entry for this kernel, signature and arch";
  return "an entry for this kernel, signature and arch differs in: " + best;
}

std::mutex g_miss_mu;

}  // namespace

KeyIdentity keyIdentity(const std::string& key_text) {
  KeyIdentity id;
  forEachKeyLine(key_text, [&](const std::string& name, const std::string& line) {
    if (name == "cudajit") id.cudajit = line.substr(0, line.size() - 1);
    else if (name.rfind("toolkit", 0) == 0) id.toolkit += line;
  });
  return id;
}

const std::string& CacheMiss::reason() {
  std::lock_guard<std::mutex> lock(g_miss_mu);
  if (!known_) {
    reason_ = missReason(key_, qualname_, signature_, arch_);
    known_ = true;
  }
  return reason_;
}

CacheCounters cacheCounters() {
  std::lock_guard<std::mutex> lock(g_counters_mu);
  return g_counters;
}

void countCacheLookup(CacheLoad result, std::shared_ptr<CacheMiss> miss) {
  std::lock_guard<std::mutex> lock(g_counters_mu);
  if (result == CacheLoad::Hit) {
    ++g_counters.hits;
    return;
  }
  ++(result == CacheLoad::Corrupt ? g_counters.corrupt : g_counters.misses);
  if (!miss) return;
  if (g_counters.last_misses.size() >= 64) g_counters.last_misses.erase(g_counters.last_misses.begin());
  g_counters.last_misses.push_back(std::move(miss));
}

}  // namespace cj::rt
