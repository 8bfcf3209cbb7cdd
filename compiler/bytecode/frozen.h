// Classifies a Python object found at decode time (a global, a builtin, a
// closure cell, the result of an attribute load on one of those) into what
// the IR can hold: a constant, a symbol, or a device function to decode.
// The rules are listed in decoder.h.
#pragma once
#include <Python.h>

#include <string>

#include "bytecode/pyref.h"
#include "ir/ir.h"

namespace cj::bytecode {

struct Frozen {
  enum class Kind { Const, DeviceFunction, Unsupported };
  Kind kind = Kind::Unsupported;
  ir::Const value;         // Const (numbers, None, str, tuples, symbols)
  // Const from a numpy scalar (np.float32(0.5)): its type's symbol
  // ("numpy.float32"). The decoder emits `call sym(numpy.float32), const 0.5`
  // so that the constant keeps its width, as numba types it.
  std::string numpy_type;
  PyRef device_py_func;    // DeviceFunction: the Python function to decode
  std::vector<std::string> device_signatures;   // DeviceFunction: its declared signatures (numba spelling)
  std::string why;         // Unsupported: what the object is and what would work
  std::string hint;        // Unsupported: optional fix
};

Frozen classifyObject(PyObject* obj);

// Constants of co_consts: numbers, None, str, tuples of those.
Frozen classifyConstant(PyObject* obj);

// True for the symbols cudajit defines (cudajit, cudajit.threadIdx, ...):
// attribute loads on them that do not resolve to a Python object still name a
// symbol (cudajit.threadIdx.x) and are checked by type inference.
bool isCudajitSymbol(const ir::Const& c);

}  // namespace cj::bytecode
