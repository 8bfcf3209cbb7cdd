#include "runtime/foreign_arrays.h"

#include <pybind11/pybind11.h>

#include <array>
#include <cstring>
#include <string>

#include "bytecode/record_dtype.h"
#include "runtime/arg_types.h"
#include "runtime/args.h"
#include "runtime/device_array.h"
#include "runtime/driver.h"
#include "runtime/errors.h"

namespace cj::rt {
namespace py = pybind11;
namespace {

// Attribute and method names, interned once.
struct Names {
  PyObject* data = PyUnicode_InternFromString("data");
  PyObject* ptr = PyUnicode_InternFromString("ptr");
  PyObject* shape = PyUnicode_InternFromString("shape");
  PyObject* strides = PyUnicode_InternFromString("strides");
  PyObject* dtype = PyUnicode_InternFromString("dtype");
  PyObject* device_id = PyUnicode_InternFromString("device_id");
  PyObject* data_ptr = PyUnicode_InternFromString("data_ptr");
  PyObject* stride = PyUnicode_InternFromString("stride");
  PyObject* get_device = PyUnicode_InternFromString("get_device");
  PyObject* cai = PyUnicode_InternFromString("__cuda_array_interface__");
  PyObject* dlpack = PyUnicode_InternFromString("__dlpack__");
  PyObject* typestr = PyUnicode_InternFromString("typestr");
  PyObject* mask = PyUnicode_InternFromString("mask");
  PyObject* stream = PyUnicode_InternFromString("stream");
  PyObject* kind = PyUnicode_InternFromString("kind");
  PyObject* itemsize = PyUnicode_InternFromString("itemsize");
  PyObject* isnative = PyUnicode_InternFromString("isnative");
};
const Names& names() {
  static const Names n;
  return n;
}

py::object attr(PyObject* obj, PyObject* name) {
  PyObject* v = PyObject_GetAttr(obj, name);
  if (!v) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(v);
}

py::object call0(PyObject* obj, PyObject* name) {
  PyObject* v = PyObject_CallMethodNoArgs(obj, name);
  if (!v) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(v);
}

long long asLongLong(PyObject* v) {
  const long long x = PyLong_AsLongLong(v);
  if (x == -1 && PyErr_Occurred()) throw py::error_already_set();
  return x;
}

cu::CUdeviceptr asPointer(PyObject* v) {
  if (v == Py_None) return 0;
  const unsigned long long x = PyLong_AsUnsignedLongLongMask(v);
  if (x == static_cast<unsigned long long>(-1) && PyErr_Occurred()) throw py::error_already_set();
  return x;
}

// A tuple (or sequence) of ints into out[]; returns its length.
int readInts(size_t index, PyObject* obj, PyObject* seq, int64_t* out, const char* what) {
  py::object holder;
  PyObject* const* items;
  Py_ssize_t n;
  if (PyTuple_Check(seq)) {
    n = PyTuple_GET_SIZE(seq);
    items = &PyTuple_GET_ITEM(seq, 0);
  } else {
    PyObject* fast = PySequence_Fast(seq, what);
    if (!fast) throw py::error_already_set();
    holder = py::reinterpret_steal<py::object>(fast);
    n = PySequence_Fast_GET_SIZE(fast);
    items = PySequence_Fast_ITEMS(fast);
  }
  if (n > kMaxArrayDims)
    argumentError(index, obj, "arrays of more than " + std::to_string(kMaxArrayDims) +
                                  " dimensions are not supported");
  for (Py_ssize_t k = 0; k < n; ++k) out[k] = asLongLong(items[k]);
  return static_cast<int>(n);
}

void setArrayType(ArgValue* arg, Scalar dtype, const Type* record = nullptr) {
  const int itemsize = record ? static_cast<int>(record->size) : scalarByteSize(dtype);
  const Layout layout = layoutOf(arg->array.shape, arg->array.strides, arg->array.ndim, itemsize);
  arg->type = record ? recordArrayTy(record, arg->array.ndim, layout) : arrayArgType(dtype, arg->array.ndim, layout);
}

// The record of a __cuda_array_interface__ of void items ("|V24") from its
// descr (numpy's field list, which numba's and cudajit's device arrays of
// records give); nullptr when it has none or is not one.
const Type* caiRecord(size_t index, PyObject* obj, PyObject* cai, const char* typestr) {
  if (typestr[0] == '\0' || typestr[1] != 'V') return nullptr;
  PyObject* descr = PyDict_GetItemString(cai, "descr");
  if (!descr) return nullptr;
  py::object dt = py::module_::import("numpy").attr("dtype")(py::reinterpret_borrow<py::object>(descr));
  if (!bytecode::isStructuredDtype(dt.ptr())) return nullptr;
  std::string why;
  const Type* rec = bytecode::recordFromDtype(dt.ptr(), &why);
  if (!rec) argumentError(index, obj, "its structured dtype has no cudajit record type: " + why);
  if (std::to_string(rec->size) != std::string(typestr + 2))
    argumentError(index, obj, std::string("its typestr '") + typestr + "' and descr disagree on the item size");
  return rec;
}

// Small identity-keyed caches of dtype objects (kept alive) -> scalar.
template <size_t N>
struct DtypeCache {
  struct Entry {
    PyObject* dtype = nullptr;
    Scalar scalar = Scalar::Float32;
    bool ok = false;
    const Type* record = nullptr;   // a structured dtype's record (CuPy 14 has them)
  };
  std::array<Entry, N> entries{};
  size_t used = 0;

