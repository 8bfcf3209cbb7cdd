#include "cub/nvrtc.h"

#include <dlfcn.h>

#include <memory>

#include "cub/toolkit.h"
#include "support/error.h"

namespace cj::cub {
namespace {

// From nvrtc.h (stable C ABI since CUDA 11): the result enum is an int,
// nvrtcProgram an opaque pointer.
using nvrtcResult = int;
using nvrtcProgram = struct _nvrtcProgram*;
constexpr nvrtcResult NVRTC_SUCCESS = 0;

}  // namespace

struct Nvrtc::Api {
  const char* (*GetErrorString)(nvrtcResult);
  nvrtcResult (*Version)(int*, int*);
  nvrtcResult (*CreateProgram)(nvrtcProgram*, const char*, const char*, int, const char* const*,
                               const char* const*);
  nvrtcResult (*DestroyProgram)(nvrtcProgram*);
  nvrtcResult (*CompileProgram)(nvrtcProgram, int, const char* const*);
  nvrtcResult (*GetLTOIRSize)(nvrtcProgram, size_t*);
  nvrtcResult (*GetLTOIR)(nvrtcProgram, char*);
  nvrtcResult (*GetCUBINSize)(nvrtcProgram, size_t*);
  nvrtcResult (*GetCUBIN)(nvrtcProgram, char*);
  nvrtcResult (*GetProgramLogSize)(nvrtcProgram, size_t*);
  nvrtcResult (*GetProgramLog)(nvrtcProgram, char*);
  nvrtcResult (*AddNameExpression)(nvrtcProgram, const char*);
  nvrtcResult (*GetLoweredName)(nvrtcProgram, const char*, const char**);
};

namespace {

template <class F>
void bind(void* handle, const std::string& path, const char* symbol, F*& out) {
  void* p = dlsym(handle, symbol);
  if (!p) throw ToolchainError(std::string("NVRTC at ") + path + " lacks " + symbol);
  out = reinterpret_cast<F*>(p);
}

}  // namespace

Nvrtc::Nvrtc() {
  path_ = findNvrtcLibrary();
  handle_ = dlopen(path_.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle_) {
    const char* err = dlerror();
    throw ToolchainError("NVRTC could not be loaded from " + path_ + (err ? ": " + std::string(err) : "") +
                         ". Install the CUDA toolkit (set CUDA_HOME) or the nvidia-cuda-nvrtc wheel, "
                         "or set $CUDAJIT_NVRTC.");
  }
  auto api = std::make_unique<Api>();
  try {
    bind(handle_, path_, "nvrtcGetErrorString", api->GetErrorString);
    bind(handle_, path_, "nvrtcVersion", api->Version);
    bind(handle_, path_, "nvrtcCreateProgram", api->CreateProgram);
    bind(handle_, path_, "nvrtcDestroyProgram", api->DestroyProgram);
    bind(handle_, path_, "nvrtcCompileProgram", api->CompileProgram);
    bind(handle_, path_, "nvrtcGetLTOIRSize", api->GetLTOIRSize);
    bind(handle_, path_, "nvrtcGetLTOIR", api->GetLTOIR);
    bind(handle_, path_, "nvrtcGetCUBINSize", api->GetCUBINSize);
    bind(handle_, path_, "nvrtcGetCUBIN", api->GetCUBIN);
    bind(handle_, path_, "nvrtcGetProgramLogSize", api->GetProgramLogSize);
    bind(handle_, path_, "nvrtcGetProgramLog", api->GetProgramLog);
    bind(handle_, path_, "nvrtcAddNameExpression", api->AddNameExpression);
    bind(handle_, path_, "nvrtcGetLoweredName", api->GetLoweredName);
  } catch (...) {
    dlclose(handle_);
    throw;
  }
  int major = 0, minor = 0;
  nvrtcResult r = api->Version(&major, &minor);
  if (r != NVRTC_SUCCESS) {
    dlclose(handle_);
    throw ToolchainError("nvrtcVersion failed: " + std::string(api->GetErrorString(r)));
  }
  version_ = std::to_string(major) + "." + std::to_string(minor);
  api_ = std::move(api);
}

Nvrtc::~Nvrtc() {
  // The library stays loaded: NVRTC keeps process-wide state (PCH) and the
  // process is ending when this runs.
}

const Nvrtc& Nvrtc::get() {
  // A throwing initialiser leaves the static uninitialised: the next call retries.
  static const Nvrtc instance;
  return instance;
}

NvrtcOutput Nvrtc::compileToLtoIr(const std::string& source, const std::string& program_name,
                                  const std::vector<std::string>& options,
                                  const std::vector<std::string>& name_expressions) const {
  return compileProgram(source, program_name, options, name_expressions, false);
}

NvrtcOutput Nvrtc::compileToCubin(const std::string& source, const std::string& program_name,
                                  const std::vector<std::string>& options,
                                  const std::vector<std::string>& name_expressions) const {
  return compileProgram(source, program_name, options, name_expressions, true);
}

NvrtcOutput Nvrtc::compileProgram(const std::string& source, const std::string& program_name,
                                  const std::vector<std::string>& options,
                                  const std::vector<std::string>& name_expressions, bool cubin) const {
  const Api& a = *api_;
  auto check = [&](nvrtcResult r, const char* what, const std::string& log = {}) {
    if (r == NVRTC_SUCCESS) return;
    std::string msg = std::string("NVRTC ") + what + " failed (" + a.GetErrorString(r) + ") for " +
                      program_name;
    if (!log.empty()) msg += ":\n" + log;
    throw ToolchainError(msg);
  };

  nvrtcProgram raw = nullptr;
  check(a.CreateProgram(&raw, source.c_str(), (program_name + ".cu").c_str(), 0, nullptr, nullptr),
        "nvrtcCreateProgram");
  auto destroy = [&a](nvrtcProgram p) { a.DestroyProgram(&p); };
  std::unique_ptr<_nvrtcProgram, decltype(destroy)> prog(raw, destroy);

  for (const auto& e : name_expressions)
    check(a.AddNameExpression(prog.get(), e.c_str()), "nvrtcAddNameExpression");

  std::vector<const char*> argv;
  for (const auto& o : options) argv.push_back(o.c_str());
  nvrtcResult compiled = a.CompileProgram(prog.get(), int(argv.size()), argv.data());

  NvrtcOutput out;
  size_t log_size = 0;
  check(a.GetProgramLogSize(prog.get(), &log_size), "nvrtcGetProgramLogSize");
  if (log_size > 1) {
    std::string log(log_size, '\0');
    check(a.GetProgramLog(prog.get(), &log[0]), "nvrtcGetProgramLog");
    log.resize(log_size - 1);  // drop the terminating NUL
    out.log = std::move(log);
  }
  check(compiled, "compilation", out.log + "\n--- source ---\n" + source);

  size_t size = 0;
  if (cubin) {
    check(a.GetCUBINSize(prog.get(), &size), "nvrtcGetCUBINSize");
    if (size == 0) throw ToolchainError("NVRTC produced no cubin for " + program_name + " (is -arch=sm_XX set?)");
    out.ltoir.resize(size);
    check(a.GetCUBIN(prog.get(), out.ltoir.data()), "nvrtcGetCUBIN");
  } else {
    check(a.GetLTOIRSize(prog.get(), &size), "nvrtcGetLTOIRSize");
    if (size == 0) throw ToolchainError("NVRTC produced no LTO-IR for " + program_name + " (is -dlto set?)");
    out.ltoir.resize(size);
    check(a.GetLTOIR(prog.get(), out.ltoir.data()), "nvrtcGetLTOIR");
  }

  for (const auto& e : name_expressions) {
    const char* lowered = nullptr;
    check(a.GetLoweredName(prog.get(), e.c_str(), &lowered), "nvrtcGetLoweredName");
    if (!lowered) throw ToolchainError("NVRTC gave no lowered name for " + e);
    out.lowered_names.emplace_back(lowered);  // owned by the program: copy before destroy
  }
  return out;
}

}  // namespace cj::cub
