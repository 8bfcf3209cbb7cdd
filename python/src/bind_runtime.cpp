// cudajit._core: the runtime's entry points (driver status, devices, streams,
// the kernel cache). bind_errors.cpp translates the runtime's errors.
// DeviceNDArray is bound in bind_device_array.cpp; events, page-locked and
// managed memory and device attributes in bind_host_api.cpp.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>

#include "python/src/native_class.h"
#include "runtime/args.h"
#include "runtime/context.h"
#include "runtime/device_array.h"
#include "runtime/driver.h"
#include "runtime/errors.h"
#include "runtime/kernel_cache.h"
#include "runtime/memory.h"
#include "runtime/toolkit_identity.h"
#include "runtime/stream.h"

namespace py = pybind11;

void bindDeviceArray(py::module_& m);   // bind_device_array.cpp
void bindHostApi(py::module_& m);       // bind_host_api.cpp

namespace {

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

}  // namespace

// cudajit.Stream: a stream cudajit created (owned) or a default / external
// stream known by its handle. A class of our own (native_class.h), so that
// kernel[grid, block, stream] reads the handle with one load.
struct StreamRef {
  std::shared_ptr<cj::rt::Stream> owned;
  cj::rt::cu::CUstream handle = nullptr;
  unsigned long long value() const { return reinterpret_cast<uintptr_t>(handle); }
};

NATIVE_CLASS_CASTER(StreamRef, "Stream")

namespace {

// stream.auto_synchronize(): `with` yields the stream and synchronises it on exit.
// Stream callbacks: the Python (stream, callback, arg) triple travels to the
// driver thread as one owned reference; the thread takes the GIL to call it.
// At interpreter shutdown the triple is left alone (taking the GIL then can
// hang), which leaks it: nothing is left to use it anyway. Callbacks queued
// and not finished are counted, so that an exit handler can wait (without
// the GIL) for those already due: a driver thread still releasing the GIL
// while the interpreter finalizes crashes the process.
struct PendingCallbacks {
  std::mutex mutex;
  std::condition_variable done;
  int count = 0;
};
PendingCallbacks& pendingCallbacks() {
  static auto* p = new PendingCallbacks;   // never destroyed: driver threads may outlive static destructors
  return *p;
}
void callbackQueued() {
  std::lock_guard<std::mutex> lock(pendingCallbacks().mutex);
  ++pendingCallbacks().count;
}
void callbackFinished() {
  PendingCallbacks& p = pendingCallbacks();
  std::lock_guard<std::mutex> lock(p.mutex);
  --p.count;
  p.done.notify_all();
}
// atexit: give callbacks due by now up to two seconds to finish.
void waitForCallbacks() {
  py::gil_scoped_release no_gil;
  PendingCallbacks& p = pendingCallbacks();
  std::unique_lock<std::mutex> lock(p.mutex);
  p.done.wait_for(lock, std::chrono::seconds(2), [&] { return p.count == 0; });
}

void runPythonStreamCallback(void* user, int status) {
  struct Finished {
    ~Finished() { callbackFinished(); }   // last: after the GIL is released
  } finished;
#if PY_VERSION_HEX >= 0x030D0000
  if (Py_IsFinalizing()) return;
#else
  if (_Py_IsFinalizing()) return;
#endif
  py::gil_scoped_acquire gil;
  py::tuple job = py::reinterpret_steal<py::tuple>(static_cast<PyObject*>(user));
  try {
    job[1](job[0], status, job[2]);
  } catch (py::error_already_set& e) {
    const std::string what = e.what();
    try {
      py::module_::import("warnings").attr("warn")("Exception in stream callback: " + what);
    } catch (py::error_already_set&) {
      PyErr_Clear();
    }
  }
}

void addCallback(py::object self, py::object callback, py::object arg) {
  if (!PyCallable_Check(callback.ptr()))
    throw py::type_error("Stream.add_callback(): callback must be callable, got " +
                         std::string(py::str(py::type::of(callback).attr("__name__"))));
  const cj::rt::cu::CUstream h = cj::py_native::checkedValue<StreamRef>(self).handle;
  py::tuple job = py::make_tuple(self, callback, arg);
  callbackQueued();
  try {
    cj::rt::addStreamCallback(h, &runPythonStreamCallback, job.ptr());
  } catch (...) {
    callbackFinished();   // never queued
    throw;
  }
  job.release();   // owned by the pending callback now
}

py::object asyncDone(py::object self) {
  py::object loop = py::module_::import("asyncio").attr("get_running_loop")();
  py::object future = loop.attr("create_future")();
  // Runs on the loop's thread (call_soon_threadsafe), not the driver's.
  py::object resolve = py::cpp_function([](py::object future, py::object stream, int status) {
    if (future.attr("done")().cast<bool>()) return;
    if (status == 0)
      future.attr("set_result")(stream);
    else
      future.attr("set_exception")(py::module_::import("cudajit.errors").attr("CudaAPIError")(
          "the stream's work failed (CUresult " + std::to_string(status) + ")", status, "cuStreamAddCallback"));
  });
  py::object on_done = py::cpp_function([loop, resolve](py::object stream, int status, py::object future) {
    loop.attr("call_soon_threadsafe")(resolve, future, stream, status);
  });
  addCallback(self, on_done, future);
  return future;
}

struct StreamSyncGuard {
  py::object stream;
};

StreamRef handleStream(unsigned long long h) {
  return StreamRef{nullptr, reinterpret_cast<cj::rt::cu::CUstream>(static_cast<uintptr_t>(h))};
}

// The handle inside a cudajit.Stream (kernel[grid, block, stream] on the
// launch path; args.cpp has checked the type).
cj::rt::cu::CUstream streamHandleOf(PyObject* obj) {
  return cj::py_native::valueOf<StreamRef>(obj).handle;
}

// One kernel cache entry as `python -m cudajit cache list` shows it.
py::dict cacheEntryInfo(const std::string& path) {
  py::dict d;
  d["path"] = path;
  const size_t slash = path.find_last_of('/');
  std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  d["key"] = name.substr(0, name.find('.'));
  cj::rt::CachedKernel k;
  size_t bytes = 0;
  const bool valid = cj::rt::readKernelEntry(path, &k, &bytes);
  d["size"] = bytes;
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
    // The identity it was made under, for `cache info`.
    const cj::rt::KeyIdentity id = cj::rt::keyIdentity(k.key_text);
    d["cudajit"] = id.cudajit;
    d["toolkit"] = id.toolkit;
  }
  return d;
}

}  // namespace

