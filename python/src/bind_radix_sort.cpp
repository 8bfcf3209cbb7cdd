// cudajit.compute.radix_sort's way to CUB's device radix sort: compile a
// program (compiler/cub/device_radix_sort.h: warming, tests) and run a sort
// on arrays of any library the launches take (runtime/device_radix_sort.h).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "cub/device_radix_sort.h"
#include "cub/toolkit.h"
#include "runtime/args.h"
#include "runtime/context.h"
#include "runtime/device_radix_sort.h"
#include "runtime/driver.h"
#include "runtime_py.h"
#include "sys_path_py.h"

namespace py = pybind11;

namespace {

const char* fromName(cj::cub::RadixSortProgram::From f) {
  switch (f) {
    case cj::cub::RadixSortProgram::From::Memory: return "memory";
    case cj::cub::RadixSortProgram::From::Disk: return "disk";
    case cj::cub::RadixSortProgram::From::Compiled: return "compiled";
  }
  return "";
}

py::dict programDict(const cj::cub::RadixSortProgram& p) {
  py::dict policy;
  policy["radix_bits"] = p.policy.radix_bits;
  policy["onesweep_threads"] = p.policy.onesweep_threads;
  policy["onesweep_items"] = p.policy.onesweep_items;
  policy["histogram_threads"] = p.policy.histogram_threads;
  policy["exclusive_sum_threads"] = p.policy.exclusive_sum_threads;
  policy["single_tile_threads"] = p.policy.single_tile_threads;
  policy["single_tile_items"] = p.policy.single_tile_items;
  policy["onesweep"] = p.policy.onesweep;
  py::dict out;
  out["cubin"] = py::bytes(p.cubin->data(), p.cubin->size());
  out["kernels"] = std::vector<std::string>{p.histogram, p.exclusive_sum, p.onesweep, p.single_tile};
  out["policy"] = policy;
  out["from"] = fromName(p.from);
  out["compile_seconds"] = p.compile_seconds;
  out["key"] = p.key;
  out["spec"] = cj::cub::describe(p.spec);
  return out;
}

cj::cub::RadixSortSpec specOf(const std::string& key, int value_bytes, bool descending, bool offset64, int arch) {
  cj::cub::RadixSortSpec s;
  s.key = key;
  s.value_bytes = value_bytes;
  s.descending = descending;
  s.offset64 = offset64;
  s.arch = arch;
  return s;
}

// The device pointers of the arrays (None: 0), their common device, and the
// stream the sort goes to: the one given, else as a kernel launch on these
// arrays would choose (PyTorch's or CuPy's current stream, else the default).
bool runSort(const std::string& key, int value_bytes, bool descending, const py::object& keys,
             const py::object& keys_alt, const py::object& values, const py::object& values_alt, uint64_t n,
             int begin_bit, int end_bit, bool overwrite, const py::object& temp, uint64_t temp_bytes,
             const py::object& stream) {
  std::vector<py::object> objs = {keys, keys_alt, values, values_alt, temp};
  std::vector<PyObject*> given;
  for (const auto& o : objs)
    if (!o.is_none()) given.push_back(o.ptr());
  cj::rt::LaunchArgs la;
  cj::rt::classifyArgs(given.data(), given.size(), cj::rt::driver().device_count > 1, &la);
  if (!la.staged.empty()) throw py::type_error("radix_sort: arrays must be on the device (got a host array)");
  cj::rt::cu::CUdeviceptr ptr[5] = {0, 0, 0, 0, 0};
  for (size_t k = 0, g = 0; k < objs.size(); ++k) {
    if (objs[k].is_none()) continue;
    const cj::rt::ArrayValue& a = la.values[g++].array;
    if (a.ndim < 1) throw py::type_error("radix_sort: expected a device array");
    ptr[k] = a.data;
  }
  const int device = la.device >= 0 ? la.device : cj::rt::currentDevice();
  cj::rt::cu::CUstream s = cj::py_rt::streamGiven(stream) ? cj::py_rt::streamHandle(stream)
                                                           : cj::rt::defaultStreamFor(la, device);
  cj::rt::stageIn(la, s);   // waits for __cuda_array_interface__ v3 producers on other streams
  cj::rt::RadixSortCall c;
  c.key = key;
  c.value_bytes = value_bytes;
  c.descending = descending;
  c.keys = ptr[0];
  c.keys_alt = ptr[1];
  c.values = ptr[2];
  c.values_alt = ptr[3];
  c.temp = ptr[4];
  c.temp_bytes = temp_bytes;
  c.overwrite = overwrite;
  c.num_items = n;
  c.begin_bit = begin_bit;
  c.end_bit = end_bit;
  c.stream = s;
  c.device = device;
  py::gil_scoped_release no_gil;   // the first call of a type compiles for seconds
  return cj::rt::radixSort(c);
}

}  // namespace

