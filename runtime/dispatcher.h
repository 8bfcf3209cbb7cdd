// The kernel dispatcher: argument signature -> compiled, loaded kernel ->
// launch, all in C++.
//
// A Dispatcher decodes its Python function once (driver::decode) and compiles
// once per signature (driver::compile), through the disk cache when asked
// (kernel_cache.h). A launch classifies the arguments (args.h), looks the
// signature up (the last hit first), compiles on a miss, loads the cubin into
// the primary context of the device the arrays live on (once per device),
// packs the parameters by the ABI slots into the overload's own parameter
// block and calls cuLaunchKernel. Nothing on that path allocates once the
// kernel has run with the same argument types before.
//
// With explicit signatures (@jit("void(float32[:])")) nothing new is compiled
// at launch: the arguments are converted to the first signature they fit, as
// numba does, or a TypeError lists what was declared.
#pragma once
#include <pybind11/pybind11.h>

#include <array>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "codegen/abi.h"
#include "driver/compile.h"
#include "runtime/args.h"
#include "runtime/kernel_args.h"
#include "runtime/kernel_cache.h"
#include "runtime/launch_config.h"
#include "runtime/module.h"

// Like pybind11 itself, these types are private to the extension module
// (they hold pybind11 objects, which have hidden visibility).
#pragma GCC visibility push(hidden)
namespace cj::rt {

namespace py = pybind11;

// A launch block shape (x, y, z); {0,0,0}: none / any.
using Block = std::array<int, 3>;

// What an overload is specialised on: the argument types and, for kernels
// that use block algorithms (cuda.block.* / cuda.warp.*), the launch block
// shape; {0,0,0} means "any block shape".
struct SignatureKey {
  std::vector<const Type*> args;
  Block block{{0, 0, 0}};
  bool operator==(const SignatureKey& o) const { return args == o.args && block == o.block; }
};

struct SignatureKeyHash {
  size_t operator()(const SignatureKey& k) const;
};

struct DispatcherOptions {
  bool fastmath = false;
  bool debug = false;
  bool lineinfo = false;
  int opt = 3;
  int arch = 0;          // 0: the current device's compute capability (90 without a GPU)
  bool cache = false;    // read and write the disk cache (kernel_cache.h)
  std::string fast_compile;   // -Ofast-compile level for libNVVM and ptxas; empty: off
  link::BackendKind backend = link::BackendKind::Nvvm;   // libNVVM or LLVM's NVPTX (backend="llvm")
  // cudajit.tile kernels: compiled by the tile pipeline, launched with the
  // block size the compiler chose (a launch's block shape is ignored).
  bool tile = false;
  int num_warps = 0;                                   // 0: the compiler picks
  int occupancy = 0;                                   // blocks per SM hint (cuTile's); 0: none
  // jit(launch_bounds=...): max threads a block, min blocks an SM, max blocks a cluster; 0: none
  std::array<int, 3> launch_bounds{0, 0, 0};
  // jit(shared_memory_carveout=...): the preferred shared memory share of the
  // unified L1/shared memory, in percent (-1: the driver's default), set on
  // each loaded function (it changes no code, so it is not in the cache key).
  static constexpr int kNoCarveout = -2;
  int carveout = kNoCarveout;
  std::vector<std::pair<int, ir::Const>> constants;    // Constant[...] parameters: (index, value)
  std::vector<std::string> link;                       // files linked into every kernel (jit(link=[...]))
};

enum class CacheOutcome { Off, Miss, Hit, Corrupt, Unwritable, ReadOnly, HitPtx };
const char* cacheOutcomeName(CacheOutcome c);

// Where the time of one compile went (seconds); kernel.stats in Python.
struct CompileStats {
  driver::StageTimes stages;     // decode, infer, passes, emit, nvvm, link
  double cache = 0;              // key + lookup (+ store) in the disk cache
  double load = 0;               // cuModuleLoadData on the first device
  CacheOutcome outcome = CacheOutcome::Off;
  const char* assembler = "";    // what made the cubin: "driver", "nvJitLink" ("" from the cache)
  std::shared_ptr<CacheMiss> miss;   // a disk-cache miss: which part of the identity differed (kernel_cache.h)
  double total() const { return stages.total() + cache + load; }
};

// One compiled signature and its per-device loaded modules. Shared: the
// dispatcher's table, a launch in flight and Python's kernel.overloads each
// keep it alive, so that one dropped from the table (the in-memory bound,
// compileFor) lives on until nothing uses it.
class Overload : public std::enable_shared_from_this<Overload> {
 public:
  Overload() = default;
  Overload(const Overload&) = delete;
  Overload& operator=(const Overload&) = delete;

