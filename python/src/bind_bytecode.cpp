#include <pybind11/pybind11.h>

namespace py = pybind11;

void bindBytecode(py::module_& m) {}
