// Reads a Python function's code object through the C API into plain C++
// data: names, constants, closure, and the instruction list in normalised form
// (caches and EXTENDED_ARG folded away, jump targets resolved to instruction
// indices, a source location on every instruction).
#pragma once
#include <Python.h>

#include <string>
#include <vector>

#include "bytecode/opcodes.h"
#include "bytecode/pyref.h"
#include "ir/ir.h"

namespace cj::bytecode {

struct Insn {
  NOp op = NOp::Nop;
  int arg = 0;          // decoded argument (see ArgMode)
  bool flag = false;    // LOAD_GLOBAL: push NULL; LOAD_ATTR: method form
  int offset = 0;       // code unit of the opcode
  int target = -1;      // jumps: index of the target instruction
  ir::Loc loc;
  const OpcodeInfo* info = nullptr;
};

struct CodeInfo {
  PyRef function;       // the Python function
  PyRef code;
  PyRef globals;        // function.__globals__ (dict)
  PyRef builtins;       // function.__builtins__ (dict or module)
  PyRef closure;        // function.__closure__ (tuple of cells or None)
  PyRef consts;         // co_consts (tuple)
  std::string name;       // function.__name__: the IR name (before uniquing)
  std::string qualname;   // co_qualname (3.10: the function's __qualname__)
  std::string filename;
  int first_line = 0;
  int flags = 0;        // co_flags
  int num_args = 0;     // positional (incl. positional-only) + keyword-only
  std::vector<std::string> varnames, names, freevars, cellvars;
  int first_free_var = 0;   // LOAD_DEREF's argument of freevars[0]
  bool has_exception_table = false;
  std::vector<Insn> insns;
};

// Throws CompileError when `fn` is not a Python function or the interpreter
// is not 3.10 to 3.13.
CodeInfo readFunction(PyObject* fn);

// "3.10" ... "3.13" (the interpreter this module was built for).
const char* interpreterVersionTag();

}  // namespace cj::bytecode
