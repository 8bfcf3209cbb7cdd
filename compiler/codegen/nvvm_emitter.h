// Internal to codegen: the NVVM IR text back end's entry points, which
// nvvmBackend() (backend.h, the interface the rest of the compiler uses)
// wraps. Only codegen knows the textual LLVM syntax.
#pragma once
#include <string>

#include "codegen/backend.h"
#include "ir/ir.h"
#include "libcalls/library_call.h"
#include "types/c_abi.h"

namespace cj::codegen {

// Emits one NVVM module: module.functions[0] is the kernel (entry with
// `nvvm.annotations` kernel metadata, parameters per abi.h); other functions
// are internal device functions. Declares the libdevice functions it calls.
// Throws CompileError for a typed construct it cannot lower (with location).
// Library calls (intrinsic cub) become calls of the symbols in `calls`, which
// the library-call stage resolved (libcalls/resolve.h); a module that makes
// none may pass an empty table.
std::string emitNvvm(const ir::Module& typed, const CodegenOptions& options,
                     const libcalls::ResolvedCalls& calls = {});

// The declaration of an extern "C" function in NVVM IR:
//   declare float @cj_block_reduce_sum_f32_b256x1x1_i1(float, i8*)
std::string nvvmDeclaration(std::string_view symbol, const CSignature& signature);

// The symbol name the kernel gets in the NVVM/PTX/cubin (mangled to be a valid
// PTX identifier and unique per signature).
std::string kernelSymbol(const ir::Function& kernel);
// A device function's symbol: `name` when PTX takes it as it is (letters,
// digits, '_', '$'; no leading digit), else (a lambda's "<lambda>__f64") its
// readable part and a hash of the name, as kernel symbols are made.
std::string ptxSafeName(const std::string& name);

}  // namespace cj::codegen
