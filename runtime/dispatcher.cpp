#include "runtime/dispatcher.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <functional>

#include "driver/block_algorithms.h"
#include "runtime/context.h"
#include "runtime/device_attributes.h"
#include "runtime/driver.h"
#include "runtime/driver_jit.h"
#include "runtime/kernel_cache.h"
#include "runtime/toolkit_identity.h"
#include "types/signature.h"
#include "support/disk_cache.h"
#include "support/error.h"
#include "support/lru_map.h"

namespace cj::rt {
namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

constexpr int kDefaultArch = 90;            // sm_90 when no GPU says otherwise
constexpr unsigned kStaticSharedLimit = 48 * 1024;

bool g_defer_explicit = false;

// Can a value of type `from` be passed where an explicit signature declares
// `to`? Numbers convert to numbers (numba's safe and unsafe conversions);
// arrays need the same dtype and ndim and a layout at least as strict.
bool convertible(const Type* from, const Type* to) {
  if (from == to) return true;
  if (from->isScalar() && to->isScalar())
    return !from->isComplex() && !to->isComplex();
  if (from->is(TypeKind::Tuple) && to->is(TypeKind::Tuple)) {
    if (from->elems.size() != to->elems.size()) return false;
    for (size_t k = 0; k < from->elems.size(); ++k)
      if (!convertible(from->elems[k], to->elems[k])) return false;
    return true;
  }
  if (from->is(TypeKind::Array) && to->is(TypeKind::Array)) {
    if (from->scalar != to->scalar || from->ndim != to->ndim) return false;
    if (to->layout == Layout::A || to->layout == from->layout) return true;
    return from->ndim <= 1 && from->layout != Layout::A;   // dense 1-d is both C and F
  }
  return false;
}

// A launch's classified arguments live in a per-thread buffer whose vectors
// keep their capacity, so a launch allocates nothing. A launch started while
// another is classifying on the same thread (a __cuda_array_interface__
// property that launches a kernel) gets a buffer of its own.
struct ScratchSlot {
  LaunchArgs args;
  bool busy = false;
};
thread_local ScratchSlot t_scratch;

class ScratchArgs {
 public:
  // One thread-local lookup per launch (in a shared library each costs a
  // __tls_get_addr call).
  ScratchArgs() : slot_(&t_scratch) {
    if (slot_->busy) {
      own_ = std::make_unique<LaunchArgs>();
      args_ = own_.get();
    } else {
      slot_->busy = true;
      args_ = &slot_->args;
    }
  }
  ~ScratchArgs() {
    args_->staged.clear();   // host copies and their device buffers go now, with the GIL held
    args_->producer_streams.clear();
    if (!own_) slot_->busy = false;
  }
  LaunchArgs& get() { return *args_; }

 private:
  ScratchSlot* slot_;
  LaunchArgs* args_ = nullptr;
  std::unique_ptr<LaunchArgs> own_;
};

// cudajit.errors.CacheWarning (a UserWarning), raised through the warnings
// module so that filters apply.
void cacheWarning(const std::string& text) {
  py::object cls = py::module_::import("cudajit.errors").attr("CacheWarning");
  if (PyErr_WarnEx(cls.ptr(), text.c_str(), 1) < 0) throw py::error_already_set();
}

std::string ms(double seconds) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", seconds * 1e3);
  return buf;
}

bool envFlag(const char* name) {
  const char* v = std::getenv(name);
  return v && *v && std::string(v) != "0";
}

// CUDAJIT_COMPILE_STATS=1: one line per compile (or cache hit) on stderr.
void printStats(const std::string& what, const CompileStats& s) {
  if (!envFlag("CUDAJIT_COMPILE_STATS")) return;
  const driver::StageTimes& t = s.stages;
  std::string line = "cudajit: " + what + ": " + ms(s.total()) + " ms (decode " + ms(t.decode) +
                     ", infer " + ms(t.infer) + ", passes " + ms(t.passes) + ", emit " +
                     ms(t.emit) + ", nvvm " + ms(t.nvvm) + ", link " + ms(t.link) + ", cache " +
                     ms(s.cache) + ") cache=" + cacheOutcomeName(s.outcome) +
                     (*s.assembler ? std::string(" assembler=") + s.assembler : std::string()) + "\n";
  PySys_WriteStderr("%s", line.c_str());
}

std::string jsonString(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

std::string attrString(const py::object& obj, const char* name) {
  PyObject* v = PyObject_GetAttrString(obj.ptr(), name);
  if (!v) {
    PyErr_Clear();
    return "";
  }
  py::object holder = py::reinterpret_steal<py::object>(v);
  return PyUnicode_Check(v) ? holder.cast<std::string>() : "";
}

}  // namespace

const char* cacheOutcomeName(CacheOutcome c) {
  switch (c) {
    case CacheOutcome::Off: return "off";
    case CacheOutcome::Miss: return "miss";
    case CacheOutcome::Hit: return "hit";
    case CacheOutcome::Corrupt: return "corrupt";
    case CacheOutcome::Unwritable: return "unwritable";
    case CacheOutcome::ReadOnly: return "read-only";
    case CacheOutcome::HitPtx: return "hit-ptx";
  }
  return "?";
}

