// cuBLASDx's tensor API through libmathdx, uncached (cache.cpp caches).
#pragma once
#include "mathdx/mathdx.h"

namespace cj::mathdx {

// Creates the spec's tensors on a cuBLASDx descriptor with the tensor API,
// reads their traits and, unless the function is "traits", makes the device
// function and finalizes its LTO-IR for sm_<spec.matmul.sm>. Throws
// CompileError (libmathdx's message, or a name cudajit does not know) or
// LibraryMissing.
TensorFunctionResult compileTensorFunction(const TensorFunctionSpec& spec);

}  // namespace cj::mathdx
