#include "runtime/memory.h"

#include "runtime/context.h"
#include "runtime/driver.h"

namespace cj::rt {

DeviceBuffer::DeviceBuffer(size_t bytes) : size_(bytes) {
  ensureContext();
  device_ = currentDevice();
  if (bytes > 0) CJ_CU(cuMemAlloc, &ptr_, bytes);
}

DeviceBuffer::~DeviceBuffer() {
  if (!ptr_ || !driverAvailable()) return;
  // Errors are ignored on purpose: at process exit the context may be torn
  // down already (CUDA_ERROR_DEINITIALIZED), and a destructor must not throw.
  try {
    ensureContext(device_);
  } catch (...) {
    return;
  }
  driver().cuMemFree(ptr_);
}

void copyHostToDevice(cu::CUdeviceptr dst, const void* src, size_t bytes) {
  if (!bytes) return;
  ensureContext();
  CJ_CU(cuMemcpyHtoD, dst, src, bytes);
}

void copyDeviceToHost(void* dst, cu::CUdeviceptr src, size_t bytes) {
  if (!bytes) return;
  ensureContext();
  CJ_CU(cuMemcpyDtoH, dst, src, bytes);
}

void copyDeviceToDevice(cu::CUdeviceptr dst, cu::CUdeviceptr src, size_t bytes) {
  if (!bytes) return;
  ensureContext();
  CJ_CU(cuMemcpyDtoD, dst, src, bytes);
}

void copyHostToDeviceAsync(cu::CUdeviceptr dst, const void* src, size_t bytes, cu::CUstream s) {
  if (!bytes) return;
  ensureContext();
  CJ_CU(cuMemcpyHtoDAsync, dst, src, bytes, s);
}

void copyDeviceToHostAsync(void* dst, cu::CUdeviceptr src, size_t bytes, cu::CUstream s) {
  if (!bytes) return;
  ensureContext();
  CJ_CU(cuMemcpyDtoHAsync, dst, src, bytes, s);
}

void memsetBytes(cu::CUdeviceptr dst, unsigned char value, size_t bytes) {
  if (!bytes) return;
  ensureContext();
  CJ_CU(cuMemsetD8, dst, value, bytes);
}

void synchronizeStream(cu::CUstream s) {
  ensureContext();
  CJ_CU(cuStreamSynchronize, s);
}

void synchronizeContext() {
  ensureContext();
  CJ_CU(cuCtxSynchronize);
}

MemoryInfo memoryInfo() {
  ensureContext();
  MemoryInfo m;
  CJ_CU(cuMemGetInfo, &m.free, &m.total);
  return m;
}

}  // namespace cj::rt
