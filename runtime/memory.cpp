#include "runtime/memory.h"

#include "runtime/context.h"
#include "runtime/driver.h"

namespace cj::rt {

DeviceBuffer::DeviceBuffer(size_t bytes) : size_(bytes) {
  ensureContext();
  device_ = currentDevice();
  if (bytes > 0) CJ_CU(cuMemAlloc, &ptr_, bytes);
}

DeviceBuffer::DeviceBuffer(size_t bytes, Managed how) : size_(bytes), managed_(true) {
  ensureContext();
  device_ = currentDevice();
  // The driver refuses 0 bytes; one byte keeps an empty array's buffer valid.
  CJ_CU_OPT(cuMemAllocManaged, &ptr_, bytes ? bytes : 1,
            how.attach_global ? cu::CU_MEM_ATTACH_GLOBAL : cu::CU_MEM_ATTACH_HOST);
}

DeviceBuffer::DeviceBuffer(size_t bytes, Borrowed from)
    : ptr_(from.ptr), size_(bytes), device_(from.device), keep_alive_(std::move(from.keep_alive)) {
  if (!keep_alive_) keep_alive_ = std::make_shared<int>(0);   // borrowed() is true either way
}

DeviceBuffer::~DeviceBuffer() {
  if (!ptr_ || borrowed() || !driverAvailable()) return;
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

void copyDeviceToDeviceAsync(cu::CUdeviceptr dst, cu::CUdeviceptr src, size_t bytes,
                             cu::CUstream s) {
  if (!bytes) return;
  ensureContext();
  CJ_CU_OPT(cuMemcpyDtoDAsync, dst, src, bytes, s);
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
