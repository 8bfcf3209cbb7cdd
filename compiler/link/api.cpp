#include "link/api.h"

#include <fstream>
#include <iterator>
#include <mutex>

#include "support/error.h"

namespace cj::link {
namespace {

// Looks up `name`, then the versioned spellings nvJitLink's header maps the
// plain names to (__nvJitLinkCreate_13_0 ...), newest first.
void* lookup(const SharedLibrary& lib, const std::string& name, bool versioned) {
  if (void* p = lib.find(name.c_str())) return p;
  if (versioned) {
    for (const char* v : {"_13_0", "_12_0"}) {
      if (void* p = lib.find(("__" + name + v).c_str())) return p;
    }
  }
  return nullptr;
}

template <typename Fn>
void bind(const SharedLibrary& lib, Fn*& slot, const std::string& name, bool versioned = false,
          bool required = true) {
  slot = reinterpret_cast<Fn*>(lookup(lib, name, versioned));
  if (!slot && required) {
    throw ToolchainError(lib.path() + " does not export " + name + " (unsupported version?)");
  }
}

std::unique_ptr<NvvmApi> loadNvvm() {
  auto api = std::make_unique<NvvmApi>();
  api->lib = openLibrary({"libNVVM", "CUDAJIT_LIBNVVM", {"libnvvm.so", "libnvvm.so.4", "libnvvm.so.3"}});
  const SharedLibrary& l = *api->lib;
  bind(l, api->GetErrorString, "nvvmGetErrorString");
  bind(l, api->Version, "nvvmVersion");
  bind(l, api->IRVersion, "nvvmIRVersion");
  bind(l, api->CreateProgram, "nvvmCreateProgram");
  bind(l, api->DestroyProgram, "nvvmDestroyProgram");
  bind(l, api->AddModuleToProgram, "nvvmAddModuleToProgram");
  bind(l, api->LazyAddModuleToProgram, "nvvmLazyAddModuleToProgram");
  bind(l, api->CompileProgram, "nvvmCompileProgram");
  bind(l, api->GetCompiledResultSize, "nvvmGetCompiledResultSize");
  bind(l, api->GetCompiledResult, "nvvmGetCompiledResult");
  bind(l, api->GetProgramLogSize, "nvvmGetProgramLogSize");
  bind(l, api->GetProgramLog, "nvvmGetProgramLog");
  api->libdevice_path = findLibdevice(l.path());
  std::ifstream in(api->libdevice_path, std::ios::binary);
  api->libdevice.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  if (!in.good() && !in.eof()) throw ToolchainError("cannot read " + api->libdevice_path);
  if (api->libdevice.empty()) throw ToolchainError(api->libdevice_path + " is empty");
  return api;
}

std::unique_ptr<JitLinkApi> loadJitLink() {
  auto api = std::make_unique<JitLinkApi>();
  api->lib = openLibrary({"nvJitLink", "CUDAJIT_NVJITLINK",
                          {"libnvJitLink.so", "libnvJitLink.so.13", "libnvJitLink.so.12"}});
  const SharedLibrary& l = *api->lib;
  bind(l, api->Create, "nvJitLinkCreate", true);
  bind(l, api->Destroy, "nvJitLinkDestroy", true);
  bind(l, api->AddData, "nvJitLinkAddData", true);
  bind(l, api->Complete, "nvJitLinkComplete", true);
  bind(l, api->GetLinkedCubinSize, "nvJitLinkGetLinkedCubinSize", true);
  bind(l, api->GetLinkedCubin, "nvJitLinkGetLinkedCubin", true);
  bind(l, api->GetLinkedPtxSize, "nvJitLinkGetLinkedPtxSize", true);
  bind(l, api->GetLinkedPtx, "nvJitLinkGetLinkedPtx", true);
  bind(l, api->GetErrorLogSize, "nvJitLinkGetErrorLogSize", true);
  bind(l, api->GetErrorLog, "nvJitLinkGetErrorLog", true);
  bind(l, api->GetInfoLogSize, "nvJitLinkGetInfoLogSize", true);
  bind(l, api->GetInfoLog, "nvJitLinkGetInfoLog", true);
  bind(l, api->Version, "nvJitLinkVersion", false, /*required=*/false);
  return api;
}

// Loads once; a failed load throws and is tried again next time.
template <typename Api>
const Api& loadOnce(std::unique_ptr<Api> (*load)()) {
  static std::mutex mutex;
  static std::unique_ptr<Api> api;
  std::lock_guard<std::mutex> lock(mutex);
  if (!api) api = load();
  return *api;
}

}  // namespace

const NvvmApi& nvvmApi() { return loadOnce<NvvmApi>(loadNvvm); }
const JitLinkApi& jitLinkApi() { return loadOnce<JitLinkApi>(loadJitLink); }

const char* jitLinkResultName(JitLinkResult r) {
  static const char* const kNames[] = {
      "NVJITLINK_SUCCESS",
      "NVJITLINK_ERROR_UNRECOGNIZED_OPTION",
      "NVJITLINK_ERROR_MISSING_ARCH",
      "NVJITLINK_ERROR_INVALID_INPUT",
      "NVJITLINK_ERROR_PTX_COMPILE",
      "NVJITLINK_ERROR_NVVM_COMPILE",
      "NVJITLINK_ERROR_INTERNAL",
      "NVJITLINK_ERROR_THREADPOOL",
      "NVJITLINK_ERROR_UNRECOGNIZED_INPUT",
      "NVJITLINK_ERROR_FINALIZE",
      "NVJITLINK_ERROR_NULL_INPUT",
      "NVJITLINK_ERROR_INCOMPATIBLE_OPTIONS",
      "NVJITLINK_ERROR_INCORRECT_INPUT_TYPE",
      "NVJITLINK_ERROR_ARCH_MISMATCH",
      "NVJITLINK_ERROR_OUTDATED_LIBRARY",
      "NVJITLINK_ERROR_MISSING_FATBIN",
      "NVJITLINK_ERROR_UNRECOGNIZED_ARCH",
      "NVJITLINK_ERROR_UNSUPPORTED_ARCH",
      "NVJITLINK_ERROR_LTO_NOT_ENABLED",
  };
  if (r >= 0 && r < static_cast<int>(sizeof kNames / sizeof kNames[0])) return kNames[r];
  return "NVJITLINK_ERROR_(unknown)";
}

}  // namespace cj::link
