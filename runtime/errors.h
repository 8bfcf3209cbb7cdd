// Errors of the runtime. The binding layer (python/src/bind_runtime.cpp)
// turns them into cudajit.errors.CudaSupportError / CudaAPIError and the
// argument errors into TypeError / ValueError.
#pragma once
#include <stdexcept>
#include <string>

namespace cj::rt {

// No usable driver or GPU: libcuda.so.1 missing, the toolkit's stub library,
// cuInit failing, no device. Kernels still compile; they cannot be launched.
struct CudaSupportError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A driver call returned an error code.
struct CudaApiError : std::runtime_error {
  int code;
  std::string function;   // "cuLaunchKernel"
  CudaApiError(std::string text, int code_, std::string function_)
      : std::runtime_error(std::move(text)), code(code_), function(std::move(function_)) {}
};

// A kernel argument cudajit cannot pass (a list, a string, an object array):
// Python TypeError.
struct ArgumentTypeError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A bad launch configuration, shape or value: Python ValueError.
struct ArgumentValueError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace cj::rt
