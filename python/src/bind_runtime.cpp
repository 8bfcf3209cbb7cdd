// cudajit._core: the runtime's entry points (driver status, devices, memory,
// DeviceNDArray) and the translation of runtime errors into Python ones.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdio>

#include "runtime/args.h"
#include "runtime/context.h"
#include "runtime/device_array.h"
#include "runtime/driver.h"
#include "runtime/errors.h"
#include "runtime/kernel_cache.h"
#include "runtime/memory.h"
#include "runtime/toolkit_identity.h"
#include "runtime/signature.h"
#include "runtime/stream.h"

namespace py = pybind11;
using cj::Scalar;
using cj::rt::DeviceArray;

namespace {

// operator.index(v): ints and numpy integers, not floats.
long long indexValue(const py::handle& v) {
  py::object i = py::reinterpret_steal<py::object>(PyNumber_Index(v.ptr()));
  if (!i) throw py::error_already_set();
  return i.cast<long long>();
}

void registerRuntimeErrors() {
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const cj::rt::CudaSupportError& e) {
      py::object cls = py::module_::import("cudajit.errors").attr("CudaSupportError");
      PyErr_SetObject(cls.ptr(), cls(py::str(e.what())).ptr());
    } catch (const cj::rt::CudaApiError& e) {
      py::object cls = py::module_::import("cudajit.errors").attr("CudaAPIError");
      PyErr_SetObject(cls.ptr(), cls(py::str(e.what()), e.code, e.function).ptr());
    } catch (const cj::rt::ArgumentTypeError& e) {
      PyErr_SetString(PyExc_TypeError, e.what());
    } catch (const cj::rt::ArgumentValueError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    }
  });
}

PyObject* numpyModule() {
  static PyObject* np = py::module_::import("numpy").release().ptr();
  return np;
}
py::module_ numpy() { return py::reinterpret_borrow<py::module_>(numpyModule()); }

Scalar scalarFromDtype(const py::handle& dtype_like) {
  py::object dt = numpy().attr("dtype")(dtype_like);
  const char kind = dt.attr("kind").cast<std::string>()[0];
  const int itemsize = dt.attr("itemsize").cast<int>();
  Scalar s;
  if (!cj::rt::scalarFromNumpy(kind, itemsize, &s) || !dt.attr("isnative").cast<bool>())
    throw cj::rt::ArgumentTypeError("cudajit has no device type for dtype " +
                                    py::str(dt).cast<std::string>());
  return s;
}

py::object dtypeOf(Scalar s) { return numpy().attr("dtype")(cj::rt::numpyTypestr(s)); }

std::vector<int64_t> shapeFrom(const py::handle& shape) {
  if (PyIndex_Check(shape.ptr())) return {indexValue(shape)};
  std::vector<int64_t> out;
  for (py::handle d : py::reinterpret_borrow<py::iterable>(shape)) out.push_back(indexValue(d));
  return out;
}

py::tuple toTuple(const std::vector<int64_t>& v) {
  py::tuple t(v.size());
  for (size_t k = 0; k < v.size(); ++k) t[k] = py::int_(v[k]);
  return t;
}

bool isDense(const DeviceArray& a) { return a.layout() != cj::Layout::A; }

// A host array with the device array's shape, dtype and (C or F) layout.
py::array emptyHostLike(const DeviceArray& a) {
  const char* order = a.layout() == cj::Layout::F && a.ndim() > 1 ? "F" : "C";
  return numpy().attr("empty")(toTuple(a.shape), dtypeOf(a.dtype), py::arg("order") = order);
}

cj::rt::cu::CUstream streamArg(const py::handle& stream) {
  if (PyLong_Check(stream.ptr()) && py::cast<long long>(stream) == 0) return nullptr;
  return cj::rt::streamFromPython(stream.ptr());
}

// Byte range [lo, hi) a strided view touches, relative to its data pointer.
void spanOf(const DeviceArray& a, int64_t* lo, int64_t* hi) {
  *lo = 0;
  *hi = a.itemsize();
  if (a.size() == 0) {
    *hi = 0;
    return;
  }
  for (int k = 0; k < a.ndim(); ++k) {
    const int64_t reach = (a.shape[k] - 1) * a.strides[k];
    if (reach < 0) *lo += reach; else *hi += reach;
  }
}