void bindRuntime(py::module_& m) {
  py::module_::import("atexit").attr("register")(py::cpp_function(&waitForCallbacks));
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

  bindDeviceArray(m);   // bind_device_array.cpp
  bindHostApi(m);       // bind_host_api.cpp

  py::class_<StreamSyncGuard>(m, "_StreamSyncGuard")
      .def("__enter__", [](const StreamSyncGuard& g) { return g.stream; })
      .def("__exit__", [](const StreamSyncGuard& g, py::args) {
        const cj::rt::cu::CUstream h = cj::py_native::checkedValue<StreamRef>(g.stream).handle;
        py::gil_scoped_release no_gil;
        cj::rt::synchronizeStream(h);
        return false;
      });
  cj::py_native::NativeClass<StreamRef> stream_cls(
      m, "cudajit._core.Stream", "A CUDA stream: pass it as kernel[grid, block, stream].");
  cj::rt::registerStreamType(stream_cls.type(), &streamHandleOf);
  stream_cls
      .defReadonly("handle", &StreamRef::value, "The CUstream as an int (0: default).")
      .def("synchronize", [](const StreamRef& s) {
        py::gil_scoped_release no_gil;
        cj::rt::synchronizeStream(s.handle);
      })
      .def("query", [](const StreamRef& s) {
        if (s.owned) return s.owned->done();
        cj::rt::ensureContext();
        const cj::rt::cu::CUresult r = cj::rt::driver().cuStreamQuery(s.handle);
        if (r == cj::rt::cu::CUDA_ERROR_NOT_READY) return false;
        cj::rt::check(r, "cuStreamQuery");
        return true;
      }, py::doc("True when all work queued on the stream has finished (never waits)."))
      .def("add_callback", [](py::object self, py::object callback, py::object arg) {
        addCallback(std::move(self), std::move(callback), std::move(arg));
      }, py::arg("callback"), py::arg("arg") = py::none(),
           py::doc("Calls callback(stream, status, arg) on a driver thread once the work queued so far is "
                   "done (status 0) or failed (the CUresult); it must not call CUDA. An exception it "
                   "raises becomes a warning."))
      .def("async_done", [](py::object self) { return asyncDone(std::move(self)); },
           py::doc("An asyncio future, resolved to the stream once the work queued so far is done (an "
                   "exception if it failed); call it inside a running event loop."))
      .def("auto_synchronize", [](py::object self) { return StreamSyncGuard{std::move(self)}; },
           py::doc("A context manager that synchronises the stream on exit: "
                   "`with s.auto_synchronize():`."))
      .defReadonly("external", [](const StreamRef& s) { return !s.owned && s.value() > 2; },
                   "True for a stream another library created (external_stream).")
      .def("__eq__", [](const StreamRef& a, const py::object& b) {
        const StreamRef* other = cj::py_native::valueIf<StreamRef>(b.ptr());
        return other && a.handle == other->handle;
      })
      .def("__hash__", [](const StreamRef& s) { return py::hash(py::int_(s.value())); })
      .def("__bool__", [](const StreamRef&) { return true; })   // numba: a stream object is truthy, even the default one
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
        "The toolkit part of the cache keys (versions, content fingerprints).");
  m.def("cudajit_identity", [] { return cj::rt::cudajitIdentity(); });
  m.def("cache_counters", [] {
    const cj::rt::CacheCounters c = cj::rt::cacheCounters();
    py::dict d;
    d["hits"] = c.hits;
    d["misses"] = c.misses;
    d["corrupt"] = c.corrupt;
    py::list reasons;
    for (const auto& m : c.last_misses) reasons.append(m->label() + ": " + m->reason());
    d["miss_reasons"] = reasons;
    return d;
  }, "This process's kernel-cache lookups: hits, misses, corrupt entries, the last misses' reasons.");
  m.def("cache_read_only", [] { return cj::cacheReadOnly(cj::rt::kernelCacheDir()); },
        "Whether the kernel cache is read-only (a read-only mount, no permission, CUDAJIT_CACHE_READONLY=1).");

}
