// The code generator's interface: typed IR in, one module for the toolchain
// out. Everything outside compiler/codegen/ (the driver, the bindings) uses
// only this header (and abi.h, the kernel parameter layout every back end
// shares).
//
// Two back ends share one lowering (module_emitter.cpp and the lower_*.cpp
// tables), which writes LLVM assembly in the typed-pointer dialect that both
// libNVVM and LLVM 17+ read: nvvmBackend() hands it to libNVVM,
// llvmBackend() to LLVM's own parser, optimiser and NVPTX code generator
// (link/llvm_compile.cpp, the plugin in llvm_nvptx/). A back end with other
// needs (NVVM bitcode, say) implements Backend again: it gets the same typed
// module, options and resolved library calls, and returns its own artifact
// format; the driver hands the artifact to the matching toolchain step.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "ir/ir.h"
#include "libcalls/library_call.h"
#include "types/c_abi.h"

namespace cj::codegen {

// The text's dialect where libNVVM's (LLVM 7) and LLVM 17+'s assembly
// differ: a by-value parameter is `T* byval` in one and `T* byval(T)` in the
// other. Set by the back end, not by callers.
enum class Dialect { Nvvm, Llvm };

struct CodegenOptions {
  Dialect dialect = Dialect::Nvvm;
  bool fastmath = false;
  bool debug = false;      // bounds checks on array accesses
  bool lineinfo = false;   // !dbg locations with the Python file and lines
};

// One emitted module.
struct ModuleArtifact {
  enum class Format {
    NvvmText,   // NVVM IR text (the LLVM 7 dialect libNVVM reads)
    LlvmText,   // the same text for LLVM 17+'s parser (typed pointers read as `ptr`; Dialect::Llvm)
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
  // functions. Library calls (CUB today, MathDx next) become calls of the
  // symbols the library-call stage resolved (libcalls/resolve.h); a module
  // that makes none may pass an empty table. Throws CompileError (with
  // location) for a typed construct it cannot lower.
  // How the module declares a library's extern "C" entry point (for tools
  // and tests: the NVVM back end writes `declare float @f(float, i8*)`).
  virtual std::string externDeclaration(std::string_view symbol, const CSignature& signature) const = 0;
  virtual ModuleArtifact emit(const ir::Module& typed, const CodegenOptions& options,
                              const libcalls::ResolvedCalls& library_calls) const = 0;
};

// NVVM IR text.
const Backend& nvvmBackend();
// LLVM assembly for LLVM's NVPTX back end ("llvm-nvptx").
const Backend& llvmBackend();

}  // namespace cj::codegen
