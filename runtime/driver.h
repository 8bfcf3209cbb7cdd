// The CUDA driver, loaded with dlopen at first use.
//
// driver() opens libcuda.so.1 (or $CUDAJIT_CUDA_DRIVER), resolves every
// function of CJ_CUDA_FUNCTIONS and calls cuInit(0) once. Any failure there
// (no library, the toolkit's stub library, no device) becomes a
// CudaSupportError that is remembered and thrown again on every later call,
// so a machine without a GPU gets the same clear message each time.
#pragma once
#include <string>

#include "runtime/cuda_api.h"
#include "runtime/errors.h"

namespace cj::rt {

struct DriverApi {
#define CJ_CUDA_MEMBER(name, symbol, params) cu::PFN_##name name = nullptr;
  CJ_CUDA_FUNCTIONS(CJ_CUDA_MEMBER)
  CJ_CUDA_OPTIONAL_FUNCTIONS(CJ_CUDA_MEMBER)   // null when the driver lacks them
#undef CJ_CUDA_MEMBER
  std::string library_path;   // what dlopen opened
  int version = 0;            // cuDriverGetVersion: 13000 for 13.0
  int device_count = 0;
};

// The loaded, initialised driver; throws CudaSupportError.
const DriverApi& driver();
// True when driver() would succeed (never throws).
bool driverAvailable();
// The reason driver() fails, or "" when it works.
std::string driverUnavailableReason();

// "CUDA_ERROR_OUT_OF_MEMORY: out of memory" (falls back to the number when
// the driver cannot name it).
std::string describeResult(cu::CUresult result);

// Throws CudaApiError naming the function and the driver's message.
[[noreturn]] void throwApiError(cu::CUresult result, const char* function);
inline void check(cu::CUresult result, const char* function) {
  if (result != cu::CUDA_SUCCESS) throwApiError(result, function);
}

// An optional function (CJ_CUDA_OPTIONAL_FUNCTIONS), or CudaSupportError
// when the loaded driver does not export it.
[[noreturn]] void throwMissingFunction(const char* function);
template <typename Fn>
Fn require(Fn fn, const char* function) {
  if (!fn) throwMissingFunction(function);
  return fn;
}

}  // namespace cj::rt

// CJ_CU(cuMemAlloc, &ptr, n): calls through the table and checks the result.
#define CJ_CU(fn, ...) ::cj::rt::check(::cj::rt::driver().fn(__VA_ARGS__), #fn)
// The same for an optional function (CJ_CUDA_OPTIONAL_FUNCTIONS).
#define CJ_CU_OPT(fn, ...) \
  ::cj::rt::check(::cj::rt::require(::cj::rt::driver().fn, #fn)(__VA_ARGS__), #fn)
