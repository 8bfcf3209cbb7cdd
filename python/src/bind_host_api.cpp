// The rest of numba.cuda's host API in cudajit._core: events, page-locked
// (pinned, mapped) and managed host memory, device attributes and UUIDs,
// profiler control. The Python layer (cudajit/device.py, memory.py) only
// arranges these into numba's functions and classes.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <array>
#include <memory>

#include "python/src/runtime_py.h"
#include "runtime/context.h"
#include "runtime/device_attributes.h"
#include "runtime/driver.h"
#include "runtime/errors.h"
#include "runtime/event.h"
#include "runtime/foreign_arrays.h"
#include "runtime/host_memory.h"
#include "runtime/ipc.h"
#include "runtime/memory.h"

namespace py = pybind11;
using namespace cj::py_rt;

namespace {

// Managed memory as a Python buffer (numpy wraps it; kernels get its pointer).
struct ManagedMemory {
  std::shared_ptr<cj::rt::DeviceBuffer> buffer;
};

// cuda.pinned(...) / cuda.mapped(...): one host array's memory, page-locked
// while registered. The registration spans the bytes the array touches.
struct Registration {
  std::unique_ptr<cj::rt::HostRegistration> reg;
  uintptr_t host_base = 0;
  py::object array;   // kept alive while registered
};

Registration registerArray(const py::array& a, bool mapped) {
  Registration r;
  int64_t lo = 0, hi = a.size() ? a.itemsize() : 0;
  for (py::ssize_t k = 0; k < a.ndim() && a.size(); ++k) {
    const int64_t reach = (a.shape(k) - 1) * a.strides(k);
    if (reach < 0) lo += reach; else hi += reach;
  }
  r.host_base = reinterpret_cast<uintptr_t>(a.data()) + lo;
  r.array = a;
  py::gil_scoped_release no_gil;
  r.reg = std::make_unique<cj::rt::HostRegistration>(reinterpret_cast<void*>(r.host_base),
                                                     static_cast<size_t>(hi - lo), mapped);
  return r;
}

int attributeOf(int ordinal, const std::string& name) {
  int code = 0;
  if (!cj::rt::deviceAttributeCode(name, &code))
    throw py::attribute_error("CUDA devices have no attribute '" + name +
                              "' (numba's names: CU_DEVICE_ATTRIBUTE_<name> of cuda.h)");
  return cj::rt::deviceAttribute(ordinal, code);
}

// Waits for every device cudajit has used (cudajit.close()).
void synchronizeAllDevices() {
  const int current = cj::rt::currentDevice();
  py::gil_scoped_release no_gil;
  for (int d = 0; d < cj::rt::deviceCount(); ++d) {
    if (!cj::rt::contextRetained(d)) continue;
    cj::rt::ensureContext(d);
    CJ_CU(cuCtxSynchronize);
  }
  if (cj::rt::contextRetained(current)) cj::rt::ensureContext(current);
}

}  // namespace

std::array<char, cj::rt::cu::CU_IPC_HANDLE_SIZE> ipcHandleFrom(const py::bytes& handle) {
  const std::string raw = handle;
  std::array<char, cj::rt::cu::CU_IPC_HANDLE_SIZE> out{};
  if (raw.size() != out.size())
    throw py::value_error("a CUDA IPC handle is " + std::to_string(out.size()) + " bytes, got " +
                          std::to_string(raw.size()));
  std::copy(raw.begin(), raw.end(), out.begin());
  return out;
}

// CUDA IPC (cudajit/ipc.py arranges it into numba's classes).
void bindIpc(py::module_& m) {
  m.def("ipc_export", [](uintptr_t ptr) {
    const int device = cj::rt::deviceOfPointer(ptr);
    if (device < 0)
      throw py::value_error("get_ipc_handle: the array's memory is not device memory of this process");
    const cj::rt::IpcExport e = cj::rt::exportIpc(ptr, device);
    return py::make_tuple(py::bytes(e.handle.data(), e.handle.size()), e.offset, e.allocation_bytes, device);
  }, py::arg("ptr"), "(handle bytes, offset of ptr in its allocation, allocation bytes, device) of device memory.");
  py::class_<cj::rt::IpcMapping>(m, "IpcMapping",
                                 "Another process's device allocation opened here (cuIpcOpenMemHandle).")
      .def(py::init([](const py::bytes& handle, int device) {
             return std::make_unique<cj::rt::IpcMapping>(ipcHandleFrom(handle), device);
           }), py::arg("handle"), py::arg("device"))
      .def_property_readonly("base", [](const cj::rt::IpcMapping& m) { return static_cast<uintptr_t>(m.base()); })
      .def_property_readonly("device", &cj::rt::IpcMapping::device)
      .def_property_readonly("is_open", &cj::rt::IpcMapping::isOpen)
      .def("close", &cj::rt::IpcMapping::close, "cuIpcCloseMemHandle; arrays over it must not be used after.");
}

