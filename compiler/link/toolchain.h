// Stage 4: NVVM IR -> PTX / LTO-IR (libNVVM) -> cubin (nvJitLink).
//
// libNVVM and nvJitLink are loaded with dlopen at first use, found through
// CUDA_HOME / CUDA_PATH, /usr/local/cuda (lib, lib64, nvvm/lib64) and the pip
// `nvidia-*` wheels (site-packages/nvidia/cu13/..., nvidia/cuda_nvcc/...),
// never linked at build time. libdevice is found the same way.
#pragma once
#include <string>
#include <vector>

namespace cj::link {

// What turns the module into PTX: libNVVM (the default) or LLVM's NVPTX
// back end (the plugin, issue 16). Names: "nvvm", "llvm".
enum class BackendKind { Nvvm, Llvm };
const char* backendName(BackendKind b);
// "nvvm" / "llvm"; false for any other name.
bool parseBackendName(const std::string& name, BackendKind* out);

struct TargetOptions {
  BackendKind backend = BackendKind::Nvvm;
  int arch = 90;        // sm_XX / compute_XX
  // sm_XXa / compute_XXa: code that uses the generation's own instructions
  // (wgmma on sm_90a), which runs on that generation only.
  bool arch_specific = false;
  int opt = 3;          // -opt=
  bool fastmath = false;
  bool debug = false;   // -g
  bool lineinfo = false;
  // libNVVM and ptxas -Ofast-compile level ("min", "mid", "max"; empty:
  // off): less optimisation for a faster compile.
  std::string fast_compile;
  // nvJitLink -optimize-unused-variables: device variables nothing in the
  // device code references may go (kernels linked with CUB instantiations).
  bool optimize_unused_variables = false;
  // nvJitLink -maxrregcount (0: none): the LLVM back end's PTX calls the
  // libraries' functions, which LTO compiles apart from it; each must fit
  // the register budget of the kernel's launch block shape.
  int max_registers = 0;
};

// libNVVM: compiles the module together with libdevice. Throws
// ToolchainError carrying libNVVM's log on failure.
std::string nvvmToPtx(const std::string& nvvm_ir, const TargetOptions& t);
std::vector<char> nvvmToLtoIr(const std::string& nvvm_ir, const TargetOptions& t);

// LLVM's NVPTX back end (backend="llvm", issue 16): the same module
// through the plugin libcudajit_llvm.so (LLVM's parser, libdevice as
// bitcode, O0-O3, NVPTX) -> PTX. Throws ToolchainError when the plugin is
// missing (the build found no LLVM) or LLVM rejects the module.
std::string llvmToPtx(const std::string& ir, const TargetOptions& t);
// The module after the LLVM back end's optimisation pipeline, as LLVM
// assembly, libdevice left as calls: the CPU fuzzer runs it (issue 16).
std::string llvmOptimize(const std::string& ir, const TargetOptions& t);
// "LLVM 19.1.7": the plugin's LLVM (cache keys); throws like llvmToPtx.
std::string llvmBackendVersion();

struct LinkInput {
  enum class Kind { LtoIr, Ptx, Cubin, Fatbin, Object, Library } kind;
  std::vector<char> data;
  std::string name;
};
// nvJitLink: links the inputs into a cubin for sm_<arch> (with -lto when any
// input is LTO-IR). Throws ToolchainError with nvJitLink's error log.
std::vector<char> linkCubin(const std::vector<LinkInput>& inputs, const TargetOptions& t);
// nvJitLink can also produce PTX after LTO.
std::string linkPtx(const std::vector<LinkInput>& inputs, const TargetOptions& t);

// Versions for cache keys and messages: "libNVVM 2.0 (IR 2.0)", "nvJitLink 13.0".
std::string toolchainVersion();
// Where the libraries were found (diagnostics); throws ToolchainError if not.
std::string libnvvmPath();
std::string nvjitlinkPath();
std::string libdevicePath();

// Extra directories searched for the pip `nvidia-*` wheels, as
// site-packages (the Python binding passes sys.path before first use).
// Environment overrides: $CUDAJIT_LIBNVVM, $CUDAJIT_NVJITLINK,
// $CUDAJIT_LIBDEVICE name the files directly (library_finder.h has the
// whole search order).
void addSitePackages(const std::vector<std::string>& dirs);

}  // namespace cj::link