void setDeferExplicitCompiles(bool defer) { g_defer_explicit = defer; }

size_t SignatureKeyHash::operator()(const SignatureKey& k) const {
  size_t h = std::hash<int>()(k.block[0] * 131071 + k.block[1] * 8191 + k.block[2]);
  for (const Type* t : k.args) h = h * 1000003u ^ std::hash<const void*>()(t);
  return h;
}

Dispatcher::Dispatcher(py::object py_function, DispatcherOptions options)
    : py_function_(std::move(py_function)), options_(options) {}

const ir::Module& Dispatcher::untyped() {
  if (!untyped_) {
    const auto start = Clock::now();
    untyped_ = driver::decode(py_function_.ptr());
    decode_seconds_ = secondsSince(start);
  }
  return *untyped_;
}

const std::string& Dispatcher::untypedIr() {
  if (untyped_ir_.empty()) untyped_ir_ = ir::printModule(untyped());
  return untyped_ir_;
}

int Dispatcher::numArgs() {
  if (num_args_ < 0) {
    const ir::Module& m = untyped();
    num_args_ = m.functions.empty() ? 0 : static_cast<int>(m.functions.front()->arg_names.size());
  }
  return num_args_;
}

std::string Dispatcher::qualname() const {
  std::string q = attrString(py_function_, "__qualname__");
  return q.empty() ? attrString(py_function_, "__name__") : q;
}

int Dispatcher::targetArch() const {
  if (options_.arch) return options_.arch;
  if (driverAvailable()) return deviceInfo(currentDevice()).arch();
  return kDefaultArch;
}

namespace {
// What the decorator's options ask of codegen, libNVVM and ptxas.
void applyOptions(const DispatcherOptions& options, int arch, driver::CompileOptions& o) {
  o.target.arch = arch;
  o.target.opt = options.opt;
  o.target.fastmath = o.codegen.fastmath = options.fastmath;
  o.target.debug = o.codegen.debug = options.debug;
  o.target.lineinfo = o.codegen.lineinfo = options.lineinfo;
  o.target.fast_compile = options.fast_compile;
  o.target.backend = options.backend;
  o.tile = options.tile;
  o.num_warps = options.num_warps;
  o.occupancy = options.occupancy;
  if (options.launch_bounds[1] > 0) o.occupancy = options.launch_bounds[1];
  o.max_threads = options.launch_bounds[0];
  o.max_cluster_rank = options.launch_bounds[2];
  o.constant_args = options.constants;
  o.link_files = options.link;
}
}  // namespace

driver::CompileOptions Dispatcher::compileOptions(int arch, bool want_cubin, Block block) const {
  driver::CompileOptions o;
  for (int d = 0; d < 3; ++d) o.infer.block_dims[d] = block[d];
  applyOptions(options_, arch, o);
  o.want_cubin = want_cubin;
  o.assembler = assembleWithDriver;
  return o;
}

bool Dispatcher::usesBlockAlgorithms() {
  if (uses_block_ < 0) uses_block_ = driver::usesBlockAlgorithms(untyped(), !options_.tile) ? 1 : 0;
  return uses_block_ == 1;
}

Block Dispatcher::blockKey(Block block) {
  return usesBlockAlgorithms() ? block : Block{{0, 0, 0}};
}

Overload* Dispatcher::find(const std::vector<const Type*>& args, Block block) const {
  auto it = by_key_.find(SignatureKey{args, block});
  if (it != by_key_.end()) return it->second.get();
  // No block shape asked (inspect_*, kernel.compile): the first overload of
  // these types, whatever block shape it was specialised on.
  if (block == Block{{0, 0, 0}})
    for (Overload* ov : order_)
      if (ov->key.args == args) return ov;
  return nullptr;
}

// The archs whose PTX a newer GPU can JIT-compile, newest first.
constexpr int kPtxArchs[] = {120, 110, 103, 101, 100, 90, 89, 87, 86, 80, 75, 70};

bool Dispatcher::ptxOfOlderArch(const std::vector<const Type*>& args, int arch, Block block, CompileStats* stats,
                                driver::CompiledKernel* out) {
  for (int older : kPtxArchs) {
    if (older >= arch) continue;
    const driver::CompileOptions options = compileOptions(older, /*want_cubin=*/true, block);
    CachedKernel entry;
    if (loadKernel(kernelKey({&untypedIr(), &args, older, &options}), &entry) != CacheLoad::Hit) continue;
    // LTO-linked, library calls left extern (the LLVM back end's PTX), or sm_XXa only
    if (entry.compiled.ptx.empty() || entry.compiled.block_specialised || entry.compiled.arch_specific) continue;
    *out = std::move(entry.compiled);
    out->cubin.assign(out->ptx.begin(), out->ptx.end());   // the image: PTX, JIT-compiled at load
    out->cubin.push_back('\0');
    stats->outcome = CacheOutcome::HitPtx;
    stats->miss = std::make_shared<CacheMiss>("no entry for sm_" + std::to_string(arch) + ": the PTX of the sm_" +
                                              std::to_string(older) + " entry, JIT-compiled by the driver");
    return true;
  }
  return false;
}

