// See driver_jit.h.
#include "runtime/driver_jit.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "runtime/context.h"
#include "runtime/driver.h"

namespace cj::rt {
namespace {

// CUDAJIT_ASSEMBLER=nvjitlink turns the driver's JIT off (to compare the
// two, or to work around a driver whose compiler misbehaves). Read at every
// compile: a getenv is nothing next to ptxas.
bool driverJitWanted() {
  const char* v = std::getenv("CUDAJIT_ASSEMBLER");
  return !(v && std::strcmp(v, "nvjitlink") == 0);
}

// One CUlinkState, destroyed on every path.
class LinkState {
 public:
  explicit LinkState(const DriverApi& api) : api_(api) {}
  ~LinkState() {
    if (state_) api_.cuLinkDestroy(state_);
  }
  LinkState(const LinkState&) = delete;
  LinkState& operator=(const LinkState&) = delete;
  cu::CUlinkState* out() { return &state_; }
  cu::CUlinkState get() const { return state_; }

 private:
  const DriverApi& api_;
  cu::CUlinkState state_ = nullptr;
};

void* optionValue(intptr_t v) { return reinterpret_cast<void*>(v); }

}  // namespace

std::vector<char> assembleWithDriver(const std::string& ptx, const link::TargetOptions& target) {
  // The driver has no public fast-compile option: nvJitLink has.
  if (!target.fast_compile.empty() || !driverJitWanted() || !driverAvailable()) return {};
  const DriverApi& api = driver();
  if (!api.cuLinkCreate || !api.cuLinkAddData || !api.cuLinkComplete || !api.cuLinkDestroy) return {};
  try {
    // The driver compiles for the device of the current context.
    if (deviceInfo(currentDevice()).arch() != target.arch) return {};
    ensureContext();
  } catch (const std::exception&) {
    return {};
  }
  // The driver's default optimisation level is its highest, what nvJitLink's
  // -O3 asks of ptxas.
  int options[2];
  void* values[2];
  unsigned n = 0;
  if (target.opt == 0) {
    options[n] = cu::CU_JIT_OPTIMIZATION_LEVEL;
    values[n++] = optionValue(0);
  }
  if (target.debug) {
    options[n] = cu::CU_JIT_GENERATE_DEBUG_INFO;
    values[n++] = optionValue(1);
  } else if (target.lineinfo) {
    options[n] = cu::CU_JIT_GENERATE_LINE_INFO;
    values[n++] = optionValue(1);
  }
  LinkState link(api);
  if (api.cuLinkCreate(n, options, values, link.out()) != cu::CUDA_SUCCESS) return {};
  // The PTX with its terminating NUL (the driver reads it, never writes).
  void* data = const_cast<char*>(ptx.c_str());
  if (api.cuLinkAddData(link.get(), cu::CU_JIT_INPUT_PTX, data, ptx.size() + 1, "kernel.ptx", 0, nullptr,
                        nullptr) != cu::CUDA_SUCCESS)
    return {};
  void* cubin = nullptr;
  size_t bytes = 0;
  if (api.cuLinkComplete(link.get(), &cubin, &bytes) != cu::CUDA_SUCCESS || !cubin || bytes == 0) return {};
  // The cubin belongs to the link state: copy it before the state goes.
  const char* begin = static_cast<const char*>(cubin);
  return std::vector<char>(begin, begin + bytes);
}

}  // namespace cj::rt
