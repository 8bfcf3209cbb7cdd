#include <unordered_map>

#include "bytecode/record_dtype.h"
#include "python/src/runtime_py.h"

#include "runtime/args.h"
#include "runtime/errors.h"

namespace cj::py_rt {

py::module_ numpy() {
  static PyObject* np = py::module_::import("numpy").release().ptr();
  return py::reinterpret_borrow<py::module_>(np);
}

long long indexValue(const py::handle& v) {
  py::object i = py::reinterpret_steal<py::object>(PyNumber_Index(v.ptr()));
  if (!i) throw py::error_already_set();
  return i.cast<long long>();
}

Scalar scalarFromDtype(const py::handle& dtype_like) {
  py::object dt = numpy().attr("dtype")(dtype_like);
  const char kind = dt.attr("kind").cast<std::string>()[0];
  const int itemsize = dt.attr("itemsize").cast<int>();
  Scalar s;
  if (!rt::scalarFromNumpy(kind, itemsize, &s) || !dt.attr("isnative").cast<bool>())
    throw rt::ArgumentTypeError("cudajit has no device type for dtype " +
                                py::str(dt).cast<std::string>());
  return s;
}

py::object dtypeOf(Scalar s) { return numpy().attr("dtype")(rt::numpyTypestr(s)); }

namespace {
// Record type -> the numpy dtype it came from (records are interned, so one
// entry per layout). The references are never released: the process's types
// live as long.
std::unordered_map<const Type*, PyObject*>& recordDtypes() {
  static std::unordered_map<const Type*, PyObject*> table;
  return table;
}
}  // namespace

Element elementFromDtype(const py::handle& dtype_like) {
  py::object dt = numpy().attr("dtype")(dtype_like);
  if (!bytecode::isStructuredDtype(dt.ptr())) return {scalarFromDtype(dt), nullptr};
  std::string why;
  const Type* rec = bytecode::recordFromDtype(dt.ptr(), &why);
  if (!rec) throw rt::ArgumentTypeError("cudajit has no device type for dtype " + py::str(dt).cast<std::string>() + ": " + why);
  auto& table = recordDtypes();
  if (!table.count(rec)) table[rec] = dt.release().ptr();
  return {Scalar::UInt8, rec};
}

py::object dtypeOf(const rt::DeviceArray& a) {
  if (!a.record) return dtypeOf(a.dtype);
  auto it = recordDtypes().find(a.record);
  if (it == recordDtypes().end()) throw rt::ArgumentTypeError("a device array of records whose numpy dtype is unknown");
  return py::reinterpret_borrow<py::object>(it->second);
}

std::vector<int64_t> shapeFrom(const py::handle& shape) {
  if (PyIndex_Check(shape.ptr())) return {indexValue(shape)};
  if (PyFloat_Check(shape.ptr()))
    throw rt::ArgumentTypeError("shape must be an integer or a tuple of integers");
  std::vector<int64_t> out;
  for (py::handle d : py::reinterpret_borrow<py::iterable>(shape)) {
    if (!PyIndex_Check(d.ptr()))
      throw rt::ArgumentTypeError("shape elements must be integers, not '" +
                                  std::string(Py_TYPE(d.ptr())->tp_name) + "'");
    out.push_back(indexValue(d));
  }
  return out;
}

py::tuple toTuple(const std::vector<int64_t>& v) {
  py::tuple t(v.size());
  for (size_t k = 0; k < v.size(); ++k) t[k] = py::int_(v[k]);
  return t;
}

std::shared_ptr<void> keepAlive(py::object obj) {
  return std::shared_ptr<void>(obj.release().ptr(), [](void* p) {
    if (!Py_IsInitialized()) return;   // at exit: leak rather than touch a dead interpreter
    py::gil_scoped_acquire gil;
    Py_DECREF(static_cast<PyObject*>(p));
  });
}

py::object keptObject(const std::shared_ptr<void>& kept) {
  if (!kept) return py::none();
  return py::reinterpret_borrow<py::object>(static_cast<PyObject*>(kept.get()));
}

bool streamGiven(const py::handle& stream) {
  if (stream.is_none()) return false;
  if (PyLong_Check(stream.ptr())) return py::cast<long long>(stream) != 0;
  return true;
}

rt::cu::CUstream streamHandle(const py::handle& stream) {
  if (!streamGiven(stream)) return nullptr;
  return rt::streamFromPython(stream.ptr());
}

}  // namespace cj::py_rt
