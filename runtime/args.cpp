#include "runtime/args.h"

#include <string>

#include "bytecode/record_dtype.h"
#include "runtime/arg_routes.h"
#include "runtime/arg_types.h"
#include "runtime/errors.h"
#include "runtime/foreign_arrays.h"
#include "runtime/memory.h"

namespace cj::rt {
namespace {

PyTypeObject* g_stream_type = nullptr;
cu::CUstream (*g_stream_handle_of)(PyObject*) = nullptr;
size_t g_device_array_offset = 0;    // of the DeviceArray inside a DeviceNDArray

std::string pyTypeName(PyObject* obj) { return Py_TYPE(obj)->tp_name; }

std::string argLabel(size_t index) { return "argument " + std::to_string(index + 1); }

const char* kSupportedHint =
    "pass a cudajit.DeviceNDArray, a CuPy array, a PyTorch CUDA tensor, a CUDA array with "
    "__cuda_array_interface__ or __dlpack__, a numpy array (copied to the device and back), a "
    "bool/int/float/complex, a numpy scalar, None, or a tuple of numbers";

// Looks an attribute up without raising when it is missing.
PyObject* optionalAttr(PyObject* obj, const char* name) {
  PyObject* v = nullptr;
#if PY_VERSION_HEX >= 0x030D0000
  if (PyObject_GetOptionalAttrString(obj, name, &v) < 0) throw py::error_already_set();
#else
  PyObject* key = PyUnicode_FromString(name);
  if (!key) throw py::error_already_set();
  const int found = _PyObject_LookupAttr(obj, key, &v);
  Py_DECREF(key);
  if (found < 0) throw py::error_already_set();
#endif
  return v;
}

// A Python int -> Int64, or UInt64 past INT64_MAX (numba's typing).
void readInt(size_t index, PyObject* o, ScalarValue* out) {
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
  if (overflow == 0) {
    if (v == -1 && PyErr_Occurred()) throw py::error_already_set();
    out->type = Scalar::Int64;
    out->i = v;
    return;
  }
  const unsigned long long u = overflow > 0 ? PyLong_AsUnsignedLongLong(o) : 0;
  if (overflow < 0 || (u == static_cast<unsigned long long>(-1) && PyErr_Occurred())) {
    PyErr_Clear();
    throw ArgumentValueError(argLabel(index) + ": the integer " +
                             py::str(o).cast<std::string>() + " does not fit in 64 bits");
  }
  out->type = Scalar::UInt64;
  out->i = static_cast<int64_t>(u);
}

// numpy.float32(1.5) and friends: the dtype comes from the route, the value
// from the number protocols (no .item() call, no dtype lookup).
void readNumpyScalar(size_t index, PyObject* o, const TypeRoute& r, ScalarValue* out) {
  if (!r.supported)
    argumentError(index, o, "numpy scalars of this dtype have no cudajit type");
  out->type = r.scalar;
  switch (scalarKind(r.scalar)) {
    case ScalarKind::Float: {
      const double d = PyFloat_AsDouble(o);
      if (d == -1.0 && PyErr_Occurred()) throw py::error_already_set();
      out->f = d;
      return;
    }
    case ScalarKind::Bool: {
      const int b = PyObject_IsTrue(o);
      if (b < 0) throw py::error_already_set();
      out->i = b;
      return;
    }
    case ScalarKind::Int: {
      PyObject* i = PyNumber_Index(o);
      if (!i) throw py::error_already_set();
      if (scalarSigned(r.scalar)) {
        out->i = PyLong_AsLongLong(i);
      } else {
        out->i = static_cast<int64_t>(PyLong_AsUnsignedLongLong(i));
      }
      Py_DECREF(i);
      if (PyErr_Occurred()) throw py::error_already_set();
      return;
    }
    case ScalarKind::Complex: {
      Py_complex c = PyComplex_AsCComplex(o);
      if (c.real == -1.0 && PyErr_Occurred()) throw py::error_already_set();
      out->f = c.real;
      out->f_imag = c.imag;
      return;
    }
  }
}

// A number of any supported kind; false for anything else.
bool readNumber(size_t index, PyObject* o, const TypeRoute& r, ScalarValue* out) {
  switch (r.route) {
    case Route::Float:
      out->type = Scalar::Float64;
      out->f = PyFloat_AsDouble(o);
      if (out->f == -1.0 && PyErr_Occurred()) throw py::error_already_set();
      return true;
    case Route::Int: readInt(index, o, out); return true;
    case Route::Bool:
      out->type = Scalar::Bool;
      out->i = PyObject_IsTrue(o) == 1;
      return true;
    case Route::NumpyScalar: readNumpyScalar(index, o, r, out); return true;
    case Route::Complex: {   // a Python complex: numba types it complex128
      out->type = Scalar::Complex128;
      out->f = PyComplex_RealAsDouble(o);
      out->f_imag = PyComplex_ImagAsDouble(o);
      if (out->f == -1.0 && PyErr_Occurred()) throw py::error_already_set();
      return true;
    }
    default: return false;
  }
}

void readDeviceArray(size_t index, PyObject* obj, const DeviceArray& da, ArgValue* arg) {
  if (da.ndim() > kMaxArrayDims)
    argumentError(index, obj, "arrays of more than " + std::to_string(kMaxArrayDims) +
                                  " dimensions are not supported");
  ArrayValue& a = arg->array;
  a.data = da.data;
  a.ndim = da.ndim();
  for (int k = 0; k < a.ndim; ++k) {
    a.shape[k] = da.shape[k];
    a.strides[k] = da.strides[k];
  }
  const Layout layout = layoutOf(a.shape, a.strides, a.ndim, da.itemsize());
  if (da.record_scalar) {   // numba's DeviceRecord: the kernel gets the record (its address)
    arg->type = da.record;
    return;
  }
  arg->type = da.record ? recordArrayTy(da.record, a.ndim, layout) : arrayArgType(da.dtype, a.ndim, layout);
}

// The record type of a structured dtype (arrays of records, record scalars);
// an ArgumentTypeError naming the field that cannot be a record field.
const Type* recordArgType(size_t index, PyObject* obj, PyObject* dtype) {
  std::string why;
  const Type* rec = bytecode::recordFromDtype(dtype, &why);
  if (!rec) argumentError(index, obj, "its structured dtype has no cudajit record type: " + why);
  return rec;
}

// A record scalar (numpy.void / numpy.record, e.g. arr[0] of a structured
// array): as numba, its bytes are copied to the device, the kernel gets the
// record (a reference to them), and they are copied back into the scalar
// after the launch (field by field: a numpy.void from arr[i] is a view of
// arr, so arr sees the kernel's writes).
void readRecordScalar(size_t index, PyObject* obj, ArgValue* arg, LaunchArgs* out) {
  py::object v = py::reinterpret_borrow<py::object>(obj);
  py::object dtype = v.attr("dtype");
  arg->type = recordArgType(index, obj, dtype.ptr());
  StagedHostArray staged;
  staged.arg = index;
  staged.original = v;
  staged.copy_back = true;
  staged.record_scalar = true;
  staged.contiguous = py::array(py::module_::import("numpy").attr("array")(v));
  arg->array.ndim = 0;
  arg->array.data = 0;   // set by stageIn
  out->staged.push_back(std::move(staged));
}

// A host array: typed now, staged (copied to the device) in stageIn.
void readHostArray(size_t index, PyObject* obj, ArgValue* arg, LaunchArgs* out) {
  py::array a = py::reinterpret_borrow<py::array>(obj);
  py::dtype dt = a.dtype();
  if (dt.kind() == 'O') argumentError(index, obj, "object arrays cannot live on the GPU");
  const Type* record = dt.kind() == 'V' && bytecode::isStructuredDtype(dt.ptr()) ? recordArgType(index, obj, dt.ptr()) : nullptr;
  Scalar dtype = Scalar::UInt8;
  if (!record && !scalarFromNumpy(dt.kind(), static_cast<int>(dt.itemsize()), &dtype))
    argumentError(index, obj, "arrays of dtype " + py::str(dt).cast<std::string>() +
                                  " have no cudajit type");
  if (!dt.attr("isnative").cast<bool>())
    argumentError(index, obj, "byte-swapped (non-native endian) arrays are not supported");
  if (a.ndim() > kMaxArrayDims)
    argumentError(index, obj, "arrays of more than " + std::to_string(kMaxArrayDims) +
                                  " dimensions are not supported");

  StagedHostArray staged;
  staged.arg = index;
  staged.original = py::reinterpret_borrow<py::object>(obj);
  staged.copy_back = a.writeable();
  const bool dense = (a.flags() & (py::array::c_style | py::array::f_style)) != 0;
  // A strided view travels as a dense C copy (and is written back element-wise).
  staged.contiguous =
      dense ? a : py::array(py::module_::import("numpy").attr("ascontiguousarray")(a));
  const py::array& c = staged.contiguous;
  ArrayValue& v = arg->array;
  v.ndim = static_cast<int>(c.ndim());
  for (int k = 0; k < v.ndim; ++k) {
    v.shape[k] = c.shape()[k];
    v.strides[k] = c.strides()[k];
  }
  v.data = 0;   // set by stageIn
  if (record)   // an array of records (numpy structured dtype)
    arg->type = recordArrayTy(record, v.ndim, layoutOf(v.shape, v.strides, v.ndim, static_cast<int>(record->size)));
  else
    arg->type = arrayArgType(dtype, v.ndim, layoutOf(v.shape, v.strides, v.ndim, scalarByteSize(dtype)));
  out->staged.push_back(std::move(staged));
}

void readTuple(size_t index, PyObject* obj, ArgValue* arg) {
  std::vector<const Type*> elem_types;
  arg->elems.clear();
  for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(obj); ++k) {
    PyObject* e = PyTuple_GET_ITEM(obj, k);
    ScalarValue v;
    if (!readNumber(index, e, routeOf(e), &v))
      argumentError(index, obj, "tuples may hold numbers only (found '" + pyTypeName(e) + "')");
    arg->elems.push_back(v);
    elem_types.push_back(scalarArgType(v.type));
  }
  arg->type = tupleTy(elem_types);
  // A namedtuple (a tuple subclass with _fields) keeps its field names: p.x in the kernel.
  PyObject* cls = reinterpret_cast<PyObject*>(Py_TYPE(obj));
  if (Py_TYPE(obj) != &PyTuple_Type && PyObject_HasAttrString(cls, "_fields")) {
    py::object fields = py::reinterpret_borrow<py::object>(cls).attr("_fields");
    std::vector<std::string> names;
    for (auto f : fields) names.push_back(py::cast<std::string>(f));
    if (names.size() == elem_types.size())
      arg->type = namedTupleTy(elem_types, py::cast<std::string>(py::reinterpret_borrow<py::object>(cls).attr("__qualname__")),
                               names);
  }
}

}  // namespace

