#include "runtime/driver.h"

#include <dlfcn.h>

#include <cstdlib>
#include <memory>

namespace cj::rt {
namespace {

struct LoadResult {
  std::unique_ptr<DriverApi> api;   // null when loading failed
  std::string error;
};

std::string libraryToOpen() {
  if (const char* env = std::getenv("CUDAJIT_CUDA_DRIVER"); env && *env) return env;
  return "libcuda.so.1";
}

// The driver's own message for a code, used before `api` is published.
std::string describeWith(const DriverApi& api, cu::CUresult result) {
  const char* name = nullptr;
  const char* text = nullptr;
  if (api.cuGetErrorName) api.cuGetErrorName(result, &name);
  if (api.cuGetErrorString) api.cuGetErrorString(result, &text);
  std::string out = name ? name : "CUDA error " + std::to_string(result);
  if (text) out += std::string(": ") + text;
  return out;
}

LoadResult load() {
  LoadResult r;
  const std::string path = libraryToOpen();
  // The handle is never closed: the driver stays loaded for the life of the
  // process, as modules and allocations refer to it until exit.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = dlerror();
    r.error = "the CUDA driver library " + path + " could not be loaded (" +
              (why ? why : "unknown reason") +
              "): no NVIDIA driver is installed on this machine. Kernels can still be "
              "compiled (compile_ptx, inspect_ptx); launching needs a GPU.";
    return r;
  }
  auto api = std::make_unique<DriverApi>();
  api->library_path = path;
  std::string missing;
#define CJ_CUDA_RESOLVE(name, symbol, params)                                    \
  api->name = reinterpret_cast<cu::PFN_##name>(dlsym(handle, symbol));           \
  if (!api->name) missing += (missing.empty() ? "" : ", ") + std::string(symbol);
  CJ_CUDA_FUNCTIONS(CJ_CUDA_RESOLVE)
#undef CJ_CUDA_RESOLVE
#define CJ_CUDA_RESOLVE_OPTIONAL(name, symbol, params) \
  api->name = reinterpret_cast<cu::PFN_##name>(dlsym(handle, symbol));
  CJ_CUDA_OPTIONAL_FUNCTIONS(CJ_CUDA_RESOLVE_OPTIONAL)
#undef CJ_CUDA_RESOLVE_OPTIONAL
  if (!missing.empty()) {
    r.error = "the CUDA driver " + path + " is too old or not a CUDA driver: missing " + missing;
    return r;
  }
  cu::CUresult res = api->cuInit(0);
  if (res == cu::CUDA_ERROR_STUB_LIBRARY) {
    r.error = "the CUDA driver found at " + path +
              " is the CUDA toolkit's stub library (CUDA_ERROR_STUB_LIBRARY), not a real driver: this machine has no NVIDIA driver installed";
    return r;
  }
  if (res != cu::CUDA_SUCCESS) {
    r.error = "cuInit failed: " + describeWith(*api, res) +
              (res == cu::CUDA_ERROR_NO_DEVICE ? " (no CUDA-capable GPU is visible)" : "");
    return r;
  }
  api->cuDriverGetVersion(&api->version);
  res = api->cuDeviceGetCount(&api->device_count);
  if (res != cu::CUDA_SUCCESS || api->device_count <= 0) {
    r.error = res != cu::CUDA_SUCCESS ? "cuDeviceGetCount failed: " + describeWith(*api, res)
                                      : std::string("the CUDA driver reports no GPU");
    return r;
  }
  r.api = std::move(api);
  return r;
}

const LoadResult& loaded() {
  static const LoadResult result = load();   // thread-safe, once per process
  return result;
}

}  // namespace

const DriverApi& driver() {
  const LoadResult& r = loaded();
  if (!r.api) throw CudaSupportError(r.error);
  return *r.api;
}

bool driverAvailable() { return loaded().api != nullptr; }

std::string driverUnavailableReason() { return loaded().error; }

std::string describeResult(cu::CUresult result) {
  const LoadResult& r = loaded();
  if (!r.api) return "CUDA error " + std::to_string(result);
  return describeWith(*r.api, result);
}

void throwApiError(cu::CUresult result, const char* function) {
  throw CudaApiError(std::string(function) + " failed: " + describeResult(result), result,
                     function);
}

void throwMissingFunction(const char* function) {
  throw CudaSupportError("the CUDA driver " + driver().library_path + " does not export " +
                         function + " (a newer driver is needed for this feature)");
}

}  // namespace cj::rt
