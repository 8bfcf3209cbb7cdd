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
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "codegen/abi.h"
#include "driver/compile.h"
#include "runtime/args.h"
#include "runtime/kernel_args.h"
#include "runtime/launch_config.h"
#include "runtime/module.h"

// Like pybind11 itself, these types are private to the extension module
// (they hold pybind11 objects, which have hidden visibility).
#pragma GCC visibility push(hidden)
namespace cj::rt {

namespace py = pybind11;

// What an overload is specialised on. `block` leaves room for kernels
// specialised on the launch block shape (CUB block algorithms); {0,0,0}
// means "any block shape".
struct SignatureKey {
  std::vector<const Type*> args;
  std::array<int, 3> block{{0, 0, 0}};
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
};

enum class CacheOutcome { Off, Miss, Hit, Corrupt, Unwritable };
const char* cacheOutcomeName(CacheOutcome c);

// Where the time of one compile went (seconds); kernel.stats in Python.
struct CompileStats {
  driver::StageTimes stages;     // decode, infer, passes, emit, nvvm, link
  double cache = 0;              // key + lookup (+ store) in the disk cache
  double load = 0;               // cuModuleLoadData on the first device
  CacheOutcome outcome = CacheOutcome::Off;
  double total() const { return stages.total() + cache + load; }
};

// One compiled signature and its per-device loaded modules.
class Overload {
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
  // module), the signature is only recorded in declared().
  void compileExplicit(const std::vector<const Type*>& args);
  // Finds or compiles the overload for exactly these argument types.
  Overload& compileFor(const std::vector<const Type*>& args);
  // Puts the kernel for `args` on `arch` into the disk cache (no GPU, no
  // overload kept): true when it was compiled, false when already cached.
  bool warm(const std::vector<const Type*>& args, int arch);

  void launch(const LaunchConfig& config, PyObject* const* args, size_t nargs);
  // Benchmarks' floor: prepares one launch like launch() (classify, select,
  // load, pack), then calls cuLaunchKernel `iterations` times in a C++ loop
  // with those parameters and returns the seconds the loop took.
  double launchLoop(const LaunchConfig& config, PyObject* const* args, size_t nargs,
                    long iterations);

  const std::vector<Overload*>& overloads() const { return order_; }
  const std::vector<std::vector<const Type*>>& declared() const { return declared_; }
  Overload* find(const std::vector<const Type*>& args) const;
  const std::string& ptx(Overload& overload);
  // The decoded, untyped module's text.
  const std::string& untypedIr();
  int numArgs();
  std::string qualname() const;

  LaunchConfigCache& launchConfigs() { return configs_; }

 private:
  const ir::Module& untyped();
  int targetArch() const;
  driver::CompileOptions compileOptions(int arch, bool want_cubin) const;
  // The compiled kernel for `args` on `arch`: from the disk cache when
  // enabled and present, else compiled (and stored).
  driver::CompiledKernel obtain(const std::vector<const Type*>& args, int arch, CompileStats* stats);
  void compileDeclared();
  Overload* select(const std::vector<const Type*>& actual);
  Overload* selectSlow(const std::vector<const Type*>& actual);
  Overload::Loaded& loadedOn(Overload& ov, int device, cu::CUcontext context);
  void record(Overload& ov);
  [[noreturn]] void noMatchingSignature(const std::vector<const Type*>& actual) const;

  py::object py_function_;
  DispatcherOptions options_;
  std::shared_ptr<const ir::Module> untyped_;
  std::string untyped_ir_;
  double decode_seconds_ = 0;
  int num_args_ = -1;
  bool explicit_signatures_ = false;
  std::vector<std::vector<const Type*>> declared_;   // explicit signatures, in order
  size_t declared_compiled_ = 0;                     // how many of them are compiled
  std::unordered_map<SignatureKey, std::unique_ptr<Overload>, SignatureKeyHash> by_key_;
  // Explicit signatures: the overload each seen argument-type list converts to.
  std::unordered_map<SignatureKey, Overload*, SignatureKeyHash> conversions_;
  std::vector<Overload*> order_;   // in order of compilation
  Overload* last_ = nullptr;       // the last launch's overload
  std::vector<const Type*> last_types_;   // ... and the argument types that chose it
  LaunchConfigCache configs_;
};

void setDeferExplicitCompiles(bool defer);

// compile_ptx / compile_cubin: one signature without a dispatcher or a GPU.
struct AotResult {
  std::string ptx;
  std::vector<char> cubin;    // compile_cubin only
  std::string symbol;
  const Type* return_type = nullptr;
};
AotResult compileAot(const py::object& py_function, const std::vector<const Type*>& args,
                     bool device, bool want_cubin, const DispatcherOptions& options);

}  // namespace cj::rt
#pragma GCC visibility pop
