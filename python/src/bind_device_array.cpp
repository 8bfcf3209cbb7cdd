// cudajit.DeviceNDArray (numba's DeviceNDArray): allocation, copies between
// host and device (synchronous, or ordered on a stream), views (indexing,
// reshape, transpose, squeeze, split, view as another dtype), assignment, and
// arrays over memory other libraries own (__cuda_array_interface__).
//
// numba's stream rule throughout: a copy runs on the stream given, else on the
// array's bound stream (bind(), to_device(..., stream=s), device_array(...,
// stream=s)); with neither it is synchronous. On a stream it is
// asynchronous: the caller synchronises before reading the host array.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>

#include "python/src/native_class.h"
#include "python/src/runtime_py.h"
#include "runtime/args.h"
#include "runtime/context.h"
#include "runtime/device_array.h"
#include "runtime/driver.h"
#include "runtime/errors.h"
#include "runtime/foreign_arrays.h"
#include "runtime/memory.h"

// cudajit.DeviceNDArray is a class of our own (native_class.h): the launch
// path (runtime/args.cpp) reads the DeviceArray at a known offset.
NATIVE_CLASS_CASTER(cj::rt::DeviceArray, "DeviceNDArray")

namespace py = pybind11;
using namespace cj::py_rt;
using cj::rt::DeviceArray;
using cj::rt::ArgumentTypeError;
using cj::rt::ArgumentValueError;

