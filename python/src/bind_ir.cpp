#include <pybind11/pybind11.h>

namespace py = pybind11;

void bindIr(py::module_& m) {}
