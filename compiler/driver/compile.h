// The pipeline, stage after stage: decode -> infer -> passes -> NVVM -> PTX /
// LTO-IR -> cubin. Owns no state of its own; the runtime caches results.
#pragma once
#include <Python.h>

#include <memory>
#include <string>
#include <vector>

#include "codegen/nvvm_emitter.h"
#include "ir/ir.h"
#include "link/toolchain.h"
#include "typeinfer/infer.h"

namespace cj::driver {

struct CompileOptions {
  link::TargetOptions target;
  codegen::CodegenOptions codegen;
  typeinfer::InferOptions infer;
  bool want_cubin = true;       // false: stop after PTX (compile_ptx)
  bool device = false;          // compile a device function (compile_ptx(device=True))
  // LTO-IR to link with the kernel (CUB block algorithms). Empty: the kernel
  // goes NVVM IR -> PTX (libNVVM) -> cubin (nvJitLink runs ptxas), which
  // yields the PTX for free; otherwise NVVM IR -> LTO-IR -> nvJitLink -lto.
  std::vector<link::LinkInput> lto_inputs;
};

// Wall time of each stage, seconds. `nvvm` is libNVVM (NVVM IR -> PTX or
// LTO-IR), `link` nvJitLink (ptxas, or LTO + ptxas).
struct StageTimes {
  double decode = 0, infer = 0, passes = 0, emit = 0, nvvm = 0, link = 0;
  double total() const { return decode + infer + passes + emit + nvvm + link; }
};

struct CompiledKernel {
  std::string symbol;             // kernel entry name in the cubin
  std::vector<const Type*> arg_types;
  const Type* return_type = nullptr;
  std::string untyped_ir;         // text of the decoded module
  std::string typed_ir;           // text of the typed module after passes
  std::string nvvm_ir;
  std::string ptx;                // empty when linked through LTO (CUB)
  std::vector<char> cubin;        // empty unless want_cubin
  StageTimes times;
};

// Decodes once (the untyped module can be reused for other signatures).
std::shared_ptr<const ir::Module> decode(PyObject* py_function);

// Runs the rest of the pipeline for one signature.
CompiledKernel compile(const ir::Module& untyped, const std::vector<const Type*>& arg_types,
                       const CompileOptions& options);

}  // namespace cj::driver