void bindRadixSort(py::module_& m) {
  m.def(
      "radix_sort_program",
      [](const std::string& key, int value_bytes, bool descending, bool offset64, int arch) {
        cj::cub::addSiteDirectories(cj::py_sys::sysPathEntries());
        cj::cub::RadixSortProgram p;
        {
          py::gil_scoped_release no_gil;
          p = cj::cub::radixSortProgram(specOf(key, value_bytes, descending, offset64, arch));
        }
        return programDict(p);
      },
      py::arg("key"), py::arg("value_bytes"), py::arg("descending"), py::arg("offset64"), py::arg("arch"),
      "CUB's radix sort kernels for a key type, value size (0: keys only), order, offset width and "
      "architecture, compiled by NVRTC (or from the memory / disk cache): {cubin, kernels (histogram, "
      "exclusive sum, onesweep, single tile: mangled names), policy, from, compile_seconds, key, spec}.");
  m.def(
      "radix_sort_source",
      [](const std::string& key, int value_bytes, bool descending, bool offset64, int arch) {
        return cj::cub::radixSortSource(specOf(key, value_bytes, descending, offset64, arch));
      },
      py::arg("key"), py::arg("value_bytes"), py::arg("descending"), py::arg("offset64"), py::arg("arch"),
      "The CUDA C++ that radix_sort_program compiles.");
  m.def(
      "radix_sort_cache_path",
      [](const std::string& key, int value_bytes, bool descending, bool offset64, int arch) {
        cj::cub::addSiteDirectories(cj::py_sys::sysPathEntries());
        return cj::cub::radixSortCachePath(specOf(key, value_bytes, descending, offset64, arch));
      },
      py::arg("key"), py::arg("value_bytes"), py::arg("descending"), py::arg("offset64"), py::arg("arch"));
  m.def("radix_sort_clear_memory_cache", &cj::cub::clearRadixSortMemoryCache,
        "Forgets this process's radix sort programs (the next call reads the disk cache).");
  m.def("radix_sort_temp_bytes", &cj::rt::radixSortTempBytes, py::arg("num_items"), py::arg("key_bytes"),
        py::arg("value_bytes"), py::arg("begin_bit"), py::arg("end_bit"), py::arg("overwrite"),
        "Bytes of temporary storage a radix sort needs (a bound over every architecture's tuning).");
  m.def("radix_sort_offset64", &cj::rt::radixSortOffset64, py::arg("num_items"), py::arg("key_bytes"),
        py::arg("value_bytes"), py::arg("arch"),
        "Whether a sort of num_items with these keys and values runs with 64-bit offsets on sm_<arch>.");
  m.def(
      "radix_sort",
      [](const std::string& key, int value_bytes, bool descending, const py::object& keys,
         const py::object& keys_alt, const py::object& values, const py::object& values_alt, uint64_t n,
         int begin_bit, int end_bit, bool overwrite, const py::object& temp, uint64_t temp_bytes,
         const py::object& stream) {
        static const bool found_sites = [] {   // once: this is every sort's path
          cj::cub::addSiteDirectories(cj::py_sys::sysPathEntries());
          return true;
        }();
        (void)found_sites;
        return runSort(key, value_bytes, descending, keys, keys_alt, values, values_alt, n, begin_bit, end_bit,
                       overwrite, temp, temp_bytes, stream);
      },
      py::arg("key"), py::arg("value_bytes"), py::arg("descending"), py::arg("keys"), py::arg("keys_alt"),
      py::arg("values"), py::arg("values_alt"), py::arg("num_items"), py::arg("begin_bit"), py::arg("end_bit"),
      py::arg("overwrite"), py::arg("temp"), py::arg("temp_bytes"), py::arg("stream"),
      "Enqueues CUB's radix sort of device arrays (runtime/device_radix_sort.h). Returns whether the "
      "result is in keys_alt / values_alt.");
}
