#include "runtime/stream.h"

#include "runtime/context.h"
#include "runtime/driver.h"
#include "runtime/memory.h"

namespace cj::rt {

Stream::Stream(bool non_blocking) {
  ensureContext();
  device_ = currentDevice();
  CJ_CU(cuStreamCreate, &handle_, non_blocking ? cu::CU_STREAM_NON_BLOCKING : 0u);
}

Stream::~Stream() {
  if (!handle_ || !driverAvailable()) return;
  try {
    ensureContext(device_);
  } catch (...) {
    return;
  }
  driver().cuStreamDestroy(handle_);   // result ignored: destructors must not throw
}

void Stream::synchronize() const { synchronizeStream(handle_); }

bool Stream::done() const {
  ensureContext(device_);
  const cu::CUresult r = driver().cuStreamQuery(handle_);
  if (r == cu::CUDA_ERROR_NOT_READY) return false;
  check(r, "cuStreamQuery");
  return true;
}

}  // namespace cj::rt
