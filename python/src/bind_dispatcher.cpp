#include <pybind11/pybind11.h>

namespace py = pybind11;

void bindDispatcher(py::module_& m) {}
