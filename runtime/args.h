// Python objects -> kernel arguments, in C++ on every launch.
//
//   cudajit DeviceNDArray                  -> array, its device pointer
//   CuPy ndarray, PyTorch CUDA tensor      -> array, read through their own
//       attributes (data.ptr / data_ptr(), shape, strides, dtype): cheaper
//       than building their __cuda_array_interface__ dict
//   __cuda_array_interface__ (numba, ...; v2/v3) -> array; strides None means
//       C-contiguous; a v3 `stream` is synchronised with unless it is the
//       launch stream
//   __dlpack__ (CUDA device only)          -> array
//   numpy.ndarray (host)                   -> array, copied to the device
//       before the launch and back after it (unless read-only), as numba does
//   bool / int / float                     -> b1 / i64 (u64 past INT64_MAX) / f64
//   numpy scalar                           -> its dtype
//   tuple of numbers                       -> tuple type
//   None                                   -> none (no kernel parameter)
// Anything else (a list, a str, an object array, complex for now) is an
// ArgumentTypeError naming the argument position and its Python type.
//
// How an object is read is decided once per Python type (arg_routes.h);
// classifying allocates nothing for arrays and scalars.
#pragma once
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <memory>
#include <string>
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
  bool copy_in = true;        // false for cudajit.Out: the device buffer starts uninitialised
  bool copy_back = false;
  bool record_scalar = false;   // a numpy.void record: copied back field by field
};

// Where the default stream of a launch comes from when none was given.
enum class StreamOwner : uint8_t { None, Torch, Cupy };

struct LaunchArgs {
  std::vector<ArgValue> values;
  std::vector<const Type*> types;            // values[k].type, as the signature key
  std::vector<StagedHostArray> staged;
  std::vector<cu::CUstream> producer_streams;   // from __cuda_array_interface__ v3
  int device = -1;                           // where the array arguments live (-1: none says)
  StreamOwner stream_owner = StreamOwner::None;

  void clear();
};

// Classifies args[0..n); needs no driver (host arrays are staged later).
// With `find_devices` (a machine with several GPUs) it also finds the device
// of each array and checks that they agree.
void classifyArgs(PyObject* const* args, size_t n, bool find_devices, LaunchArgs* out);

// The stream a launch without an explicit one goes to: PyTorch's current
// stream on `device` when a tensor is among the arguments, else CuPy's
// current stream when a CuPy array is, else the default stream (null).
cu::CUstream defaultStreamFor(const LaunchArgs& args, int device);

// Before the launch: waits for the producers' streams (unless they are the
// launch stream), allocates and copies the host arrays in, on `stream`.
void stageIn(LaunchArgs& args, cu::CUstream stream);
// After the launch: when host arrays were staged, waits for `stream` and
// copies the writeable ones back. A no-op otherwise (launches stay async).
void stageOut(LaunchArgs& args, cu::CUstream stream);

// Launch-configuration stream objects -> CUstream: None / 0, an int handle,
// a cudajit stream, an object with __cuda_stream__() (CUDA Python protocol),
// `.handle` (numba streams), `.ptr` (CuPy) or `.cuda_stream` (PyTorch).
cu::CUstream streamFromPython(PyObject* obj);

// The DeviceArray inside a cudajit.DeviceNDArray, or nullptr.
const DeviceArray* asDeviceArray(PyObject* obj);
// Registered by the bindings once the classes exist. A DeviceNDArray holds
// its DeviceArray inline, `value_offset` bytes from the object's start
// (python/src/native_class.h); a cudajit.Stream's handle is read by `handle_of`.
void registerDeviceArrayType(PyTypeObject* type, size_t value_offset);
void registerStreamType(PyTypeObject* type, cu::CUstream (*handle_of)(PyObject*));

// An object whose class has _cudajit_arg_ (route Opaque): its type, a tuple
// (symbol, uint64) whose symbol is compile-time only, and its one word.
// Also what a signature makes of such an object (numba's _numba_type_).
struct OpaqueArg {
  const Type* type = nullptr;
  ScalarValue word;
};
OpaqueArg opaqueArg(PyObject* obj);

// "argument 2 of type 'list' cannot be passed to a kernel: <why>"
[[noreturn]] void argumentError(size_t index, PyObject* obj, const std::string& why);

}  // namespace cj::rt
#pragma GCC visibility pop