OpaqueArg opaqueArg(PyObject* obj) {
  py::object v = py::reinterpret_borrow<py::object>(obj).attr("_cudajit_arg_");
  py::tuple t = py::cast<py::tuple>(v);
  if (t.size() != 2) throw ArgumentTypeError("_cudajit_arg_ is (symbol name, address)");
  OpaqueArg o;
  o.type = tupleTy({symbolTy(py::cast<std::string>(t[0])), scalarArgType(Scalar::UInt64)});
  o.word.type = Scalar::UInt64;
  o.word.i = static_cast<int64_t>(py::cast<uint64_t>(t[1]));
  return o;
}

namespace {

[[noreturn]] void unsupported(size_t index, PyObject* obj) {
  if (PyUnicode_Check(obj) || PyBytes_Check(obj))
    argumentError(index, obj, std::string("strings are not supported; ") + kSupportedHint);
  if (PyList_Check(obj))
    argumentError(index, obj, std::string("lists are not supported (convert with numpy.asarray "
                                          "or cudajit.to_device); ") + kSupportedHint);
  argumentError(index, obj, kSupportedHint);
}

// The device of one array argument must agree with the others'.
void noteDevice(size_t index, int device, LaunchArgs* out) {
  if (device < 0) return;
  if (out->device < 0) {
    out->device = device;
    return;
  }
  if (device != out->device)
    throw ArgumentValueError(argLabel(index) + " is on device " + std::to_string(device) +
                             " but an earlier array argument is on device " +
                             std::to_string(out->device) + ": a kernel runs on one GPU");
}

void classifyOne(size_t index, PyObject* obj, bool find_devices, LaunchArgs* out) {
  ArgValue& arg = out->values[index];
  const TypeRoute& r = routeOf(obj);
  switch (r.route) {
    case Route::Float:
    case Route::Int:
    case Route::Bool:
    case Route::NumpyScalar:
    case Route::Complex:
      if (r.route == Route::NumpyScalar && !r.supported &&
          bytecode::isStructuredDtype(py::reinterpret_borrow<py::object>(obj).attr("dtype").ptr()))
        return readRecordScalar(index, obj, &arg, out);
      readNumber(index, obj, r, &arg.scalar);
      arg.type = scalarArgType(arg.scalar.type);
      return;
    case Route::DeviceArray: {
      const DeviceArray* da = asDeviceArray(obj);
      if (!da) argumentError(index, obj, "the device array was not initialised");
      readDeviceArray(index, obj, *da, &arg);
      noteDevice(index, da->owner ? da->owner->device() : -1, out);
      return;
    }
    case Route::None:   // typed none: no value and no kernel parameter (abi.h)
      arg.type = noneTy();
      return;
    case Route::HostArray: readHostArray(index, obj, &arg, out); return;
    case Route::Tuple: readTuple(index, obj, &arg); return;
    case Route::Cupy:
      noteDevice(index, readCupyArray(index, obj, find_devices, &arg), out);
      if (out->stream_owner == StreamOwner::None) out->stream_owner = StreamOwner::Cupy;
      return;
    case Route::Torch:
      noteDevice(index, readTorchTensor(index, obj, &arg), out);
      out->stream_owner = StreamOwner::Torch;
      return;
    case Route::EnumMember: {
      // Its value, as numba passes an enum member (compared with members
      // in the kernel: m == Shape.SQUARE folds to the value too).
      py::object value = py::reinterpret_borrow<py::object>(obj).attr("value");
      if (!readNumber(index, value.ptr(), routeOf(value.ptr()), &arg.scalar))
        argumentError(index, obj, "an enum member passes as its value, which must be a number (it is '" +
                                      pyTypeName(value.ptr()) + "')");
      arg.type = scalarArgType(arg.scalar.type);
      return;
    }
    case Route::CopyWrapper: {
      // cudajit.In(x) / Out(x) / InOut(x): x as any argument; a host array
      // is copied in and back only as the wrapper says. The wrapper keeps
      // x alive for the launch.
      const bool copy_in = r.copy_in, copy_out = r.copy_out;   // `r` may be reused by routeOf
      py::object value = py::reinterpret_borrow<py::object>(obj).attr("value");
      const TypeRoute& inner = routeOf(value.ptr());
      if (inner.route == Route::CopyWrapper) argumentError(index, obj, "In/Out/InOut cannot be nested");
      const size_t staged_before = out->staged.size();
      classifyOne(index, value.ptr(), find_devices, out);
      if (out->staged.size() > staged_before) {
        StagedHostArray& s = out->staged.back();
        s.copy_in = copy_in;
        s.copy_back = s.copy_back && copy_out;
      }
      return;
    }
    case Route::Opaque: {
      const OpaqueArg o = opaqueArg(obj);
      arg.type = o.type;
      arg.elems = {o.word};
      return;
    }
    case Route::Foreign: {
      int device = -1;
      if (!readForeignArray(index, obj, find_devices, &arg, &out->producer_streams, &device))
        unsupported(index, obj);
      noteDevice(index, device, out);
      return;
    }
  }
}

}  // namespace