py::array copyToHost(const DeviceArray& a, py::object out, const py::object& stream) {
  const cj::rt::cu::CUstream s = streamArg(stream);
  if (isDense(a)) {
    py::array host = out.is_none() ? emptyHostLike(a) : py::array(out);
    if (host.nbytes() != a.nbytes())
      throw cj::rt::ArgumentValueError("copy_to_host: the destination has " +
                                       std::to_string(host.nbytes()) + " bytes, the device array " +
                                       std::to_string(a.nbytes()));
    if (!(host.flags() & (py::array::c_style | py::array::f_style)) || !host.writeable())
      throw cj::rt::ArgumentValueError("copy_to_host: the destination must be a writeable, "
                                       "contiguous array");
    {
      py::gil_scoped_release no_gil;
      cj::rt::copyDeviceToHostAsync(host.mutable_data(), a.data, a.nbytes(), s);
      cj::rt::synchronizeStream(s);
    }
    return host;
  }
  // A strided view: bring the bytes it spans, then let numpy gather them.
  int64_t lo, hi;
  spanOf(a, &lo, &hi);
  py::array bytes = numpy().attr("empty")(hi - lo, numpy().attr("uint8"));
  {
    py::gil_scoped_release no_gil;
    cj::rt::copyDeviceToHostAsync(bytes.mutable_data(), a.data + lo, hi - lo, s);
    cj::rt::synchronizeStream(s);
  }
  py::object view = numpy().attr("ndarray")(toTuple(a.shape), dtypeOf(a.dtype),
                                            py::arg("buffer") = bytes, py::arg("offset") = -lo,
                                            py::arg("strides") = toTuple(a.strides));
  py::array dense = view.attr("copy")();
  if (out.is_none()) return dense;
  numpy().attr("copyto")(out, dense);
  return py::array(out);
}

DeviceArray fromHost(const py::handle& obj) {
  py::array host = numpy().attr("asarray")(obj);
  const bool f_only = (host.flags() & py::array::f_style) && !(host.flags() & py::array::c_style);
  if (!f_only && !(host.flags() & py::array::c_style))
    host = numpy().attr("ascontiguousarray")(host);
  DeviceArray a = DeviceArray::allocate(std::vector<int64_t>(host.shape(), host.shape() + host.ndim()),
                                        scalarFromDtype(host.dtype()), f_only);
  cj::rt::copyHostToDevice(a.data, host.data(), a.nbytes());
  return a;
}

void copyToDevice(DeviceArray& a, const py::handle& src, const py::object& stream) {
  if (!isDense(a)) throw cj::rt::ArgumentValueError("copy_to_device: the destination must be contiguous");
  const cj::rt::cu::CUstream s = streamArg(stream);
  if (const DeviceArray* other = cj::rt::asDeviceArray(src.ptr())) {
    if (other->nbytes() != a.nbytes() || !isDense(*other) || other->layout() != a.layout())
      throw cj::rt::ArgumentValueError("copy_to_device: shapes, dtypes or layouts differ");
    cj::rt::copyDeviceToDevice(a.data, other->data, a.nbytes());
    return;
  }
  py::array host = numpy().attr("asarray")(src, dtypeOf(a.dtype));
  host = numpy().attr(a.layout() == cj::Layout::F && a.ndim() > 1 ? "asfortranarray"
                                                                    : "ascontiguousarray")(host);
  if (host.nbytes() != a.nbytes() || static_cast<int>(host.ndim()) != a.ndim())
    throw cj::rt::ArgumentValueError("copy_to_device: the host array's shape differs from the "
                                     "device array's");
  py::gil_scoped_release no_gil;
  cj::rt::copyHostToDeviceAsync(a.data, host.data(), a.nbytes(), s);
  cj::rt::synchronizeStream(s);
}

