#include "runtime/args.h"

#include <string>

#include "runtime/errors.h"
#include "runtime/memory.h"

namespace cj::rt {
namespace {

PyTypeObject* g_device_array_type = nullptr;

std::string pyTypeName(const py::handle& obj) { return Py_TYPE(obj.ptr())->tp_name; }

std::string argLabel(size_t index) { return "argument " + std::to_string(index + 1); }

[[noreturn]] void unsupported(size_t index, const py::handle& obj, const std::string& why) {
  throw ArgumentTypeError(argLabel(index) + " of type '" + pyTypeName(obj) +
                          "' cannot be passed to a kernel: " + why);
}

const char* kSupportedHint =
    "pass a cudajit.DeviceNDArray, a CUDA array with __cuda_array_interface__ (CuPy, PyTorch "
    "CUDA tensors, numba), a numpy array (copied to the device and back), a bool/int/float, a "
    "numpy scalar, or a tuple of numbers";

// numpy's scalar base class, looked up once.
PyObject* numpyGeneric() {
  static PyObject* generic = [] {
    py::object np = py::module_::import("numpy");
    return py::object(np.attr("generic")).release().ptr();   // kept for the life of the process
  }();
  return generic;
}

// A Python number -> ScalarValue; false when `obj` is not a bool/int/float or
// numpy scalar of a supported kind.
bool classifyNumber(size_t index, const py::handle& obj, ScalarValue* out) {
  PyObject* o = obj.ptr();
  if (PyBool_Check(o)) {
    out->type = Scalar::Bool;
    out->i = o == Py_True;
    return true;
  }
  if (PyLong_Check(o)) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow == 0) {
      if (v == -1 && PyErr_Occurred()) throw py::error_already_set();
      out->type = Scalar::Int64;
      out->i = v;
      return true;
    }
    // numba types ints past INT64_MAX that fit 64 bits as uint64.
    unsigned long long u = overflow > 0 ? PyLong_AsUnsignedLongLong(o) : 0;
    if (overflow < 0 || (u == static_cast<unsigned long long>(-1) && PyErr_Occurred())) {
      PyErr_Clear();
      throw ArgumentValueError(argLabel(index) + ": the integer " +
                               py::str(obj).cast<std::string>() +
                               " does not fit in 64 bits");
    }
    out->type = Scalar::UInt64;
    out->i = static_cast<int64_t>(u);
    return true;
  }
  if (PyFloat_Check(o)) {
    out->type = Scalar::Float64;
    out->f = PyFloat_AS_DOUBLE(o);
    return true;
  }
  if (PyComplex_Check(o)) {   // numba: complex128
    out->type = Scalar::Complex128;
    out->f = PyComplex_RealAsDouble(o);
    out->f_imag = PyComplex_ImagAsDouble(o);
    return true;
  }
  if (PyObject_IsInstance(o, numpyGeneric()) == 1) {
    py::object dtype = obj.attr("dtype");
    const char kind = dtype.attr("kind").cast<std::string>()[0];
    const int itemsize = dtype.attr("itemsize").cast<int>();
    Scalar s;
    if (!scalarFromNumpy(kind, itemsize, &s))
      unsupported(index, obj, "numpy scalars of dtype " + py::str(dtype).cast<std::string>() +
                                  " have no cudajit type");
    out->type = s;
    py::object item = obj.attr("item")();
    if (scalarKind(s) == ScalarKind::Complex) {
      out->f = PyComplex_RealAsDouble(item.ptr());
      out->f_imag = PyComplex_ImagAsDouble(item.ptr());
    } else if (scalarKind(s) == ScalarKind::Float) {
      out->f = item.cast<double>();
    } else if (scalarKind(s) == ScalarKind::Int && !scalarSigned(s)) {
      out->i = static_cast<int64_t>(item.cast<unsigned long long>());
    } else {
      out->i = item.cast<long long>();
    }
    return true;
  }
  return false;
}

std::vector<int64_t> intTuple(const py::handle& seq, const char* what) {
  std::vector<int64_t> out;
  for (py::handle v : py::reinterpret_borrow<py::sequence>(seq)) out.push_back(v.cast<int64_t>());
  (void)what;
  return out;
}

Scalar arrayDtype(size_t, const py::handle&, Scalar s) { return s; }

