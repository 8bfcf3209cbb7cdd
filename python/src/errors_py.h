// C++ exceptions -> Python exceptions, for C functions that CPython calls
// directly (the launch path's slots, native_class.h): pybind11 translates
// only around the functions it wraps itself.
#pragma once
#include <exception>

namespace cj::py_errors {

// Sets the Python error for `p` as a pybind11 binding would raise it:
// cudajit's exceptions as their cudajit.errors classes (or TypeError /
// ValueError for argument errors), pybind11's and the standard library's as
// pybind11 maps them. Call it in `catch (...)` with std::current_exception()
// and return the slot's error value.
void setPythonError(std::exception_ptr p);

}  // namespace cj::py_errors
