// Builds the untyped SSA IR of one Python function from its normalised
// instructions: splits basic blocks, simulates CPython's value stack per
// block, and joins values with block parameters.
#pragma once
#include <Python.h>

#include <functional>
#include <string>

#include "bytecode/code_reader.h"
#include "ir/ir.h"

namespace cj::bytecode {

struct DecodeContext {
  // Decodes a device function's Python function into the module (once) and
  // returns its IR function name.
  // `signatures`: the numba signature strings it was declared with (may be empty).
  std::function<std::string(PyObject* py_function, const std::vector<std::string>& signatures)> device_function;
};

// Fills `fn` (empty, already in its module) from `code`. Throws CompileError.
void decodeInto(const CodeInfo& code, ir::Function* fn, DecodeContext& ctx);

}  // namespace cj::bytecode
