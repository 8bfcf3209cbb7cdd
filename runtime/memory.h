// Device memory: an owning allocation (RAII) and the copies between host and
// device. All calls make the current device's primary context current first.
#pragma once
#include <cstddef>
#include <memory>

#include "runtime/cuda_api.h"

namespace cj::rt {

// One cuMemAlloc'd block, freed when the last owner goes away. Never thrown
// from the destructor: at interpreter exit the driver may already be gone.
// The same class holds managed memory (cuMemAllocManaged, also freed with
// cuMemFree) and memory another library owns (borrowed: never freed here,
// its owner kept alive instead).
class DeviceBuffer {
 public:
  struct Managed { bool attach_global = true; };
  struct Borrowed { cu::CUdeviceptr ptr; int device; std::shared_ptr<void> keep_alive; };

  // Allocates `bytes` on the current device (0 bytes: no allocation, ptr 0).
  explicit DeviceBuffer(size_t bytes);
  DeviceBuffer(size_t bytes, Managed how);
  DeviceBuffer(size_t bytes, Borrowed from);
  static std::shared_ptr<DeviceBuffer> allocate(size_t bytes) {
    return std::make_shared<DeviceBuffer>(bytes);
  }
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  cu::CUdeviceptr ptr() const { return ptr_; }
  size_t size() const { return size_; }
  int device() const { return device_; }
  bool managed() const { return managed_; }
  bool borrowed() const { return keep_alive_ != nullptr; }

 private:
  cu::CUdeviceptr ptr_ = 0;
  size_t size_ = 0;
  int device_ = 0;
  bool managed_ = false;
  std::shared_ptr<void> keep_alive_;   // borrowed memory's owner
};

void copyHostToDevice(cu::CUdeviceptr dst, const void* src, size_t bytes);
void copyDeviceToHost(void* dst, cu::CUdeviceptr src, size_t bytes);
void copyDeviceToDevice(cu::CUdeviceptr dst, cu::CUdeviceptr src, size_t bytes);
void copyDeviceToDeviceAsync(cu::CUdeviceptr dst, cu::CUdeviceptr src, size_t bytes,
                             cu::CUstream s);
// Stream-ordered copies (the host buffer must stay alive until the stream
// reaches them; cudajit synchronises before letting go of it).
void copyHostToDeviceAsync(cu::CUdeviceptr dst, const void* src, size_t bytes, cu::CUstream s);
void copyDeviceToHostAsync(void* dst, cu::CUdeviceptr src, size_t bytes, cu::CUstream s);
void memsetBytes(cu::CUdeviceptr dst, unsigned char value, size_t bytes);

void synchronizeStream(cu::CUstream s);
void synchronizeContext();

struct MemoryInfo {
  size_t free = 0, total = 0;
};
MemoryInfo memoryInfo();

}  // namespace cj::rt
