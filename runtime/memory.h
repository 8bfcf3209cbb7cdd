// Device memory: an owning allocation (RAII) and the copies between host and
// device. All calls make the current device's primary context current first.
#pragma once
#include <cstddef>
#include <memory>

#include "runtime/cuda_api.h"

namespace cj::rt {

// One cuMemAlloc'd block, freed when the last owner goes away. Never thrown
// from the destructor: at interpreter exit the driver may already be gone.
class DeviceBuffer {
 public:
  // Allocates `bytes` on the current device (0 bytes: no allocation, ptr 0).
  explicit DeviceBuffer(size_t bytes);
  static std::shared_ptr<DeviceBuffer> allocate(size_t bytes) {
    return std::make_shared<DeviceBuffer>(bytes);
  }
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  cu::CUdeviceptr ptr() const { return ptr_; }
  size_t size() const { return size_; }
  int device() const { return device_; }

 private:
  cu::CUdeviceptr ptr_ = 0;
  size_t size_ = 0;
  int device_ = 0;
};

void copyHostToDevice(cu::CUdeviceptr dst, const void* src, size_t bytes);
void copyDeviceToHost(void* dst, cu::CUdeviceptr src, size_t bytes);
void copyDeviceToDevice(cu::CUdeviceptr dst, cu::CUdeviceptr src, size_t bytes);
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