// __cuda_array_interface__ (v2/v3): a dict with shape, typestr, data,
// strides (None: C-contiguous), optional mask (must be None) and stream.
void classifyCudaArrayInterface(size_t index, const py::handle& obj, const py::object& cai,
                                ArgValue* arg, LaunchArgs* out) {
  if (!PyDict_Check(cai.ptr()))
    unsupported(index, obj, "its __cuda_array_interface__ is not a dict");
  py::dict d = py::reinterpret_borrow<py::dict>(cai);
  try {
    const std::string typestr = d["typestr"].cast<std::string>();
    Scalar dtype;
    if (!scalarFromTypestr(typestr, &dtype))
      unsupported(index, obj, "its dtype '" + typestr + "' has no cudajit type (or is not "
                              "native-endian)");
    dtype = arrayDtype(index, obj, dtype);
    arg->array.shape = intTuple(d["shape"], "shape");
    const int itemsize = scalarByteSize(dtype);
    if (d.contains("strides") && !d["strides"].is_none()) {
      arg->array.strides = intTuple(d["strides"], "strides");
      if (arg->array.strides.size() != arg->array.shape.size())
        unsupported(index, obj, "its __cuda_array_interface__ strides and shape disagree");
    } else {
      arg->array.strides = cStrides(arg->array.shape, itemsize);
    }
    if (d.contains("mask") && !d["mask"].is_none())
      unsupported(index, obj, "masked CUDA arrays are not supported");
    py::tuple data = d["data"].cast<py::tuple>();
    arg->array.data = data[0].is_none() ? 0 : data[0].cast<unsigned long long>();
    if (d.contains("stream") && !d["stream"].is_none()) {
      const auto handle = d["stream"].cast<unsigned long long>();
      if (handle == 0)
        unsupported(index, obj, "its __cuda_array_interface__ stream is 0, which the protocol "
                                "forbids (use 1 for the legacy default stream)");
      out->producer_streams.push_back(reinterpret_cast<cu::CUstream>(static_cast<uintptr_t>(handle)));
    }
    arg->type = arrayTy(dtype, static_cast<int>(arg->array.shape.size()),
                        layoutOf(arg->array.shape, arg->array.strides, itemsize));
  } catch (const py::error_already_set& e) {
    unsupported(index, obj, std::string("its __cuda_array_interface__ is malformed: ") + e.what());
  } catch (const py::cast_error& e) {
    unsupported(index, obj, std::string("its __cuda_array_interface__ is malformed: ") + e.what());
  }
}

// A host numpy array: typed now, staged (copied to the device) in stageIn.
void classifyHostArray(size_t index, const py::handle& obj, ArgValue* arg, LaunchArgs* out) {
  py::array a = py::reinterpret_borrow<py::array>(obj);
  py::dtype dt = a.dtype();
  if (dt.kind() == 'O') unsupported(index, obj, "object arrays cannot live on the GPU");
  Scalar dtype;
  if (!scalarFromNumpy(dt.kind(), static_cast<int>(dt.itemsize()), &dtype))
    unsupported(index, obj, "arrays of dtype " + py::str(dt).cast<std::string>() +
                                " have no cudajit type");
  if (!dt.attr("isnative").cast<bool>())
    unsupported(index, obj, "byte-swapped (non-native endian) arrays are not supported");
  dtype = arrayDtype(index, obj, dtype);

  StagedHostArray staged;
  staged.arg = index;
  staged.original = py::reinterpret_borrow<py::object>(obj);
  staged.copy_back = a.writeable();
  const bool dense = (a.flags() & (py::array::c_style | py::array::f_style)) != 0;
  // A strided view travels as a dense C copy (and is written back element-wise).
  staged.contiguous = dense ? a : py::array(py::module_::import("numpy").attr("ascontiguousarray")(a));
  const py::array& c = staged.contiguous;
  arg->array.shape.assign(c.shape(), c.shape() + c.ndim());
  arg->array.strides.assign(c.strides(), c.strides() + c.ndim());
  arg->type = arrayTy(dtype, static_cast<int>(c.ndim()),
                      layoutOf(arg->array.shape, arg->array.strides, scalarByteSize(dtype)));
  out->staged.push_back(std::move(staged));
}

