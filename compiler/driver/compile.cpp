// The pipeline, stage after stage, timed. See compile.h.
#include "driver/compile.h"

#include <algorithm>
#include <chrono>

#include <set>
#include <stdexcept>

#include "bytecode/decoder.h"
#include "libcalls/foreign.h"
#include "libcalls/resolve.h"
#include "passes/pipeline.h"
#include "passes/tile_passes.h"
#include "support/error.h"

namespace cj::driver {
namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Runs `stage` and adds its wall time to `slot`.
template <typename F>
auto timed(double* slot, F&& stage) {
  const auto start = Clock::now();
  struct AddOnExit {
    double* slot;
    Clock::time_point start;
    ~AddOnExit() { *slot += secondsSince(start); }
  } add{slot, start};
  return stage();
}

// A kernel returns nothing (numba: "kernel must have void return type").
void checkKernelReturn(const ir::Function& kernel) {
  const Type* r = kernel.return_type;
  if (r && r != noneTy() && r != voidTy())
    throw CompileError(kernel.filename, kernel.first_line, 0, "return",
                       "a kernel must not return a value, but '" + kernel.py_name + "' returns " +
                           typeToNumbaString(r),
                       "write the result into an output array, or compile it as a device "
                       "function (@cudajit.jit(device=True))");
}

// The untyped module with functions[0] marked as a kernel or not, as
// `device` asks (type inference checks that kernels return nothing; codegen
// gives kernels the entry ABI). Copies only when the mark differs.
const ir::Module& withEntryKind(const ir::Module& untyped, bool device,
                                std::unique_ptr<ir::Module>* storage) {
  if (untyped.functions.empty() || untyped.functions.front()->is_kernel == !device) return untyped;
  *storage = std::make_unique<ir::Module>();
  for (const auto& fn : untyped.functions)
    (*storage)->functions.push_back(ir::cloneFunction(*fn, fn->name));
  (*storage)->functions.front()->is_kernel = !device;
  return **storage;
}

// The first tile operation of a module, if any.
const ir::Instr* firstTileOp(const ir::Module& m, const ir::Function** in_fn) {
  for (const auto& fn : m.functions)
    for (const auto& b : fn->blocks)
      for (const auto& in : b->instrs)
        if (passes::isTileOp(*in)) {
          *in_fn = fn.get();
          return in.get();
        }
  return nullptr;
}

// Tile operations in a SIMT kernel (docs/tiles.md, "Tiles inside SIMT
// kernels") are lowered for the launch's block shape: its threads, in
// whole warps, are the tile's threads. Every function of the module gets
// the shape (device functions are compiled for this kernel). Returns whether
// the module has tile operations.
bool prepareSimtTiles(ir::Module& typed, const CompileOptions& options) {
  const ir::Function* fn = nullptr;
  const ir::Instr* first = firstTileOp(typed, &fn);
  if (!first) return false;
  const int* block = options.infer.block_dims;
  auto fail = [&](const std::string& msg, const std::string& hint) {
    throw CompileError(fn->filename, first->loc.line, first->loc.col, passes::tileOpName(*first), msg, hint);
  };
  if (block[0] < 1 || block[1] < 1 || block[2] < 1)
    fail("a @cudajit.jit kernel with tile operations is compiled for its launch block shape, which is "
         "not known here",
         "launch it with kernel[grid, block](...), or compile ahead of time with block=(128,) "
         "(compile_ptx, compile_cubin, @cuda.jit(signature, block=...))");
  const int threads = block[0] * block[1] * block[2];
  const std::string shape =
      std::to_string(block[0]) + " x " + std::to_string(block[1]) + " x " + std::to_string(block[2]);
  if (threads % 32 != 0 || threads > 1024)
    fail("tile operations in a SIMT kernel need a block of whole warps, at most 1024 threads; this "
         "launch's block is " + shape + " = " + std::to_string(threads) + " threads",
         "launch it with a block of 32, 64, ..., 1024 threads");
  for (auto& f : typed.functions) {
    f->num_warps = threads / 32;
    for (int d = 0; d < 3; ++d) f->simt_block[d] = block[d];
    f->target_sm = options.target.arch;
  }
  return true;
}

// The source with Constant parameters' uses replaced by their values (a copy;
// the decoded module is shared by every signature).
const ir::Module& withConstants(const ir::Module& source, const CompileOptions& options,
                                std::unique_ptr<ir::Module>* storage) {
  if (options.constant_args.empty() || source.functions.empty()) return source;
  *storage = std::make_unique<ir::Module>();
  for (const auto& fn : source.functions) (*storage)->functions.push_back(ir::cloneFunction(*fn, fn->name));
  ir::Function& entry = *(*storage)->functions.front();
  for (const auto& [index, value] : options.constant_args)
    if (index >= 0 && index < static_cast<int>(entry.entry()->params.size()))
      ir::bindParamToConstant(entry, static_cast<size_t>(index), value);
  return **storage;
}

// Type inference and the passes: the typed module codegen lowers.
std::unique_ptr<ir::Module> inferAndOptimize(const ir::Module& untyped,
                                             const std::vector<const Type*>& arg_types,
                                             const CompileOptions& options,
                                             const passes::PipelineOptions& pipeline,
                                             CompiledKernel& out,
                                             std::vector<passes::IrSnapshot>* snapshots) {
  StageTimes& t = out.times;
  std::unique_ptr<ir::Module> flipped, frozen;
  const ir::Module& source = withConstants(withEntryKind(untyped, options.device, &flipped), options, &frozen);
  out.untyped_ir = ir::printModule(source);

  typeinfer::InferOptions infer = options.infer;
  infer.arch = options.target.arch;   // CUB instantiations are built for the target
  std::unique_ptr<ir::Module> typed = timed(&t.infer, [&] {
    return typeinfer::inferTypes(source, arg_types, infer);
  });
  // The entry is a kernel or not as withEntryKind marked the source (type
  // inference keeps the mark); nothing here edits the typed IR.
  const ir::Function& entry = *typed->functions.front();
  out.return_type = entry.return_type;
  if (!options.device) checkKernelReturn(entry);

  // The pipeline: "tile" for tile kernels, "simt-tile" for SIMT kernels with
  // tile operations, "simt" otherwise.
  out.pipeline = options.tile ? "tile" : prepareSimtTiles(*typed, options) ? "simt-tile" : "simt";
  // Every change to the IR from here on is a pass of the pipeline.
  if (options.tile) {
    typed->functions.front()->num_warps = options.num_warps;
    typed->functions.front()->target_sm = options.target.arch;
  }
  if (options.tile || !options.device) {   // cuTile's occupancy hint, or launch_bounds'
    typed->functions.front()->occupancy = options.occupancy;
    typed->functions.front()->max_threads = options.max_threads;
    typed->functions.front()->max_cluster_rank = options.max_cluster_rank;
  }
  timed(&t.passes, [&] {
    std::vector<passes::IrSnapshot> s =
        passes::runPipeline(*typed, {out.pipeline}, pipeline);
    if (snapshots) *snapshots = std::move(s);
    return 0;
  });
  if (options.tile) {
    ir::Function& kernel = *typed->functions.front();
    if (kernel.num_warps == 0) kernel.num_warps = 1;   // no tile at all: one warp runs the scalar code
    out.block_threads = kernel.num_warps * 32;
  }
  return typed;
}

// The dynamic shared memory the kernel's slices reach (shared_slice: ints = {n, offset}).
int dynamicSharedBytes(const ir::Module& m) {
  int64_t bytes = 0;
  for (const auto& fn : m.functions)
    for (const auto& b : fn->blocks)
      for (const auto& in : b->instrs)
        if (in->isIntrinsic(ir::Intrinsic::SharedSlice))
          bytes = std::max(bytes, in->ints[1] + in->ints[0] * scalarByteSize(in->type->scalar));
  return static_cast<int>(bytes);
}

bool usesIntrinsic(const ir::Module& m, ir::Intrinsic id) {
  for (const auto& fn : m.functions)
    for (const auto& b : fn->blocks)
      for (const auto& in : b->instrs)
        if (in->isIntrinsic(id)) return true;
  return false;
}

// nvJitLink inputs for the resolved library calls, one per module (calls of
// one entry symbol share it; so do a cuRANDDx descriptor's functions).
std::vector<link::LinkInput> libraryLinkInputs(const libcalls::ResolvedCalls& calls) {
  std::vector<link::LinkInput> inputs;
  std::set<std::string> seen_symbols;
  std::set<const std::vector<char>*> seen_modules;
  for (const auto& [call, r] : calls.entries())
    if (r.ltoir && seen_symbols.insert(r.symbol).second && seen_modules.insert(r.ltoir.get()).second)
      inputs.push_back({link::LinkInput::Kind::LtoIr, *r.ltoir, r.symbol + ".ltoir"});
  return inputs;
}

// The link files of the kernel (options) and of the foreign functions it
// calls, as linker inputs for its target (.cu compiled by NVRTC).
std::vector<link::LinkInput> foreignLinkInputs(const std::vector<libcalls::LibraryCall>& calls,
                                               const CompileOptions& options) {
  namespace foreign = libcalls::foreign;
  std::vector<std::string> files = options.link_files;
  std::vector<std::string> unlinked;
  for (const libcalls::LibraryCall& c : calls) {
    if (c.library != libcalls::Library::Foreign) continue;
    std::shared_ptr<const foreign::Declaration> d = foreign::lookup(c.descriptor);
    if (!d) continue;   // the provider reported it
    files.insert(files.end(), d->link.begin(), d->link.end());
    if (d->link.empty()) unlinked.push_back(d->name);
  }
  if (files.empty() && !unlinked.empty())
    throw ToolchainError("the foreign device function '" + unlinked.front() +
                         "' has no definition to link: give the file that defines it to "
                         "cudajit.declare_device(..., link=[...]) or @cudajit.jit(link=[...])");
  std::vector<link::LinkInput> inputs;
  std::vector<foreign::Input> got;
  try {
    got = foreign::linkInputs(files, options.target.arch);
  } catch (const std::invalid_argument& e) {
    throw ToolchainError(e.what());
  }
  for (const foreign::Input& in : got) {
    static constexpr link::LinkInput::Kind kKinds[] = {link::LinkInput::Kind::LtoIr, link::LinkInput::Kind::Ptx,
                                                       link::LinkInput::Kind::Cubin, link::LinkInput::Kind::Fatbin,
                                                       link::LinkInput::Kind::Object, link::LinkInput::Kind::Library};
    inputs.push_back({kKinds[static_cast<int>(in.kind)], *in.data, in.name});
  }
  return inputs;
}

// The most registers a thread may use so that a block of `dims` threads
// fits one SM (64K registers, allocated per warp in steps of 8 a thread,
// 255 at most); 0 without a block shape.
int registersPerThreadFor(const int dims[3]) {
  int64_t threads = int64_t{dims[0]} * std::max(dims[1], 1) * std::max(dims[2], 1);
  if (threads <= 0) return 0;
  int64_t warps_threads = (threads + 31) / 32 * 32;
  int64_t regs = 65536 / warps_threads / 8 * 8;
  return static_cast<int>(std::min<int64_t>(regs, 255));
}

}  // namespace

