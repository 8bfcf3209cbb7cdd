// sys.path for the library searches that take it at each use (compiler/cub:
// NVRTC and CCCL; compiler/mathdx: libmathdx), so that pip wheels on paths
// added since the last call are found too.
#pragma once
#include <pybind11/pybind11.h>

#include <string>
#include <vector>

namespace cj::py_sys {

// The str entries of sys.path, in order.
inline std::vector<std::string> sysPathEntries() {
  namespace py = pybind11;
  std::vector<std::string> dirs;
  for (auto p : py::module_::import("sys").attr("path"))
    if (py::isinstance<py::str>(p)) dirs.push_back(py::cast<std::string>(p));
  return dirs;
}

}  // namespace cj::py_sys