void bindHostApi(py::module_& m) {
  bindIpc(m);
  using cj::rt::Event;
  py::class_<Event, std::shared_ptr<Event>>(m, "Event",
      "A CUDA event (cudajit.event()): record it into a stream, wait for it, or time the work "
      "between two.")
      .def(py::init([](bool timing) { return std::make_shared<Event>(timing); }),
           py::arg("timing") = true)
      .def_property_readonly("handle", [](const Event& e) {
        return static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(e.handle()));
      })
      .def_property_readonly("timing", &Event::timing)
      .def("record", [](Event& e, const py::object& stream) {
        e.record(streamHandle(stream));
      }, py::arg("stream") = 0,
         "Marks the point in `stream` (default: the default stream) that the event stands for.")
      .def("synchronize", [](const Event& e) {
        py::gil_scoped_release no_gil;
        e.synchronize();
      }, "Waits until the work before the recorded point has finished.")
      .def("query", &Event::query, "True when the work before the recorded point has finished.")
      .def("wait", [](const Event& e, const py::object& stream) {
        e.makeStreamWait(streamHandle(stream));
      }, py::arg("stream") = 0, "Work queued on `stream` from now on waits for the event.")
      .def("elapsed_time", [](const Event& start, const Event& end) {
        return cj::rt::elapsedMilliseconds(start, end);
      }, py::arg("evtend"), "Milliseconds from this event to `evtend` (both recorded and done).")
      .def("__repr__", [](const Event& e) {
        return "<cudajit.Event handle=" +
               std::to_string(reinterpret_cast<uintptr_t>(e.handle())) + ">";
      });
  m.def("event_elapsed_time", [](const Event& start, const Event& end) {
    return cj::rt::elapsedMilliseconds(start, end);
  }, py::arg("evtstart"), py::arg("evtend"), "Milliseconds between two recorded events.");

  using cj::rt::PinnedHostBuffer;
  py::class_<PinnedHostBuffer, std::shared_ptr<PinnedHostBuffer>>(m, "PinnedHostBuffer",
      py::buffer_protocol(), "Page-locked host memory (cuMemHostAlloc); numpy arrays view it.")
      .def(py::init([](size_t bytes, bool mapped, bool portable, bool wc) {
             PinnedHostBuffer::Flags f;
             f.mapped = mapped;
             f.portable = portable;
             f.write_combined = wc;
             return std::make_shared<PinnedHostBuffer>(bytes, f);
           }),
           py::arg("bytes"), py::arg("mapped") = false, py::arg("portable") = false,
           py::arg("wc") = false)
      .def_buffer([](PinnedHostBuffer& b) {
        return py::buffer_info(b.data(), 1, py::format_descriptor<unsigned char>::format(), 1,
                               {static_cast<py::ssize_t>(b.size())}, {1});
      })
      .def_property_readonly("host_pointer", [](const PinnedHostBuffer& b) {
        return static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(b.data()));
      })
      .def_property_readonly("device_pointer", [](const PinnedHostBuffer& b) {
        return static_cast<unsigned long long>(b.devicePointer());
      }, "The device address of mapped memory.")
      .def_property_readonly("mapped", &PinnedHostBuffer::mapped)
      .def_property_readonly("size", &PinnedHostBuffer::size);

  py::class_<ManagedMemory>(m, "ManagedBuffer", py::buffer_protocol(),
      "Managed (unified) memory (cuMemAllocManaged): one address for host and device.")
      .def(py::init([](size_t bytes, bool attach_global) {
             cj::rt::DeviceBuffer::Managed how;
             how.attach_global = attach_global;
             return ManagedMemory{std::make_shared<cj::rt::DeviceBuffer>(bytes, how)};
           }),
           py::arg("bytes"), py::arg("attach_global") = true)
      .def_buffer([](ManagedMemory& mm) {
        return py::buffer_info(reinterpret_cast<void*>(static_cast<uintptr_t>(mm.buffer->ptr())), 1,
                               py::format_descriptor<unsigned char>::format(), 1,
                               {static_cast<py::ssize_t>(mm.buffer->size())}, {1});
      })
      .def_property_readonly("pointer", [](const ManagedMemory& mm) {
        return static_cast<unsigned long long>(mm.buffer->ptr());
      })
      .def_property_readonly("size", [](const ManagedMemory& mm) { return mm.buffer->size(); });

  py::class_<Registration>(m, "HostRegistration",
      "A host array's memory page-locked (cuMemHostRegister) until release().")
      .def(py::init(&registerArray), py::arg("array"), py::arg("mapped") = false)
      .def("release", [](Registration& r) {
        if (r.reg) {
          py::gil_scoped_release no_gil;
          r.reg->release();
        }
        r.array = py::none();
      }, "Unregisters the memory (once; later calls do nothing).")
      .def_property_readonly("host_pointer", [](const Registration& r) {
        return static_cast<unsigned long long>(r.host_base);
      })
      .def_property_readonly("device_pointer", [](const Registration& r) {
        return static_cast<unsigned long long>(r.reg ? r.reg->devicePointer() : 0);
      }, "The device address of the registration's first byte (mapped registrations).");

  m.def("device_attribute", &attributeOf, py::arg("ordinal"), py::arg("name"),
        "cuDeviceGetAttribute by numba's attribute name (MAX_THREADS_PER_BLOCK, ...).");
  m.def("device_attribute_names", &cj::rt::deviceAttributeNames);
  m.def("device_uuid", &cj::rt::deviceUuid, py::arg("ordinal"));
  m.def("context_retained", &cj::rt::contextRetained, py::arg("ordinal"),
        "True once cudajit made the device's primary context current somewhere.");
  m.def("synchronize_all_devices", &synchronizeAllDevices,
        "Waits for the work of every device cudajit has used.");
  m.def("profile_start", &cj::rt::profilerStart);
  m.def("profile_stop", &cj::rt::profilerStop);
}