std::shared_ptr<const ir::Module> decode(PyObject* py_function) {
  std::unique_ptr<ir::Module> m = bytecode::decodeFunction(py_function);
  // Decoded functions are kernels unless compile() is asked for a device
  // function; device functions called from it stay non-kernels.
  if (!m->functions.empty()) m->functions.front()->is_kernel = true;
  return std::shared_ptr<const ir::Module>(std::move(m));
}

CompiledKernel compile(const ir::Module& untyped, const std::vector<const Type*>& arg_types,
                       const CompileOptions& options) {
  CompiledKernel out;
  out.arg_types = arg_types;
  StageTimes& t = out.times;
  std::unique_ptr<ir::Module> typed =
      inferAndOptimize(untyped, arg_types, options, passes::PipelineOptions::fromEnvironment(), out,
                       nullptr);
  if (options.device && !options.device_symbol.empty()) {
    for (const auto& fn : typed->functions)
      if (fn.get() != typed->functions.front().get() && fn->name == options.device_symbol)
        throw CompileError(typed->functions.front()->filename, typed->functions.front()->first_line, 0, "abi_name",
                           "the name '" + options.device_symbol + "' is taken by a device function it calls");
    typed->functions.front()->name = options.device_symbol;
  }
  out.typed_ir = ir::printModule(*typed);
  link::TargetOptions target = options.target;
  // wgmma (sm_90a): the kernel is built for the arch-specific target.
  target.arch_specific = target.arch_specific || usesIntrinsic(*typed, ir::Intrinsic::Wgmma);
  out.cooperative = usesIntrinsic(*typed, ir::Intrinsic::GridSync);
  out.arch_specific = target.arch_specific;
  out.dynamic_shared_bytes = dynamicSharedBytes(*typed);
  out.tensor_maps = typed->functions.front()->tensor_maps;
  const bool llvm = target.backend == link::BackendKind::Llvm;
  const codegen::Backend& backend = llvm ? codegen::llvmBackend() : codegen::nvvmBackend();
  out.symbol = backend.kernelSymbol(*typed->functions.front());

  // Library calls (block algorithms): their entry points and LTO-IR, all at
  // once and in parallel; codegen then only calls the symbols.
  std::vector<libcalls::LibraryCall> calls = libcalls::collect(*typed);
  libcalls::ResolvedCalls resolved;
  if (!calls.empty()) resolved = timed(&t.cub, [&] { return libcalls::resolve(calls); });
  for (const auto& [call, r] : resolved.entries())
    if (r.arch_specific) target.arch_specific = out.arch_specific = true;
  std::vector<link::LinkInput> cub_inputs = libraryLinkInputs(resolved);
  // Foreign functions' and the kernel's own link files: read (and .cu files
  // compiled) below, only where the kernel is linked.
  const bool links_files = !options.link_files.empty() ||
                           std::any_of(calls.begin(), calls.end(), [](const libcalls::LibraryCall& c) {
                             return c.library == libcalls::Library::Foreign;
                           });
  out.block_specialised = !calls.empty();
  for (const libcalls::LibraryCall& c : calls)
    if (c.library == libcalls::Library::Cub) out.cub_specs.push_back(c.descriptor);

  out.nvvm_ir = timed(&t.emit, [&] {
    return backend.emit(*typed, options.codegen, resolved).bytes;
  });
  if (options.want_ltoir) {
    if (llvm) throw ToolchainError("output='ltoir' needs the libNVVM back end: LLVM's cannot write NVVM's LTO-IR");
    out.ltoir = timed(&t.nvvm, [&] { return link::nvvmToLtoIr(out.nvvm_ir, target); });
    return out;
  }
  // LLVM's NVPTX back end makes PTX in every case: it cannot write NVVM's
  // LTO-IR, so library calls stay extern calls in the PTX, which nvJitLink
  // links against the libraries' LTO-IR below (docs/backends.md).
  if (llvm) out.ptx = timed(&t.nvvm, [&] { return link::llvmToPtx(out.nvvm_ir, target); });

  // A device function alone (compile_ptx(device=True)) keeps its library
  // calls extern: linking would strip the function itself, no kernel using it.
  const bool unlinked = options.device && !options.want_cubin;
  if (unlinked || (options.lto_inputs.empty() && cub_inputs.empty() && !links_files)) {
    // NVVM IR -> PTX -> cubin: as fast as the LTO route for a kernel alone
    // (libNVVM optimises either way, ptxas assembles either way), the PTX
    // (inspect_ptx, the disk cache) comes for free, and the driver's JIT
    // compiler can assemble it.
    if (!llvm) out.ptx = timed(&t.nvvm, [&] { return link::nvvmToPtx(out.nvvm_ir, target); });
    if (!options.want_cubin) return out;
    out.cubin = timed(&t.link, [&] {
      // ptxas refuses to optimise code with full debug information.
      link::TargetOptions assemble = target;
      if (assemble.debug) assemble.opt = 0;
      if (options.assembler) {
        std::vector<char> cubin = options.assembler(out.ptx, assemble);
        if (!cubin.empty()) {
          out.assembled_by = "driver";
          return cubin;
        }
      }
      out.assembled_by = "nvJitLink";
      std::vector<link::LinkInput> inputs;
      inputs.push_back({link::LinkInput::Kind::Ptx, std::vector<char>(out.ptx.begin(), out.ptx.end()),
                        out.symbol + ".ptx"});
      return link::linkCubin(inputs, assemble);
    });
    return out;
  }
  // Block algorithms: the kernel's LTO-IR with its CUB instantiations (and
  // any LTO-IR the caller gives), optimised together; from the LLVM back
  // end, its PTX beside them (the libraries are optimised among themselves).
  std::vector<link::LinkInput> inputs = options.lto_inputs;
  if (llvm) {
    target.max_registers = registersPerThreadFor(options.infer.block_dims);
    inputs.push_back({link::LinkInput::Kind::Ptx, std::vector<char>(out.ptx.begin(), out.ptx.end()),
                      out.symbol + ".ptx"});
  } else {
    std::vector<char> lto = timed(&t.nvvm, [&] { return link::nvvmToLtoIr(out.nvvm_ir, target); });
    inputs.push_back({link::LinkInput::Kind::LtoIr, std::move(lto), out.symbol + ".ltoir"});
  }
  for (auto& in : cub_inputs) inputs.push_back(std::move(in));
  if (links_files)
    for (auto& in : foreignLinkInputs(calls, options)) inputs.push_back(std::move(in));
  target.optimize_unused_variables = target.optimize_unused_variables || !calls.empty();
  if (!options.want_cubin) {
    // nvJitLink writes linked PTX from LTO-IR inputs only. With the LLVM
    // back end's PTX (already made) or a PTX or binary link file, the PTX
    // is the kernel's own, its library calls extern.
    bool lto_only = std::all_of(inputs.begin(), inputs.end(),
                                [](const link::LinkInput& in) { return in.kind == link::LinkInput::Kind::LtoIr; });
    if (!lto_only) {
      if (!llvm) out.ptx = timed(&t.nvvm, [&] { return link::nvvmToPtx(out.nvvm_ir, target); });
      return out;
    }
    out.ptx = timed(&t.link, [&] { return link::linkPtx(inputs, target); });
    return out;
  }
  out.cubin = timed(&t.link, [&] { return link::linkCubin(inputs, target); });
  out.assembled_by = "nvJitLink";
  return out;
}

