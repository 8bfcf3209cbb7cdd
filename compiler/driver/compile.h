// The pipeline, stage after stage: decode -> infer -> passes (the "simt"
// pipeline, passes/pipeline.h) -> library calls (libcalls/resolve.h) ->
// NVVM -> PTX / LTO-IR -> cubin. Owns no state of its own; the runtime
// caches results.
#pragma once
#include <Python.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "codegen/backend.h"
#include "ir/ir.h"
#include "link/toolchain.h"
#include "passes/pipeline.h"
#include "typeinfer/infer.h"

namespace cj::driver {

struct CompileOptions {
  link::TargetOptions target;
  codegen::CodegenOptions codegen;
  typeinfer::InferOptions infer;
  bool want_cubin = true;       // false: stop after PTX (compile_ptx)
  bool device = false;          // compile a device function (compile_ptx(device=True))
  // The module's LTO-IR from libNVVM instead of PTX (cudajit.compile(output="ltoir")):
  // the function's own, its library calls left to the caller's link.
  bool want_ltoir = false;
  // A device function's exported name (cudajit.compile's abi_info={"abi_name": ...});
  // empty: its Python name.
  std::string device_symbol;
  // LTO-IR to link with the kernel (CUB block algorithms). Empty: the kernel
  // goes NVVM IR -> PTX (libNVVM) -> cubin (ptxas: `assembler` or nvJitLink), which
  // yields the PTX for free; otherwise NVVM IR -> LTO-IR -> nvJitLink -lto.
  std::vector<link::LinkInput> lto_inputs;
  // Files linked into the kernel (jit(link=[...]): CUDA C++, PTX, LTO-IR,
  // cubin, fatbin, objects, libraries; libcalls/foreign.h), beside those
  // the foreign functions it calls were declared with.
  std::vector<std::string> link_files;
  // PTX -> cubin other than by nvJitLink: the runtime passes the driver's
  // JIT compiler when the kernel is for the GPU in hand. Returns an empty
  // cubin when it cannot; nvJitLink then assembles (and reports errors).
  std::function<std::vector<char>(const std::string& ptx, const link::TargetOptions&)> assembler;
  // Tile kernels (cudajit.tile): the "tile" pipeline runs; `num_warps` is the
  // block size the kernel asked for (0: the compiler's choice).
  bool tile = false;
  int num_warps = 0;
  int occupancy = 0;   // blocks per SM to fit the registers to (cuTile's hint); 0: the compiler's choice
  // jit(launch_bounds=(max_threads, min_blocks, max_cluster_rank)): .maxntid
  // and .maxclusterrank (min_blocks is `occupancy`); 0: none.
  int max_threads = 0;
  int max_cluster_rank = 0;
  // Parameters frozen to compile-time values (cuTile's Constant[...]): the
  // kernel keeps them in its signature, but its body sees the constants.
  std::vector<std::pair<int, ir::Const>> constant_args;
};

// Wall time of each stage, seconds. `nvvm` is libNVVM (NVVM IR -> PTX or
// LTO-IR), `link` nvJitLink (ptxas, or LTO + ptxas).
struct StageTimes {
  double decode = 0, infer = 0, passes = 0, emit = 0, nvvm = 0, link = 0;
  double cub = 0;                 // library calls resolved (CUB: NVRTC or its caches)
  double total() const { return decode + infer + passes + emit + nvvm + link + cub; }
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
  std::vector<char> ltoir;        // empty unless want_ltoir
  const char* assembled_by = "";  // "driver" or "nvJitLink": what made the cubin
  StageTimes times;
  // Block algorithms (cuda.block.* / cuda.warp.*): the kernel is specialised
  // on the launch block shape (options.infer.block_dims) and linked with
  // these CUB instantiations (text form of their specs).
  bool block_specialised = false;
  std::vector<std::string> cub_specs;
  // Tile kernels: the block size the compiler chose (num_warps * 32); 0 otherwise.
  int block_threads = 0;
  // The pass pipeline it ran: "simt", "simt-tile" or "tile" (not cached).
  std::string pipeline;
  // Built for sm_XXa (it uses wgmma): runs on that generation only.
  bool arch_specific = false;
  // It has a grid barrier (cuda.cg.this_grid().sync()): every launch is
  // cooperative (cuLaunchCooperativeKernel), all blocks resident at once.
  bool cooperative = false;
  // Tile kernels: the dynamic shared memory every launch passes (their
  // buffers beyond 48 KB); 0 otherwise.
  int dynamic_shared_bytes = 0;
  // Tile kernels with TMA: the tensor maps each launch encodes and passes
  // after the arguments (codegen/abi.h).
  std::vector<TensorMapSpec> tensor_maps;
};

// Decodes once (the untyped module can be reused for other signatures).
std::shared_ptr<const ir::Module> decode(PyObject* py_function);

// Runs the rest of the pipeline for one signature. With want_cubin false
// the PTX of a kernel that calls block algorithms is nvJitLink's, after LTO
// with its CUB instantiations (the linked result).
CompiledKernel compile(const ir::Module& untyped, const std::vector<const Type*>& arg_types,
                       const CompileOptions& options);

// The PTX of a compiled kernel for inspect_ptx(): libNVVM's, or after
// linking its CUB instantiations.
std::string ptxOf(const CompiledKernel& kernel, const link::TargetOptions& target);

// inspect_ir(after=...): the typed module after each named pass of the
// pipeline (pass names or "all"), for one signature; runs type inference
// and the passes only. Throws CompileError for an unknown pass name, or one
// that is not in the pipeline.
std::vector<passes::IrSnapshot> irAfterPasses(const ir::Module& untyped,
                                              const std::vector<const Type*>& arg_types,
                                              const CompileOptions& options,
                                              const std::vector<std::string>& after);

}  // namespace cj::driver
