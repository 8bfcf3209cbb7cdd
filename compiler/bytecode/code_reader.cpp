#include "bytecode/code_reader.h"

#include <algorithm>
#include <unordered_map>

#include "support/error.h"

namespace cj::bytecode {
namespace {

[[noreturn]] void fail(const std::string& file, int line, const std::string& construct,
                       const std::string& message) {
  throw CompileError(file, line, 0, construct, message);
}

std::vector<std::string> stringTuple(PyObject* code, const char* attr) {
  std::vector<std::string> out;
  PyRef t = getAttr(code, attr);
  if (!t || !PyTuple_Check(t.get())) return out;
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(t.get()); ++i) {
    std::string s;
    toString(PyTuple_GET_ITEM(t.get(), i), &s);
    out.push_back(std::move(s));
  }
  return out;
}

int intAttr(PyObject* obj, const char* attr) {
  PyRef v = getAttr(obj, attr);
  if (!v || !PyLong_Check(v.get())) return 0;
  long r = PyLong_AsLong(v.get());
  if (r == -1 && PyErr_Occurred()) { PyErr_Clear(); return 0; }
  return static_cast<int>(r);
}

// co_positions() (3.11+): one (line, end_line, col, end_col) per code unit.
// Loc.col is 1-based; CPython's is 0-based.
bool readColumns(PyObject* code, std::vector<ir::Loc>& locs) {
  PyRef it = PyRef::steal(PyObject_CallMethod(code, "co_positions", nullptr));
  if (!it) { PyErr_Clear(); return false; }
  PyRef iter = PyRef::steal(PyObject_GetIter(it.get()));
  if (!iter) { PyErr_Clear(); return false; }
  size_t i = 0;
  while (PyRef item = PyRef::steal(PyIter_Next(iter.get()))) {
    if (i >= locs.size()) break;
    PyObject* t = item.get();
    if (PyTuple_Check(t) && PyTuple_GET_SIZE(t) >= 3) {
      PyObject* line = PyTuple_GET_ITEM(t, 0);
      PyObject* col = PyTuple_GET_ITEM(t, 2);
      if (PyLong_Check(line)) locs[i].line = static_cast<int>(PyLong_AsLong(line));
      if (PyLong_Check(col)) locs[i].col = static_cast<int>(PyLong_AsLong(col)) + 1;
    }
    ++i;
  }
  PyErr_Clear();
  return true;
}

// co_lines() (3.10, PEP 626): (start byte, end byte, line or None) ranges;
// lines only, so every column stays 0 ("no column").
void readLines(PyObject* code, std::vector<ir::Loc>& locs) {
  PyRef it = PyRef::steal(PyObject_CallMethod(code, "co_lines", nullptr));
  if (!it) { PyErr_Clear(); return; }
  PyRef iter = PyRef::steal(PyObject_GetIter(it.get()));
  if (!iter) { PyErr_Clear(); return; }
  while (PyRef item = PyRef::steal(PyIter_Next(iter.get()))) {
    PyObject* t = item.get();
    if (!PyTuple_Check(t) || PyTuple_GET_SIZE(t) < 3) continue;
    PyObject* start = PyTuple_GET_ITEM(t, 0);
    PyObject* end = PyTuple_GET_ITEM(t, 1);
    PyObject* line = PyTuple_GET_ITEM(t, 2);
    if (!PyLong_Check(start) || !PyLong_Check(end) || !PyLong_Check(line)) continue;
    const long first = PyLong_AsLong(start) / 2, last = PyLong_AsLong(end) / 2;
    for (long u = std::max(first, 0L); u < last && u < static_cast<long>(locs.size()); ++u)
      locs[u].line = static_cast<int>(PyLong_AsLong(line));
  }
  PyErr_Clear();
}

std::vector<ir::Loc> readPositions(PyObject* code, size_t units) {
  std::vector<ir::Loc> locs(units);
  if (!readColumns(code, locs)) readLines(code, locs);
  return locs;
}

// 3.13's superinstructions and the two instructions each stands for (PAIR4:
// the first part takes the high four bits of the argument, the second the low).
struct SuperInsn {
  NOp op, first, second;
};
constexpr SuperInsn kSuperInsns[] = {
    {NOp::LoadFastLoadFast, NOp::LoadFast, NOp::LoadFast},
    {NOp::StoreFastStoreFast, NOp::StoreFast, NOp::StoreFast},
    {NOp::StoreFastLoadFast, NOp::StoreFast, NOp::LoadFast},
};

const SuperInsn* superInsn(NOp op) {
  for (const SuperInsn& s : kSuperInsns)
    if (s.op == op) return &s;
  return nullptr;
}

// 3.13's CALL_KW and 3.10's CALL_FUNCTION_KW take their keyword names from
// the stack, where the LOAD_CONST just before put them; that pair becomes
// 3.12's KW_NAMES + CALL (3.10: + CALL_FUNCTION), so the decoder reads one
// form of keyword call.
void normaliseCallKw(CodeInfo& ci, Insn& call, NOp call_op) {
  if (ci.insns.empty() || ci.insns.back().op != NOp::LoadConst)
    fail(ci.filename, call.loc.line, call.info->name,
         std::string(call.info->name) + " does not follow the constant of its keyword names");
  ci.insns.back().op = NOp::KwNames;
  call.op = call_op;
}

// FOR_ITER names the END_FOR after its loop as the target, but on exhaustion
// the interpreter pops the iterator itself and continues after END_FOR (3.12:
// END_FOR would pop the value and the iterator) or after END_FOR and the
// POP_TOP that follows it (3.13: END_FOR pops the value, POP_TOP the
// iterator). 3.11's FOR_ITER jumps past the loop directly.
int forIterExit(const std::vector<Insn>& insns, int target) {
  switch (insns[target].op) {
    case NOp::EndFor: return target + 1;
    case NOp::EndForValue: return target + 2;
    default: return target;
  }
}

}  // namespace