  SignatureKey key;
  driver::CompiledKernel compiled;     // compiled for `arch`
  int arch = 0;
  std::vector<abi::Slot> slots;
  PackedParams params;                 // refilled by each launch
  CompileStats stats;
  bool recorded = false;               // CUDAJIT_RECORD has this signature
  class Dispatcher* owner = nullptr;   // the kernel it belongs to (Python keeps it alive as long)
  uint64_t last_used = 0;              // the owner's use clock when a launch last selected it

  struct Loaded {
    std::unique_ptr<LoadedModule> module;
    cu::CUfunction function = nullptr;
    cu::CUcontext context = nullptr;
    unsigned dynamic_shared_limit = 48 * 1024;   // raised with cuFuncSetAttribute when asked
  };
  std::vector<std::unique_ptr<Loaded>> loaded;   // index: device ordinal
  std::map<int, std::vector<char>> cubins_for_other_archs;
};

class Dispatcher {
 public:
  Dispatcher(py::object py_function, DispatcherOptions options);

  const py::object& pyFunction() const { return py_function_; }
  const DispatcherOptions& options() const { return options_; }

  // Compiles `args` now (explicit signatures; needs no GPU). A later launch
  // only converts arguments to the declared signatures. While
  // setDeferExplicitCompiles(true) (`python -m cudajit warm` importing a
  // module), the signature is only recorded in declared(). `block`: the
  // launch block shape kernels with block algorithms are compiled for
  // (without it they fail to compile, asking for it; a launch with another
  // shape compiles the signature again for that one). `until_launch`: the
  // decorator's signatures (numba compiles them at once), which a kernel
  // with block algorithms given no block shape compiles at its first launch
  // instead, for the launch's block (cuda.coop primitives fix their block
  // size themselves, so numba-cuda needs none there).
  void compileExplicit(const std::vector<const Type*>& args, Block block = {{0, 0, 0}},
                       bool until_launch = false);
  // Finds or compiles the overload for exactly these argument types (and,
  // for kernels with block algorithms, this block shape).
  Overload& compileFor(const std::vector<const Type*>& args, Block block = {{0, 0, 0}});
  // Puts the kernel for `args` on `arch` into the disk cache (no GPU, no
  // overload kept): true when it was compiled, false when already cached.
  // Kernels with block algorithms: `block`, else the declared one.
  bool warm(const std::vector<const Type*>& args, int arch, Block block = {{0, 0, 0}});
  // Whether the kernel (or a device function it calls) uses block or warp
  // algorithms, so that its overloads are specialised on the block shape.
  bool usesBlockAlgorithms();

  // `before`, when given, runs once the overload is chosen and loaded and
  // before any argument is copied or the kernel launched (numba's
  // pre-launch callbacks); the launch path without hooks passes none.
  void launch(const LaunchConfig& config, PyObject* const* args, size_t nargs,
              const std::function<void(Overload&)>* before = nullptr);
  // Benchmarks' floor: prepares one launch like launch() (classify, select,
  // load, pack), then calls cuLaunchKernel `iterations` times in a C++ loop
  // with those parameters and returns the seconds the loop took.
  double launchLoop(const LaunchConfig& config, PyObject* const* args, size_t nargs,
                    long iterations);

