// Stage 1: CPython function -> untyped SSA IR.
//
// Reads the code object through the C API (co_code, co_consts, co_names,
// co_varnames, co_exceptiontable, co_positions / co_lines), normalises the
// opcodes of the running interpreter (3.10 to 3.13) into one instruction form,
// splits basic blocks, and simulates the value stack to build SSA with block
// parameters. Globals, builtins and closure cells are frozen here: every
// LOAD_GLOBAL / LOAD_DEREF becomes a `const` (numbers, tuples, None, symbols)
// or a reference to another decoded function; attribute loads on frozen
// objects are folded (cuda.threadIdx.x -> sym(cudajit.threadIdx.x)).
//
// After this stage no Python object is needed: the module is plain C++ data.
#pragma once
#include <Python.h>

#include <memory>

#include "ir/ir.h"

namespace cj::bytecode {

// Python object classification rules for frozen globals:
//   int/float/bool/complex/None/str        -> Const of that kind
//   tuple of the above                      -> Const tuple
//   object with attribute `_cudajit_symbol_` (a str) -> Const::symbol(that str)
//   module `m` (math, numpy, cmath, operator, builtins...) -> symbol(m.__name__)
//   builtin function / numpy ufunc / numpy scalar type -> symbol("<module>.<name>"),
//       module normalised: builtins.*, math.*, cmath.*, numpy.* (numpy.float32, numpy.sqrt)
//   object with attribute `_cudajit_device_py_func_` (a device-function
//       dispatcher) -> the Python function is decoded too (once per module),
//       appended to the module, and referenced as Const::symbol("fn:<ir name>")
//   anything else -> CompileError naming the global, its Python type, file and line
//
// Throws CompileError (file, line, construct) for unsupported opcodes or
// constructs, and for an interpreter version other than 3.11 / 3.12 / 3.13.
std::unique_ptr<ir::Module> decodeFunction(PyObject* py_function);

// The version tag that selects golden expectations: "3.11", "3.12", "3.13".
const char* pythonVersionTag();

}  // namespace cj::bytecode