driver::CompiledKernel Dispatcher::obtain(const std::vector<const Type*>& args, int arch,
                                          CompileStats* stats, Block block, bool for_device) {
  const driver::CompileOptions options = compileOptions(arch, /*want_cubin=*/true, block);
  const bool use_cache = options_.cache;
  KernelKey key;
  if (use_cache) {
    const auto start = Clock::now();
    key = kernelKey({&untypedIr(), &args, arch, &options});
    CachedKernel entry;
    const CacheLoad r = loadKernel(key, &entry);
    stats->cache += secondsSince(start);
    if (r == CacheLoad::Hit) {
      countCacheLookup(r);
      stats->outcome = CacheOutcome::Hit;
      entry.compiled.arg_types = args;
      entry.compiled.untyped_ir = untypedIr();
      return std::move(entry.compiled);
    }
    stats->outcome = r == CacheLoad::Corrupt ? CacheOutcome::Corrupt : CacheOutcome::Miss;
    if (r == CacheLoad::Missing && for_device) {
      driver::CompiledKernel older;
      if (ptxOfOlderArch(args, arch, block, stats, &older)) {
        countCacheLookup(CacheLoad::Hit);
        stats->cache += secondsSince(start);
        older.arg_types = args;
        older.untyped_ir = untypedIr();
        return older;
      }
    }
    if (r == CacheLoad::Missing) stats->miss = std::make_shared<CacheMiss>(key, qualname(), numbaArgsString(args), arch);
    countCacheLookup(r, stats->miss);
    if (r == CacheLoad::Corrupt)
      cacheWarning("cudajit: the cache entry " + kernelDiskCache().pathFor(key.hash) + " for " +
                   qualname() + numbaArgsString(args) +
                   " is truncated or corrupt; it is ignored and compiled again");
  }
  registerWheelDirectories();
  driver::CompiledKernel compiled = driver::compile(untyped(), args, options);
  stats->stages = compiled.times;
  stats->assembler = compiled.assembled_by;
  if (use_cache) {
    const auto start = Clock::now();
    CachedKernel entry;
    entry.key_text = key.text;
    entry.qualname = qualname();
    entry.filename = untyped().functions.front()->filename;
    entry.signature = numbaArgsString(args);
    entry.arch = arch;
    entry.created = static_cast<int64_t>(std::time(nullptr));
    entry.compile_seconds = compiled.times.total();
    entry.compiled = compiled;
    if (cacheReadOnly(kernelCacheDir())) {
      // A read-only cache (a shared mount, a container layer): read, never written, no warning.
      if (stats->outcome == CacheOutcome::Miss) stats->outcome = CacheOutcome::ReadOnly;
    } else if (!storeKernel(key, entry)) {
      if (stats->outcome == CacheOutcome::Miss) stats->outcome = CacheOutcome::Unwritable;
      static bool warned = false;   // once per process: the compile itself went fine
      if (!warned) {
        warned = true;
        cacheWarning("cudajit: cannot write the kernel cache in " + kernelCacheDir() +
                     "; kernels are compiled but not cached (set CUDAJIT_CACHE_DIR to a "
                     "writable directory)");
      }
    }
    stats->cache += secondsSince(start);
  }
  return compiled;
}

Overload& Dispatcher::compileFor(const std::vector<const Type*>& args, Block block) {
  block = blockKey(block);
  if (Overload* hit = find(args, block); hit && hit->key.block == block) return *hit;
  const int nargs = numArgs();
  if (static_cast<int>(args.size()) != nargs)
    throw CompileError(untyped().functions.front()->filename,
                       untyped().functions.front()->first_line, 0, "signature",
                       "the signature " + numbaArgsString(args) + " has " +
                           std::to_string(args.size()) + " argument(s) but the function takes " +
                           std::to_string(nargs));
  auto ov = std::make_shared<Overload>();
  ov->owner = this;
  ov->last_used = ++use_clock_;
  ov->key.args = args;
  ov->key.block = block;
  ov->arch = targetArch();
  ov->compiled = obtain(args, ov->arch, &ov->stats, block, /*for_device=*/driverAvailable());
  if (order_.empty()) ov->stats.stages.decode = decode_seconds_;
  ov->compiled.times = ov->stats.stages;
  ov->slots = abi::kernelSlots(args);
  abi::appendTensorMapSlots(ov->compiled.tensor_maps, &ov->slots);
  ov->params.reset(ov->slots.size());
  printStats("compile " + qualname() + numbaArgsString(args) + " sm_" + std::to_string(ov->arch),
             ov->stats);
  Overload* raw = ov.get();
  by_key_.emplace(ov->key, std::move(ov));
  order_.push_back(raw);
  evictBeyondLimit(raw);
  return *raw;
}

std::vector<std::shared_ptr<Overload>> Dispatcher::heldOverloads() const {
  std::vector<std::shared_ptr<Overload>> out;
  out.reserve(order_.size());
  for (Overload* ov : order_) out.push_back(ov->shared_from_this());
  return out;
}