  // kernel.forall(n) without tpb: the block size the occupancy calculator
  // suggests for the overload these arguments select (compiled and loaded
  // on the arguments' device if need be; nothing is copied or launched).
  int suggestBlockSize(PyObject* const* args, size_t nargs, unsigned shared_bytes);
  // numba's _Kernel.max_cooperative_grid_blocks: how many blocks of `block`
  // (with `shared_bytes` of dynamic shared memory) the current device holds
  // at once, so many a cooperative launch may have (loads the overload).
  int maxCooperativeGridBlocks(Overload& ov, Block block, unsigned shared_bytes);
  // CUfunction_attribute values numba's get_regs_per_thread & co read.
  enum FunctionAttribute {
    kMaxThreadsPerBlock = 0,
    kSharedBytes = 1,      // static shared memory per block
    kConstBytes = 2,
    kLocalBytes = 3,       // local memory per thread
    kRegistersPerThread = 4,
  };
  // cuFuncGetAttribute of the overload loaded on the current device.
  int functionAttribute(Overload& ov, FunctionAttribute attribute);
  // The overload's CUfunction on the current device, loaded there if need be
  // (numba's _Kernel.library.get_cufunc().handle, which nvmath's examples
  // give to cuda-bindings' cuFuncSetAttribute).
  cu::CUfunction functionOnCurrentDevice(Overload& ov);
  // numba's Context.get_active_blocks_per_multiprocessor for the overload:
  // blocks of `threads` threads (and `shared_bytes` of dynamic shared memory)
  // one SM of the current device holds at once.
  int activeBlocksPerMultiprocessor(Overload& ov, unsigned threads, unsigned shared_bytes);

  const std::vector<Overload*>& overloads() const { return order_; }
  // The same, each held: a caller that may run Python code (or compile)
  // between two of them iterates this copy.
  std::vector<std::shared_ptr<Overload>> heldOverloads() const;
  // Overloads dropped from memory by the bound (cudajit.cache.memory_cache_limit).
  uint64_t evictions() const { return evictions_; }
  const std::vector<std::vector<const Type*>>& declared() const { return declared_; }
  const std::vector<Block>& declaredBlocks() const { return declared_blocks_; }
  // The overload for these types (and block shape, for kernels with block
  // algorithms; none given: the first of these types).
  Overload* find(const std::vector<const Type*>& args, Block block = {{0, 0, 0}}) const;
  const std::string& ptx(Overload& overload);
  // The typed IR after the named passes (inspect_ir(after=...)), for a
  // compiled overload: type inference and the passes run again, nothing else.
  std::vector<passes::IrSnapshot> irAfter(const Overload& ov, const std::vector<std::string>& after);
  // The decoded, untyped module's text.
  const std::string& untypedIr();
  int numArgs();
  std::string qualname() const;

  LaunchConfigCache& launchConfigs() { return configs_; }

  // numba's argument-preparation extensions (jit(extensions=[...]), the list
  // kernel.extensions is): empty unless the user adds some, which the
  // launcher checks before taking its slower, hooked path.
  py::list& extensions() { return extensions_; }
  // cudajit.launchconfig.capture_compile_config(kernel): the dict a
  // launch that compiles records its configuration into; None when off.
  py::object& launchCapture() { return capture_; }
  // Overloads compiled so far (those evicted included): a launch compiled
  // when this grew across it.
  uint64_t compiles() const { return order_.size() + evictions_; }

 private:
  const ir::Module& untyped();
  int targetArch() const;
  driver::CompileOptions compileOptions(int arch, bool want_cubin, Block block = {{0, 0, 0}}) const;
  // The compiled kernel for `args` on `arch`: from the disk cache when
  // enabled and present, else compiled (and stored). For a GPU of `arch`
  // (for_device), an entry of an older arch that carries PTX serves too:
  // its PTX becomes the image the driver JIT-compiles (cache_result
  // "hit-ptx"); warm never takes that route.
  driver::CompiledKernel obtain(const std::vector<const Type*>& args, int arch, CompileStats* stats,
                                Block block = {{0, 0, 0}}, bool for_device = false);
  bool ptxOfOlderArch(const std::vector<const Type*>& args, int arch, Block block, CompileStats* stats,
                      driver::CompiledKernel* out);
  void compileDeclared();
  // The block shape an overload is keyed by: `block` for kernels with block
  // algorithms, {0,0,0} for the others.
  Block blockKey(Block block);
  Overload* select(const std::vector<const Type*>& actual, Block block);
  Overload* selectSlow(const std::vector<const Type*>& actual, Block block);
  Overload::Loaded& loadedOn(Overload& ov, int device, cu::CUcontext context);
  // loadedOn the current device, its context made current (the queries that
  // take no arguments to launch with).
  Overload::Loaded& loadedOnCurrentDevice(Overload& ov);
  // Raises the function's dynamic shared memory limit to `bytes` when above 48 KB.
  void allowDynamicShared(Overload::Loaded& loaded, int device, unsigned bytes);
  void record(Overload& ov);
  [[noreturn]] void noMatchingSignature(const std::vector<const Type*>& actual) const;
  // Drops the least recently used overloads beyond memoryCacheLimit() (never
  // `keep`, never those of a kernel with explicit signatures): out of every
  // table here at once; one a launch in flight still uses lives on in
  // retired_ until no launch of this kernel is in flight.
  void evictBeyondLimit(const Overload* keep);
  friend class InFlight;

