// Helpers the runtime's bindings share (bind_runtime.cpp, bind_device_array.cpp,
// bind_host_api.cpp): numpy dtypes <-> cudajit scalars, shapes, streams, and
// Python objects kept alive from C++.
#pragma once
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <memory>
#include <string>
#include <vector>

#include "runtime/cuda_api.h"
#include "runtime/device_array.h"

namespace cj::py_rt {

namespace py = pybind11;

py::module_ numpy();
// operator.index(v): ints and numpy integers, not floats.
long long indexValue(const py::handle& v);
Scalar scalarFromDtype(const py::handle& dtype_like);   // ArgumentTypeError if cudajit has none
py::object dtypeOf(Scalar s);
// A device array's item type from a numpy dtype (anything numpy.dtype
// accepts): a scalar, or a record for a structured dtype (its numpy dtype
// kept for dtypeOf). ArgumentTypeError naming the field a record cannot hold.
struct Element {
  Scalar scalar = Scalar::UInt8;
  const Type* record = nullptr;
};
Element elementFromDtype(const py::handle& dtype_like);
// The numpy dtype of a device array's items (a structured one for records).
py::object dtypeOf(const rt::DeviceArray& a);
// An int or an iterable of ints (numba's shape / strides arguments).
std::vector<int64_t> shapeFrom(const py::handle& shape);
py::tuple toTuple(const std::vector<int64_t>& v);

// A Python object held from C++ (a bound stream, the owner of borrowed
// memory): released with the GIL, and not at all once the interpreter is gone.
std::shared_ptr<void> keepAlive(py::object obj);
// The object keepAlive() holds.
py::object keptObject(const std::shared_ptr<void>& kept);

// numba's stream arguments: 0 / None mean "none given".
bool streamGiven(const py::handle& stream);
rt::cu::CUstream streamHandle(const py::handle& stream);

}  // namespace cj::py_rt
