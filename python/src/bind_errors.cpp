// C++ exceptions -> Python exceptions, in one place. The exception classes
// live in cudajit/errors.py so that they carry attributes (file, line, ...).
#include <pybind11/pybind11.h>

#include "support/error.h"

namespace py = pybind11;

void bindErrors(py::module_& m) {
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const cj::CompileError& e) {
      py::object cls = py::module_::import("cudajit.errors").attr("CompileError");
      py::object exc = cls(py::str(e.what()), e.file, e.line, e.col, e.construct, e.message,
                           e.hint);
      PyErr_SetObject(cls.ptr(), exc.ptr());
    } catch (const cj::ToolchainError& e) {
      py::object cls = py::module_::import("cudajit.errors").attr("ToolchainError");
      PyErr_SetObject(cls.ptr(), cls(py::str(e.what())).ptr());
    }
  });
}
