// The kernel dispatcher: argument signature -> compiled, loaded kernel ->
// launch, all in C++.
//
// A Dispatcher decodes its Python function once (driver::decode) and compiles
// once per signature (driver::compile). A launch classifies the arguments
// (args.h), looks the signature up, compiles on a miss, loads the cubin into
// the current device's primary context (once per device), packs the
// parameters by the ABI slots and calls cuLaunchKernel.
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
#include "runtime/module.h"

// Like pybind11 itself, these types are private to the extension module
// (they hold pybind11 objects, which have hidden visibility).
#pragma GCC visibility push(hidden)
namespace cj::rt {

namespace py = pybind11;

// What an overload is specialised on. `block` leaves room for kernels
// specialised on the launch block shape (CUB block algorithms); {0,0,0}
// means "any block shape".
using Block = std::array<int, 3>;

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

  struct Loaded {
    std::unique_ptr<LoadedModule> module;
    cu::CUfunction function = nullptr;
    unsigned dynamic_shared_limit = 48 * 1024;   // raised with cuFuncSetAttribute when asked
  };
  std::vector<std::unique_ptr<Loaded>> loaded;   // index: device ordinal
  std::map<int, std::vector<char>> cubins_for_other_archs;
  std::string ptx;                               // filled by Dispatcher::ptx on demand
};

class Dispatcher {
 public:
  Dispatcher(py::object py_function, DispatcherOptions options);

  const py::object& pyFunction() const { return py_function_; }
  const DispatcherOptions& options() const { return options_; }

  // Compiles `args` now (explicit signatures; needs no GPU). A later launch
  // only converts arguments to the declared signatures. `block`: the launch
  // block shape for kernels that use block algorithms ({0,0,0}: none given;
  // such kernels then fail to compile, asking for it).
  Overload& compileExplicit(const std::vector<const Type*>& args, Block block = {{0, 0, 0}});
  // Finds or compiles the overload for exactly these argument types (and,
  // for kernels that use block algorithms, this launch block shape).
  Overload& compileFor(const std::vector<const Type*>& args, Block block = {{0, 0, 0}});

  void launch(const LaunchConfig& config, const py::tuple& args);

  const std::vector<Overload*>& overloads() const { return order_; }
  // The overload for these types: one for any block shape, else (kernels
  // with block algorithms) the one specialised on `block`.
  Overload* find(const std::vector<const Type*>& args, Block block = {{0, 0, 0}}) const;
  // PTX of an overload (libNVVM on first request: launches need only the cubin).
  const std::string& ptx(Overload& overload);
  // The decoded, untyped module's text.
  std::string untypedIr();
  int numArgs();

 private:
  const ir::Module& untyped();
  int targetArch() const;
  driver::CompileOptions compileOptions(int arch, bool want_cubin, Block block = {{0, 0, 0}}) const;
  Overload* select(const std::vector<const Type*>& actual, Block block);
  Overload::Loaded& loadedOn(Overload& ov, int device);
  [[noreturn]] void noMatchingSignature(const std::vector<const Type*>& actual) const;

  py::object py_function_;
  DispatcherOptions options_;
  std::shared_ptr<const ir::Module> untyped_;
  double decode_seconds_ = 0;
  bool explicit_signatures_ = false;
  bool block_specialised_ = false;   // some overload is specialised on its block shape
  std::unordered_map<SignatureKey, std::unique_ptr<Overload>, SignatureKeyHash> by_key_;
  std::vector<Overload*> order_;   // in order of compilation
};

// compile_ptx: the PTX and return type of `py_function` for one signature;
// needs no GPU.
struct PtxResult {
  std::string ptx;
  const Type* return_type = nullptr;
};
// `block`: the launch block shape of kernels that use block algorithms.
PtxResult compilePtx(const py::object& py_function, const std::vector<const Type*>& args,
                     bool device, const DispatcherOptions& options, Block block = {{0, 0, 0}});
// compile_cubin: the linked cubin (CUB instantiations included); no GPU needed.
struct CubinResult {
  std::vector<char> cubin;
  std::string symbol;
  const Type* return_type = nullptr;
};
CubinResult compileCubin(const py::object& py_function, const std::vector<const Type*>& args,
                         const DispatcherOptions& options, Block block = {{0, 0, 0}});

}  // namespace cj::rt
#pragma GCC visibility pop