void argumentError(size_t index, PyObject* obj, const std::string& why) {
  throw ArgumentTypeError(argLabel(index) + " of type '" + pyTypeName(obj) +
                          "' cannot be passed to a kernel: " + why);
}

void LaunchArgs::clear() {
  values.clear();
  types.clear();
  staged.clear();
  producer_streams.clear();
  device = -1;
  stream_owner = StreamOwner::None;
}

void registerDeviceArrayType(PyTypeObject* type, size_t value_offset) {
  setDeviceArrayType(type);
  g_device_array_offset = value_offset;
}

void registerStreamType(PyTypeObject* type, cu::CUstream (*handle_of)(PyObject*)) {
  g_stream_type = type;
  g_stream_handle_of = handle_of;
}

const DeviceArray* asDeviceArray(PyObject* obj) {
  PyTypeObject* t = deviceArrayType();
  if (!t || !PyObject_TypeCheck(obj, t)) return nullptr;
  // Inline in the object (registerDeviceArrayType): no type registry lookup.
  return reinterpret_cast<const DeviceArray*>(reinterpret_cast<const char*>(obj) +
                                              g_device_array_offset);
}

void classifyArgs(PyObject* const* args, size_t n, bool find_devices, LaunchArgs* out) {
  out->staged.clear();
  out->producer_streams.clear();
  out->device = -1;
  out->stream_owner = StreamOwner::None;
  if (out->values.size() < n) out->values.resize(n);
  out->types.resize(n);
  for (size_t k = 0; k < n; ++k) {
    classifyOne(k, args[k], find_devices, out);
    out->types[k] = out->values[k].type;
  }
}