  const Entry* find(PyObject* dtype) const {
    for (size_t k = 0; k < used; ++k)
      if (entries[k].dtype == dtype) return &entries[k];
    return nullptr;
  }
  const Entry* add(PyObject* dtype, Scalar s, bool ok, const Type* record = nullptr) {
    static thread_local Entry spare;
    Entry* e = used < N ? &entries[used++] : &spare;
    if (e != &spare) Py_INCREF(dtype);
    e->dtype = dtype;
    e->scalar = s;
    e->ok = ok;
    e->record = record;
    return e;
  }
};

// numpy dtype (CuPy arrays carry numpy dtypes); a structured one sets
// *record (CuPy 14 makes arrays of them from numpy's).
Scalar numpyDtypeScalar(size_t index, PyObject* obj, PyObject* dtype, const Type** record) {
  static DtypeCache<48> cache;
  const auto* e = cache.find(dtype);
  if (!e && bytecode::isStructuredDtype(dtype)) {
    std::string why;
    const Type* rec = bytecode::recordFromDtype(dtype, &why);
    if (!rec) argumentError(index, obj, "its structured dtype has no cudajit record type: " + why);
    e = cache.add(dtype, Scalar::UInt8, true, rec);
  }
  if (!e) {
    const Names& n = names();
    py::object kind = attr(dtype, n.kind);
    py::object size = attr(dtype, n.itemsize);
    py::object native = attr(dtype, n.isnative);
    Scalar s = Scalar::Float32;
    const std::string k = py::str(kind).cast<std::string>();
    bool ok = !k.empty() && scalarFromNumpy(k[0], static_cast<int>(asLongLong(size.ptr())), &s) &&
              PyObject_IsTrue(native.ptr()) == 1;
    e = cache.add(dtype, s, ok);
  }
  if (!e->ok)
    argumentError(index, obj, "arrays of dtype " + py::str(dtype).cast<std::string>() +
                                  " have no cudajit type (or are not native-endian)");
  *record = e->record;
  return e->scalar;
}

// torch.float32 -> Float32 by its name.
Scalar torchDtypeScalar(size_t index, PyObject* obj, PyObject* dtype) {
  static DtypeCache<32> cache;
  const auto* e = cache.find(dtype);
  if (!e) {
    std::string name = py::str(dtype).cast<std::string>();   // "torch.float32"
    if (name.rfind("torch.", 0) == 0) name = name.substr(6);
    Scalar s = Scalar::Float32;
    const bool ok = parseScalar(name, &s);
    e = cache.add(dtype, s, ok);
  }
  if (!e->ok)
    argumentError(index, obj, "tensors of dtype " + py::str(dtype).cast<std::string>() +
                                  " have no cudajit type");
  return e->scalar;
}

// ---- __cuda_array_interface__ ------------------------------------------------

PyObject* dictItem(PyObject* d, PyObject* key) { return PyDict_GetItemWithError(d, key); }

void readCai(size_t index, PyObject* obj, PyObject* cai, ArgValue* arg,
             std::vector<cu::CUstream>* producer_streams) {
  if (!PyDict_Check(cai)) argumentError(index, obj, "its __cuda_array_interface__ is not a dict");
  const Names& n = names();
  PyObject* typestr = dictItem(cai, n.typestr);
  PyObject* shape = dictItem(cai, n.shape);
  PyObject* data = dictItem(cai, n.data);
  if (!typestr || !shape || !data || !PyUnicode_Check(typestr) || !PyTuple_Check(data) ||
      PyTuple_GET_SIZE(data) < 1) {
    if (PyErr_Occurred()) throw py::error_already_set();
    argumentError(index, obj, "its __cuda_array_interface__ is malformed (needs typestr, shape "
                              "and data)");
  }
  const char* ts = PyUnicode_AsUTF8(typestr);
  if (!ts) throw py::error_already_set();
  Scalar dtype = Scalar::UInt8;
  const Type* record = caiRecord(index, obj, cai, ts);
  if (!record && !scalarFromTypestr(ts, &dtype))
    argumentError(index, obj, std::string("its dtype '") + ts + "' has no cudajit type (or is "
                              "not native-endian)");
  arg->array.ndim = readInts(index, obj, shape, arg->array.shape, "shape");
  const int itemsize = record ? static_cast<int>(record->size) : scalarByteSize(dtype);
  // A shape from another library is checked before any arithmetic on it:
  // negative extents and byte sizes past int64 are refused, not wrapped.
  int64_t bytes = itemsize;
  for (int k = 0; k < arg->array.ndim; ++k) {
    const int64_t extent = arg->array.shape[k];
    if (extent < 0)
      argumentError(index, obj, "its __cuda_array_interface__ shape has a negative extent (" +
                                    std::to_string(extent) + ")");
    if (extent > 0 && __builtin_mul_overflow(bytes, extent, &bytes))
      argumentError(index, obj, "its __cuda_array_interface__ shape is too large (more than 2**63 bytes)");
  }
  PyObject* strides = dictItem(cai, n.strides);
  if (strides && strides != Py_None) {
    if (readInts(index, obj, strides, arg->array.strides, "strides") != arg->array.ndim)
      argumentError(index, obj, "its __cuda_array_interface__ strides and shape disagree");
  } else {
    int64_t step = itemsize;
    for (int k = arg->array.ndim; k-- > 0;) {
      arg->array.strides[k] = step;
      step *= arg->array.shape[k] > 0 ? arg->array.shape[k] : 1;
    }
  }
  PyObject* mask = dictItem(cai, n.mask);
  if (mask && mask != Py_None) argumentError(index, obj, "masked CUDA arrays are not supported");
  arg->array.data = asPointer(PyTuple_GET_ITEM(data, 0));
  PyObject* stream = dictItem(cai, n.stream);
  if (stream && stream != Py_None) {
    const cu::CUdeviceptr handle = asPointer(stream);
    if (handle == 0)
      argumentError(index, obj, "its __cuda_array_interface__ stream is 0, which the protocol "
                                "forbids (use 1 for the legacy default stream)");
    producer_streams->push_back(reinterpret_cast<cu::CUstream>(static_cast<uintptr_t>(handle)));
  }
  if (PyErr_Occurred()) throw py::error_already_set();
  setArrayType(arg, dtype, record);
}

// ---- DLPack (the stable ABI of dlpack.h, v0.x "dltensor" capsules) ----------

struct DLDevice { int32_t device_type; int32_t device_id; };
struct DLDataType { uint8_t code; uint8_t bits; uint16_t lanes; };
struct DLTensor {
  void* data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t* shape;
  int64_t* strides;   // elements; null: C-contiguous
  uint64_t byte_offset;
};
struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensor*);
};
constexpr int32_t kDLCUDA = 2, kDLCUDAManaged = 13;
constexpr uint8_t kDLInt = 0, kDLUInt = 1, kDLFloat = 2, kDLComplex = 5, kDLBool = 6;