const char* interpreterVersionTag() {
#if PY_MAJOR_VERSION == 3 && PY_MINOR_VERSION == 10
  return "3.10";
#elif PY_MAJOR_VERSION == 3 && PY_MINOR_VERSION == 11
  return "3.11";
#elif PY_MAJOR_VERSION == 3 && PY_MINOR_VERSION == 12
  return "3.12";
#elif PY_MAJOR_VERSION == 3 && PY_MINOR_VERSION == 13
  return "3.13";
#else
  return PY_VERSION;
#endif
}

CodeInfo readFunction(PyObject* fn) {
  CodeInfo ci;
  if (!fn || !PyFunction_Check(fn)) {
    std::string what = fn ? typeNameOf(fn) : "NULL";
    fail("", 0, "function", "expected a Python function, got an object of type '" + what + "'");
  }
  ci.function = PyRef::borrow(fn);
  ci.code = PyRef::borrow(PyFunction_GetCode(fn));
  PyObject* code = ci.code.get();
  ci.filename = attrString(code, "co_filename");
  // The function's __name__ (which decorators may have set) names it in IR.
  ci.name = attrString(fn, "__name__");
  if (ci.name.empty()) ci.name = attrString(code, "co_name");
  ci.qualname = attrString(code, "co_qualname");
  if (ci.qualname.empty()) ci.qualname = attrString(fn, "__qualname__");   // 3.10
  if (ci.qualname.empty()) ci.qualname = ci.name;
  ci.first_line = intAttr(code, "co_firstlineno");

  const OpcodeInfo* table = PY_MAJOR_VERSION == 3 ? opcodeTable(PY_MINOR_VERSION) : nullptr;
  if (!table)
    fail(ci.filename, ci.first_line, "Python " PY_VERSION,
         "cudajit decodes the bytecode of CPython 3.10 to 3.13 only; this is " PY_VERSION);

  ci.globals = PyRef::borrow(PyFunction_GetGlobals(fn));
  ci.builtins = getAttr(fn, "__builtins__");
  ci.closure = PyRef::borrow(PyFunction_GetClosure(fn));
  ci.consts = getAttr(code, "co_consts");
  if (!ci.consts || !PyTuple_Check(ci.consts.get()))
    fail(ci.filename, ci.first_line, "co_consts", "cannot read the function's constants");
  ci.flags = intAttr(code, "co_flags");
  ci.num_args = intAttr(code, "co_argcount") + intAttr(code, "co_kwonlyargcount");
  ci.varnames = stringTuple(code, "co_varnames");
  ci.names = stringTuple(code, "co_names");
  ci.freevars = stringTuple(code, "co_freevars");
  ci.cellvars = stringTuple(code, "co_cellvars");
  // LOAD_DEREF's argument counts the locals first from 3.11 on; 3.10's counts
  // the cell variables, then the free ones.
  ci.first_free_var = static_cast<int>(PY_MINOR_VERSION >= 11 ? ci.varnames.size() : ci.cellvars.size());
  PyRef exc = getAttr(code, "co_exceptiontable");
  ci.has_exception_table = exc && PyBytes_Check(exc.get()) && PyBytes_GET_SIZE(exc.get()) > 0;

  // co_code is the de-specialised bytecode (adaptive and instrumented opcodes
  // replaced by their base form, caches zeroed).
  PyRef bytes = getAttr(code, "co_code");
  if (!bytes || !PyBytes_Check(bytes.get()))
    fail(ci.filename, ci.first_line, "co_code", "cannot read the function's bytecode");
  const auto* raw = reinterpret_cast<const unsigned char*>(PyBytes_AS_STRING(bytes.get()));
  const size_t units = static_cast<size_t>(PyBytes_GET_SIZE(bytes.get())) / 2;
  std::vector<ir::Loc> locs = readPositions(code, units);

  // Decode; remember which code unit starts which instruction (a jump may
  // land on an EXTENDED_ARG prefix or on the opcode itself).
  std::unordered_map<int, int> insn_at;
  int ext = 0, prefix_start = -1;
  ir::Loc last_loc{ci.first_line, 0};
  for (size_t u = 0; u < units; ++u) {
    const int opcode = raw[2 * u], oparg = raw[2 * u + 1];
    const OpcodeInfo& info = table[opcode];
    if (!info.name)
      fail(ci.filename, locs[u].line, "opcode " + std::to_string(opcode),
           "unknown opcode " + std::to_string(opcode) + " in the bytecode");
    if (info.op == NOp::Cache) continue;
    if (info.op == NOp::ExtendedArg) {
      if (prefix_start < 0) prefix_start = static_cast<int>(u);
      ext = (ext | oparg) << 8;
      continue;
    }
    Insn in;
    in.op = info.op;
    in.info = &info;
    in.offset = static_cast<int>(u);
    const int full = ext | oparg;
    ext = 0;
    switch (info.arg) {
      case ArgMode::PLAIN: in.arg = full; break;
      case ArgMode::LOWBIT: in.arg = full >> 1; in.flag = full & 1; break;
      case ArgMode::FLAG: in.arg = full; in.flag = true; break;
      case ArgMode::SHIFT4: in.arg = full >> 4; break;
      case ArgMode::SHIFT5: in.arg = full >> 5; break;
      case ArgMode::PAIR4: in.arg = full >> 4; break;
      case ArgMode::IMPLIED: in.arg = info.implied; break;
    }
    // Relative jumps count from the unit after this instruction's caches.
    const int next = static_cast<int>(u) + 1 + info.caches;
    if (info.jump == JumpKind::FWD) in.target = next + full;
    if (info.jump == JumpKind::BACK) in.target = next - full;
    if (info.jump == JumpKind::ABS) in.target = full;
    // Instructions without a recorded position (implicit returns, jumps the
    // compiler inserted) keep the line of the one before.
    if (locs[u].line > 0) {
      in.loc = locs[u];
      last_loc = locs[u];
    } else {
      in.loc = ir::Loc{last_loc.line, 0};
    }
    const int index = static_cast<int>(ci.insns.size());
    insn_at[static_cast<int>(u)] = index;
    if (prefix_start >= 0) insn_at[prefix_start] = index;
    prefix_start = -1;
    if (in.op == NOp::CallKw) normaliseCallKw(ci, in, NOp::Call);
    if (in.op == NOp::CallFunctionKw) normaliseCallKw(ci, in, NOp::CallFunction);
    if (in.op == NOp::DupTopTwo) {
      // [a, b] -> [a, b, a, b]; a jump to it lands on the first COPY.
      in.op = NOp::Copy;
      in.arg = 2;
      ci.insns.push_back(in);
    }
    if (const SuperInsn* s = superInsn(in.op)) {
      // A jump to the superinstruction lands on its first part.
      in.op = s->first;
      ci.insns.push_back(in);
      in.op = s->second;
      in.arg = full & 15;
    }
    ci.insns.push_back(in);
  }

  // Code units -> instruction indices.
  for (Insn& in : ci.insns) {
    if (in.info->jump == JumpKind::NOJ) continue;
    auto it = insn_at.find(in.target);
    if (it == insn_at.end())
      fail(ci.filename, in.loc.line, in.info->name,
           "jump to code unit " + std::to_string(in.target) + " that starts no instruction");
    in.target = it->second;
    if (in.op == NOp::ForIter) in.target = forIterExit(ci.insns, in.target);
    if (in.target >= static_cast<int>(ci.insns.size()))
      fail(ci.filename, in.loc.line, in.info->name, "jump past the end of the bytecode");
  }
  return ci;
}

}  // namespace cj::bytecode