namespace {

bool isDense(const DeviceArray& a) { return a.layout() != cj::Layout::A; }
bool fOnly(const DeviceArray& a) {
  return a.ndim() > 1 && a.layout() == cj::Layout::F;   // layout() prefers C when both
}

// A host array with the device array's shape, dtype and (C or F) layout.
py::array emptyHostLike(const DeviceArray& a) {
  return numpy().attr("empty")(toTuple(a.shape), dtypeOf(a),
                               py::arg("order") = fOnly(a) ? "F" : "C");
}

struct StreamChoice {
  cj::rt::cu::CUstream handle = nullptr;
  bool async = false;   // false: synchronise before returning
};

StreamChoice chooseStream(const DeviceArray& a, const py::handle& stream) {
  if (streamGiven(stream)) return {streamHandle(stream), true};
  if (a.bound) return {a.stream, true};
  return {};
}

void finish(const StreamChoice& s) {
  if (!s.async) cj::rt::synchronizeStream(s.handle);
}

// Shape without its extent-1 axes (numba compares arrays for copies so).
std::vector<int64_t> squeezed(const std::vector<int64_t>& shape) {
  std::vector<int64_t> out;
  for (int64_t d : shape)
    if (d != 1) out.push_back(d);
  return out;
}

std::vector<int64_t> hostShape(const py::array& h) {
  return std::vector<int64_t>(h.shape(), h.shape() + h.ndim());
}

std::string shapeText(const std::vector<int64_t>& s) {
  return py::repr(toTuple(s)).cast<std::string>();
}

void requireSameShape(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  if (squeezed(a) != squeezed(b))
    throw ArgumentValueError("incompatible shape: " + shapeText(a) + " vs. " + shapeText(b));
}

// ---- arrays over memory other libraries own ----------------------------------

DeviceArray fromCudaArrayInterface(const py::dict& desc, const py::object& owner, bool sync) {
  cj::rt::driver();   // no driver: CudaSupportError, as for every device array
  const int version = desc.contains("version") ? desc["version"].cast<int>() : 0;
  if (version >= 1 && desc.contains("mask") && !desc["mask"].is_none())
    throw py::type_error("masked arrays (__cuda_array_interface__ with a mask) are not supported");
  DeviceArray a;
  a.shape = shapeFrom(desc["shape"]);
  const std::string typestr = desc["typestr"].cast<std::string>();
  if (typestr.size() > 1 && typestr[1] == 'V' && desc.contains("descr")) {   // records: the fields are in descr
    const Element e = elementFromDtype(desc["descr"]);
    a.dtype = e.scalar;
    a.record = e.record;
    if (!a.record || a.itemsize() != std::stoi(typestr.substr(2)))
      throw ArgumentTypeError("cudajit has no device type for typestr '" + typestr + "' with descr " +
                              py::str(desc["descr"]).cast<std::string>());
  } else if (!cj::rt::scalarFromTypestr(typestr, &a.dtype))
    throw ArgumentTypeError("cudajit has no device type for typestr '" + typestr + "'");
  if (desc.contains("strides") && !desc["strides"].is_none()) {
    a.strides = shapeFrom(desc["strides"]);
    if (a.strides.size() != a.shape.size())
      throw ArgumentValueError("__cuda_array_interface__: strides and shape differ in length");
  } else {
    a.strides = cj::rt::cStrides(a.shape, a.itemsize());
  }
  py::tuple data = desc["data"];
  a.data = data[0].cast<unsigned long long>();
  if (desc.contains("stream") && !desc["stream"].is_none()) {
    py::object s = desc["stream"];
    a.stream = cj::rt::streamFromPython(s.ptr());
    a.bound = keepAlive(s);
    if (sync) {
      py::gil_scoped_release no_gil;
      cj::rt::synchronizeStream(a.stream);
    }
  }
  int device = a.data ? cj::rt::deviceOfPointer(a.data) : -1;
  if (device < 0) device = cj::rt::currentDevice();
  int64_t lo, hi;
  a.span(&lo, &hi);
  a.owner = std::make_shared<cj::rt::DeviceBuffer>(
      static_cast<size_t>(hi - lo),
      cj::rt::DeviceBuffer::Borrowed{a.data + lo, device,
                                     owner.is_none() ? nullptr : keepAlive(owner)});
  return a;
}

// A DeviceNDArray, or a device view of an object with __cuda_array_interface__;
// false for anything else (host data).
bool deviceSource(const py::handle& obj, DeviceArray* out) {
  if (const DeviceArray* d = cj::rt::asDeviceArray(obj.ptr())) {
    *out = *d;
    return true;
  }
  if (py::isinstance<py::array>(obj) && !py::hasattr(obj, "__cuda_array_interface__")) return false;
  PyObject* cai = PyObject_GetAttrString(obj.ptr(), "__cuda_array_interface__");
  if (!cai) {
    PyErr_Clear();
    return false;
  }
  py::object desc = py::reinterpret_steal<py::object>(cai);
  *out = fromCudaArrayInterface(desc.cast<py::dict>(), py::reinterpret_borrow<py::object>(obj), true);
  return true;
}

// ---- copies ------------------------------------------------------------------

py::array copyToHost(const DeviceArray& a, py::object out, const py::object& stream);

// A DeviceRecord's copy_to_host: the 0-d host array of its record, also
// written field by field into `out` when that is a numpy.void (which may view
// a host array).
py::object copyRecordToHost(const DeviceArray& a, const py::object& out, const py::object& stream) {
  if (out.is_none() || py::isinstance<py::array>(out)) return copyToHost(a, out, stream);
  py::array host = copyToHost(a, py::none(), stream);
  if (!a.bound && !streamGiven(stream)) {   // synchronous: the bytes are here
    for (auto name : dtypeOf(a).attr("names")) out[name] = host[name];
  } else {
    throw ArgumentValueError("copy_to_host into a numpy.void is synchronous only: pass no stream");
  }
  return out;
}

py::array copyToHost(const DeviceArray& a, py::object out, const py::object& stream) {
  const StreamChoice s = chooseStream(a, stream);
  if (isDense(a)) {
    py::array host = out.is_none() ? emptyHostLike(a) : py::array(out);
    if (!out.is_none()) {
      if (!host.dtype().equal(py::dtype(dtypeOf(a))))
        throw py::type_error("incompatible dtype: " + py::str(dtypeOf(a)).cast<std::string>() +
                             " vs. " + py::str(host.dtype()).cast<std::string>());
      requireSameShape(a.shape, hostShape(host));
      const bool host_f = (host.flags() & py::array::f_style) && !(host.flags() & py::array::c_style);
      if (!(host.flags() & (py::array::c_style | py::array::f_style)) || !host.writeable() ||
          (a.size() > 1 && squeezed(a.shape).size() > 1 && host_f != fOnly(a)))
        throw ArgumentValueError("copy_to_host: the destination must be a writeable array with "
                                 "the device array's layout (C or F contiguous)");
    }
    void* dst = host.mutable_data();   // numpy is asked with the GIL held
    py::gil_scoped_release no_gil;
    cj::rt::copyDeviceToHostAsync(dst, a.data, a.nbytes(), s.handle);
    finish(s);
    return host;
  }
  // A strided view: bring the bytes it spans, then let numpy gather them
  // (which needs them now, so this waits for the stream).
  int64_t lo, hi;
  a.span(&lo, &hi);
  py::array bytes = numpy().attr("empty")(hi - lo, numpy().attr("uint8"));
  {
    void* dst = bytes.mutable_data();
    py::gil_scoped_release no_gil;
    cj::rt::copyDeviceToHostAsync(dst, a.data + lo, hi - lo, s.handle);
    cj::rt::synchronizeStream(s.handle);
  }
  py::object view = numpy().attr("ndarray")(toTuple(a.shape), dtypeOf(a),
                                            py::arg("buffer") = bytes, py::arg("offset") = -lo,
                                            py::arg("strides") = toTuple(a.strides));
  py::array dense = view.attr("copy")();
  if (out.is_none()) return dense;
  requireSameShape(a.shape, hostShape(py::array(out)));
  numpy().attr("copyto")(out, dense.attr("reshape")(py::array(out).attr("shape")));
  return py::array(out);
}

// Host data as a dense array of `a`'s dtype and layout.
py::array hostLike(const DeviceArray& a, const py::handle& src) {
  py::array host = numpy().attr("asarray")(src, dtypeOf(a));
  return numpy().attr(fOnly(a) ? "asfortranarray" : "ascontiguousarray")(host);
}

void copyToDevice(DeviceArray& a, const py::handle& src, const py::object& stream) {
  if (!isDense(a))
    throw ArgumentValueError("copy_to_device: the destination is not contiguous (a strided view "
                             "of a device array cannot be copied into as one memory region)");
  const StreamChoice s = chooseStream(a, stream);
  DeviceArray other;
  if (deviceSource(src, &other)) {
    if (other.size() == 0 && a.size() == 0) return;
    requireSameShape(a.shape, other.shape);
    if (other.dtype != a.dtype || other.record != a.record)
      throw py::type_error("incompatible dtype: " + py::str(dtypeOf(a)).cast<std::string>() +
                           " vs. " + py::str(dtypeOf(other)).cast<std::string>());
    if (!isDense(other) || (squeezed(a.shape).size() > 1 && fOnly(other) != fOnly(a)))
      throw ArgumentValueError("copy_to_device: the source must be contiguous with the "
                               "destination's layout");
    py::gil_scoped_release no_gil;
    if (s.async)
      cj::rt::copyDeviceToDeviceAsync(a.data, other.data, a.nbytes(), s.handle);
    else
      cj::rt::copyDeviceToDevice(a.data, other.data, a.nbytes());
    return;
  }
  py::array host = hostLike(a, src);
  if (host.size() == 0 && a.size() == 0) return;
  requireSameShape(a.shape, hostShape(host));
  const void* bytes = host.data();
  py::gil_scoped_release no_gil;
  cj::rt::copyHostToDeviceAsync(a.data, bytes, a.nbytes(), s.handle);
  finish(s);
}

DeviceArray fromHost(const py::handle& obj, const py::object& stream, bool copy) {
  py::array host = numpy().attr("asarray")(obj);
  const bool f_only = (host.flags() & py::array::f_style) && !(host.flags() & py::array::c_style);
  if (!f_only && !(host.flags() & py::array::c_style))
    host = numpy().attr("ascontiguousarray")(host);
  const Element e = elementFromDtype(host.dtype());
  DeviceArray a = DeviceArray::allocate(hostShape(host), e.scalar, f_only, e.record);
  // A record scalar (numpy.void of a structured dtype): numba's DeviceRecord.
  a.record_scalar = e.record && py::isinstance(obj, numpy().attr("void"));
  if (streamGiven(stream)) {
    a.stream = streamHandle(stream);
    a.bound = keepAlive(stream);
  }
  if (copy) {
    const StreamChoice s = chooseStream(a, py::int_(0));
    const void* src = host.data();
    py::gil_scoped_release no_gil;
    cj::rt::copyHostToDeviceAsync(a.data, src, a.nbytes(), s.handle);
    finish(s);
  }
  return a;
}

// ---- views ---------------------------------------------------------------------

// Basic indexing: ints, slices (with steps) and one Ellipsis, as numpy's
// views. `element` is set when every axis was indexed by an int.
DeviceArray viewOf(const DeviceArray& a, const py::handle& key, bool* element) {
  py::tuple given = PyTuple_Check(key.ptr()) ? py::reinterpret_borrow<py::tuple>(key)
                                             : py::make_tuple(key);
  std::vector<py::handle> index;
  int ellipses = 0;
  for (py::handle item : given) ellipses += item.ptr() == Py_Ellipsis;
  if (ellipses > 1) throw py::index_error("an index can only have a single ellipsis ('...')");
  const int named = static_cast<int>(given.size()) - ellipses;
  if (named > a.ndim())
    throw py::index_error("too many indices for a " + std::to_string(a.ndim()) + "-d device array");
  for (py::handle item : given) {
    if (item.ptr() != Py_Ellipsis) {
      index.push_back(item);
      continue;
    }
    for (int k = 0; k < a.ndim() - named; ++k) index.push_back(py::handle(Py_None));   // ':' placeholders
  }
  DeviceArray v;
  v.owner = a.owner;
  v.dtype = a.dtype;
  v.record = a.record;
  v.stream = a.stream;
  v.bound = a.bound;
  int64_t offset = 0;
  int ints = 0;
  for (int k = 0; k < a.ndim(); ++k) {
    if (k >= static_cast<int>(index.size()) || index[k].is_none()) {
      v.shape.push_back(a.shape[k]);
      v.strides.push_back(a.strides[k]);
      continue;
    }
    py::handle item = index[k];
    if (PySlice_Check(item.ptr())) {
      Py_ssize_t start, stop, step;
      if (PySlice_Unpack(item.ptr(), &start, &stop, &step) < 0) throw py::error_already_set();
      const Py_ssize_t len = PySlice_AdjustIndices(a.shape[k], &start, &stop, step);
      if (len > 0) offset += start * a.strides[k];
      v.shape.push_back(len);
      v.strides.push_back(a.strides[k] * step);
    } else if (PyIndex_Check(item.ptr())) {
      int64_t i = indexValue(item);
      if (i < 0) i += a.shape[k];
      if (i < 0 || i >= a.shape[k])
        throw py::index_error("index " + py::str(item).cast<std::string>() +
                              " is out of bounds for axis " + std::to_string(k) + " with size " +
                              std::to_string(a.shape[k]));
      offset += i * a.strides[k];
      ++ints;
    } else {
      throw py::type_error("device arrays take ints, slices and '...' as indices, not '" +
                           std::string(Py_TYPE(item.ptr())->tp_name) + "'");
    }
  }
  v.data = a.data + offset;
  *element = ints == a.ndim();
  return v;
}

py::object readElement(const DeviceArray& v, const py::object& stream) {
  const StreamChoice s = chooseStream(v, stream);
  py::array host = numpy().attr("empty")(1, dtypeOf(v));
  {
    void* dst = host.mutable_data();
    py::gil_scoped_release no_gil;
    cj::rt::copyDeviceToHostAsync(dst, v.data, v.itemsize(), s.handle);
    cj::rt::synchronizeStream(s.handle);   // the value is needed now
  }
  return host[py::int_(0)];
}

py::object getItem(const DeviceArray& a, const py::handle& key, const py::object& stream) {
  bool element = false;
  DeviceArray v = viewOf(a, key, &element);
  if (element) return readElement(v, stream);
  if (streamGiven(stream)) {
    v.stream = streamHandle(stream);
    v.bound = keepAlive(stream);
  }
  return py::cast(std::move(v));
}

// A view with the axes permuted (reversed when `axes` is None), as numpy's.
DeviceArray transposed(const DeviceArray& a, const py::object& axes) {
  const int n = a.ndim();
  std::vector<int> order(n);
  for (int k = 0; k < n; ++k) order[k] = n - 1 - k;
  if (!axes.is_none()) {
    std::vector<int64_t> given;
    for (py::handle v : py::reinterpret_borrow<py::iterable>(axes)) given.push_back(indexValue(v));
    std::vector<bool> seen(n, false);
    if (static_cast<int>(given.size()) != n)
      throw ArgumentValueError("transpose: axes don't match the array's dimensions");
    for (int k = 0; k < n; ++k) {
      int64_t ax = given[k] < 0 ? given[k] + n : given[k];
      if (ax < 0 || ax >= n || seen[ax])
        throw ArgumentValueError("transpose: axes must be a permutation of 0.." +
                                 std::to_string(n - 1));
      seen[ax] = true;
      order[k] = static_cast<int>(ax);
    }
  }
  DeviceArray v = a;
  for (int k = 0; k < n; ++k) {
    v.shape[k] = a.shape[order[k]];
    v.strides[k] = a.strides[order[k]];
  }
  return v;
}

DeviceArray reshapeOrRaise(const DeviceArray& a, std::vector<int64_t> shape, const std::string& order) {
  if (order.size() != 1) throw ArgumentValueError("order must be 'C', 'F' or 'A'");
  if (shape == a.shape) return a;
  std::vector<int64_t> strides;
  if (!cj::rt::reshapedStrides(a, &shape, order[0], &strides)) {
    PyErr_SetString(PyExc_NotImplementedError,
                    "reshaping this device array requires a copy (operation requires copying): "
                    "make it contiguous first");
    throw py::error_already_set();
  }
  DeviceArray v = a;
  v.shape = std::move(shape);
  v.strides = std::move(strides);
  return v;
}

std::vector<int64_t> shapeArgs(const py::args& args) {
  if (args.size() == 1 && !PyIndex_Check(args[0].ptr())) return shapeFrom(args[0]);
  std::vector<int64_t> out;
  for (py::handle d : args) out.push_back(indexValue(d));
  return out;
}

DeviceArray squeezedView(const DeviceArray& a, const py::object& axis) {
  std::vector<bool> drop(a.ndim(), false);
  if (axis.is_none()) {
    for (int k = 0; k < a.ndim(); ++k) drop[k] = a.shape[k] == 1;
  } else {
    std::vector<int64_t> axes = shapeFrom(axis);
    for (int64_t ax : axes) {
      const int64_t k = ax < 0 ? ax + a.ndim() : ax;
      if (k < 0 || k >= a.ndim())
        throw ArgumentValueError("axis " + std::to_string(ax) + " is out of bounds for a " +
                                 std::to_string(a.ndim()) + "-d array");
      if (a.shape[k] != 1)
        throw ArgumentValueError("cannot select an axis to squeeze out which has size not equal "
                                 "to one");
      drop[k] = true;
    }
  }
  DeviceArray v = a;
  v.shape.clear();
  v.strides.clear();
  for (int k = 0; k < a.ndim(); ++k)
    if (!drop[k]) {
      v.shape.push_back(a.shape[k]);
      v.strides.push_back(a.strides[k]);
    }
  return v;
}

// The same bytes read as another dtype (numba's DeviceNDArray.view).
DeviceArray viewAs(const DeviceArray& a, const py::handle& dtype) {
  DeviceArray v = a;
  const Element e = elementFromDtype(dtype);
  v.dtype = e.scalar;
  v.record = e.record;
  const int old_size = a.itemsize(), new_size = v.itemsize();
  if (old_size == new_size) return v;
  if (a.ndim() == 0) throw ArgumentValueError("a 0-d array cannot be viewed as a dtype of another size");
  if (!cj::rt::isContiguous(a.shape, a.strides, old_size, true))
    throw ArgumentValueError("To change to a dtype of a different size, the array must be "
                             "C-contiguous");
  const int64_t bytes = a.shape.back() * old_size;
  if (bytes % new_size != 0)
    throw ArgumentValueError("When changing to a larger dtype, its size must be a divisor of the "
                             "total size in bytes of the last axis of the array.");
  v.shape.back() = bytes / new_size;
  v.strides.back() = new_size;
  return v;
}

py::object splitView(const DeviceArray& a, int64_t section, const py::object& stream) {
  if (a.ndim() != 1) throw ArgumentValueError("split: only 1-d arrays can be split");
  if (a.strides[0] != a.itemsize()) throw ArgumentValueError("split: only unit-stride arrays");
  if (section <= 0) throw ArgumentValueError("split: the section size must be positive");
  py::list parts;
  for (int64_t begin = 0; begin < a.shape[0]; begin += section) {
    DeviceArray v = a;
    v.shape[0] = std::min(section, a.shape[0] - begin);
    v.data = a.data + begin * a.itemsize();
    if (streamGiven(stream)) {
      v.stream = streamHandle(stream);
      v.bound = keepAlive(stream);
    }
    parts.append(py::cast(std::move(v)));
  }
  return parts.attr("__iter__")();   // numba's split is a generator: next() works on this too
}

DeviceArray boundTo(const DeviceArray& a, const py::object& stream) {
  DeviceArray v = a;
  v.stream = streamHandle(stream);
  v.bound = streamGiven(stream) ? keepAlive(stream) : nullptr;
  return v;
}

// ---- assignment ----------------------------------------------------------------

// `rhs` seen with `lhs`'s shape: missing leading axes and extent-1 axes are
// broadcast with stride 0 (numpy's rules; ValueError as numba words it).
DeviceArray broadcastTo(const DeviceArray& rhs, const DeviceArray& lhs) {
  if (rhs.ndim() > lhs.ndim())
    throw ArgumentValueError("Can't assign " + std::to_string(rhs.ndim()) + "-D array to " +
                             std::to_string(lhs.ndim()) + "-D self");
  DeviceArray v = rhs;
  const int pad = lhs.ndim() - rhs.ndim();
  v.shape.assign(pad, 1);
  v.strides.assign(pad, 0);
  v.shape.insert(v.shape.end(), rhs.shape.begin(), rhs.shape.end());
  v.strides.insert(v.strides.end(), rhs.strides.begin(), rhs.strides.end());
  for (int k = 0; k < lhs.ndim(); ++k) {
    if (v.shape[k] == lhs.shape[k]) continue;
    if (v.shape[k] != 1)
      throw ArgumentValueError("Can't copy sequence with size " + std::to_string(v.shape[k]) +
                               " to array axis " + std::to_string(k) + " with dimension " +
                               std::to_string(lhs.shape[k]));
    v.shape[k] = lhs.shape[k];
    v.strides[k] = 0;
  }
  return v;
}

// lhs[...] = rhs on the device by cudajit's own assignment kernel
// (cudajit/_assign.py), for layouts no single copy can write.
void assignByKernel(DeviceArray lhs, DeviceArray rhs, const StreamChoice& s) {
  if (lhs.ndim() == 0) {   // kernels index 1-d arrays: a 0-d view is one element
    lhs.shape = rhs.shape = {1};
    lhs.strides = {lhs.itemsize()};
    rhs.strides = {0};
  }
  py::module_::import("cudajit._assign").attr("assign")(
      py::cast(lhs), py::cast(rhs), py::int_(reinterpret_cast<uintptr_t>(s.handle)));
}

void setItem(DeviceArray& a, const py::handle& key, const py::handle& value, const py::object& stream) {
  bool element = false;
  DeviceArray lhs = viewOf(a, key, &element);
  const StreamChoice s = chooseStream(a, stream);
  if (lhs.size() == 0) return;
  DeviceArray rhs;
  if (deviceSource(value, &rhs)) {
    DeviceArray wide = broadcastTo(rhs, lhs);
    const bool same_layout = isDense(lhs) && isDense(rhs) && rhs.dtype == lhs.dtype && rhs.record == lhs.record &&
                             wide.strides == lhs.strides;
    if (same_layout) {
      py::gil_scoped_release no_gil;
      cj::rt::copyDeviceToDeviceAsync(lhs.data, rhs.data, lhs.nbytes(), s.handle);
      finish(s);
      return;
    }
    assignByKernel(lhs, wide, s);
    finish(s);
    return;
  }
  py::array host = numpy().attr("asarray")(value, dtypeOf(lhs));
  if (host.ndim() > lhs.ndim())
    throw ArgumentValueError("Can't assign " + std::to_string(host.ndim()) + "-D array to " +
                             std::to_string(lhs.ndim()) + "-D self");
  if (isDense(lhs)) {
    // The whole region in one copy: numpy broadcasts the value on the host.
    py::array full = emptyHostLike(lhs);
    {
      DeviceArray probe = lhs;   // the broadcast check, with numba's messages
      probe.shape = hostShape(host);
      probe.strides = cj::rt::cStrides(probe.shape, lhs.itemsize());
      broadcastTo(probe, lhs);
    }
    full[py::ellipsis()] = host;
    const void* src = full.data();
    py::gil_scoped_release no_gil;
    cj::rt::copyHostToDeviceAsync(lhs.data, src, lhs.nbytes(), s.handle);
    finish(s);
    return;
  }
  // A strided destination: the value goes to the device as it is (small,
  // before broadcasting), then the kernel spreads it.
  host = numpy().attr("ascontiguousarray")(host);
  DeviceArray small = DeviceArray::allocate(hostShape(host), lhs.dtype, false, lhs.record);
  cj::rt::copyHostToDevice(small.data, host.data(), small.nbytes());
  assignByKernel(lhs, broadcastTo(small, lhs), s);
  // `small` is freed on return: wait for the kernel that reads it.
  py::gil_scoped_release no_gil;
  cj::rt::synchronizeStream(s.handle);
}

// ---- attributes ------------------------------------------------------------------

py::dict cudaArrayInterface(const DeviceArray& a) {
  py::dict d;
  d["shape"] = toTuple(a.shape);
  d["strides"] = a.layout() == cj::Layout::C ? py::object(py::none()) : py::object(toTuple(a.strides));
  if (a.record) {   // records: numpy's typestr of void items and the fields in descr
    py::object dt = dtypeOf(a);
    d["typestr"] = dt.attr("str");
    d["descr"] = dt.attr("descr");
  } else {
    d["typestr"] = cj::rt::numpyTypestr(a.dtype);
  }
  d["data"] = py::make_tuple(py::int_(static_cast<unsigned long long>(a.data)), false);
  d["version"] = 3;
  // Work queued on the bound stream may still write the array; consumers
  // synchronise with it. Unbound arrays' copies were synchronous.
  const auto handle = reinterpret_cast<uintptr_t>(a.stream);
  d["stream"] = a.bound && handle ? py::object(py::int_(handle)) : py::object(py::none());
  return d;
}

}  // namespace

