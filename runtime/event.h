// A CUDA event (cudajit.event()): a marker recorded into a stream, to wait
// on, to make another stream wait on, or to time the work between two.
#pragma once
#include "runtime/cuda_api.h"

namespace cj::rt {

class Event {
 public:
  // On the current device. Without timing the event is cheaper to record
  // and to wait on, but elapsedMilliseconds refuses it.
  explicit Event(bool timing = true);
  ~Event();
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  cu::CUevent handle() const { return handle_; }
  bool timing() const { return timing_; }
  void record(cu::CUstream stream);
  void synchronize() const;
  // True when the work before the last record() has finished (and when
  // nothing was recorded yet).
  bool query() const;
  // Work queued on `stream` after this call waits for the event.
  void makeStreamWait(cu::CUstream stream) const;

 private:
  cu::CUevent handle_ = nullptr;
  int device_ = 0;
  bool timing_ = true;
};

// Milliseconds between two recorded, completed timing events.
float elapsedMilliseconds(const Event& start, const Event& end);

}  // namespace cj::rt
