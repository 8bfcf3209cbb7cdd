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

namespace {
struct PendingCallback {
  StreamCallback callback;
  void* user;
};

void onStreamDone(cu::CUstream, cu::CUresult status, void* data) {
  const PendingCallback pending = *static_cast<PendingCallback*>(data);
  delete static_cast<PendingCallback*>(data);
  pending.callback(pending.user, status);
}
}  // namespace

void addStreamCallback(cu::CUstream stream, StreamCallback callback, void* user) {
  ensureContext();
  auto* pending = new PendingCallback{callback, user};
  try {
    CJ_CU_OPT(cuStreamAddCallback, stream, &onStreamDone, pending, 0u);
  } catch (...) {
    delete pending;   // never queued: the caller still owns `user`
    throw;
  }
}

}  // namespace cj::rt