void bindDeviceArray(py::module_& m) {
  cj::py_native::NativeClass<DeviceArray> cls(m, "cudajit._core.DeviceNDArray",
      "An n-dimensional array in GPU memory (numba's DeviceNDArray). Create one with "
      "cudajit.to_device, device_array or device_array_like.");
  cls.defInit([](py::handle self, const py::object& shape, const py::object& dtype,
                 const std::string& order, const py::object& strides, const py::object& stream) {
            if (order != "C" && order != "F")
              throw ArgumentValueError("order must be 'C' or 'F'");
            const Element e = elementFromDtype(dtype);
            DeviceArray a = strides.is_none()
                                ? DeviceArray::allocate(shapeFrom(shape), e.scalar, order == "F", e.record)
                                : DeviceArray::allocateStrided(shapeFrom(shape), shapeFrom(strides), e.scalar,
                                                               e.record);
            if (streamGiven(stream)) {
              a.stream = streamHandle(stream);
              a.bound = keepAlive(stream);
            }
            cj::py_native::checkedValue<DeviceArray>(self) = std::move(a);
          },
          py::arg("self"), py::arg("shape"), py::arg("dtype") = "float64", py::arg("order") = "C",
          py::arg("strides") = py::none(), py::arg("stream") = 0);
  cls.defStatic("from_host", &fromHost, py::arg("array"), py::arg("stream") = 0,
                  py::arg("copy") = true,
                  "A device array like a host array (anything numpy.asarray accepts), its data "
                  "copied unless copy=False; bound to `stream` when one is given.")
      .defStatic("from_cuda_array_interface", &fromCudaArrayInterface, py::arg("desc"),
                  py::arg("owner") = py::none(), py::arg("sync") = true,
                  "A view of memory described by a __cuda_array_interface__ dict; `owner` is "
                  "kept alive with it. sync: wait for the interface's stream first.")
      .defReadonly("shape", [](const DeviceArray& a) { return toTuple(a.shape); })
      .defReadonly("strides", [](const DeviceArray& a) { return toTuple(a.strides); })
      .defReadonly("dtype", [](const DeviceArray& a) { return dtypeOf(a); })
      .defReadonly("ndim", &DeviceArray::ndim)
      .defReadonly("size", &DeviceArray::size)
      .defReadonly("nbytes", &DeviceArray::nbytes)
      .defReadonly("itemsize", &DeviceArray::itemsize)
      .defReadonly("alloc_size", [](const DeviceArray& a) {
        int64_t lo, hi;
        a.span(&lo, &hi);
        return hi - lo;
      }, "Bytes of device memory the view spans.")
      .defReadonly("device_pointer", [](const DeviceArray& a) {
        return static_cast<unsigned long long>(a.data);
      })
      .defReadonly("device_ctypes_pointer", [](const DeviceArray& a) {
        return py::module_::import("ctypes").attr("c_void_p")(
            a.data ? py::object(py::int_(static_cast<unsigned long long>(a.data))) : py::object(py::none()));
      })
      .defReadonly("stream", [](const DeviceArray& a) {
        return a.bound ? keptObject(a.bound) : py::object(py::int_(0));
      }, "The stream bound to the array (its copies' default), or 0.")
      .defReadonly("__cuda_array_interface__", &cudaArrayInterface)
      .defReadonly("flags", [](const DeviceArray& a) {
        py::dict d;
        d["C_CONTIGUOUS"] = cj::rt::isContiguous(a.shape, a.strides, a.itemsize(), true);
        d["F_CONTIGUOUS"] = cj::rt::isContiguous(a.shape, a.strides, a.itemsize(), false);
        return d;
      })
      .def("is_c_contiguous", [](const DeviceArray& a) {
        return cj::rt::isContiguous(a.shape, a.strides, a.itemsize(), /*c_order=*/true);
      })
      .def("is_f_contiguous", [](const DeviceArray& a) {
        return cj::rt::isContiguous(a.shape, a.strides, a.itemsize(), /*c_order=*/false);
      })
      .def("copy_to_host", [](const DeviceArray& a, py::object ary, const py::object& stream) -> py::object {
        if (a.record_scalar) return copyRecordToHost(a, ary, stream);
        return copyToHost(a, std::move(ary), stream);
      }, py::arg("ary") = py::none(), py::arg("stream") = 0,
           "Copies to a new (or the given) numpy array and returns it; asynchronous on a stream.")
      .def("copy_to_device", &copyToDevice, py::arg("ary"), py::arg("stream") = 0,
           "Copies a host array (or a device array of the same shape) into this one.")
      .def("bind", &boundTo, py::arg("stream") = 0,
           "The same array with `stream` as the default of its copies.")
      .def("__getitem__", [](const DeviceArray& a, const py::handle& key) {
        return getItem(a, key, py::int_(0));
      })
      .def("getitem", &getItem, py::arg("item"), py::arg("stream") = 0,
           "self[item] with its copy (for an element) on `stream`.")
      .def("__setitem__", [](DeviceArray& a, const py::handle& key, const py::handle& value) {
        setItem(a, key, value, py::int_(0));
      })
      .def("setitem", &setItem, py::arg("key"), py::arg("value"), py::arg("stream") = 0,
           "self[key] = value on `stream` (asynchronous there).")
      .def("reshape", [](const DeviceArray& a, const py::args& shape, const py::kwargs& kw) {
        std::string order = "C";
        for (auto item : kw) {
          if (item.first.cast<std::string>() != "order")
            throw py::type_error("reshape() got an unexpected keyword argument '" +
                                 item.first.cast<std::string>() + "'");
          order = item.second.cast<std::string>();
        }
        return reshapeOrRaise(a, shapeArgs(shape), order);
      }, "A view with another shape (no copy; NotImplementedError when one would be needed).")
      .def("ravel", [](const DeviceArray& a, const std::string& order, const py::object& stream) {
        DeviceArray v = reshapeOrRaise(a, {-1}, order);
        return streamGiven(stream) ? boundTo(v, stream) : v;
      }, py::arg("order") = "C", py::arg("stream") = 0, "A 1-d view (no copy).")
      .def("squeeze", [](const DeviceArray& a, const py::object& axis, const py::object& stream) {
        DeviceArray v = squeezedView(a, axis);
        return streamGiven(stream) ? boundTo(v, stream) : v;
      }, py::arg("axis") = py::none(), py::arg("stream") = 0, "A view without extent-1 axes.")
      .def("view", &viewAs, py::arg("dtype"), "The same memory read as another dtype.")
      .def("get_ipc_handle", [](py::handle self) {
        return py::module_::import("cudajit.ipc").attr("get_ipc_handle")(self);
      }, "numba's: an IpcArrayHandle (picklable) another process opens to share this array's memory "
         "(cudajit/ipc.py).")
      .def("split", &splitView, py::arg("section"), py::arg("stream") = 0,
           "Views of consecutive `section`-element pieces of a 1-d array (an iterator).")
      .def("transpose", [](const DeviceArray& a, py::args axes) {
        if (axes.size() == 1 && axes[0].is_none()) return transposed(a, py::none());
        if (axes.size() == 1 && !PyIndex_Check(axes[0].ptr()))
          return transposed(a, py::reinterpret_borrow<py::object>(axes[0]));
        return transposed(a, axes.size() ? py::object(axes) : py::object(py::none()));
      }, "A view with permuted axes (reversed by default), as numpy's transpose.")
      .defReadonly("T", [](const DeviceArray& a) { return transposed(a, py::none()); })
      .def("__array__", [](const DeviceArray& a, const py::object& dtype, const py::object& copy) {
        if (!copy.is_none() && !copy.cast<bool>())
          throw ArgumentValueError("`copy=False` is not supported: a device array always copies "
                                   "to the host");
        py::array host = copyToHost(a, py::none(), py::int_(0));
        {
          // numpy reads the values now: wait for a bound stream's copy too.
          const StreamChoice s = chooseStream(a, py::int_(0));
          py::gil_scoped_release no_gil;
          cj::rt::synchronizeStream(s.handle);
        }
        if (dtype.is_none()) return py::object(host);
        return py::object(host.attr("astype")(dtype));
      }, py::arg("dtype") = py::none(), py::arg("copy") = py::none())
      .def("__len__", [](const DeviceArray& a) {
        if (a.ndim() == 0) throw py::type_error("len() of a 0-d device array");
        return a.shape[0];
      })
      .def("__repr__", [](const DeviceArray& a) {
        if (a.record_scalar) return "<cudajit.DeviceRecord dtype=" + py::str(dtypeOf(a)).cast<std::string>() + ">";
        return "<cudajit.DeviceNDArray shape=" + py::repr(toTuple(a.shape)).cast<std::string>() +
               " dtype=" + (a.record ? py::str(dtypeOf(a)).cast<std::string>() : std::string(cj::scalarNumbaName(a.dtype))) + ">";
      });
  cls.ptr().attr("__cuda_memory__") = true;   // numba's marker of device memory objects
  cls.ptr().attr("__cuda_ndarray__") = true;
  cj::rt::registerDeviceArrayType(cls.type(), cj::py_native::valueOffset<DeviceArray>());

  m.def("fill_bytes", [](DeviceArray& a, int value) {
    if (!isDense(a)) throw ArgumentValueError("fill_bytes needs a contiguous array");
    cj::rt::memsetBytes(a.data, static_cast<unsigned char>(value), a.nbytes());
  }, py::arg("array"), py::arg("value"), "memset over a contiguous device array's bytes.");
}
