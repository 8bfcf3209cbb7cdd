#include "bytecode/constructs.h"

#include "support/error.h"

namespace cj::bytecode {
namespace {

// Code objects the compiler names by what created them.
struct NestedCodeName {
  const char* co_name;
  const char* construct;
};
constexpr NestedCodeName kNestedCode[] = {
    {"<lambda>", "lambda"},          {"<listcomp>", "comprehension"},
    {"<setcomp>", "comprehension"},  {"<dictcomp>", "comprehension"},
    {"<genexpr>", "generator expression"},
};

// Opcodes that reveal a construct wherever they appear, in the order we
// report them (the first construct found wins).
struct Signature {
  const char* opname;
  const char* construct;
  const char* message;
};
constexpr Signature kSignatures[] = {
    {"LIST_APPEND", "comprehension", "list comprehensions are not supported in kernels"},
    {"SET_ADD", "comprehension", "set comprehensions are not supported in kernels"},
    {"MAP_ADD", "comprehension", "dict comprehensions are not supported in kernels"},
    {"BEFORE_WITH", "with", "`with` statements are not supported in kernels"},
    {"BEFORE_ASYNC_WITH", "with", "`async with` statements are not supported in kernels"},
    {"PUSH_EXC_INFO", "try/except", "try/except and try/finally are not supported in kernels"},
    // 3.10 opens a `with` and a `try` with these (it has no exception table).
    {"SETUP_WITH", "with", "`with` statements are not supported in kernels"},
    {"SETUP_ASYNC_WITH", "with", "`async with` statements are not supported in kernels"},
    {"SETUP_FINALLY", "try/except", "try/except and try/finally are not supported in kernels"},
};

const char* nestedConstruct(const CodeInfo& code, size_t make_function) {
  // The code object is the nearest constant loaded before MAKE_FUNCTION.
  for (size_t j = make_function; j-- > 0;) {
    const Insn& in = code.insns[j];
    if (in.op != NOp::LoadConst) continue;
    PyObject* c = PyTuple_GetItem(code.consts.get(), in.arg);
    if (!c) { PyErr_Clear(); break; }
    if (!PyCode_Check(c)) continue;
    std::string name = attrString(c, "co_name");
    for (const auto& row : kNestedCode)
      if (name == row.co_name) return row.construct;
    return "nested function";
  }
  return "nested function";
}

[[noreturn]] void reject(const CodeInfo& code, ir::Loc loc, const std::string& construct,
                         const std::string& message, const std::string& hint = {}) {
  throw CompileError(code.filename, loc.line, loc.col, construct, message, hint);
}

}  // namespace

void rejectUnsupportedConstructs(const CodeInfo& code) {
  const ir::Loc head{code.first_line, 0};
  if (code.flags & (CO_COROUTINE | CO_ASYNC_GENERATOR))
    reject(code, head, "async function",
           "'" + code.qualname + "' is an async function; kernels must be plain functions");
  if (code.flags & CO_GENERATOR)
    reject(code, head, "generator",
           "'" + code.qualname + "' is a generator (it uses yield); kernels and device "
           "functions must be plain functions");
  if (code.flags & CO_VARARGS)
    reject(code, head, "*args", "'" + code.qualname + "' takes *args; kernels need a fixed argument list");
  if (code.flags & CO_VARKEYWORDS)
    reject(code, head, "**kwargs", "'" + code.qualname + "' takes **kwargs; kernels need a fixed argument list");

  for (size_t i = 0; i < code.insns.size(); ++i) {
    if (std::string(code.insns[i].info->name) != "MAKE_FUNCTION") continue;
    const char* construct = nestedConstruct(code, i);
    reject(code, code.insns[i].loc, construct,
           std::string(construct) + " inside a kernel or device function is not supported",
           "define helpers at module level with @cudajit.jit(device=True)");
  }
  for (const Signature& sig : kSignatures)
    for (const Insn& in : code.insns)
      if (std::string(in.info->name) == sig.opname) reject(code, in.loc, sig.construct, sig.message);
  if (code.has_exception_table)
    reject(code, head, "try/except", "exception handling is not supported in kernels");
  if (!code.cellvars.empty())
    reject(code, head, "closure created inside kernel",
           "variable '" + code.cellvars[0] + "' is captured by an inner function; "
           "closures cannot be created inside kernels");
}

}  // namespace cj::bytecode
