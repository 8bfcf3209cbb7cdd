#include <pybind11/pybind11.h>

namespace py = pybind11;

void bindRuntime(py::module_& m) {}
