// Internal to codegen: the NVVM IR text back end's entry points, which
// nvvmBackend() (backend.h, the interface the rest of the compiler uses)
// wraps. Only codegen knows the textual LLVM syntax.
#pragma once
#include <string>

#include "codegen/backend.h"
#include "ir/ir.h"

namespace cj::codegen {

// Emits one NVVM module: module.functions[0] is the kernel (entry with
// `nvvm.annotations` kernel metadata, parameters per abi.h); other functions
// are internal device functions. Declares the libdevice functions it calls.
// Throws CompileError for a typed construct it cannot lower (with location).
std::string emitNvvm(const ir::Module& typed, const CodegenOptions& options);

// The symbol name the kernel gets in the NVVM/PTX/cubin (mangled to be a valid
// PTX identifier and unique per signature).
std::string kernelSymbol(const ir::Function& kernel);

}  // namespace cj::codegen