void Dispatcher::evictBeyondLimit(const Overload* keep) {
  // Explicit signatures are the user's finite list, and selectSlow converts
  // arguments to them by walking order_: never dropped.
  const size_t limit = memoryCacheLimit();
  if (limit == 0 || explicit_signatures_) return;
  while (order_.size() > limit) {
    Overload* victim = nullptr;
    for (Overload* ov : order_)
      if (ov != keep && (!victim || ov->last_used < victim->last_used)) victim = ov;
    if (!victim) return;
    auto it = by_key_.find(victim->key);
    std::shared_ptr<Overload> held = std::move(it->second);
    by_key_.erase(it);
    order_.erase(std::find(order_.begin(), order_.end(), victim));
    for (auto c = conversions_.begin(); c != conversions_.end();)
      c = c->second == victim ? conversions_.erase(c) : std::next(c);
    if (last_ == victim) {
      last_ = nullptr;
      last_types_.clear();
    }
    ++evictions_;
    // Its module unloads when the last holder lets go: now, at the end of the
    // launches in flight (retired_), or when Python drops kernel.overloads' object.
    if (in_flight_ > 0) retired_.push_back(std::move(held));
  }
}

void Dispatcher::compileExplicit(const std::vector<const Type*>& args, Block block, bool until_launch) {
  const int nargs = numArgs();
  if (static_cast<int>(args.size()) != nargs)
    throw CompileError(untyped().functions.front()->filename,
                       untyped().functions.front()->first_line, 0, "signature",
                       "the signature " + numbaArgsString(args) + " has " +
                           std::to_string(args.size()) + " argument(s) but the function takes " +
                           std::to_string(nargs));
  explicit_signatures_ = true;
  if (until_launch && block == Block{{0, 0, 0}} && usesBlockAlgorithms()) {
    if (std::find(awaiting_block_.begin(), awaiting_block_.end(), args) == awaiting_block_.end())
      awaiting_block_.push_back(args);
    return;
  }
  bool seen = false;
  for (size_t k = 0; k < declared_.size(); ++k)
    seen = seen || (declared_[k] == args && declared_blocks_[k] == block);
  if (!seen) {
    declared_.push_back(args);
    declared_blocks_.push_back(block);
  }
  if (!g_defer_explicit) compileDeclared();
}

void Dispatcher::compileDeclared() {
  while (declared_compiled_ < declared_.size()) {
    compileFor(declared_[declared_compiled_], declared_blocks_[declared_compiled_]);
    ++declared_compiled_;
  }
}

bool Dispatcher::warm(const std::vector<const Type*>& args, int arch, Block block) {
  if (static_cast<int>(args.size()) != numArgs())
    throw CompileError(untyped().functions.front()->filename,
                       untyped().functions.front()->first_line, 0, "signature",
                       "the signature " + numbaArgsString(args) + " does not match the function's " +
                           std::to_string(numArgs()) + " argument(s)");
  if (block == Block{{0, 0, 0}})   // the block shape it was declared with
    for (size_t k = 0; k < declared_.size(); ++k)
      if (declared_[k] == args && declared_blocks_[k] != Block{{0, 0, 0}}) {
        block = declared_blocks_[k];
        break;
      }
  block = blockKey(block);
  const bool was = options_.cache;
  options_.cache = true;
  CompileStats stats;
  try {
    obtain(args, arch, &stats, block);
  } catch (...) {
    options_.cache = was;
    throw;
  }
  options_.cache = was;
  printStats("warm " + qualname() + numbaArgsString(args) + " sm_" + std::to_string(arch), stats);
  if (stats.outcome == CacheOutcome::Unwritable)
    throw std::runtime_error("cudajit: cannot write the cache directory " + kernelCacheDir());
  if (stats.outcome == CacheOutcome::ReadOnly)
    throw std::runtime_error("cudajit: the cache directory " + kernelCacheDir() +
                             " is read-only (a read-only mount, no write permission or CUDAJIT_CACHE_READONLY=1): "
                             "warm a writable copy");
  return stats.outcome != CacheOutcome::Hit;
}

void Dispatcher::noMatchingSignature(const std::vector<const Type*>& actual) const {
  std::string declared;
  for (const Overload* ov : order_) declared += "\n  " + numbaArgsString(ov->key.args);
  for (const auto& args : awaiting_block_) declared += "\n  " + numbaArgsString(args);
  throw ArgumentTypeError("no matching definition for argument type(s) " +
                          numbaArgsString(actual) + "; the kernel was declared with:" + declared);
}

Overload* Dispatcher::select(const std::vector<const Type*>& actual, Block block) {
  block = blockKey(block);
  if (last_ && block == last_block_ && actual == last_types_) {
    last_->last_used = ++use_clock_;
    return last_;
  }
  Overload* ov = selectSlow(actual, block);
  ov->last_used = ++use_clock_;
  last_ = ov;
  last_types_ = actual;
  last_block_ = block;
  return ov;
}

