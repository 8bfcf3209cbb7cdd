// LLVM's NVPTX back end (issue 16): LLVM assembly -> PTX through the plugin
// libcudajit_llvm.so (llvm_nvptx/llvm_nvptx.h), opened with dlopen on first
// use like libNVVM. Found at $CUDAJIT_LLVM_BACKEND or beside the module this
// code is linked into (cudajit/_core*.so), where the build puts it.
#include <dlfcn.h>

#include <memory>
#include <mutex>
#include <string>

#include "link/library_finder.h"
#include "link/toolchain.h"
#include "llvm_nvptx/llvm_nvptx.h"
#include "support/error.h"
#include "support/paths.h"

namespace cj::link {
namespace {

constexpr const char* kPluginFile = "libcudajit_llvm.so";

struct LlvmPlugin {
  std::unique_ptr<SharedLibrary> lib;
  std::string version;
  int (*compile)(const char*, size_t, const CjLlvmOptions*, char**, char**) = nullptr;
  int (*optimize)(const char*, size_t, const CjLlvmOptions*, char**, char**) = nullptr;
  void (*free)(char*) = nullptr;
};

std::unique_ptr<LlvmPlugin> loadPlugin() {
  std::string path = envString("CUDAJIT_LLVM_BACKEND");
  if (path.empty()) {   // beside _core; else the loader's own search
    std::string package = ownPackageDirectory();
    path = package.empty() ? kPluginFile : package + "/" + kPluginFile;
  }
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* err = dlerror();
    throw ToolchainError(
        "backend='llvm' needs cudajit's LLVM back end (" + std::string(kPluginFile) +
        "), which could not be loaded from " + path + (err ? std::string(": ") + err : std::string()) +
        ". It is built when CMake finds LLVM 17 or newer: install it (apt install llvm-19-dev) and "
        "reinstall cudajit, or set $CUDAJIT_LLVM_BACKEND to the plugin's path; backend='nvvm' "
        "(the default) needs no LLVM");
  }
  auto plugin = std::make_unique<LlvmPlugin>();
  plugin->lib = std::make_unique<SharedLibrary>(handle, path);
  auto abi = reinterpret_cast<int (*)()>(plugin->lib->find("cj_llvm_abi_version"));
  auto version = reinterpret_cast<const char* (*)()>(plugin->lib->find("cj_llvm_version"));
  plugin->compile = reinterpret_cast<decltype(plugin->compile)>(plugin->lib->find("cj_llvm_compile"));
  plugin->optimize = reinterpret_cast<decltype(plugin->optimize)>(plugin->lib->find("cj_llvm_optimize"));
  plugin->free = reinterpret_cast<decltype(plugin->free)>(plugin->lib->find("cj_llvm_free"));
  if (!abi || !version || !plugin->compile || !plugin->free)
    throw ToolchainError(path + " is not cudajit's LLVM back end (entry points missing)");
  if (abi() != CJ_LLVM_PLUGIN_ABI || !plugin->optimize)
    throw ToolchainError(path + " is another cudajit build's LLVM back end (plugin ABI " +
                         std::to_string(abi()) + ", this build needs " +
                         std::to_string(CJ_LLVM_PLUGIN_ABI) + "): reinstall cudajit");
  plugin->version = version();
  return plugin;
}

// Loaded once; a failure is retried on the next call (the environment may
// have changed), as the toolkit libraries are.
const LlvmPlugin& plugin() {
  static std::mutex mutex;
  static std::unique_ptr<LlvmPlugin> loaded;
  std::lock_guard<std::mutex> lock(mutex);
  if (!loaded) loaded = loadPlugin();
  return *loaded;
}

// libdevice for the plugin: beside the libNVVM the toolkit search finds, or
// the toolkit roots when there is no libNVVM at all (the LLVM path needs none).
const std::string& libdevice() {
  static std::mutex mutex;
  static std::string path;
  std::lock_guard<std::mutex> lock(mutex);
  if (path.empty()) {
    try {
      path = libdevicePath();
    } catch (const ToolchainError&) {
      path = findLibdevice("");
    }
  }
  return path;
}

// One call of the plugin: its output, or ToolchainError with LLVM's log.
std::string callPlugin(const LlvmPlugin& p, decltype(LlvmPlugin::compile) entry, const std::string& ir,
                       const CjLlvmOptions& options) {
  char* out = nullptr;
  char* log = nullptr;
  int failed = entry(ir.data(), ir.size(), &options, &out, &log);
  std::string out_text = out ? out : "";
  std::string log_text = log ? log : "";
  if (out) p.free(out);
  if (log) p.free(log);
  if (failed) throw ToolchainError("LLVM NVPTX back end (" + p.version + "): " + log_text);
  return out_text;
}

CjLlvmOptions pluginOptions(const TargetOptions& t) {
  CjLlvmOptions options{};
  options.arch = t.arch;
  options.arch_specific = t.arch_specific ? 1 : 0;
  options.opt = t.opt;
  options.fastmath = t.fastmath ? 1 : 0;
  return options;
}

}  // namespace

std::string llvmBackendVersion() { return plugin().version; }

std::string llvmToPtx(const std::string& ir, const TargetOptions& t) {
  const LlvmPlugin& p = plugin();
  CjLlvmOptions options = pluginOptions(t);
  std::string libdevice_path;
  if (ir.find("@__nv_") != std::string::npos) libdevice_path = libdevice();
  options.libdevice = libdevice_path.c_str();
  return callPlugin(p, p.compile, ir, options);
}

std::string llvmOptimize(const std::string& ir, const TargetOptions& t) {
  const LlvmPlugin& p = plugin();
  return callPlugin(p, p.optimize, ir, pluginOptions(t));
}

}  // namespace cj::link