bool scalarFromDl(DLDataType t, Scalar* out) {
  if (t.lanes != 1) return false;
  char kind = 0;
  switch (t.code) {
    case kDLInt: kind = 'i'; break;
    case kDLUInt: kind = 'u'; break;
    case kDLFloat: kind = 'f'; break;
    case kDLComplex: kind = 'c'; break;
    case kDLBool: kind = 'b'; break;
    default: return false;
  }
  return scalarFromNumpy(kind, t.bits / 8, out);
}

// The capsule stays unconsumed: its destructor (the producer's) calls the
// deleter when it goes away, after the launch has read the values. The
// memory itself lives as long as the caller's object, as with every array
// passed to an asynchronous launch.
int readDlpack(size_t index, PyObject* obj, PyObject* capsule, ArgValue* arg) {
  auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, "dltensor"));
  if (!managed) {
    PyErr_Clear();
    argumentError(index, obj, "its __dlpack__() did not return a 'dltensor' capsule");
  }
  const DLTensor& t = managed->dl_tensor;
  if (t.device.device_type != kDLCUDA && t.device.device_type != kDLCUDAManaged)
    argumentError(index, obj, "its DLPack device type " + std::to_string(t.device.device_type) +
                                  " is not a CUDA device (pass GPU arrays, or numpy arrays "
                                  "which are copied)");
  Scalar dtype;
  if (!scalarFromDl(t.dtype, &dtype))
    argumentError(index, obj, "its DLPack dtype has no cudajit type");
  if (t.ndim < 0 || t.ndim > kMaxArrayDims)
    argumentError(index, obj, "arrays of more than " + std::to_string(kMaxArrayDims) +
                                  " dimensions are not supported");
  const int itemsize = scalarByteSize(dtype);
  arg->array.ndim = t.ndim;
  int64_t step = itemsize;
  for (int k = t.ndim; k-- > 0;) {
    arg->array.shape[k] = t.shape[k];
    arg->array.strides[k] = t.strides ? t.strides[k] * itemsize : step;
    step *= t.shape[k] > 0 ? t.shape[k] : 1;
  }
  arg->array.data = reinterpret_cast<uintptr_t>(t.data) + t.byte_offset;
  setArrayType(arg, dtype);
  return t.device.device_id;
}