Overload* Dispatcher::selectSlow(const std::vector<const Type*>& actual, Block block) {
  compileDeclared();
  if (Overload* hit = find(actual, block); hit && hit->key.block == block) return hit;
  if (!explicit_signatures_) return &compileFor(actual, block);
  SignatureKey key{actual, block};
  if (auto it = conversions_.find(key); it != conversions_.end()) return it->second;
  // The declared signature with the most exactly matching arguments wins
  // (compiled, or waiting for a launch's block shape).
  Overload* best = nullptr;
  const std::vector<const Type*>* best_args = nullptr;
  int best_exact = -1;
  auto consider = [&](const std::vector<const Type*>& want, Overload* ov) {
    if (want.size() != actual.size()) return;
    int exact = 0;
    bool ok = true;
    for (size_t k = 0; k < want.size() && ok; ++k) {
      ok = convertible(actual[k], want[k]);
      exact += actual[k] == want[k];
    }
    if (ok && exact > best_exact) {
      best = ov;
      best_args = &want;
      best_exact = exact;
    }
  };
  for (Overload* ov : order_) consider(ov->key.args, ov);
  for (const auto& want : awaiting_block_) consider(want, nullptr);
  if (!best_args) noMatchingSignature(actual);
  // Declared for another block shape (or none yet): the same signature for this one.
  if (!best || best->key.block != block) best = &compileFor(std::vector<const Type*>(*best_args), block);
  conversions_.emplace(std::move(key), best);
  return best;
}

Overload::Loaded& Dispatcher::loadedOn(Overload& ov, int device, cu::CUcontext context) {
  if (static_cast<size_t>(device) < ov.loaded.size()) {
    Overload::Loaded* l = ov.loaded[device].get();
    if (l && l->context == context) return *l;
  }
  if (ov.loaded.size() <= static_cast<size_t>(device)) ov.loaded.resize(device + 1);
  const auto start = Clock::now();
  const int arch = deviceInfo(device).arch();
  const std::vector<char>* cubin = &ov.compiled.cubin;
  if (arch != ov.arch && !options_.arch) {
    // Compiled eagerly for another GPU (or with no GPU): build for this one.
    auto it = ov.cubins_for_other_archs.find(arch);
    if (it == ov.cubins_for_other_archs.end()) {
      CompileStats stats;
      driver::CompiledKernel k = obtain(ov.key.args, arch, &stats, ov.key.block, /*for_device=*/true);
      printStats("compile " + qualname() + numbaArgsString(ov.key.args) + " sm_" +
                     std::to_string(arch), stats);
      it = ov.cubins_for_other_archs.emplace(arch, std::move(k.cubin)).first;
    }
    cubin = &it->second;
  }
  auto l = std::make_unique<Overload::Loaded>();
  try {
    l->module = std::make_unique<LoadedModule>(*cubin, device);
  } catch (const CudaApiError&) {
    if ((ov.stats.outcome != CacheOutcome::Hit && ov.stats.outcome != CacheOutcome::HitPtx) ||
        cubin != &ov.compiled.cubin)
      throw;
    // A cached cubin this driver cannot load: compile afresh, once.
    const bool was = options_.cache;
    options_.cache = false;
    CompileStats stats;
    try {
      ov.compiled = obtain(ov.key.args, ov.arch, &stats, ov.key.block);
    } catch (...) {
      options_.cache = was;
      throw;
    }
    options_.cache = was;
    ov.stats = stats;
    l->module = std::make_unique<LoadedModule>(ov.compiled.cubin, device);
  }
  l->function = l->module->function(ov.compiled.symbol);
  l->context = context;
  if (options_.carveout != DispatcherOptions::kNoCarveout)
    CJ_CU(cuFuncSetAttribute, l->function, cu::CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT,
          options_.carveout);
  if (ov.stats.load == 0) ov.stats.load = secondsSince(start);
  ov.loaded[device] = std::move(l);
  return *ov.loaded[device];
}

const std::string& Dispatcher::ptx(Overload& ov) {
  // Kernels linked with CUB instantiations: the PTX after LTO, on demand.
  if (ov.compiled.ptx.empty())
    ov.compiled.ptx = driver::ptxOf(ov.compiled, compileOptions(ov.arch, false).target);
  return ov.compiled.ptx;
}

std::vector<passes::IrSnapshot> Dispatcher::irAfter(const Overload& ov,
                                                    const std::vector<std::string>& after) {
  return driver::irAfterPasses(untyped(), ov.key.args, compileOptions(ov.arch, false, ov.key.block),
                               after);
}

void Dispatcher::record(Overload& ov) {
  ov.recorded = true;
  static const std::string path = [] {
    const char* p = std::getenv("CUDAJIT_RECORD");
    return std::string(p ? p : "");
  }();
  if (path.empty()) return;
  std::string sig = "[";
  for (size_t k = 0; k < ov.key.args.size(); ++k)
    sig += (k ? ", " : "") + jsonString(typeToNumbaString(ov.key.args[k]));
  sig += "]";
  const ir::Function& fn = *untyped().functions.front();
  const std::string line =
      "{\"module\": " + jsonString(attrString(py_function_, "__module__")) +
      ", \"qualname\": " + jsonString(qualname()) + ", \"file\": " + jsonString(fn.filename) +
      ", \"signature\": " + sig + ", \"arch\": " + std::to_string(ov.arch) +
      (ov.key.block == Block{{0, 0, 0}}
           ? std::string()
           : ", \"block\": [" + std::to_string(ov.key.block[0]) + ", " + std::to_string(ov.key.block[1]) +
                 ", " + std::to_string(ov.key.block[2]) + "]") +
      ", \"options\": {\"fastmath\": " + (options_.fastmath ? "true" : "false") +
      ", \"debug\": " + (options_.debug ? "true" : "false") +
      ", \"lineinfo\": " + (options_.lineinfo ? "true" : "false") +
      ", \"opt\": " + std::to_string(options_.opt) +
      ", \"fast_compile\": " + jsonString(options_.fast_compile) +
      ", \"backend\": " + jsonString(link::backendName(options_.backend)) +
      ", \"launch_bounds\": [" + std::to_string(options_.launch_bounds[0]) + ", " +
      std::to_string(options_.launch_bounds[1]) + ", " + std::to_string(options_.launch_bounds[2]) + "]" +
      ", \"cache\": " + (options_.cache ? "true" : "false") + "}}\n";
  appendToFile(path, line);   // best effort: recording never fails a launch
}

