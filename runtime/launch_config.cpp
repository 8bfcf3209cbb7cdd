#include "runtime/launch_config.h"

#include <string>

#include "runtime/args.h"
#include "runtime/errors.h"

namespace cj::rt {
namespace {

// operator.index(v) as a long long (ints and numpy integers, not floats).
long long indexOf(PyObject* v, const char* what) {
  PyObject* i = PyNumber_Index(v);
  if (!i) {
    PyErr_Clear();
    throw ArgumentTypeError(std::string(what) + " dimensions must be ints, not '" +
                            Py_TYPE(v)->tp_name + "'");
  }
  int overflow = 0;
  const long long n = PyLong_AsLongLongAndOverflow(i, &overflow);
  Py_DECREF(i);
  if (overflow) return overflow > 0 ? 0x7fffffffffffffffLL : -1;
  return n;
}

unsigned dimValue(PyObject* v, const char* what) {
  if (!PyIndex_Check(v))
    throw ArgumentTypeError(std::string(what) + " dimensions must be ints, not '" +
                            Py_TYPE(v)->tp_name + "'");
  const long long n = indexOf(v, what);
  if (n < 1 || n > 0x7fffffffLL)
    throw ArgumentValueError(std::string(what) + " dimension " + std::to_string(n) +
                             " is out of range (each must be at least 1)");
  return static_cast<unsigned>(n);
}

// Borrowed attribute lookups that leave no error behind.
PyObject* attrOrNull(PyObject* o, const char* name) {
  PyObject* v = PyObject_GetAttrString(o, name);
  if (!v) PyErr_Clear();
  return v;
}

// An int, a tuple/list of 1-3 ints, or an object with x, y, z (numba's Dim3).
void dims(PyObject* v, unsigned out[3], const char* what) {
  out[0] = out[1] = out[2] = 1;
  if (PyTuple_Check(v) || PyList_Check(v)) {
    const Py_ssize_t n = PySequence_Fast_GET_SIZE(v);
    if (n < 1 || n > 3)
      throw ArgumentValueError(std::string(what) + " must have 1 to 3 dimensions, got " +
                               std::to_string(n));
    PyObject** items = PySequence_Fast_ITEMS(v);
    for (Py_ssize_t k = 0; k < n; ++k) out[k] = dimValue(items[k], what);
    return;
  }
  if (!PyIndex_Check(v)) {
    PyObject* x = attrOrNull(v, "x");
    PyObject* y = x ? attrOrNull(v, "y") : nullptr;
    PyObject* z = y ? attrOrNull(v, "z") : nullptr;
    if (z) {
      try {
        out[0] = dimValue(x, what);
        out[1] = dimValue(y, what);
        out[2] = dimValue(z, what);
      } catch (...) {
        Py_DECREF(x); Py_DECREF(y); Py_DECREF(z);
        throw;
      }
      Py_DECREF(x); Py_DECREF(y); Py_DECREF(z);
      return;
    }
    Py_XDECREF(x);
    Py_XDECREF(y);
  }
  out[0] = dimValue(v, what);
}

bool isExactInt(PyObject* o) { return PyLong_CheckExact(o); }

// Ints, None, or tuples of ints: what a cached key may hold.
bool cacheableItem(PyObject* o) {
  if (isExactInt(o) || o == Py_None) return true;
  if (!PyTuple_CheckExact(o)) return false;
  for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(o); ++k)
    if (!isExactInt(PyTuple_GET_ITEM(o, k))) return false;
  return true;
}

bool sameInt(PyObject* a, PyObject* b) {
  if (a == b) return true;
  if (!isExactInt(a) || !isExactInt(b)) return false;
  int oa = 0, ob = 0;
  const long long va = PyLong_AsLongLongAndOverflow(a, &oa);
  const long long vb = PyLong_AsLongLongAndOverflow(b, &ob);
  return !oa && !ob && va == vb;
}

bool sameItem(PyObject* a, PyObject* b) {
  if (a == b) return true;
  if (PyTuple_CheckExact(a) && PyTuple_CheckExact(b)) {
    const Py_ssize_t n = PyTuple_GET_SIZE(a);
    if (n != PyTuple_GET_SIZE(b)) return false;
    for (Py_ssize_t k = 0; k < n; ++k)
      if (!sameInt(PyTuple_GET_ITEM(a, k), PyTuple_GET_ITEM(b, k))) return false;
    return true;
  }
  return sameInt(a, b);
}

bool sameKey(PyObject* cached, PyObject* key) {
  if (cached == key) return true;
  if (!PyTuple_CheckExact(key)) return false;
  const Py_ssize_t n = PyTuple_GET_SIZE(cached);
  if (n != PyTuple_GET_SIZE(key)) return false;
  for (Py_ssize_t k = 0; k < n; ++k)
    if (!sameItem(PyTuple_GET_ITEM(cached, k), PyTuple_GET_ITEM(key, k))) return false;
  return true;
}

}  // namespace

