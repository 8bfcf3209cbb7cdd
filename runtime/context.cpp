#include "runtime/context.h"

#include <array>
#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include "runtime/driver.h"

namespace cj::rt {
namespace {

struct DeviceState {
  DeviceInfo info;
  cu::CUdevice handle = 0;
  std::atomic<cu::CUcontext> primary{nullptr};   // retained on first use, never released
};

constexpr int kMaxDevices = 64;
std::mutex g_mutex;
// Published once per device, read without the lock on the launch path.
std::array<std::atomic<DeviceState*>, kMaxDevices> g_devices{};
std::vector<std::unique_ptr<DeviceState>> g_owned;   // owns what g_devices points to
thread_local int t_device = 0;

DeviceState& state(int ordinal) {
  const DriverApi& api = driver();
  if (ordinal < 0 || ordinal >= api.device_count || ordinal >= kMaxDevices)
    throw ArgumentValueError("no CUDA device " + std::to_string(ordinal) + " (this machine has " +
                             std::to_string(api.device_count) + ")");
  if (DeviceState* ready = g_devices[ordinal].load(std::memory_order_acquire)) return *ready;
  std::lock_guard<std::mutex> lock(g_mutex);
  if (DeviceState* ready = g_devices[ordinal].load(std::memory_order_acquire)) return *ready;
  auto s = std::make_unique<DeviceState>();
  s->info.ordinal = ordinal;
  CJ_CU(cuDeviceGet, &s->handle, ordinal);
  char name[256] = {};
  CJ_CU(cuDeviceGetName, name, static_cast<int>(sizeof(name) - 1), s->handle);
  s->info.name = name;
  auto attr = [&](int which) {
    int v = 0;
    CJ_CU(cuDeviceGetAttribute, &v, which, s->handle);
    return v;
  };
  s->info.cc_major = attr(cu::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  s->info.cc_minor = attr(cu::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  s->info.multiprocessors = attr(cu::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  s->info.max_threads_per_block = attr(cu::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  s->info.max_shared_per_block_optin = attr(cu::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  s->info.warp_size = attr(cu::CU_DEVICE_ATTRIBUTE_WARP_SIZE);
  s->info.pci_bus_id = attr(cu::CU_DEVICE_ATTRIBUTE_PCI_BUS_ID);
  CJ_CU(cuDeviceTotalMem, &s->info.total_memory, s->handle);
  DeviceState* ready = s.get();
  g_owned.push_back(std::move(s));
  g_devices[ordinal].store(ready, std::memory_order_release);
  return *ready;
}

}  // namespace

int deviceCount() { return driver().device_count; }

const DeviceInfo& deviceInfo(int ordinal) { return state(ordinal).info; }

cu::CUdevice deviceHandle(int ordinal) { return state(ordinal).handle; }

bool contextRetained(int ordinal) {
  if (ordinal < 0 || ordinal >= kMaxDevices) return false;
  DeviceState* s = g_devices[ordinal].load(std::memory_order_acquire);
  return s && s->primary.load(std::memory_order_acquire) != nullptr;
}

int currentDevice() { return t_device; }

void selectDevice(int ordinal) {
  state(ordinal);   // validates the ordinal
  t_device = ordinal;
  ensureContext();
}

cu::CUcontext ensureContext() { return ensureContext(t_device); }

cu::CUcontext ensureContext(int ordinal) {
  DeviceState& s = state(ordinal);
  const DriverApi& api = driver();
  cu::CUcontext primary = s.primary.load(std::memory_order_acquire);
  if (!primary) {
    std::lock_guard<std::mutex> lock(g_mutex);
    primary = s.primary.load(std::memory_order_acquire);
    if (!primary) {
      CJ_CU(cuDevicePrimaryCtxRetain, &primary, s.handle);
      s.primary.store(primary, std::memory_order_release);
    }
  }
  // Another library may have made a different context current on this
  // thread; asking is cheap (a thread-local read in the driver).
  cu::CUcontext current = nullptr;
  check(api.cuCtxGetCurrent(&current), "cuCtxGetCurrent");
  if (current != primary) CJ_CU(cuCtxSetCurrent, primary);
  return primary;
}

}  // namespace cj::rt