  py::object py_function_;
  DispatcherOptions options_;
  py::list extensions_;
  py::object capture_ = py::none();
  std::shared_ptr<const ir::Module> untyped_;
  std::string untyped_ir_;
  double decode_seconds_ = 0;
  int num_args_ = -1;
  bool explicit_signatures_ = false;
  std::vector<std::vector<const Type*>> declared_;   // explicit signatures, in order
  std::vector<Block> declared_blocks_;               // ... and their block shapes
  int uses_block_ = -1;                              // usesBlockAlgorithms(), -1: not known yet
  size_t declared_compiled_ = 0;                     // how many of them are compiled
  std::vector<std::vector<const Type*>> awaiting_block_;   // compileExplicit's until_launch ones
  std::unordered_map<SignatureKey, std::shared_ptr<Overload>, SignatureKeyHash> by_key_;
  // Explicit signatures: the overload each seen argument-type list converts to.
  std::unordered_map<SignatureKey, Overload*, SignatureKeyHash> conversions_;
  std::vector<Overload*> order_;   // in order of compilation
  Overload* last_ = nullptr;       // the last launch's overload
  std::vector<const Type*> last_types_;   // ... and the argument types that chose it
  Block last_block_{{0, 0, 0}};           // ... and the block shape (kernels with block algorithms)
  LaunchConfigCache configs_;
  uint64_t use_clock_ = 0;         // counts selections; Overload::last_used is a reading of it
  uint64_t evictions_ = 0;
  // Launches (and queries) of this kernel between choosing an overload and
  // returning, on every thread: a launch releases the GIL (waiting for host
  // copies) and may run Python code, so another thread's launch can compile,
  // and evict, meanwhile. Changed with the GIL held, like every table here.
  int in_flight_ = 0;
  std::vector<std::shared_ptr<Overload>> retired_;   // evicted while in_flight_ > 0
};

// Marks a launch or query of `d` in flight for its scope; the last one to
// end frees the overloads evicted meanwhile.
class InFlight {
 public:
  explicit InFlight(Dispatcher& d) : d_(d) { ++d_.in_flight_; }
  ~InFlight() {
    if (--d_.in_flight_ == 0 && !d_.retired_.empty()) d_.retired_.clear();
  }
  InFlight(const InFlight&) = delete;
  InFlight& operator=(const InFlight&) = delete;

 private:
  Dispatcher& d_;
};

void setDeferExplicitCompiles(bool defer);

// compile_ptx / compile_cubin: one signature without a dispatcher or a GPU.
struct AotResult {
  std::string ptx;
  std::vector<char> cubin;    // compile_cubin only
  std::vector<char> ltoir;    // cudajit.compile(output="ltoir") only
  std::string symbol;
  const Type* return_type = nullptr;
};
// `block`: the launch block shape of kernels with block algorithms. The GIL is
// released past decoding (warming from several threads runs in parallel).
// `declared_return`: a device function's return type from the signature (its
// results are converted to it, as numba does); null: as inferred.
AotResult compileAot(const py::object& py_function, const std::vector<const Type*>& args,
                     bool device, bool want_cubin, const DispatcherOptions& options,
                     Block block = {{0, 0, 0}}, const Type* declared_return = nullptr,
                     bool want_ltoir = false, const std::string& device_symbol = {});

}  // namespace cj::rt
#pragma GCC visibility pop
