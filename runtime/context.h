// Devices and their primary contexts.
//
// cudajit uses each device's PRIMARY context (the one the CUDA runtime, CuPy
// and PyTorch use), so pointers and streams pass freely between them. A
// context is retained on first use of its device and kept for the life of the
// process (releasing it at exit races the driver's own teardown).
#pragma once
#include <string>

#include "runtime/cuda_api.h"

namespace cj::rt {

struct DeviceInfo {
  int ordinal = 0;
  std::string name;
  int cc_major = 0, cc_minor = 0;
  int multiprocessors = 0;
  int max_threads_per_block = 0;
  int max_shared_per_block_optin = 0;
  int warp_size = 32;
  int pci_bus_id = 0;
  size_t total_memory = 0;
  int arch() const { return cc_major * 10 + cc_minor; }   // 90 for sm_90
};

int deviceCount();                            // throws CudaSupportError
const DeviceInfo& deviceInfo(int ordinal);    // cached; throws ValueError-like on a bad ordinal

// The driver's handle of a device (cuDeviceGet), validated.
cu::CUdevice deviceHandle(int ordinal);
// True once the device's primary context was retained by cudajit.
bool contextRetained(int ordinal);

// The device the calling thread works on (cudajit.select_device), default 0.
int currentDevice();
void selectDevice(int ordinal);

// Makes the primary context of the current device current on this thread
// (retaining it the first time) and returns it. Cheap when already current.
cu::CUcontext ensureContext();
// The same for a given device (freeing memory that belongs to it).
cu::CUcontext ensureContext(int ordinal);

}  // namespace cj::rt
