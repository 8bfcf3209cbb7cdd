#include "runtime/module.h"

#include "runtime/context.h"
#include "runtime/driver.h"

namespace cj::rt {

LoadedModule::LoadedModule(const std::vector<char>& cubin, int device) {
  if (cubin.empty()) throw CudaApiError("cuModuleLoadData: empty cubin", 0, "cuModuleLoadData");
  device_ = device < 0 ? currentDevice() : device;
  ensureContext(device_);
  CJ_CU(cuModuleLoadData, &module_, cubin.data());
}

LoadedModule::~LoadedModule() {
  if (!module_ || !driverAvailable()) return;
  try {
    ensureContext(device_);
  } catch (...) {
    return;   // the driver is going away at exit; nothing to unload into
  }
  driver().cuModuleUnload(module_);   // result ignored: destructors must not throw
}

cu::CUfunction LoadedModule::function(const std::string& symbol) const {
  cu::CUfunction fn = nullptr;
  CJ_CU(cuModuleGetFunction, &fn, module_, symbol.c_str());
  return fn;
}

}  // namespace cj::rt
