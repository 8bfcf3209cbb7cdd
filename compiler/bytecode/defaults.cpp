#include "bytecode/defaults.h"

#include "bytecode/frozen.h"
#include "bytecode/pyref.h"

namespace cj::bytecode {

std::vector<std::pair<std::string, ir::Const>> readDefaults(const CodeInfo& code) {
  std::vector<std::pair<std::string, ir::Const>> out;
  PyObject* fn = code.function.get();
  if (!fn || !PyFunction_Check(fn)) return out;
  auto add = [&](const std::string& name, PyObject* value) {
    Frozen f = classifyObject(value);
    // numpy scalars would need their width: those parameters stay required.
    if (f.kind == Frozen::Kind::Const && f.numpy_type.empty()) out.emplace_back(name, f.value);
  };
  PyRef argcount = getAttr(code.code.get(), "co_argcount");
  long positional = argcount ? PyLong_AsLong(argcount.get()) : 0;
  if (PyErr_Occurred()) PyErr_Clear();
  PyObject* defaults = PyFunction_GetDefaults(fn);   // borrowed, may be null
  if (defaults && PyTuple_Check(defaults)) {
    Py_ssize_t n = PyTuple_GET_SIZE(defaults);
    for (Py_ssize_t i = 0; i < n; ++i) {
      Py_ssize_t arg = positional - n + i;
      if (arg >= 0 && arg < static_cast<Py_ssize_t>(code.varnames.size()))
        add(code.varnames[static_cast<size_t>(arg)], PyTuple_GET_ITEM(defaults, i));
    }
  }
  PyObject* kwdefaults = PyFunction_GetKwDefaults(fn);   // borrowed dict, may be null
  if (kwdefaults && PyDict_Check(kwdefaults)) {
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    while (PyDict_Next(kwdefaults, &pos, &key, &value))
      if (PyUnicode_Check(key)) add(PyUnicode_AsUTF8(key), value);
  }
  return out;
}

}  // namespace cj::bytecode
