// The extension module cudajit._core: each stage binds its few entry points
// in its own bind_*.cpp; this file only calls them.
#include <pybind11/pybind11.h>

namespace py = pybind11;

void bindErrors(py::module_& m);     // bind_errors.cpp
void bindIr(py::module_& m);         // bind_ir.cpp
void bindBytecode(py::module_& m);   // bind_bytecode.cpp
void bindTypeinfer(py::module_& m);  // bind_typeinfer.cpp
void bindCodegen(py::module_& m);    // bind_codegen.cpp
void bindRuntime(py::module_& m);    // bind_runtime.cpp
void bindDispatcher(py::module_& m); // bind_dispatcher.cpp
void bindCub(py::module_& m);        // bind_cub.cpp
void bindLibcalls(py::module_& m);   // bind_libcalls.cpp
void bindTypes(py::module_& m);      // bind_types.cpp
void bindMathdx(py::module_& m);     // bind_mathdx.cpp
void bindRadixSort(py::module_& m);  // bind_radix_sort.cpp

PYBIND11_MODULE(_core, m) {
  m.doc() = "cudajit's C++ core";
  bindErrors(m);
  bindIr(m);
  bindBytecode(m);
  bindTypeinfer(m);
  bindCodegen(m);
  bindRuntime(m);
  bindDispatcher(m);
  bindCub(m);
  bindLibcalls(m);
  bindTypes(m);
  bindMathdx(m);
  bindRadixSort(m);
}
