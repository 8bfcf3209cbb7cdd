#include "runtime/host_memory.h"

#include "runtime/context.h"
#include "runtime/driver.h"
#include "runtime/errors.h"

namespace cj::rt {
namespace {

// Teardown must not throw: at exit the driver or its context may be gone.
bool contextForTeardown(int device) {
  if (!driverAvailable()) return false;
  try {
    ensureContext(device);
  } catch (...) {
    return false;
  }
  return true;
}

}  // namespace

PinnedHostBuffer::PinnedHostBuffer(size_t bytes, Flags flags) : size_(bytes), flags_(flags) {
  ensureContext();
  device_ = currentDevice();
  const unsigned f = (flags.mapped ? cu::CU_MEMHOSTALLOC_DEVICEMAP : 0u) |
                     (flags.portable ? cu::CU_MEMHOSTALLOC_PORTABLE : 0u) |
                     (flags.write_combined ? cu::CU_MEMHOSTALLOC_WRITECOMBINED : 0u);
  // The driver refuses 0 bytes; one byte keeps the empty array's buffer valid.
  CJ_CU_OPT(cuMemHostAlloc, &data_, bytes ? bytes : 1, f);
}

PinnedHostBuffer::~PinnedHostBuffer() {
  if (data_ && contextForTeardown(device_) && driver().cuMemFreeHost) driver().cuMemFreeHost(data_);
}

cu::CUdeviceptr PinnedHostBuffer::devicePointer() const {
  if (!flags_.mapped) throw ArgumentValueError("the pinned buffer is not mapped to the device");
  ensureContext(device_);
  cu::CUdeviceptr p = 0;
  CJ_CU_OPT(cuMemHostGetDevicePointer, &p, data_, 0u);
  return p;
}

HostRegistration::HostRegistration(void* ptr, size_t bytes, bool mapped)
    : ptr_(ptr), size_(bytes), mapped_(mapped) {
  ensureContext();
  device_ = currentDevice();
  if (!bytes) {   // nothing to pin (an empty array)
    ptr_ = nullptr;
    return;
  }
  CJ_CU_OPT(cuMemHostRegister, ptr, bytes,
            mapped ? cu::CU_MEMHOSTALLOC_DEVICEMAP | cu::CU_MEMHOSTALLOC_PORTABLE : 0u);
}

HostRegistration::~HostRegistration() {
  if (ptr_ && contextForTeardown(device_) && driver().cuMemHostUnregister)
    driver().cuMemHostUnregister(ptr_);
}

void HostRegistration::release() {
  if (!ptr_) return;
  void* p = ptr_;
  ptr_ = nullptr;
  ensureContext(device_);
  CJ_CU_OPT(cuMemHostUnregister, p);
}

cu::CUdeviceptr HostRegistration::devicePointer() const {
  if (!mapped_) throw ArgumentValueError("the host memory is not mapped to the device");
  if (!ptr_) return 0;
  ensureContext(device_);
  cu::CUdeviceptr p = 0;
  CJ_CU_OPT(cuMemHostGetDevicePointer, &p, ptr_, 0u);
  return p;
}

}  // namespace cj::rt