PyObject* optionalCallable(const char* module, const char* attribute) {
  PyObject* mod = PyImport_ImportModule(module);
  if (!mod) {
    PyErr_Clear();
    return nullptr;
  }
  PyObject* fn = PyObject_GetAttrString(mod, attribute);
  Py_DECREF(mod);
  if (!fn) PyErr_Clear();
  return fn;
}

cu::CUstream asStream(PyObject* v) {
  return reinterpret_cast<cu::CUstream>(static_cast<uintptr_t>(asPointer(v)));
}

}  // namespace

int readCupyArray(size_t index, PyObject* obj, bool find_device, ArgValue* arg) {
  const Names& n = names();
  py::object data = attr(obj, n.data);   // cupy.cuda.MemoryPointer
  py::object ptr = attr(data.ptr(), n.ptr);
  arg->array.data = asPointer(ptr.ptr());
  py::object shape = attr(obj, n.shape);
  arg->array.ndim = readInts(index, obj, shape.ptr(), arg->array.shape, "shape");
  py::object strides = attr(obj, n.strides);
  if (readInts(index, obj, strides.ptr(), arg->array.strides, "strides") != arg->array.ndim)
    argumentError(index, obj, "its strides and shape disagree");
  py::object dtype = attr(obj, n.dtype);
  const Type* record = nullptr;
  const Scalar s = numpyDtypeScalar(index, obj, dtype.ptr(), &record);
  setArrayType(arg, s, record);
  if (!find_device) return -1;
  py::object dev = attr(data.ptr(), n.device_id);
  return static_cast<int>(asLongLong(dev.ptr()));
}