cu::CUstream defaultStreamFor(const LaunchArgs& args, int device) {
  switch (args.stream_owner) {
    case StreamOwner::Torch: return torchCurrentStream(device);
    case StreamOwner::Cupy: return cupyCurrentStream();
    case StreamOwner::None: return nullptr;
  }
  return nullptr;
}

void stageIn(LaunchArgs& args, cu::CUstream stream) {
  for (cu::CUstream producer : args.producer_streams) {
    const bool same = producer == stream ||
                      (stream == nullptr && producer == cu::legacyStream());
    if (!same) synchronizeStream(producer);
  }
  for (StagedHostArray& s : args.staged) {
    const size_t bytes = static_cast<size_t>(s.contiguous.nbytes());
    s.buffer = DeviceBuffer::allocate(bytes);
    if (s.copy_in) copyHostToDeviceAsync(s.buffer->ptr(), s.contiguous.data(), bytes, stream);
    args.values[s.arg].array.data = s.buffer->ptr();
  }
}

void stageOut(LaunchArgs& args, cu::CUstream stream) {
  if (args.staged.empty()) return;
  bool any_back = false;
  for (StagedHostArray& s : args.staged) {
    if (!s.copy_back) continue;
    any_back = true;
    const size_t bytes = static_cast<size_t>(s.contiguous.nbytes());
    copyDeviceToHostAsync(s.contiguous.mutable_data(), s.buffer->ptr(), bytes, stream);
  }
  {
    // The host copies must land (and the kernel finish with the buffers)
    // before they are read or freed.
    py::gil_scoped_release no_gil;
    synchronizeStream(stream);
  }
  if (any_back) {
    for (StagedHostArray& s : args.staged) {
      if (!s.copy_back || s.contiguous.is(s.original)) continue;
      if (s.record_scalar) {   // into the numpy.void, field by field (it may view an array)
        for (auto name : s.contiguous.dtype().attr("names")) s.original[name] = s.contiguous[name];
        continue;
      }
      py::module_::import("numpy").attr("copyto")(s.original, s.contiguous);
    }
  }
  args.staged.clear();   // frees the device buffers now, not at the next launch
}

