#include "runtime/arg_routes.h"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <array>
#include <cstring>
#include <string>

#include "runtime/device_array.h"

namespace cj::rt {
namespace py = pybind11;
namespace {

PyTypeObject* g_device_array_type = nullptr;

// numpy's scalar base class, looked up once and kept.
PyObject* numpyGeneric() {
  static PyObject* generic = [] {
    py::object np = py::module_::import("numpy");
    return py::object(np.attr("generic")).release().ptr();
  }();
  return generic;
}

// The class `cls` is `module_prefix*.name` (module compared by prefix).
bool classIs(PyObject* cls, const char* module_prefix, const char* name) {
  PyTypeObject* t = reinterpret_cast<PyTypeObject*>(cls);
  const char* tp_name = t->tp_name;   // "module.Name" for heap types, "Name" or "mod.Name" for static
  const char* dot = std::strrchr(tp_name, '.');
  const char* short_name = dot ? dot + 1 : tp_name;
  if (std::strcmp(short_name, name) != 0) return false;
  PyObject* module = PyObject_GetAttrString(cls, "__module__");
  if (!module) {
    PyErr_Clear();
    return false;
  }
  bool ok = false;
  if (PyUnicode_Check(module)) {
    const char* m = PyUnicode_AsUTF8(module);
    ok = m && std::strncmp(m, module_prefix, std::strlen(module_prefix)) == 0;
    if (ok) {   // "cupy" must not match "cupyx_other": the prefix ends the name or a component
      const char next = m[std::strlen(module_prefix)];
      ok = next == '\0' || next == '.';
    }
  }
  if (!ok) PyErr_Clear();
  Py_DECREF(module);
  return ok;
}

// Some class in type's MRO matches one of `names` under module `prefix`.
bool mroHas(PyTypeObject* type, const char* prefix, std::initializer_list<const char*> names) {
  PyObject* mro = type->tp_mro;
  if (!mro || !PyTuple_Check(mro)) return false;
  for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(mro); ++k) {
    PyObject* cls = PyTuple_GET_ITEM(mro, k);
    for (const char* n : names)
      if (classIs(cls, prefix, n)) return true;
  }
  return false;
}

TypeRoute decide(PyObject* obj) {
  PyTypeObject* type = Py_TYPE(obj);
  TypeRoute r;
  if (type == &PyFloat_Type) { r.route = Route::Float; return r; }
  if (type == &PyLong_Type) { r.route = Route::Int; return r; }
  if (type == &PyBool_Type) { r.route = Route::Bool; return r; }
  if (obj == Py_None) { r.route = Route::None; return r; }
  if (g_device_array_type && PyType_IsSubtype(type, g_device_array_type)) {
    r.route = Route::DeviceArray;
    return r;
  }
  const int is_np_scalar = PyObject_IsInstance(obj, numpyGeneric());
  if (is_np_scalar < 0) throw py::error_already_set();
  if (is_np_scalar) {
    r.route = Route::NumpyScalar;
    py::object dtype = py::reinterpret_borrow<py::object>(obj).attr("dtype");
    const char kind = dtype.attr("kind").cast<std::string>()[0];
    const int itemsize = dtype.attr("itemsize").cast<int>();
    r.supported = scalarFromNumpy(kind, itemsize, &r.scalar);   // complex64 stays complex64
    return r;
  }
  if (PyBool_Check(obj)) { r.route = Route::Bool; return r; }
  if (PyLong_Check(obj)) { r.route = Route::Int; return r; }
  if (PyFloat_Check(obj)) { r.route = Route::Float; return r; }
  if (PyComplex_Check(obj)) { r.route = Route::Complex; return r; }
  if (py::isinstance<py::array>(obj)) {
    // numpy arrays over device-visible memory (cudajit.mapped_array,
    // managed_array) say where the device sees them: passed, not staged.
    const int cai = PyObject_HasAttrString(reinterpret_cast<PyObject*>(type), "__cuda_array_interface__");
    r.route = cai ? Route::Foreign : Route::HostArray;
    return r;
  }
  if (PyTuple_Check(obj)) { r.route = Route::Tuple; return r; }
  // Enum members: the metaclass of their class is enum's EnumType (EnumMeta before 3.11).
  if (mroHas(Py_TYPE(reinterpret_cast<PyObject*>(type)), "enum", {"EnumType", "EnumMeta"})) {
    r.route = Route::EnumMember;
    return r;
  }
  // cudajit.In / Out / InOut say so on the class: _cudajit_copy_ = "in" / "out" / "inout".
  if (PyObject* copy = PyObject_GetAttrString(reinterpret_cast<PyObject*>(type), "_cudajit_copy_")) {
    const char* how = PyUnicode_Check(copy) ? PyUnicode_AsUTF8(copy) : nullptr;
    if (how) {
      r.route = Route::CopyWrapper;
      r.copy_in = std::strcmp(how, "out") != 0;
      r.copy_out = std::strcmp(how, "in") != 0;
    }
    Py_DECREF(copy);
    if (how) return r;
  }
  PyErr_Clear();
  if (PyObject_HasAttrString(reinterpret_cast<PyObject*>(type), "_cudajit_arg_")) {
    r.route = Route::Opaque;
    return r;
  }
  if (mroHas(type, "cupy", {"ndarray", "_ndarray_base"})) { r.route = Route::Cupy; return r; }
  if (mroHas(type, "torch", {"Tensor", "TensorBase", "_TensorBase"})) {
    r.route = Route::Torch;
    return r;
  }
  r.route = Route::Foreign;
  return r;
}

// An open-addressed table keyed by type pointer; the types are kept alive.
struct Slot {
  PyTypeObject* type = nullptr;
  TypeRoute route;
};
constexpr size_t kSlots = 256;
std::array<Slot, kSlots> g_table{};
size_t g_used = 0;

size_t hashOf(PyTypeObject* t) { return (reinterpret_cast<uintptr_t>(t) >> 4) * 2654435761u; }

}  // namespace

void setDeviceArrayType(PyTypeObject* type) { g_device_array_type = type; }
PyTypeObject* deviceArrayType() { return g_device_array_type; }

const TypeRoute& routeOf(PyObject* obj) {
  PyTypeObject* type = Py_TYPE(obj);
  size_t i = hashOf(type) % kSlots;
  for (size_t probe = 0; probe < kSlots; ++probe, i = (i + 1) % kSlots) {
    Slot& s = g_table[i];
    if (s.type == type) return s.route;
    if (!s.type) break;
  }
  // Not seen yet: decide, and remember unless the table is mostly full (a
  // program making types in a loop must not grow it without bound).
  static thread_local TypeRoute uncached;
  TypeRoute r = decide(obj);
  if (g_used >= kSlots * 3 / 4) {
    uncached = r;
    return uncached;
  }
  i = hashOf(type) % kSlots;
  while (g_table[i].type) i = (i + 1) % kSlots;
  Py_INCREF(reinterpret_cast<PyObject*>(type));
  g_table[i].type = type;
  g_table[i].route = r;
  ++g_used;
  return g_table[i].route;
}

}  // namespace cj::rt
