// Arrays of other libraries as kernel arguments: CuPy, PyTorch, anything
// with __cuda_array_interface__ or __dlpack__. Each reader fills the
// argument's array value and type and returns the device the memory lives
// on (-1 when not asked for, or unknown).
//
// CuPy and PyTorch are read through their own attributes rather than their
// __cuda_array_interface__: CuPy builds a dict per access, PyTorch's is
// Python code (microseconds each), while data.ptr / data_ptr(), shape,
// strides / stride() and dtype are C attribute reads. The dtype objects are
// mapped to cudajit scalars once each (by identity).
#pragma once
#include <Python.h>

#include <vector>

#include "runtime/kernel_args.h"

namespace cj::rt {

int readCupyArray(size_t index, PyObject* obj, bool find_device, ArgValue* arg);
int readTorchTensor(size_t index, PyObject* obj, ArgValue* arg);

// __cuda_array_interface__, else __dlpack__. False when the object has
// neither (the caller reports it as unsupported). A v3 interface's stream
// is appended to `producer_streams`.
bool readForeignArray(size_t index, PyObject* obj, bool find_device, ArgValue* arg,
                      std::vector<cu::CUstream>* producer_streams, int* device);

// The current streams of PyTorch (on `device`) and CuPy, as raw handles.
cu::CUstream torchCurrentStream(int device);
cu::CUstream cupyCurrentStream();

// The device ordinal a device pointer belongs to (cuPointerGetAttribute).
int deviceOfPointer(cu::CUdeviceptr ptr);

}  // namespace cj::rt
