// How a kernel argument of a given Python type is read, decided once per
// type and remembered (types are kept alive by the table, so a pointer is
// never reused for another type while cached).
//
// The checks that decide a route (isinstance numpy.generic, the names of the
// classes in the MRO that recognise CuPy and PyTorch without importing them)
// cost microseconds; the table makes them a pointer lookup per launch.
#pragma once
#include <Python.h>

#include "types/types.h"

namespace cj::rt {

enum class Route : uint8_t {
  Float,         // Python float (and subclasses that are not numpy scalars)
  Int,           // Python int
  Bool,          // Python bool
  DeviceArray,   // cudajit.DeviceNDArray
  NumpyScalar,   // numpy.float32(1.5): `scalar` is its dtype
  HostArray,     // numpy.ndarray: staged to the device
  Tuple,         // a tuple of numbers
  Cupy,          // cupy.ndarray: data.ptr, shape, strides, dtype
  Torch,         // torch.Tensor: data_ptr(), shape, stride(), dtype, get_device()
  Foreign,       // anything else: __cuda_array_interface__, then __dlpack__
  Complex,       // Python complex: complex128
  None,          // None: type none, no kernel parameter (numba's `is None` arguments)
  CopyWrapper,   // cudajit.In / Out / InOut (numba's): `.value`, copied one way or both
  EnumMember,    // a member of a plain enum.Enum: its `.value` (a number); IntEnum members are ints
  Opaque,        // an object whose class has _cudajit_arg_: (symbol name, address), a
                 // compile-time symbol and a 64-bit word (cudajit.mathdx.DevicePipeline)
};

struct TypeRoute {
  Route route = Route::Foreign;
  Scalar scalar = Scalar::Int64;   // NumpyScalar only
  bool supported = true;           // NumpyScalar: false for dtypes cudajit has no type for
  bool copy_in = true;             // CopyWrapper: a host value is copied to the device ...
  bool copy_out = true;            // ... and back after the launch
};

// The route of `obj`'s type (`obj` is an instance, used the first time the
// type is seen). Throws pybind11::error_already_set when Python raised.
const TypeRoute& routeOf(PyObject* obj);

// Registered by the binding once the DeviceNDArray class exists.
void setDeviceArrayType(PyTypeObject* type);
PyTypeObject* deviceArrayType();

}  // namespace cj::rt
