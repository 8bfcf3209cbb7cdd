// A cubin loaded into the current device's primary context (RAII), and the
// kernel function found in it.
#pragma once
#include <string>
#include <vector>

#include "runtime/cuda_api.h"

namespace cj::rt {

class LoadedModule {
 public:
  // cuModuleLoadData in `device`'s primary context (-1: the current
  // device); throws CudaApiError (with the driver's message, e.g.
  // CUDA_ERROR_NO_BINARY_FOR_GPU for a wrong arch).
  explicit LoadedModule(const std::vector<char>& cubin, int device = -1);
  ~LoadedModule();
  LoadedModule(const LoadedModule&) = delete;
  LoadedModule& operator=(const LoadedModule&) = delete;

  cu::CUfunction function(const std::string& symbol) const;   // throws CudaApiError
  int device() const { return device_; }

 private:
  cu::CUmodule module_ = nullptr;
  int device_ = 0;
};

}  // namespace cj::rt
