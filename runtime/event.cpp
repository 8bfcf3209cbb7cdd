#include "runtime/event.h"

#include "runtime/context.h"
#include "runtime/driver.h"

namespace cj::rt {

Event::Event(bool timing) : timing_(timing) {
  ensureContext();
  device_ = currentDevice();
  CJ_CU_OPT(cuEventCreate, &handle_, timing ? 0u : cu::CU_EVENT_DISABLE_TIMING);
}

Event::~Event() {
  if (!handle_ || !driverAvailable()) return;
  try {
    ensureContext(device_);
  } catch (...) {
    return;
  }
  if (driver().cuEventDestroy) driver().cuEventDestroy(handle_);   // result ignored: no throwing here
}

void Event::record(cu::CUstream stream) {
  ensureContext(device_);
  CJ_CU_OPT(cuEventRecord, handle_, stream);
}

void Event::synchronize() const {
  ensureContext(device_);
  CJ_CU_OPT(cuEventSynchronize, handle_);
}

bool Event::query() const {
  ensureContext(device_);
  const cu::CUresult r = require(driver().cuEventQuery, "cuEventQuery")(handle_);
  if (r == cu::CUDA_ERROR_NOT_READY) return false;
  check(r, "cuEventQuery");
  return true;
}

void Event::makeStreamWait(cu::CUstream stream) const {
  ensureContext(device_);
  CJ_CU_OPT(cuStreamWaitEvent, stream, handle_, 0u);
}

float elapsedMilliseconds(const Event& start, const Event& end) {
  ensureContext();
  float ms = 0;
  CJ_CU_OPT(cuEventElapsedTime, &ms, start.handle(), end.handle());
  return ms;
}

}  // namespace cj::rt
