// Python objects -> kernel arguments, in C++ on every launch.
//
//   cudajit DeviceNDArray                  -> array, its device pointer
//   __cuda_array_interface__ (CuPy, PyTorch, numba; v2/v3) -> array; strides
//       None means C-contiguous; a v3 `stream` is synchronised with unless
//       it is the launch stream
//   numpy.ndarray (host)                   -> array, copied to the device
//       before the launch and back after it (unless read-only), as numba does
//   bool / int / float                     -> b1 / i64 (u64 past INT64_MAX) / f64
//   numpy scalar                           -> its dtype
//   tuple of numbers                       -> tuple type
// Anything else (a list, a str, an object array, complex for now) is an
// ArgumentTypeError naming the argument position and its Python type.
#pragma once
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <memory>
#include <vector>

#include "runtime/device_array.h"
#include "runtime/kernel_args.h"

// Like pybind11 itself, these types are private to the extension module
// (they hold pybind11 objects, which have hidden visibility).
#pragma GCC visibility push(hidden)
namespace cj::rt {

namespace py = pybind11;

// A host array copied to the device for one launch.
struct StagedHostArray {
  size_t arg = 0;             // which argument
  py::object original;        // the user's array (written back when writeable)
  py::array contiguous;       // the dense array whose bytes travel
  std::shared_ptr<DeviceBuffer> buffer;
  bool copy_back = false;
};

struct LaunchArgs {
  std::vector<ArgValue> values;
  std::vector<const Type*> types;            // values[k].type, as the signature key
  std::vector<StagedHostArray> staged;
  std::vector<cu::CUstream> producer_streams;   // from __cuda_array_interface__ v3

  void clear();
};

// Classifies `args`; needs no driver (host arrays are staged later).
void classifyArgs(const py::tuple& args, LaunchArgs* out);

// Before the launch: waits for the producers' streams (unless they are the
// launch stream), allocates and copies the host arrays in, on `stream`.
void stageIn(LaunchArgs& args, cu::CUstream stream);
// After the launch: when host arrays were staged, waits for `stream` and
// copies the writeable ones back. A no-op otherwise (launches stay async).
void stageOut(LaunchArgs& args, cu::CUstream stream);

// Launch-configuration stream objects -> CUstream: None / 0, an int handle,
// an object with __cuda_stream__() (CUDA Python protocol), `.handle`
// (cudajit / numba streams), `.ptr` (CuPy) or `.cuda_stream` (PyTorch).
cu::CUstream streamFromPython(const py::handle& obj);

// The DeviceArray inside a cudajit.DeviceNDArray, or nullptr.
const DeviceArray* asDeviceArray(const py::handle& obj);
// Registered by bind_runtime.cpp once the pybind11 class exists.
void registerDeviceArrayType(PyTypeObject* type);

}  // namespace cj::rt
#pragma GCC visibility pop