std::string ptxOf(const CompiledKernel& kernel, const link::TargetOptions& options_target) {
  link::TargetOptions target = options_target;
  target.arch_specific = target.arch_specific || kernel.arch_specific;
  if (target.backend == link::BackendKind::Llvm) return link::llvmToPtx(kernel.nvvm_ir, target);
  if (kernel.cub_specs.empty()) return link::nvvmToPtx(kernel.nvvm_ir, target);
  std::vector<libcalls::LibraryCall> calls;
  for (const std::string& text : kernel.cub_specs) calls.push_back({libcalls::Library::Cub, text});
  std::vector<link::LinkInput> inputs;
  inputs.push_back({link::LinkInput::Kind::LtoIr, link::nvvmToLtoIr(kernel.nvvm_ir, target),
                    kernel.symbol + ".ltoir"});
  for (auto& in : libraryLinkInputs(libcalls::resolve(calls))) inputs.push_back(std::move(in));
  link::TargetOptions t = target;
  t.optimize_unused_variables = true;
  return link::linkPtx(inputs, t);
}

std::vector<passes::IrSnapshot> irAfterPasses(const ir::Module& untyped,
                                              const std::vector<const Type*>& arg_types,
                                              const CompileOptions& options,
                                              const std::vector<std::string>& after) {
  passes::checkPassNames(after, "inspect_ir(after=...)");
  passes::PipelineOptions pipeline = passes::PipelineOptions::fromEnvironment();
  pipeline.capture_after = after;
  CompiledKernel scratch;
  std::vector<passes::IrSnapshot> snapshots;
  inferAndOptimize(untyped, arg_types, options, pipeline, scratch, &snapshots);
  for (const std::string& name : after) {
    if (name == "all") continue;
    bool ran = false;
    for (const passes::IrSnapshot& s : snapshots) ran = ran || s.pass == name;
    if (!ran) {
      std::string list;
      for (std::string_view p : passes::pipelinePasses(scratch.pipeline)) list += (list.empty() ? "" : ", ") + std::string(p);
      throw CompileError("", 0, 0, "inspect_ir(after=...)",
                         "pass '" + name + "' is not in the pipeline '" + scratch.pipeline + "'", "its passes: " + list);
    }
  }
  return snapshots;
}

}  // namespace cj::driver