cu::CUstream streamFromPython(PyObject* obj) {
  auto fromInt = [](PyObject* v) {
    const unsigned long long h = PyLong_AsUnsignedLongLongMask(v);
    if (h == static_cast<unsigned long long>(-1) && PyErr_Occurred()) throw py::error_already_set();
    return reinterpret_cast<cu::CUstream>(static_cast<uintptr_t>(h));
  };
  if (obj == Py_None) return nullptr;
  if (PyLong_Check(obj)) return fromInt(obj);
  if (g_stream_type && PyObject_TypeCheck(obj, g_stream_type)) return g_stream_handle_of(obj);
  if (PyObject* proto = optionalAttr(obj, "__cuda_stream__")) {
    py::object method = py::reinterpret_steal<py::object>(proto);
    py::tuple t = method();
    return fromInt(py::object(t[1]).ptr());
  }
  for (const char* name : {"handle", "ptr", "cuda_stream"}) {
    PyObject* raw = optionalAttr(obj, name);
    if (!raw) continue;
    py::object v = py::reinterpret_steal<py::object>(raw);
    if (PyObject* value = optionalAttr(v.ptr(), "value"))   // ctypes.c_void_p (numba streams)
      v = py::reinterpret_steal<py::object>(value);
    if (v.is_none()) return nullptr;
    if (!PyLong_Check(v.ptr())) break;
    return fromInt(v.ptr());
  }
  throw ArgumentTypeError(std::string("cannot use an object of type '") + pyTypeName(obj) +
                          "' as a CUDA stream: pass an int handle, None, or a stream object of "
                          "cudajit, CuPy, PyTorch or numba");
}

}  // namespace cj::rt
