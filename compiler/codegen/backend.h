// The code generator's interface: typed IR in, one module for the toolchain
// out. Everything outside compiler/codegen/ (the driver, the bindings) uses
// only this header (and abi.h, the kernel parameter layout every back end
// shares).
//
// Today's back end writes NVVM IR text for libNVVM (nvvmBackend(),
// nvvm_backend.cpp over module_emitter.cpp). A second one, LLVM's NVPTX
// back end or NVVM bitcode, implements Backend again: it gets the same typed
// module, options and resolved library calls, and returns its own artifact
// format; the driver hands the artifact to the matching toolchain step.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "ir/ir.h"

namespace cj::codegen {

struct CodegenOptions {
  bool fastmath = false;
  bool debug = false;      // bounds checks on array accesses
  bool lineinfo = false;   // !dbg locations with the Python file and lines
};

// A library call (CUB today, MathDx next) that the library stage has turned
// into a symbol of an LTO-IR module it links: the back end emits a call to
// `symbol` where the IR names the call by `descriptor`. (Empty until the
// library stage hands its results over: lower_cub.cpp still asks cub/.)
struct ResolvedLibraryCall {
  std::string descriptor;   // the call's descriptor in text form
  std::string symbol;       // extern "C" entry point in the library's LTO-IR
};

// One emitted module.
struct ModuleArtifact {
  enum class Format {
    NvvmText,   // NVVM IR text (the LLVM 7 dialect libNVVM reads)
  };
  Format format = Format::NvvmText;
  std::string bytes;
};

class Backend {
 public:
  virtual ~Backend() = default;
  // "nvvm-text": names the back end in messages.
  virtual std::string_view name() const = 0;
  // The symbol the kernel gets in the module, the PTX and the cubin (unique
  // per signature, a valid PTX identifier).
  virtual std::string kernelSymbol(const ir::Function& kernel) const = 0;
  // Emits the module: typed.functions[0] is the kernel (entry ABI per abi.h)
  // unless it is a device function; the others are internal device
  // functions. Throws CompileError (with location) for a typed construct it
  // cannot lower.
  virtual ModuleArtifact emit(const ir::Module& typed, const CodegenOptions& options,
                              const std::vector<ResolvedLibraryCall>& library_calls) const = 0;
};

// NVVM IR text.
const Backend& nvvmBackend();

}  // namespace cj::codegen
