#include <pybind11/pybind11.h>

namespace py = pybind11;

void bindTypeinfer(py::module_& m) {}
