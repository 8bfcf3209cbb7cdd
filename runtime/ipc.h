// CUDA IPC (cuIpc*): sharing a device allocation with another process on the
// same machine (numba's DeviceNDArray.get_ipc_handle / open_ipc_array).
//
// The exporter takes the handle of the whole allocation holding an address
// (cuMemGetAddressRange finds it) and the address's offset into it; the
// importer opens the handle once (cuIpcOpenMemHandle, in its own primary
// context) and closes it explicitly or when the mapping goes away.
#pragma once
#include <array>
#include <cstddef>

#include "runtime/cuda_api.h"

namespace cj::rt {

struct IpcExport {
  std::array<char, cu::CU_IPC_HANDLE_SIZE> handle{};
  size_t offset = 0;             // of the address in the allocation
  size_t allocation_bytes = 0;   // the allocation's size
};

// The IPC handle of the allocation holding `ptr`, on `device`.
IpcExport exportIpc(cu::CUdeviceptr ptr, int device);

// Another process's allocation, opened in this one.
class IpcMapping {
 public:
  IpcMapping(const std::array<char, cu::CU_IPC_HANDLE_SIZE>& handle, int device);
  ~IpcMapping();   // closes if still open (errors ignored, as frees are)
  IpcMapping(const IpcMapping&) = delete;
  IpcMapping& operator=(const IpcMapping&) = delete;

  // The allocation's base address here; throws once closed.
  cu::CUdeviceptr base() const;
  int device() const { return device_; }
  bool isOpen() const { return base_ != 0; }
  // cuIpcCloseMemHandle: arrays over the memory must not be used afterwards.
  void close();

 private:
  cu::CUdeviceptr base_ = 0;
  int device_ = 0;
};

}  // namespace cj::rt
