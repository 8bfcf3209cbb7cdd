#include "runtime/ipc.h"

#include <cstring>

#include "runtime/context.h"
#include "runtime/driver.h"
#include "runtime/errors.h"

namespace cj::rt {

IpcExport exportIpc(cu::CUdeviceptr ptr, int device) {
  ensureContext(device);
  IpcExport out;
  cu::CUdeviceptr base = 0;
  CJ_CU_OPT(cuMemGetAddressRange, &base, &out.allocation_bytes, ptr);
  cu::CUipcMemHandle handle;
  CJ_CU_OPT(cuIpcGetMemHandle, &handle, base);
  std::memcpy(out.handle.data(), handle.reserved, out.handle.size());
  out.offset = static_cast<size_t>(ptr - base);
  return out;
}

IpcMapping::IpcMapping(const std::array<char, cu::CU_IPC_HANDLE_SIZE>& handle, int device) : device_(device) {
  ensureContext(device);
  cu::CUipcMemHandle h;
  std::memcpy(h.reserved, handle.data(), handle.size());
  CJ_CU_OPT(cuIpcOpenMemHandle, &base_, h, cu::CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
}

IpcMapping::~IpcMapping() {
  if (!base_ || !driverAvailable()) return;
  try {
    ensureContext(device_);
    if (driver().cuIpcCloseMemHandle) driver().cuIpcCloseMemHandle(base_);
  } catch (...) {
  }
}

cu::CUdeviceptr IpcMapping::base() const {
  if (!base_) throw ArgumentValueError("the IPC handle is closed");
  return base_;
}

void IpcMapping::close() {
  if (!base_) throw ArgumentValueError("IpcHandle not opened");
  ensureContext(device_);
  const cu::CUdeviceptr base = base_;
  base_ = 0;
  CJ_CU_OPT(cuIpcCloseMemHandle, base);
}

}  // namespace cj::rt
