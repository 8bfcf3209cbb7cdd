#include <pybind11/pybind11.h>

namespace py = pybind11;

void bindCodegen(py::module_& m) {}
