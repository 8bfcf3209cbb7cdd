// A device's attributes by numba's names (device.MAX_THREADS_PER_BLOCK,
// device.MULTIPROCESSOR_COUNT, ...: the CU_DEVICE_ATTRIBUTE_ names of
// cuda.h, device_attributes.def), its UUID, and the occupancy calculator.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "runtime/cuda_api.h"

namespace cj::rt {

// The attribute's code for a name without the CU_DEVICE_ATTRIBUTE_ prefix;
// false for a name cuda.h does not define.
bool deviceAttributeCode(std::string_view name, int* code);
std::vector<std::string> deviceAttributeNames();
// cuDeviceGetAttribute (throws CudaApiError, e.g. for a code newer than the driver).
int deviceAttribute(int ordinal, int code);
// "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", as nvidia-smi prints it.
std::string deviceUuid(int ordinal);

// The block size with the highest occupancy for `fn` with `shared_bytes` of
// dynamic shared memory per block (cuOccupancyMaxPotentialBlockSize).
int maxPotentialBlockSize(cu::CUfunction fn, size_t shared_bytes, int block_limit = 1024);

// Profiler control (cuProfilerStart / cuProfilerStop on the current context).
void profilerStart();
void profilerStop();

}  // namespace cj::rt
