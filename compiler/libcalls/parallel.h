// Running a provider's compiles in parallel, within one process-wide limit:
// each NVRTC run holds hundreds of MB, and kernels compiled from several
// threads at once (warming) should share the cores instead of multiplying
// the threads. $CUDAJIT_CUB_JOBS overrides the number of cores.
#pragma once
#include <cstddef>
#include <functional>

namespace cj::libcalls {

// work(0) .. work(n - 1), concurrently (the caller's thread takes part);
// each holds one job slot while it runs. Rethrows the failure of the lowest
// index once all have finished.
void forEachInParallel(size_t n, const std::function<void(size_t)>& work);

}  // namespace cj::libcalls
