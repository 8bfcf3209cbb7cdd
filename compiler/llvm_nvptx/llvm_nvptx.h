// The LLVM back end's plugin interface (issue 16): LLVM assembly in, PTX out,
// through LLVM's own parser, linker, optimiser and NVPTX code generator.
//
// The plugin (libcudajit_llvm.so, built from this folder when CMake finds
// LLVM 17 or newer, LLVM linked in statically) is loaded with dlopen by
// link/llvm_compile.cpp, as libNVVM is: cudajit itself never links LLVM, so a
// build without LLVM still works and a process that also holds another LLVM
// (llvmlite, Triton) sees no clash. Plain C types only: the plugin and the
// core may be built by different compilers.
#pragma once
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

// Bump when a field or a function changes; the loader refuses other versions.
#define CJ_LLVM_PLUGIN_ABI 2

typedef struct CjLlvmOptions {
  int arch;              // 90 for sm_90
  int arch_specific;     // sm_90a
  int opt;               // 0..3: LLVM's O0..O3 pipeline and code generation level
  int fastmath;          // flush denormals, approximate division and square root
  const char* libdevice; // libdevice.10.bc, linked (only what is called) when the module calls __nv_*
} CjLlvmOptions;

// The plugin's ABI version (CJ_LLVM_PLUGIN_ABI).
int cj_llvm_abi_version(void);
// "LLVM 19.1.7": the version it was built with (part of the kernel cache key).
const char* cj_llvm_version(void);
// Compiles one module. Returns 0 and sets *ptx, or returns nonzero and sets
// *log to the reason (parse errors with line and column, verifier messages,
// LLVM's diagnostics); either string is freed with cj_llvm_free. Never
// aborts the process on LLVM's fatal errors: they come back as a log.
int cj_llvm_compile(const char* ir, size_t ir_size, const CjLlvmOptions* options, char** ptx,
                    char** log);
// The module after LLVM's pipeline for the options' target, as LLVM
// assembly, libdevice not linked (its __nv_* calls stay declarations): what
// the CPU fuzzer runs to check LLVM's optimiser against CPython (issue 16).
int cj_llvm_optimize(const char* ir, size_t ir_size, const CjLlvmOptions* options, char** optimized,
                     char** log);
void cj_llvm_free(char* text);

#ifdef __cplusplus
}
#endif