namespace {
Block launchBlock(const LaunchConfig& config) {
  return Block{{static_cast<int>(config.block[0]), static_cast<int>(config.block[1]),
                static_cast<int>(config.block[2])}};
}
}  // namespace

namespace {
// The blocks of `threads` threads and `shared_bytes` of dynamic shared
// memory the device holds at once (a cooperative launch's limit).
int residentBlocks(cu::CUfunction fn, int device, unsigned threads, unsigned shared_bytes) {
  int per_sm = 0, sms = 0;
  CJ_CU_OPT(cuOccupancyMaxActiveBlocksPerMultiprocessor, &per_sm, fn, static_cast<int>(threads), shared_bytes);
  CJ_CU(cuDeviceGetAttribute, &sms, 16, deviceHandle(device));   // MULTIPROCESSOR_COUNT
  return per_sm * sms;
}

// A failed cuLaunchKernel, explained where a limit of the device or of the
// kernel is what it broke (the block's threads or a dimension, the grid,
// the shared memory, the registers the block needs, a cooperative grid's
// residency); checked only after the driver refused, so launches that work
// pay nothing.
[[noreturn]] void launchFailed(cu::CUresult result, int device, cu::CUfunction fn, const unsigned grid[3],
                               const unsigned block[3], unsigned shared_bytes, bool cooperative) {
  const DriverApi& api = driver();
  cu::CUdevice dev = deviceHandle(device);
  auto attribute = [&](int which) {
    int v = 0;
    return api.cuDeviceGetAttribute(&v, which, dev) == cu::CUDA_SUCCESS ? v : 0;
  };
  constexpr cu::CUresult kCooperativeLaunchTooLarge = static_cast<cu::CUresult>(720);
  if (cooperative && result == kCooperativeLaunchTooLarge) {
    const unsigned long long blocks = 1ull * grid[0] * grid[1] * grid[2];
    throw CudaApiError("cuLaunchCooperativeKernel failed: " + describeResult(result) +
                           ": the kernel synchronises its grid (cuda.cg.this_grid().sync()), so every block "
                           "must be resident at once; the grid has " + std::to_string(blocks) +
                           " blocks and the device holds at most " +
                           std::to_string(residentBlocks(fn, device, block[0] * block[1] * block[2], shared_bytes)) +
                           " of this kernel's blocks of " + std::to_string(block[0] * block[1] * block[2]) +
                           " threads (kernel.overloads[sig].max_cooperative_grid_blocks(blockdim))",
                       result, "cuLaunchCooperativeKernel");
  }
  const char* xyz = "xyz";
  const unsigned long long threads = 1ull * block[0] * block[1] * block[2];
  std::string why;
  const int max_threads = attribute(1);   // CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK
  if (max_threads > 0 && threads > static_cast<unsigned long long>(max_threads))
    why = "the block has " + std::to_string(threads) + " threads (" + std::to_string(block[0]) + " x " +
          std::to_string(block[1]) + " x " + std::to_string(block[2]) + ") and the device allows " +
          std::to_string(max_threads) + " per block";
  for (int d = 0; d < 3 && why.empty(); ++d) {
    const int block_max = attribute(2 + d), grid_max = attribute(5 + d);   // MAX_BLOCK_DIM_X.., MAX_GRID_DIM_X..
    if (block_max > 0 && block[d] > static_cast<unsigned>(block_max))
      why = std::string("the block's ") + xyz[d] + " dimension is " + std::to_string(block[d]) +
            " and the device allows " + std::to_string(block_max);
    else if (grid_max > 0 && grid[d] > static_cast<unsigned>(grid_max))
      why = std::string("the grid's ") + xyz[d] + " dimension is " + std::to_string(grid[d]) +
            " and the device allows " + std::to_string(grid_max);
  }
  if (why.empty()) {
    const int shared_max = attribute(97);   // MAX_SHARED_MEMORY_PER_BLOCK_OPTIN
    int static_shared = 0;
    if (api.cuFuncGetAttribute) api.cuFuncGetAttribute(&static_shared, 1, fn);   // SHARED_SIZE_BYTES
    if (shared_max > 0 && static_cast<long long>(shared_bytes) + static_shared > shared_max)
      why = "the block needs " + std::to_string(shared_bytes + static_shared) + " bytes of shared memory (" +
            std::to_string(shared_bytes) + " dynamic + " + std::to_string(static_shared) +
            " static) and the device allows " + std::to_string(shared_max);
  }
  if (why.empty() && api.cuFuncGetAttribute) {
    int regs = 0;
    const int regs_max = attribute(12);   // MAX_REGISTERS_PER_BLOCK
    if (api.cuFuncGetAttribute(&regs, 4, fn) == cu::CUDA_SUCCESS && regs_max > 0 &&   // NUM_REGS
        threads * static_cast<unsigned long long>(regs) > static_cast<unsigned long long>(regs_max))
      why = "the kernel uses " + std::to_string(regs) + " registers a thread, " + std::to_string(threads * regs) +
            " for a block of " + std::to_string(threads) + " threads, and the device has " +
            std::to_string(regs_max) + " per block: launch smaller blocks";
  }
  if (why.empty()) throwApiError(result, "cuLaunchKernel");
  throw CudaApiError("cuLaunchKernel failed: " + describeResult(result) + ": " + why, result, "cuLaunchKernel");
}

// The block a launch runs with: the configuration's, or for a tile kernel the
// one its compiler chose (CompiledKernel::block_threads) with the dynamic
// shared memory its buffers need.
struct LaunchBlock {
  unsigned dims[3];
  unsigned shared_bytes;
  LaunchBlock(const Overload& ov, const LaunchConfig& config) {
    const bool tile = ov.compiled.block_threads != 0;
    dims[0] = tile ? static_cast<unsigned>(ov.compiled.block_threads) : config.block[0];
    dims[1] = tile ? 1 : config.block[1];
    dims[2] = tile ? 1 : config.block[2];
    shared_bytes = tile ? static_cast<unsigned>(ov.compiled.dynamic_shared_bytes) : config.shared_bytes;
  }
};

// cuLaunchKernel, or cuLaunchCooperativeKernel for a kernel with a grid
// barrier (the driver gives a cooperative grid the workspace the barrier uses).
cu::CUresult launchKernel(const DriverApi& api, const Overload& ov, cu::CUfunction fn, const unsigned grid[3],
                          const LaunchBlock& block, cu::CUstream stream, void** params) {
  if (ov.compiled.cooperative)
    return require(api.cuLaunchCooperativeKernel, "cuLaunchCooperativeKernel")(
        fn, grid[0], grid[1], grid[2], block.dims[0], block.dims[1], block.dims[2], block.shared_bytes, stream, params);
  return api.cuLaunchKernel(fn, grid[0], grid[1], grid[2], block.dims[0], block.dims[1], block.dims[2],
                            block.shared_bytes, stream, params, nullptr);
}
}  // namespace

