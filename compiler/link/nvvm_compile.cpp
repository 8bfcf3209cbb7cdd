// libNVVM: NVVM IR text (+ libdevice, added lazily so only what the kernel
// calls is linked, and only when it calls any) -> PTX or LTO-IR.
#include <string>
#include <vector>

#include "link/api.h"
#include "link/toolchain.h"
#include "support/error.h"

namespace cj::link {
namespace {

// One nvvmProgram, destroyed on every path.
class Program {
 public:
  explicit Program(const NvvmApi& api) : api_(api) {
    NvvmResult r = api_.CreateProgram(&prog_);
    if (r != 0) throw ToolchainError(std::string("nvvmCreateProgram failed: ") + api_.GetErrorString(r));
  }
  ~Program() {
    if (prog_) api_.DestroyProgram(&prog_);
  }
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;

  NvvmProgram get() const { return prog_; }

  std::string log() const {
    size_t size = 0;
    if (api_.GetProgramLogSize(prog_, &size) != 0 || size == 0) return {};
    std::string text(size, '\0');
    if (api_.GetProgramLog(prog_, &text[0]) != 0) return {};
    while (!text.empty() && (text.back() == '\0' || text.back() == '\n')) text.pop_back();
    return text;
  }

  // Throws ToolchainError with libNVVM's message and the program log.
  void check(NvvmResult r, const char* call) const {
    if (r == 0) return;
    std::string msg = std::string("libNVVM: ") + call + " failed (" + api_.GetErrorString(r) + ")";
    std::string l = log();
    if (!l.empty()) msg += ":\n" + l;
    throw ToolchainError(msg);
  }

 private:
  const NvvmApi& api_;
  NvvmProgram prog_ = nullptr;
};

std::vector<std::string> nvvmOptions(const TargetOptions& t, bool lto) {
  std::vector<std::string> o = {"-arch=compute_" + std::to_string(t.arch) + (t.arch_specific ? "a" : ""), "-opt=" + std::to_string(t.opt)};
  if (t.fastmath) {
    // What numba passes for fastmath=True.
    for (const char* f : {"-ftz=1", "-prec-div=0", "-prec-sqrt=0", "-fma=1"}) o.push_back(f);
  }
  if (t.debug) o.push_back("-g");
  if (t.lineinfo && !t.debug) o.push_back("-generate-line-info");
  if (!t.fast_compile.empty()) o.push_back("-Ofast-compile=" + t.fast_compile);
  if (lto) o.push_back("-gen-lto");
  return o;
}

bool callsLibdevice(const std::string& nvvm_ir) { return nvvm_ir.find("@__nv_") != std::string::npos; }

std::string compile(const std::string& nvvm_ir, const TargetOptions& t, bool lto) {
  const NvvmApi& api = nvvmApi();
  Program p(api);
  p.check(api.AddModuleToProgram(p.get(), nvvm_ir.data(), nvvm_ir.size(), "cudajit"),
          "nvvmAddModuleToProgram");
  // Even lazily added, libdevice costs libNVVM about 2 ms per program (8.7
  // against 6.8 ms for a 3-line kernel on the H100 machine); every libdevice
  // function is named __nv_*, so a module that names none needs none of it.
  if (callsLibdevice(nvvm_ir))
    p.check(api.LazyAddModuleToProgram(p.get(), api.libdevice.data(), api.libdevice.size(), "libdevice"),
            "nvvmLazyAddModuleToProgram(libdevice)");
  std::vector<std::string> options = nvvmOptions(t, lto);
  std::vector<const char*> argv;
  for (const auto& o : options) argv.push_back(o.c_str());
  p.check(api.CompileProgram(p.get(), static_cast<int>(argv.size()), argv.data()), "nvvmCompileProgram");
  size_t size = 0;
  p.check(api.GetCompiledResultSize(p.get(), &size), "nvvmGetCompiledResultSize");
  std::string out(size, '\0');
  if (size) p.check(api.GetCompiledResult(p.get(), &out[0]), "nvvmGetCompiledResult");
  if (!lto) {
    while (!out.empty() && out.back() == '\0') out.pop_back();   // PTX comes NUL-terminated
  }
  return out;
}

}  // namespace

std::string nvvmToPtx(const std::string& nvvm_ir, const TargetOptions& t) { return compile(nvvm_ir, t, false); }

std::vector<char> nvvmToLtoIr(const std::string& nvvm_ir, const TargetOptions& t) {
  std::string out = compile(nvvm_ir, t, true);
  return std::vector<char>(out.begin(), out.end());
}

}  // namespace cj::link