int readTorchTensor(size_t index, PyObject* obj, ArgValue* arg) {
  const Names& n = names();
  py::object dev = call0(obj, n.get_device);
  const long long device = asLongLong(dev.ptr());
  if (device < 0)
    argumentError(index, obj, "it is a CPU tensor: move it to the GPU first (tensor.cuda()), or "
                              "pass tensor.numpy() to have it copied");
  py::object dtype = attr(obj, n.dtype);
  const Scalar s = torchDtypeScalar(index, obj, dtype.ptr());
  py::object ptr = call0(obj, n.data_ptr);
  arg->array.data = asPointer(ptr.ptr());
  py::object shape = attr(obj, n.shape);
  arg->array.ndim = readInts(index, obj, shape.ptr(), arg->array.shape, "shape");
  py::object strides = call0(obj, n.stride);   // in elements
  if (readInts(index, obj, strides.ptr(), arg->array.strides, "strides") != arg->array.ndim)
    argumentError(index, obj, "its strides and shape disagree");
  const int itemsize = scalarByteSize(s);
  for (int k = 0; k < arg->array.ndim; ++k) arg->array.strides[k] *= itemsize;
  setArrayType(arg, s);
  return static_cast<int>(device);
}

bool readForeignArray(size_t index, PyObject* obj, bool find_device, ArgValue* arg,
                      std::vector<cu::CUstream>* producer_streams, int* device) {
  const Names& n = names();
  *device = -1;
  if (PyObject* cai = PyObject_GetAttr(obj, n.cai)) {
    py::object holder = py::reinterpret_steal<py::object>(cai);
    readCai(index, obj, cai, arg, producer_streams);
    if (find_device && arg->array.data) *device = deviceOfPointer(arg->array.data);
    return true;
  }
  PyErr_Clear();   // no such attribute (or an object refusing it): try DLPack
  PyObject* method = PyObject_GetAttr(obj, n.dlpack);
  if (!method) {
    PyErr_Clear();
    return false;
  }
  py::object holder = py::reinterpret_steal<py::object>(method);
  PyObject* capsule = PyObject_CallNoArgs(method);
  if (!capsule) {
    py::error_already_set e;
    argumentError(index, obj, std::string("its __dlpack__() failed: ") + e.what());
  }
  py::object capsule_holder = py::reinterpret_steal<py::object>(capsule);
  *device = readDlpack(index, obj, capsule, arg);
  if (!find_device) *device = -1;
  return true;
}

cu::CUstream torchCurrentStream(int device) {
  // torch._C._cuda_getCurrentRawStream(device) is what compiled PyTorch code
  // calls: a C function returning the cudaStream_t as an int.
  static PyObject* raw = optionalCallable("torch._C", "_cuda_getCurrentRawStream");
  if (raw) {
    PyObject* dev = PyLong_FromLong(device < 0 ? 0 : device);
    PyObject* v = PyObject_CallOneArg(raw, dev);
    Py_DECREF(dev);
    if (!v) throw py::error_already_set();
    py::object holder = py::reinterpret_steal<py::object>(v);
    return asStream(v);
  }
  static PyObject* current = optionalCallable("torch.cuda", "current_stream");
  if (!current) return nullptr;
  py::object s = py::reinterpret_borrow<py::object>(current)(device < 0 ? 0 : device);
  return asStream(s.attr("cuda_stream").ptr());
}

cu::CUstream cupyCurrentStream() {
  static PyObject* current = optionalCallable("cupy.cuda", "get_current_stream");
  if (!current) return nullptr;
  PyObject* s = PyObject_CallNoArgs(current);
  if (!s) throw py::error_already_set();
  py::object holder = py::reinterpret_steal<py::object>(s);
  return asStream(attr(s, names().ptr).ptr());
}

int deviceOfPointer(cu::CUdeviceptr ptr) {
  int ordinal = -1;
  if (driver().cuPointerGetAttribute(&ordinal, cu::CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, ptr) !=
      cu::CUDA_SUCCESS)
    return -1;   // host or unregistered memory: let the launch decide
  return ordinal;
}

}  // namespace cj::rt