// Dynamic shared memory beyond 48 KB must be allowed per function, once.
void Dispatcher::allowDynamicShared(Overload::Loaded& loaded, int device, unsigned bytes) {
  if (bytes <= kStaticSharedLimit || bytes <= loaded.dynamic_shared_limit) return;
  const unsigned limit = static_cast<unsigned>(deviceInfo(device).max_shared_per_block_optin);
  if (bytes > limit)
    throw ArgumentValueError("dynamic shared memory of " + std::to_string(bytes) +
                             " bytes exceeds the device's limit of " + std::to_string(limit));
  CJ_CU(cuFuncSetAttribute, loaded.function, cu::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
        static_cast<int>(bytes));
  loaded.dynamic_shared_limit = bytes;
}

void Dispatcher::launch(const LaunchConfig& config, PyObject* const* args, size_t nargs,
                        const std::function<void(Overload&)>* before) {
  const DriverApi& api = driver();   // no driver / no GPU: CudaSupportError before any work
  if (static_cast<int>(nargs) != numArgs()) {
    const ir::Function& fn = *untyped().functions.front();
    throw ArgumentTypeError(fn.py_name + "() takes " + std::to_string(numArgs()) +
                            " argument(s) but " + std::to_string(nargs) + " were given");
  }
  ScratchArgs scratch;
  LaunchArgs& la = scratch.get();
  classifyArgs(args, nargs, api.device_count > 1, &la);
  const int device = la.device >= 0 ? la.device : currentDevice();
  const cu::CUcontext context = ensureContext(device);
  InFlight busy(*this);   // `ov` outlives an eviction by another launch (stageOut releases the GIL)
  Overload& ov = *select(la.types, launchBlock(config));
  Overload::Loaded& loaded = loadedOn(ov, device, context);
  const LaunchBlock block(ov, config);
  allowDynamicShared(loaded, device, block.shared_bytes);
  if (before) (*before)(ov);

  const cu::CUstream stream = config.stream_given ? config.stream : defaultStreamFor(la, device);
  if (!la.staged.empty() || !la.producer_streams.empty()) stageIn(la, stream);
  ov.params.pack(ov.slots, la.values.data(), nargs, ov.compiled.tensor_maps);
  const cu::CUresult launched = launchKernel(api, ov, loaded.function, config.grid, block, stream, ov.params.pointers());
  if (launched != cu::CUDA_SUCCESS)
    launchFailed(launched, device, loaded.function, config.grid, block.dims, block.shared_bytes, ov.compiled.cooperative);
  stageOut(la, stream);
  if (!ov.recorded) record(ov);
}

