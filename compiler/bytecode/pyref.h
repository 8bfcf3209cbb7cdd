// A small owning reference to a Python object, and the few C API helpers the
// decoder needs. Every helper leaves no Python error set: a failed lookup
// returns an empty PyRef / false and clears the error, so callers decide
// which CompileError to raise.
#pragma once
#include <Python.h>

#include <string>
#include <utility>

namespace cj::bytecode {

class PyRef {
 public:
  PyRef() = default;
  static PyRef steal(PyObject* o) { PyRef r; r.o_ = o; return r; }
  static PyRef borrow(PyObject* o) { Py_XINCREF(o); return steal(o); }
  PyRef(const PyRef& other) : o_(other.o_) { Py_XINCREF(o_); }
  PyRef(PyRef&& other) noexcept : o_(std::exchange(other.o_, nullptr)) {}
  PyRef& operator=(PyRef other) { std::swap(o_, other.o_); return *this; }
  ~PyRef() { Py_XDECREF(o_); }

  PyObject* get() const { return o_; }
  explicit operator bool() const { return o_ != nullptr; }

 private:
  PyObject* o_ = nullptr;
};

// getattr(obj, name), or empty (error cleared).
inline PyRef getAttr(PyObject* obj, const char* name) {
  PyRef r = PyRef::steal(PyObject_GetAttrString(obj, name));
  if (!r) PyErr_Clear();
  return r;
}

// str -> UTF-8; false (error cleared) if obj is not a str.
inline bool toString(PyObject* obj, std::string* out) {
  if (!obj || !PyUnicode_Check(obj)) return false;
  Py_ssize_t n = 0;
  const char* s = PyUnicode_AsUTF8AndSize(obj, &n);
  if (!s) { PyErr_Clear(); return false; }
  out->assign(s, static_cast<size_t>(n));
  return true;
}

// getattr(obj, name) as a str; "" when absent or not a str.
inline std::string attrString(PyObject* obj, const char* name) {
  std::string s;
  PyRef a = getAttr(obj, name);
  if (a) toString(a.get(), &s);
  return s;
}

// str(obj), "" on error.
inline std::string strOf(PyObject* obj) {
  std::string s;
  PyRef r = PyRef::steal(PyObject_Str(obj));
  if (!r) { PyErr_Clear(); return s; }
  toString(r.get(), &s);
  return s;
}

// type(obj).__name__ (qualified with the module unless builtins).
inline std::string typeNameOf(PyObject* obj) {
  PyObject* t = reinterpret_cast<PyObject*>(Py_TYPE(obj));
  std::string mod = attrString(t, "__module__");
  std::string name = attrString(t, "__qualname__");
  if (name.empty()) name = Py_TYPE(obj)->tp_name;
  if (mod.empty() || mod == "builtins") return name;
  return mod + "." + name;
}

}  // namespace cj::bytecode