void classifyOne(size_t index, const py::handle& obj, LaunchArgs* out) {
  ArgValue& arg = out->values[index];
  if (const DeviceArray* da = asDeviceArray(obj)) {
    arg.array.data = da->data;
    arg.array.shape = da->shape;
    arg.array.strides = da->strides;
    arg.type = arrayTy(arrayDtype(index, obj, da->dtype), da->ndim(), da->layout());
    return;
  }
  if (obj.is_none()) {   // numba types None as none: no parameter slot (abi.h)
    arg.type = noneTy();
    return;
  }
  if (classifyNumber(index, obj, &arg.scalar)) {
    arg.type = scalarTy(arg.scalar.type);
    return;
  }
  if (PyTuple_Check(obj.ptr())) {
    std::vector<const Type*> elem_types;
    for (py::handle e : py::reinterpret_borrow<py::tuple>(obj)) {
      ScalarValue v;
      if (!classifyNumber(index, e, &v))
        unsupported(index, obj, "tuples may hold numbers only (found '" + pyTypeName(e) + "')");
      arg.elems.push_back(v);
      elem_types.push_back(scalarTy(v.type));
    }
    arg.type = tupleTy(elem_types);
    return;
  }
  if (py::isinstance<py::array>(obj)) {
    classifyHostArray(index, obj, &arg, out);
    return;
  }
  PyObject* cai = PyObject_GetAttrString(obj.ptr(), "__cuda_array_interface__");
  if (cai) {
    classifyCudaArrayInterface(index, obj, py::reinterpret_steal<py::object>(cai), &arg, out);
    return;
  }
  PyErr_Clear();   // no such attribute (or a CPU tensor refusing it): not a CUDA array
  if (PyUnicode_Check(obj.ptr()) || PyBytes_Check(obj.ptr()))
    unsupported(index, obj, std::string("strings are not supported; ") + kSupportedHint);
  if (PyList_Check(obj.ptr()))
    unsupported(index, obj, std::string("lists are not supported (convert with numpy.asarray "
                                        "or cudajit.to_device); ") + kSupportedHint);
  unsupported(index, obj, kSupportedHint);
}

}  // namespace

void LaunchArgs::clear() {
  values.clear();
  types.clear();
  staged.clear();
  producer_streams.clear();
}

void registerDeviceArrayType(PyTypeObject* type) { g_device_array_type = type; }

const DeviceArray* asDeviceArray(const py::handle& obj) {
  if (!g_device_array_type || !PyObject_TypeCheck(obj.ptr(), g_device_array_type)) return nullptr;
  return obj.cast<const DeviceArray*>();
}

void classifyArgs(const py::tuple& args, LaunchArgs* out) {
  out->clear();
  const size_t n = args.size();
  out->values.resize(n);
  out->types.resize(n);
  for (size_t k = 0; k < n; ++k) {
    classifyOne(k, args[k], out);
    out->types[k] = out->values[k].type;
  }
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
    copyHostToDeviceAsync(s.buffer->ptr(), s.contiguous.data(), bytes, stream);
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
    py::array& dst = s.contiguous;
    copyDeviceToHostAsync(dst.mutable_data(), s.buffer->ptr(), bytes, stream);
  }
  {
    // The host copies must land (and the kernel finish with the buffers)
    // before they are read or freed.
    py::gil_scoped_release no_gil;
    synchronizeStream(stream);
  }
  if (!any_back) return;
  for (StagedHostArray& s : args.staged) {
    if (s.copy_back && !s.contiguous.is(s.original))
      py::module_::import("numpy").attr("copyto")(s.original, s.contiguous);
  }
}

cu::CUstream streamFromPython(const py::handle& obj) {
  auto fromInt = [](const py::handle& v) {
    return reinterpret_cast<cu::CUstream>(static_cast<uintptr_t>(v.cast<unsigned long long>()));
  };
  if (obj.is_none()) return nullptr;
  if (PyLong_Check(obj.ptr())) return fromInt(obj);
  if (py::hasattr(obj, "__cuda_stream__")) {
    py::tuple t = obj.attr("__cuda_stream__")();
    return fromInt(t[1]);
  }
  for (const char* attr : {"handle", "ptr", "cuda_stream"}) {
    if (!py::hasattr(obj, attr)) continue;
    py::object v = obj.attr(attr);
    if (py::hasattr(v, "value")) v = v.attr("value");   // ctypes.c_void_p (numba streams)
    if (v.is_none()) return nullptr;
    return fromInt(v);
  }
  throw ArgumentTypeError(std::string("cannot use an object of type '") + pyTypeName(obj) +
                          "' as a CUDA stream: pass an int handle, None, or a stream object of "
                          "cudajit, CuPy, PyTorch or numba");
}

}  // namespace cj::rt