double Dispatcher::launchLoop(const LaunchConfig& config, PyObject* const* args, size_t nargs,
                              long iterations) {
  const DriverApi& api = driver();
  if (static_cast<int>(nargs) != numArgs())
    throw ArgumentTypeError("launchLoop: wrong number of arguments");
  ScratchArgs scratch;
  LaunchArgs& la = scratch.get();
  classifyArgs(args, nargs, api.device_count > 1, &la);
  if (!la.staged.empty()) throw ArgumentTypeError("launchLoop takes device arrays only");
  const int device = la.device >= 0 ? la.device : currentDevice();
  const cu::CUcontext context = ensureContext(device);
  InFlight busy(*this);
  Overload& ov = *select(la.types, launchBlock(config));
  Overload::Loaded& loaded = loadedOn(ov, device, context);
  const cu::CUstream stream = config.stream_given ? config.stream : defaultStreamFor(la, device);
  PackedParams params;
  params.pack(ov.slots, la.values.data(), nargs, ov.compiled.tensor_maps);
  const LaunchBlock block(ov, config);
  allowDynamicShared(loaded, device, block.shared_bytes);
  const auto start = Clock::now();
  for (long k = 0; k < iterations; ++k)
    check(launchKernel(api, ov, loaded.function, config.grid, block, stream, params.pointers()), "cuLaunchKernel");
  return secondsSince(start);
}

Overload::Loaded& Dispatcher::loadedOnCurrentDevice(Overload& ov) {
  // Callers hold `ov` (Python's kernel.overloads object, or heldOverloads()).
  driver();   // no driver or no GPU: CudaSupportError before any work
  const int device = currentDevice();
  return loadedOn(ov, device, ensureContext(device));
}

int Dispatcher::maxCooperativeGridBlocks(Overload& ov, Block block, unsigned shared_bytes) {
  driver();
  for (int d = 0; d < 3; ++d)
    if (block[d] < 1) throw ArgumentValueError("max_cooperative_grid_blocks: the block dimensions must be positive");
  Overload::Loaded& loaded = loadedOnCurrentDevice(ov);
  return residentBlocks(loaded.function, currentDevice(), static_cast<unsigned>(block[0] * block[1] * block[2]),
                        shared_bytes);
}

cu::CUfunction Dispatcher::functionOnCurrentDevice(Overload& ov) {
  driver();
  return loadedOnCurrentDevice(ov).function;
}

int Dispatcher::activeBlocksPerMultiprocessor(Overload& ov, unsigned threads, unsigned shared_bytes) {
  driver();
  if (threads < 1) throw ArgumentValueError("get_active_blocks_per_multiprocessor: the block size must be positive");
  int blocks = 0;
  CJ_CU(cuOccupancyMaxActiveBlocksPerMultiprocessor, &blocks, loadedOnCurrentDevice(ov).function,
        static_cast<int>(threads), shared_bytes);
  return blocks;
}

int Dispatcher::functionAttribute(Overload& ov, FunctionAttribute attribute) {
  int value = 0;
  CJ_CU_OPT(cuFuncGetAttribute, &value, attribute, loadedOnCurrentDevice(ov).function);
  return value;
}

int Dispatcher::suggestBlockSize(PyObject* const* args, size_t nargs, unsigned shared_bytes) {
  const DriverApi& api = driver();
  if (static_cast<int>(nargs) != numArgs())
    throw ArgumentTypeError(qualname() + "() takes " + std::to_string(numArgs()) +
                            " argument(s) but " + std::to_string(nargs) + " were given");
  if (usesBlockAlgorithms())
    throw ArgumentValueError("forall: " + qualname() + " uses block algorithms, which are "
                             "compiled for one block size: pass tpb=");
  ScratchArgs scratch;
  LaunchArgs& la = scratch.get();
  classifyArgs(args, nargs, api.device_count > 1, &la);
  const int device = la.device >= 0 ? la.device : currentDevice();
  const cu::CUcontext context = ensureContext(device);
  InFlight busy(*this);
  Overload& ov = *select(la.types, Block{{0, 0, 0}});
  Overload::Loaded& loaded = loadedOn(ov, device, context);
  const int limit = deviceInfo(device).max_threads_per_block;
  return maxPotentialBlockSize(loaded.function, shared_bytes, limit > 0 ? limit : 1024);
}

AotResult compileAot(const py::object& py_function, const std::vector<const Type*>& args,
                     bool device, bool want_cubin, const DispatcherOptions& options, Block block,
                     const Type* declared_return, bool want_ltoir, const std::string& device_symbol) {
  std::shared_ptr<const ir::Module> untyped = driver::decode(py_function.ptr());
  driver::CompileOptions o;
  applyOptions(options, options.arch ? options.arch : kDefaultArch, o);
  o.want_cubin = want_cubin;
  o.device = device;
  o.want_ltoir = want_ltoir;
  o.device_symbol = device_symbol;
  for (int d = 0; d < 3; ++d) o.infer.block_dims[d] = block[d];
  if (device) o.infer.entry_return = declared_return;
  driver::CompiledKernel k;
  {
    // Past decoding nothing touches Python: callers may compile (warm the
    // caches) from several threads at once.
    py::gil_scoped_release nogil;
    k = driver::compile(*untyped, args, o);
  }
  return {std::move(k.ptx), std::move(k.cubin), std::move(k.ltoir), std::move(k.symbol), k.return_type};
}

}  // namespace cj::rt