// Basic indexing: ints and slices (with steps), as numpy's views.
DeviceArray viewOf(const DeviceArray& a, const py::handle& key) {
  py::tuple index = PyTuple_Check(key.ptr()) ? py::reinterpret_borrow<py::tuple>(key)
                                             : py::make_tuple(key);
  if (static_cast<int>(index.size()) > a.ndim())
    throw py::index_error("too many indices for a " + std::to_string(a.ndim()) + "-d device array");
  DeviceArray v;
  v.owner = a.owner;
  v.dtype = a.dtype;
  v.data = a.data;
  int64_t offset = 0;
  for (int k = 0; k < a.ndim(); ++k) {
    if (k >= static_cast<int>(index.size())) {
      v.shape.push_back(a.shape[k]);
      v.strides.push_back(a.strides[k]);
      continue;
    }
    py::handle item = index[k];
    if (PySlice_Check(item.ptr())) {
      Py_ssize_t start, stop, step;
      if (PySlice_Unpack(item.ptr(), &start, &stop, &step) < 0) throw py::error_already_set();
      const Py_ssize_t len = PySlice_AdjustIndices(a.shape[k], &start, &stop, step);
      offset += start * a.strides[k];
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
    } else {
      throw py::type_error("device arrays take ints and slices as indices, not '" +
                           std::string(Py_TYPE(item.ptr())->tp_name) + "'");
    }
  }
  v.data = a.data + offset;
  return v;
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
      throw cj::rt::ArgumentValueError("transpose: axes don't match the array's dimensions");
    for (int k = 0; k < n; ++k) {
      int64_t ax = given[k] < 0 ? given[k] + n : given[k];
      if (ax < 0 || ax >= n || seen[ax])
        throw cj::rt::ArgumentValueError("transpose: axes must be a permutation of 0.." +
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

py::dict cudaArrayInterface(const DeviceArray& a) {
  py::dict d;
  d["shape"] = toTuple(a.shape);
  d["strides"] = a.layout() == cj::Layout::C ? py::object(py::none()) : py::object(toTuple(a.strides));
  d["typestr"] = cj::rt::numpyTypestr(a.dtype);
  d["data"] = py::make_tuple(py::int_(static_cast<unsigned long long>(a.data)), false);
  d["version"] = 3;
  d["stream"] = py::none();   // cudajit's copies are synchronous; nothing to wait for
  return d;
}

py::dict deviceInfoDict(int ordinal) {
  const cj::rt::DeviceInfo& info = cj::rt::deviceInfo(ordinal);
  py::dict d;
  d["id"] = info.ordinal;
  d["name"] = info.name;
  d["compute_capability"] = py::make_tuple(info.cc_major, info.cc_minor);
  d["multiprocessors"] = info.multiprocessors;
  d["max_threads_per_block"] = info.max_threads_per_block;
  d["max_shared_memory_per_block_optin"] = info.max_shared_per_block_optin;
  d["warp_size"] = info.warp_size;
  d["pci_bus_id"] = info.pci_bus_id;
  d["total_memory"] = info.total_memory;
  return d;
}

// cudajit.Stream: a stream cudajit created (owned) or a default / external
// stream known by its handle.
struct StreamRef {
  std::shared_ptr<cj::rt::Stream> owned;
  cj::rt::cu::CUstream handle = nullptr;
  unsigned long long value() const { return reinterpret_cast<uintptr_t>(handle); }
};

StreamRef handleStream(unsigned long long h) {
  return StreamRef{nullptr, reinterpret_cast<cj::rt::cu::CUstream>(static_cast<uintptr_t>(h))};
}

// The handle inside a cudajit.Stream, read without pybind11's type lookup
// (kernel[grid, block, stream] on the launch path).
cj::rt::cu::CUstream streamHandleOf(PyObject* obj) {
  auto* inst = reinterpret_cast<py::detail::instance*>(obj);
  void* v = inst->simple_layout ? inst->simple_value_holder[0] : inst->nonsimple.values_and_holders[0];
  return v ? static_cast<const StreamRef*>(v)->handle : nullptr;
}

// One kernel cache entry as `python -m cudajit cache list` shows it.
py::dict cacheEntryInfo(const std::string& path) {
  py::dict d;
  d["path"] = path;
  const size_t slash = path.find_last_of('/');
  std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  d["key"] = name.substr(0, name.find('.'));
  std::string bytes;
  const cj::ReadStatus rs = cj::readWholeFile(path, &bytes);
  d["size"] = rs == cj::ReadStatus::Ok ? py::int_(bytes.size()) : py::int_(0);
  std::string body;
  cj::rt::CachedKernel k;
  std::string_view view;
  bool valid = rs == cj::ReadStatus::Ok &&
               cj::openEntry(bytes, "CJKERNEL", 1, &view) == cj::EntryCheck::Ok &&
               cj::rt::deserializeKernel(std::string(view), &k);
  d["valid"] = valid;
  if (valid) {
    d["qualname"] = k.qualname;
    d["filename"] = k.filename;
    d["signature"] = k.signature;
    d["arch"] = k.arch;
    d["created"] = k.created;
    d["compile_seconds"] = k.compile_seconds;
    d["symbol"] = k.compiled.symbol;
    d["cubin_bytes"] = k.compiled.cubin.size();
    d["ptx_bytes"] = k.compiled.ptx.size();
  }
  return d;
}

}  // namespace

void bindRuntime(py::module_& m) {
  registerRuntimeErrors();

  m.def("is_available", &cj::rt::driverAvailable,
        "True when a CUDA driver and at least one GPU can be used.");
  m.def("unavailable_reason", &cj::rt::driverUnavailableReason,
        "Why the driver cannot be used ('' when it can).");
  m.def("driver_version", [] { return cj::rt::driver().version; });
  m.def("driver_library", [] { return cj::rt::driver().library_path; });
  m.def("device_count", &cj::rt::deviceCount);
  m.def("device_info", &deviceInfoDict, py::arg("ordinal") = 0);
  m.def("current_device", &cj::rt::currentDevice);
  m.def("select_device", &cj::rt::selectDevice, py::arg("ordinal"));
  m.def("synchronize", [] {
    py::gil_scoped_release no_gil;
    cj::rt::synchronizeContext();
  });
  m.def("memory_info", [] {
    cj::rt::MemoryInfo info = cj::rt::memoryInfo();
    return py::make_tuple(info.free, info.total);
  });

  py::class_<DeviceArray> cls(m, "DeviceNDArray",
      "An n-dimensional array in GPU memory (numba's DeviceNDArray). Create one with "
      "cudajit.to_device, device_array or device_array_like.");
  cls.def(py::init([](const py::object& shape, const py::object& dtype, const std::string& order) {
            if (order != "C" && order != "F")
              throw cj::rt::ArgumentValueError("order must be 'C' or 'F'");
            return DeviceArray::allocate(shapeFrom(shape), scalarFromDtype(dtype), order == "F");
          }),
          py::arg("shape"), py::arg("dtype") = "float64", py::arg("order") = "C")
      .def_static("from_host", &fromHost, py::arg("array"),
                  "A device copy of a host array (anything numpy.asarray accepts).")
      .def_property_readonly("shape", [](const DeviceArray& a) { return toTuple(a.shape); })
      .def_property_readonly("strides", [](const DeviceArray& a) { return toTuple(a.strides); })
      .def_property_readonly("dtype", [](const DeviceArray& a) { return dtypeOf(a.dtype); })
      .def_property_readonly("ndim", &DeviceArray::ndim)
      .def_property_readonly("size", &DeviceArray::size)
      .def_property_readonly("nbytes", &DeviceArray::nbytes)
      .def_property_readonly("itemsize", &DeviceArray::itemsize)
      .def_property_readonly("device_pointer", [](const DeviceArray& a) {
        return static_cast<unsigned long long>(a.data);
      })
      .def_property_readonly("__cuda_array_interface__", &cudaArrayInterface)
      .def("is_c_contiguous", [](const DeviceArray& a) {
        return cj::rt::isContiguous(a.shape, a.strides, a.itemsize(), /*c_order=*/true);
      })
      .def("is_f_contiguous", [](const DeviceArray& a) {
        return cj::rt::isContiguous(a.shape, a.strides, a.itemsize(), /*c_order=*/false);
      })
      .def("copy_to_host", &copyToHost, py::arg("ary") = py::none(), py::arg("stream") = 0,
           "Copies to a new (or the given) numpy array and returns it.")
      .def("copy_to_device", &copyToDevice, py::arg("ary"), py::arg("stream") = 0,
           "Copies a host array (or a device array of the same shape) into this one.")
      .def("__getitem__", &viewOf)
      .def("transpose", [](const DeviceArray& a, py::args axes) {
        if (axes.size() == 1 && !PyIndex_Check(axes[0].ptr()))
          return transposed(a, py::reinterpret_borrow<py::object>(axes[0]));
        return transposed(a, axes.size() ? py::object(axes) : py::object(py::none()));
      }, "A view with permuted axes (reversed by default), as numpy's transpose.")
      .def_property_readonly("T", [](const DeviceArray& a) { return transposed(a, py::none()); })
      .def("__len__", [](const DeviceArray& a) {
        if (a.ndim() == 0) throw py::type_error("len() of a 0-d device array");
        return a.shape[0];
      })
      .def("__repr__", [](const DeviceArray& a) {
        return "<cudajit.DeviceNDArray shape=" + py::repr(toTuple(a.shape)).cast<std::string>() +
               " dtype=" + std::string(cj::scalarNumbaName(a.dtype)) + ">";
      });
  cj::rt::registerDeviceArrayType(reinterpret_cast<PyTypeObject*>(cls.ptr()));

  py::class_<StreamRef> stream_cls(m, "Stream", "A CUDA stream: pass it as kernel[grid, block, stream].");
  cj::rt::registerStreamType(reinterpret_cast<PyTypeObject*>(stream_cls.ptr()), &streamHandleOf);
  stream_cls
      .def_property_readonly("handle", &StreamRef::value, "The CUstream as an int (0: default).")
      .def("synchronize", [](const StreamRef& s) {
        py::gil_scoped_release no_gil;
        cj::rt::synchronizeStream(s.handle);
      })
      .def("query", [](const StreamRef& s) {
        if (s.owned) return s.owned->done();
        py::gil_scoped_release no_gil;
        cj::rt::synchronizeStream(s.handle);   // default/external streams: wait instead of asking
        return true;
      }, "True when all work queued on the stream has finished.")
      .def("__cuda_stream__", [](const StreamRef& s) { return py::make_tuple(0, s.value()); })
      .def("__int__", &StreamRef::value)
      .def("__repr__", [](const StreamRef& s) {
        return "<cudajit.Stream handle=0x" + [](unsigned long long v) {
          char buf[32];
          std::snprintf(buf, sizeof(buf), "%llx", v);
          return std::string(buf);
        }(s.value()) + (s.owned ? "" : " (not owned)") + ">";
      });
  m.def("stream", [](bool non_blocking) {
    auto owned = std::make_shared<cj::rt::Stream>(non_blocking);
    return StreamRef{owned, owned->handle()};
  }, py::arg("non_blocking") = false, "A new stream on the current device.");
  m.def("default_stream", [] { return handleStream(0); }, "The default stream (handle 0).");
  m.def("legacy_default_stream", [] { return handleStream(1); });
  m.def("per_thread_default_stream", [] { return handleStream(2); });
  m.def("external_stream", &handleStream, py::arg("handle"),
        "Wraps a stream another library created (its CUstream as an int); not owned.");

  m.def("_set_package_version", &cj::rt::setPackageVersion, py::arg("version"));
  m.def("cache_dir", &cj::rt::kernelCacheDir,
        "Where compiled kernels are cached: $CUDAJIT_CACHE_DIR/kernels, else the user cache "
        "directory.");
  m.def("cache_root", &cj::userCacheRoot, "The root of cudajit's caches (kernels/, cub/, toolkit/).");
  m.def("cache_entries", [] {
    py::list out;
    for (const std::string& path : cj::rt::kernelDiskCache().entries()) out.append(cacheEntryInfo(path));
    return out;
  }, "Every kernel cache entry: path, key, size, valid, and (when valid) qualname, filename, "
     "signature, arch, created, compile_seconds, symbol, cubin_bytes, ptx_bytes.");
  m.def("cache_entry_info", &cacheEntryInfo, py::arg("path"));
  m.def("toolkit_identity", [] { return cj::rt::toolkitIdentity(); },
        "The toolkit part of the cache keys (versions, paths, sizes, times).");
  m.def("cudajit_identity", [] { return cj::rt::cudajitIdentity(); });

  m.def("fill_bytes", [](DeviceArray& a, int value) {
    if (!isDense(a)) throw cj::rt::ArgumentValueError("fill_bytes needs a contiguous array");
    cj::rt::memsetBytes(a.data, static_cast<unsigned char>(value), a.nbytes());
  }, py::arg("array"), py::arg("value"), "memset over a contiguous device array's bytes.");
}