LaunchConfig parseLaunchConfig(PyObject* key) {
  if (!PyTuple_Check(key))
    throw ArgumentTypeError("launch a kernel as kernel[blocks, threads](...) or "
                            "kernel[blocks, threads, stream, shared_bytes](...)");
  const Py_ssize_t n = PyTuple_GET_SIZE(key);
  if (n < 2 || n > 4)
    throw ArgumentValueError("a launch configuration has 2 to 4 items (blocks, threads, "
                             "stream, dynamic shared memory bytes), got " + std::to_string(n));
  LaunchConfig c;
  dims(PyTuple_GET_ITEM(key, 0), c.grid, "grid");
  dims(PyTuple_GET_ITEM(key, 1), c.block, "block");
  if (n >= 3) {
    c.stream = streamFromPython(PyTuple_GET_ITEM(key, 2));
    c.stream_given = true;
  }
  if (n == 4) {
    PyObject* s = PyTuple_GET_ITEM(key, 3);
    if (!PyIndex_Check(s))
      throw ArgumentTypeError(std::string("dynamic shared memory bytes must be an int, not '") +
                              Py_TYPE(s)->tp_name + "'");
    const long long bytes = indexOf(s, "shared memory");
    if (bytes < 0 || bytes > 0x7fffffffLL)
      throw ArgumentValueError("dynamic shared memory bytes out of range: " + std::to_string(bytes));
    c.shared_bytes = static_cast<unsigned>(bytes);
  }
  return c;
}

LaunchConfigCache::~LaunchConfigCache() { clear(); }

void LaunchConfigCache::clear() {
  for (Entry& e : entries_) {
    Py_CLEAR(e.key);
  }
}

const LaunchConfig* LaunchConfigCache::find(PyObject* key) {
  // The loop's own tuple first: one pointer compare.
  Entry& last = entries_[last_hit_];
  if (last.key == key) return &last.config;
  for (unsigned k = 0; k < entries_.size(); ++k) {
    if (entries_[k].key == key) {
      last_hit_ = k;
      return &entries_[k].config;
    }
  }
  if (!PyTuple_CheckExact(key)) return nullptr;
  for (unsigned k = 0; k < entries_.size(); ++k) {
    if (entries_[k].key && sameKey(entries_[k].key, key)) {
      last_hit_ = k;
      return &entries_[k].config;
    }
  }
  return nullptr;
}

void LaunchConfigCache::insert(PyObject* key, const LaunchConfig& config) {
  if (!PyTuple_CheckExact(key)) return;
  for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(key); ++k)
    if (!cacheableItem(PyTuple_GET_ITEM(key, k))) return;
  Entry& e = entries_[next_];
  Py_INCREF(key);
  Py_XSETREF(e.key, key);
  e.config = config;
  last_hit_ = next_;
  next_ = (next_ + 1) % entries_.size();
}

}  // namespace cj::rt
