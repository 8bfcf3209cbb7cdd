// The pipeline, stage after stage, timed. See compile.h.
#include "driver/compile.h"

#include <chrono>

#include "bytecode/decoder.h"
#include "driver/cub_link.h"
#include "passes/pass.h"
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
  std::unique_ptr<ir::Module> flipped;
  const ir::Module& source = withEntryKind(untyped, options.device, &flipped);
  out.untyped_ir = ir::printModule(source);

  typeinfer::InferOptions infer = options.infer;
  infer.arch = options.target.arch;   // CUB instantiations are built for the target
  std::unique_ptr<ir::Module> typed = timed(&t.infer, [&] {
    return typeinfer::inferTypes(source, arg_types, infer);
  });
  ir::Function& entry = *typed->functions.front();
  entry.is_kernel = !options.device;
  out.return_type = entry.return_type;
  if (!options.device) checkKernelReturn(entry);

  timed(&t.passes, [&] {
    passes::runPasses(*typed, passes::defaultPipeline(), /*typed=*/true);
    return 0;
  });
  if (!options.device) dropUnneededCubBarriers(*typed);
  out.typed_ir = ir::printModule(*typed);
  out.symbol = codegen::nvvmBackend().kernelSymbol(entry);

  // Block algorithms: their CUB instantiations, all at once and in parallel
  // (codegen then finds them in memory).
  std::vector<cub::Spec> specs = cubSpecs(*typed);
  std::vector<link::LinkInput> cub_inputs;
  if (!specs.empty()) cub_inputs = timed(&t.cub, [&] { return cubLinkInputs(specs); });
  out.block_specialised = !specs.empty();
  for (const cub::Spec& s : specs) out.cub_specs.push_back(cub::toString(s));

  out.nvvm_ir = timed(&t.emit, [&] {
    return codegen::nvvmBackend().emit(*typed, options.codegen, /*library_calls=*/{}).bytes;
  });

  if (options.lto_inputs.empty() && cub_inputs.empty()) {
    // NVVM IR -> PTX -> cubin: as fast as the LTO route for a kernel alone
    // (libNVVM optimises either way, ptxas assembles either way), the PTX
    // (inspect_ptx, the disk cache) comes for free, and the driver's JIT
    // compiler can assemble it.
    out.ptx = timed(&t.nvvm, [&] { return link::nvvmToPtx(out.nvvm_ir, options.target); });
    if (!options.want_cubin) return out;
    out.cubin = timed(&t.link, [&] {
      // ptxas refuses to optimise code with full debug information.
      link::TargetOptions assemble = options.target;
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
  std::vector<char> lto = timed(&t.nvvm, [&] { return link::nvvmToLtoIr(out.nvvm_ir, options.target); });
  // Block algorithms: the kernel's LTO-IR with its CUB instantiations (and
  // any LTO-IR the caller gives), optimised together.
  std::vector<link::LinkInput> inputs = options.lto_inputs;
  inputs.push_back({link::LinkInput::Kind::LtoIr, std::move(lto), out.symbol + ".ltoir"});
  for (auto& in : cub_inputs) inputs.push_back(std::move(in));
  link::TargetOptions target = options.target;
  target.optimize_unused_variables = target.optimize_unused_variables || !specs.empty();
  if (!options.want_cubin) {
    out.ptx = timed(&t.link, [&] { return link::linkPtx(inputs, target); });
    return out;
  }
  out.cubin = timed(&t.link, [&] { return link::linkCubin(inputs, target); });
  out.assembled_by = "nvJitLink";
  return out;
}

std::string ptxOf(const CompiledKernel& kernel, const link::TargetOptions& target) {
  if (kernel.cub_specs.empty()) return link::nvvmToPtx(kernel.nvvm_ir, target);
  std::vector<cub::Spec> specs;
  for (const std::string& text : kernel.cub_specs) {
    cub::Spec s;
    std::string error;
    if (!cub::parseSpec(text, &s, &error)) throw ToolchainError(error);
    specs.push_back(s);
  }
  std::vector<link::LinkInput> inputs;
  inputs.push_back({link::LinkInput::Kind::LtoIr, link::nvvmToLtoIr(kernel.nvvm_ir, target),
                    kernel.symbol + ".ltoir"});
  for (auto& in : cubLinkInputs(specs)) inputs.push_back(std::move(in));
  link::TargetOptions t = target;
  t.optimize_unused_variables = true;
  return link::linkPtx(inputs, t);
}

}  // namespace cj::driver
