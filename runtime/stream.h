// A CUDA stream created by cudajit (cudajit.stream()), destroyed with its
// last owner. Streams of other libraries are used through their handles
// (args.h: streamFromPython) and never owned.
#pragma once
#include "runtime/cuda_api.h"

namespace cj::rt {

class Stream {
 public:
  // On the current device; non_blocking: does not synchronise with the
  // legacy default stream.
  explicit Stream(bool non_blocking = false);
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  cu::CUstream handle() const { return handle_; }
  void synchronize() const;
  bool done() const;   // cuStreamQuery: all work finished

 private:
  cu::CUstream handle_ = nullptr;
  int device_ = 0;
};

// Queues `callback(user, status)` on a driver thread after the work queued
// so far on `stream` (cuStreamAddCallback). The callback must not call CUDA.
using StreamCallback = void (*)(void* user, int status);
void addStreamCallback(cu::CUstream stream, StreamCallback callback, void* user);

}  // namespace cj::rt
