// C++ exceptions -> Python exceptions, in one place. The exception classes
// live in cudajit/errors.py so that they carry attributes (file, line, ...).
// The same function serves pybind11's translators (registered below) and the
// C slots that CPython calls directly (errors_py.h).
#include <pybind11/pybind11.h>

#include <new>
#include <stdexcept>

#include "python/src/errors_py.h"
#include "runtime/errors.h"
#include "support/error.h"

namespace py = pybind11;

namespace {

py::object errorClass(const char* name) {
  return py::module_::import("cudajit.errors").attr(name);
}

// cudajit's exceptions; false (nothing set) for any other.
bool setCudajitError(std::exception_ptr p) {
  try {
    std::rethrow_exception(p);
  } catch (const cj::CompileError& e) {
    py::object cls = errorClass("CompileError");
    py::object exc = cls(py::str(e.what()), e.file, e.line, e.col, e.construct, e.message,
                         e.hint);
    PyErr_SetObject(cls.ptr(), exc.ptr());
  } catch (const cj::ToolchainError& e) {
    py::object cls = errorClass("ToolchainError");
    PyErr_SetObject(cls.ptr(), cls(py::str(e.what())).ptr());
  } catch (const cj::rt::CudaSupportError& e) {
    py::object cls = errorClass("CudaSupportError");
    PyErr_SetObject(cls.ptr(), cls(py::str(e.what())).ptr());
  } catch (const cj::rt::CudaApiError& e) {
    py::object cls = errorClass("CudaAPIError");
    PyErr_SetObject(cls.ptr(), cls(py::str(e.what()), e.code, e.function).ptr());
  } catch (const cj::rt::ArgumentTypeError& e) {
    PyErr_SetString(PyExc_TypeError, e.what());
  } catch (const cj::rt::ArgumentValueError& e) {
    PyErr_SetString(PyExc_ValueError, e.what());
  } catch (...) {
    return false;
  }
  return true;
}

}  // namespace

namespace cj::py_errors {

void setPythonError(std::exception_ptr p) {
  try {
    if (setCudajitError(p)) return;
  } catch (py::error_already_set& e) {   // building the cudajit exception failed
    e.restore();
    return;
  }
  try {
    std::rethrow_exception(p);
  } catch (py::error_already_set& e) {
    e.restore();
  } catch (const py::builtin_exception& e) {
    e.set_error();
  } catch (const std::bad_alloc&) {
    PyErr_NoMemory();
  } catch (const std::out_of_range& e) {
    PyErr_SetString(PyExc_IndexError, e.what());
  } catch (const std::overflow_error& e) {
    PyErr_SetString(PyExc_OverflowError, e.what());
  } catch (const std::domain_error& e) {
    PyErr_SetString(PyExc_ValueError, e.what());
  } catch (const std::invalid_argument& e) {
    PyErr_SetString(PyExc_ValueError, e.what());
  } catch (const std::length_error& e) {
    PyErr_SetString(PyExc_ValueError, e.what());
  } catch (const std::range_error& e) {
    PyErr_SetString(PyExc_ValueError, e.what());
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  } catch (...) {
    PyErr_SetString(PyExc_RuntimeError, "unknown C++ exception");
  }
}

}  // namespace cj::py_errors

void bindErrors(py::module_& m) {
  py::register_exception_translator([](std::exception_ptr p) {
    if (p && !setCudajitError(p)) std::rethrow_exception(p);
  });
}
