// Page-locked ("pinned") host memory: allocated by the driver
// (cudajit.pinned_array, mapped_array) or registered in place
// (cudajit.pinned(...)). Copies from and to it run at full speed and can be
// asynchronous; mapped memory is also addressable from kernels.
#pragma once
#include <cstddef>

#include "runtime/cuda_api.h"

namespace cj::rt {

// cuMemHostAlloc'd memory, freed (cuMemFreeHost) with its last owner.
class PinnedHostBuffer {
 public:
  struct Flags {
    bool mapped = false;           // also addressable from the device (devicePointer)
    bool portable = false;         // pinned for every context, not only the current one
    bool write_combined = false;   // fast host writes and device reads, slow host reads
  };
  PinnedHostBuffer(size_t bytes, Flags flags);
  ~PinnedHostBuffer();
  PinnedHostBuffer(const PinnedHostBuffer&) = delete;
  PinnedHostBuffer& operator=(const PinnedHostBuffer&) = delete;

  void* data() const { return data_; }
  size_t size() const { return size_; }
  bool mapped() const { return flags_.mapped; }
  // The device address of mapped memory (ArgumentValueError otherwise).
  cu::CUdeviceptr devicePointer() const;

 private:
  void* data_ = nullptr;
  size_t size_ = 0;
  int device_ = 0;
  Flags flags_;
};

// Host memory someone else owns, page-locked while this object lives
// (cuMemHostRegister / cuMemHostUnregister).
class HostRegistration {
 public:
  HostRegistration(void* ptr, size_t bytes, bool mapped);
  ~HostRegistration();
  HostRegistration(const HostRegistration&) = delete;
  HostRegistration& operator=(const HostRegistration&) = delete;

  void release();   // unregisters now (throws CudaApiError); the destructor then does nothing
  cu::CUdeviceptr devicePointer() const;   // mapped registrations

 private:
  void* ptr_ = nullptr;
  size_t size_ = 0;
  int device_ = 0;
  bool mapped_ = false;
};

}  // namespace cj::rt
