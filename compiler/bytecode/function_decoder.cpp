#include "bytecode/function_decoder.h"

#include "bytecode/defaults.h"

#include <algorithm>
#include <unordered_map>

#include "bytecode/cfg.h"
#include "bytecode/cleanup.h"
#include "bytecode/frozen.h"
#include "support/error.h"

namespace cj::bytecode {
namespace {

using ir::Instr;
using ir::Op;

// BINARY_OP's argument (NB_* order); the in-place forms follow at +13.
constexpr int kNumBinaryOps = 13;
constexpr Op kBinaryOps[kNumBinaryOps] = {
    Op::Add,  Op::BitAnd, Op::FloorDiv, Op::LShift, Op::MatMul, Op::Mul,
    Op::Mod,  Op::BitOr,  Op::Pow,      Op::RShift, Op::Sub, Op::TrueDiv, Op::BitXor,
};

// COMPARE_OP's argument (cmp_op order).
constexpr Op kCompareOps[] = {Op::Lt, Op::Le, Op::Eq, Op::Ne, Op::Gt, Op::Ge};

// CALL_INTRINSIC_1's argument (3.12): the construct that produced it.
constexpr const char* kIntrinsic1[] = {
    "CALL_INTRINSIC_1",   // INVALID
    "interactive statement",
    "import",
    "generator",
    "generator",
    nullptr,              // UNARY_POSITIVE: supported
    "star unpacking",     // LIST_TO_TUPLE
    "type parameters", "type parameters", "type parameters", "type parameters",
    "type parameters",
};
constexpr int kIntrinsicUnaryPositive = 5;

// The values live at a program point: Python locals and CPython's stack.
struct State {
  std::vector<Instr*> locals;   // nullptr: not assigned on this path
  std::vector<Instr*> stack;    // nullptr: CPython's NULL (the empty callee slot of a call)
};

// What a block parameter carries.
struct Slot {
  bool stack;
  int index;
};

struct IncomingEdge {
  Instr* term;   // the branch
  int succ;      // which of its successors
  State state;   // values at the branch
};

// The SSA side of a CFG block.
struct BlockSsa {
  ir::Block* ir = nullptr;
  std::vector<Slot> param_slots;        // what each parameter of `ir` carries
  std::vector<IncomingEdge> incoming;   // branches to this block, with their values
};

class FunctionDecoder {
 public:
  FunctionDecoder(const CodeInfo& code, ir::Function* fn, DecodeContext& ctx)
      : code_(code), fn_(fn), ctx_(ctx), b_(fn, nullptr) {}

  void run() {
    cfg_ = buildCfg(code_);
    ssa_.resize(cfg_.blocks.size());
    fn_->filename = code_.filename;
    fn_->py_name = code_.qualname;
    fn_->first_line = code_.first_line;
    fn_->return_type = unknownTy();

    // bb0 holds the arguments and the undefs; it branches to the first
    // bytecode block (which may itself be a loop header).
    entry_ = fn_->addBlock();
    State initial;
    initial.locals.assign(code_.varnames.size(), nullptr);
    for (int i = 0; i < code_.num_args && i < static_cast<int>(code_.varnames.size()); ++i) {
      fn_->arg_names.push_back(code_.varnames[i]);
      initial.locals[i] = entry_->addParam(unknownTy(), code_.varnames[i]);
    }
    for (int idx : cfg_.order) ssa_[idx].ir = fn_->addBlock();
    b_.setBlock(entry_);
    b_.setLoc(ir::Loc{code_.first_line, 0});
    for (auto& [name, value] : readDefaults(code_)) constant(value)->var = kDefaultPrefix + name;
    Instr* enter = b_.br(ssa_[0].ir, {});
    ssa_[0].incoming.push_back({enter, 0, initial});

    for (int idx : cfg_.order) buildBlock(idx);
    fillEdgeArgs();
    cleanupDecoded(*fn_);
  }

 private:
  // ---- errors ------------------------------------------------------------------
  [[noreturn]] void fail(ir::Loc loc, const std::string& construct, const std::string& message,
                         const std::string& hint = {}) const {
    throw CompileError(code_.filename, loc.line, loc.col, construct, message, hint);
  }

  // ---- SSA construction --------------------------------------------------------------
  State enterBlock(int idx) {
    BlockSsa& bb = ssa_[idx];
    const ir::Loc loc = code_.insns[cfg_.blocks[idx].first].loc;
    const bool header = cfg_.isLoopHeader(idx);
    if (bb.incoming.empty()) fail(loc, "bytecode", "block with no incoming edge");
    const size_t depth = bb.incoming[0].state.stack.size();
    for (const auto& e : bb.incoming)
      if (e.state.stack.size() != depth)
        fail(loc, "bytecode", "stack depths disagree where control flow joins");

    State st;
    auto join = [&](bool is_stack, int index, const std::string& var) -> Instr* {
      auto value = [&](const IncomingEdge& e) {
        return is_stack ? e.state.stack[index] : e.state.locals[index];
      };
      Instr* first = value(bb.incoming[0]);
      bool same = true;
      for (const auto& e : bb.incoming) same = same && value(e) == first;
      if (is_stack && !first) {
        if (!same) fail(loc, "bytecode", "a call's NULL slot differs where control flow joins");
        return nullptr;   // the NULL slot stays NULL (checked again on back edges)
      }
      // A loop header cannot know its back-edge values yet: it gets a
      // parameter for everything; cleanup drops the ones the loop keeps.
      if (same && !header) return first;
      bb.param_slots.push_back({is_stack, index});
      return bb.ir->addParam(unknownTy(), var);
    };
    st.locals.resize(code_.varnames.size());
    for (size_t k = 0; k < code_.varnames.size(); ++k)
      st.locals[k] = join(false, static_cast<int>(k), code_.varnames[k]);
    st.stack.resize(depth);
    for (size_t j = 0; j < depth; ++j) st.stack[j] = join(true, static_cast<int>(j), "");
    return st;
  }

  void fillEdgeArgs() {
    for (int idx : cfg_.order) {
      BlockSsa& bb = ssa_[idx];
      const ir::Loc loc = code_.insns[cfg_.blocks[idx].first].loc;
      for (auto& e : bb.incoming) {
        if (e.state.stack.size() != bb.incoming[0].state.stack.size())
          fail(loc, "bytecode", "stack depths disagree where a loop closes");
        for (size_t j = 0; j < e.state.stack.size(); ++j)
          if ((e.state.stack[j] == nullptr) != (bb.incoming[0].state.stack[j] == nullptr))
            fail(loc, "bytecode", "a call's NULL slot differs where a loop closes");
        std::vector<Instr*> args;
        for (const Slot& s : bb.param_slots) {
          Instr* v = s.stack ? e.state.stack[s.index] : e.state.locals[s.index];
          if (!v) v = undefFor(s.index, loc);
          args.push_back(v);
        }
        e.term->setEdgeArgs(e.succ, std::move(args));
      }
    }
  }

  // The value of a local read before any assignment: one `undef` per local,
  // in the entry block (before its branch) so that it dominates every use.
  Instr* undefFor(int local, ir::Loc loc) {
    auto it = undefs_.find(local);
    if (it != undefs_.end()) return it->second;
    auto u = fn_->make(Op::Undef, unknownTy(), {}, loc);
    u->var = code_.varnames[local];
    Instr* raw = ir::insertBefore(entry_, entry_->instrs.size() - 1, std::move(u));
    undefs_[local] = raw;
    return raw;
  }

  void addEdge(Instr* term, int succ, int target_block, const State& st) {
    ssa_[target_block].incoming.push_back({term, succ, st});
  }

  void buildBlock(int idx) {
    const CfgBlock& cb = cfg_.blocks[idx];
    State st = enterBlock(idx);
    b_.setBlock(ssa_[idx].ir);
    kw_names_.clear();
    for (int i = cb.first; i <= cb.last; ++i) {
      const Insn& in = code_.insns[i];
      b_.setLoc(in.loc);
      execute(in, cb, st);
    }
    if (!endsBlock(code_.insns[cb.last].op)) {
      Instr* t = b_.br(ssa_[cb.succs[0]].ir, {});
      addEdge(t, 0, cb.succs[0], st);
    }
  }

  // ---- the value stack ------------------------------------------------------------
  Instr* pop(State& st, const Insn& in) {
    if (st.stack.empty()) fail(in.loc, in.info->name, "value stack underflow");
    Instr* v = st.stack.back();
    st.stack.pop_back();
    return v;
  }
  Instr* popValue(State& st, const Insn& in) {
    Instr* v = pop(st, in);
    if (!v) fail(in.loc, in.info->name, "unexpected NULL on the value stack");
    return v;
  }
  std::vector<Instr*> popN(State& st, const Insn& in, int n) {
    std::vector<Instr*> v(static_cast<size_t>(n));
    for (int i = n - 1; i >= 0; --i) v[i] = popValue(st, in);
    return v;
  }
  Instr*& peek(State& st, const Insn& in, int depth /* 1 = top */) {
    if (depth < 1 || static_cast<size_t>(depth) > st.stack.size())
      fail(in.loc, in.info->name, "value stack underflow");
    return st.stack[st.stack.size() - depth];
  }

  Instr* emit(Op op, std::vector<Instr*> operands) { return b_.emit(op, unknownTy(), std::move(operands)); }
  Instr* constant(ir::Const c) { return b_.constant(std::move(c)); }

  PyObject* constObject(const Insn& in, int index) {
    if (index < 0 || index >= PyTuple_GET_SIZE(code_.consts.get()))
      fail(in.loc, in.info->name, "constant index out of range");
    return PyTuple_GET_ITEM(code_.consts.get(), index);
  }
  const std::string& nameAt(const Insn& in, int index) {
    if (index < 0 || index >= static_cast<int>(code_.names.size()))
      fail(in.loc, in.info->name, "name index out of range");
    return code_.names[index];
  }
  int localIndex(const Insn& in) {
    if (in.arg < 0 || in.arg >= static_cast<int>(code_.varnames.size()))
      fail(in.loc, in.info->name, "local variable index out of range");
    return in.arg;
  }

  // ---- frozen Python objects ------------------------------------------------------
  // `what` names the object in errors: "global 'x'", "closure variable 'x'", "math.foo".
  Instr* freeze(PyObject* obj, const std::string& what, const Insn& in) {
    Frozen f = classifyObject(obj);
    Instr* c = nullptr;
    switch (f.kind) {
      case Frozen::Kind::Const:
        c = constant(std::move(f.value));
        if (!f.numpy_type.empty()) {   // np.float32(0.5) -> float32(0.5): keeps the width
          Instr* type = constant(ir::Const::symbol(f.numpy_type));
          c = emit(Op::Call, {type, c});
        }
        break;
      case Frozen::Kind::DeviceFunction:
        c = constant(ir::Const::symbol("fn:" + ctx_.device_function(f.device_py_func.get(), f.device_signatures)));
        break;
      case Frozen::Kind::Unsupported:
        fail(in.loc, what,
             what + " of type '" + typeNameOf(obj) + "' cannot be used in a kernel (it is " +
                 f.why + ")",
             f.hint);
    }
    frozen_[c] = PyRef::borrow(obj);
    return c;
  }

  PyRef lookupGlobal(const std::string& name) {
    PyRef key = PyRef::steal(PyUnicode_FromStringAndSize(name.data(), static_cast<Py_ssize_t>(name.size())));
    if (!key) { PyErr_Clear(); return {}; }
    if (PyObject* v = PyDict_GetItemWithError(code_.globals.get(), key.get())) return PyRef::borrow(v);
    PyErr_Clear();
    PyObject* builtins = code_.builtins.get();
    if (!builtins) return {};
    if (PyDict_Check(builtins)) {
      PyObject* v = PyDict_GetItemWithError(builtins, key.get());
      PyErr_Clear();
      return PyRef::borrow(v);
    }
    return getAttr(builtins, name.c_str());
  }

  // owner.attr where owner is a frozen object: getattr now, then classify.
  Instr* foldAttr(Instr* owner, PyObject* obj, const std::string& attr, const Insn& in) {
    const bool cudajit = isCudajitSymbol(owner->cval);
    const std::string owner_name =
        owner->cval.kind == ir::Const::Kind::Symbol ? owner->cval.s : typeNameOf(obj);
    const std::string what = owner_name + "." + attr;
    PyRef value = getAttr(obj, attr.c_str());
    if (value) {
      Frozen f = classifyObject(value.get());
      if (f.kind != Frozen::Kind::Unsupported || !cudajit) return freeze(value.get(), what, in);
    }
    if (cudajit) return constant(ir::Const::symbol(what));
    fail(in.loc, what, "'" + owner_name + "' has no attribute '" + attr + "'");
  }

  // The message of a `raise`: "ValueError: text" when the exception and its
  // arguments are constants. A call that built the exception is dropped.
  std::string raiseMessage(Instr* exc) {
    auto className = [](const Instr* v) -> std::string {
      if (!v || v->op != Op::Const || v->cval.kind != ir::Const::Kind::Symbol) return "";
      const std::string& s = v->cval.s;
      return s.substr(s.rfind('.') + 1);
    };
    if (exc->op == Op::Call && !exc->operands.empty()) {
      std::string name = className(exc->operands[0]);
      std::string text;
      for (size_t i = 1; i < exc->operands.size(); ++i) {
        const Instr* a = exc->operands[i];
        if (a->op == Op::Const && a->cval.kind == ir::Const::Kind::Str)
          text += (text.empty() ? "" : ", ") + a->cval.s;
        else if (a->op == Op::Const)
          text += (text.empty() ? "" : ", ") + ir::constToString(a->cval);
      }
      auto& instrs = b_.block()->instrs;
      if (!instrs.empty() && instrs.back().get() == exc) {
        exc->dropAllReferences();   // its operands' use lists forget it
        instrs.pop_back();
      }
      if (name.empty()) name = "Exception";
      return text.empty() ? name : name + ": " + text;
    }
    std::string name = className(exc);
    return name.empty() ? "Exception" : name;
  }

  // ---- one instruction ------------------------------------------------------------
  // The stack and locals effects of the simplest opcodes are here; the
  // families (names, operators, containers, calls, control flow, raise)
  // have a function each below.
  void execute(const Insn& in, const CfgBlock& cb, State& st) {
    switch (in.op) {
      case NOp::Cache:
      case NOp::ExtendedArg:
      case NOp::Nop:
        return;
      case NOp::Unsupported:
        fail(in.loc, in.info->construct,
             std::string(in.info->construct) + " is not supported in kernels (" + in.info->name + ")");
      case NOp::PopTop:
        pop(st, in);
        return;
      case NOp::PushNull:
        st.stack.push_back(nullptr);
        return;
      case NOp::LoadConst:
        st.stack.push_back(loadConst(in, in.arg));
        return;
      case NOp::ReturnConst:
        b_.ret(loadConst(in, in.arg));
        return;
      case NOp::ReturnValue:
        b_.ret(popValue(st, in));
        return;
      case NOp::LoadFast: {
        int k = localIndex(in);
        st.stack.push_back(st.locals[k] ? st.locals[k] : undefFor(k, in.loc));
        return;
      }
      case NOp::LoadFastAndClear: {
        int k = localIndex(in);
        st.stack.push_back(st.locals[k] ? st.locals[k] : undefFor(k, in.loc));
        st.locals[k] = nullptr;
        return;
      }
      case NOp::StoreFast: {
        int k = localIndex(in);
        Instr* v = popValue(st, in);
        if (v->var.empty()) v->var = code_.varnames[k];
        st.locals[k] = v;
        return;
      }
      case NOp::LoadFastLoadFast:     // split by the code reader
      case NOp::StoreFastStoreFast:
      case NOp::StoreFastLoadFast:
      case NOp::CallKw:               // made KwNames + Call by the code reader
      case NOp::CallFunctionKw:       // made KwNames + CallFunction
      case NOp::DupTopTwo:            // made two Copy 2
        break;
      case NOp::LoadGlobal:
      case NOp::LoadGlobalNullAfter:
      case NOp::LoadAttr:
      case NOp::LoadAttrNullAfter:
      case NOp::LoadDeref:
        return executeName(in, st);
      case NOp::BinaryOp:
      case NOp::CompareOp:
      case NOp::IsOp:
      case NOp::UnaryNeg:
      case NOp::UnaryPos:
      case NOp::UnaryNot:
      case NOp::UnaryInvert:
      case NOp::CallIntrinsic1:
        return executeOperator(in, st);
      case NOp::BinarySubscr:
      case NOp::BuildSlice:
      case NOp::BinarySlice:
      case NOp::StoreSubscr:
      case NOp::StoreAttr:
      case NOp::BuildTuple:
      case NOp::UnpackSequence:
      case NOp::FormatValue:
      case NOp::ConvertValue:
      case NOp::BuildString:
        return executeContainer(in, st);
      case NOp::Copy:
        st.stack.push_back(peek(st, in, in.arg));
        return;
      case NOp::Swap:
        std::swap(peek(st, in, 1), peek(st, in, in.arg));
        return;
      case NOp::Rot: {   // [.., a, b, top] -> [.., top, a, b] (arg 3)
        if (in.arg < 1 || in.arg > static_cast<int>(st.stack.size()))
          fail(in.loc, in.info->name, "value stack underflow");
        std::rotate(st.stack.end() - in.arg, st.stack.end() - 1, st.stack.end());
        return;
      }
      case NOp::KwNames:
      case NOp::Call:
      case NOp::CallFunction:
        return executeCall(in, st);
      case NOp::Jump:
      case NOp::PopJumpIfFalse:
      case NOp::PopJumpIfTrue:
      case NOp::PopJumpIfNone:
      case NOp::PopJumpIfNotNone:
      case NOp::JumpIfFalseOrPop:
      case NOp::JumpIfTrueOrPop:
      case NOp::GetIter:
      case NOp::ForIter:
      case NOp::EndFor:
      case NOp::EndForValue:
        return executeControl(in, cb, st);
      case NOp::RaiseVarargs:
      case NOp::LoadAssertionError:
        return executeRaise(in, st);
    }
    notHandled(in);
  }

  [[noreturn]] void notHandled(const Insn& in) const {
    fail(in.loc, in.info->name, "opcode not handled by the decoder");
  }

  // The value of LOAD_GLOBAL / LOAD_ATTR, with the NULL slot of a call their
  // flag asks for: before the value in 3.11 and 3.12, after it in 3.13.
  void pushWithNull(State& st, const Insn& in, Instr* v) {
    const bool after = in.op == NOp::LoadGlobalNullAfter || in.op == NOp::LoadAttrNullAfter;
    if (in.flag && !after) st.stack.push_back(nullptr);
    st.stack.push_back(v);
    if (in.flag && after) st.stack.push_back(nullptr);
  }

  // Names: globals, attributes, closure variables (frozen where they can be).
  void executeName(const Insn& in, State& st) {
    switch (in.op) {
      case NOp::LoadGlobal:
      case NOp::LoadGlobalNullAfter: {
        const std::string& name = nameAt(in, in.arg);
        PyRef obj = lookupGlobal(name);
        if (!obj) fail(in.loc, "global '" + name + "'", "name '" + name + "' is not defined");
        pushWithNull(st, in, freeze(obj.get(), "global '" + name + "'", in));
        return;
      }
      case NOp::LoadAttr:
      case NOp::LoadAttrNullAfter: {
        const std::string& attr = nameAt(in, in.arg);
        Instr* owner = popValue(st, in);
        Instr* v;
        auto it = frozen_.find(owner);
        if (it != frozen_.end()) {
          v = foldAttr(owner, it->second.get(), attr, in);
        } else {
          v = emit(Op::GetAttr, {owner});
          v->name = attr;
        }
        // Method form: CALL sees [NULL, bound callable] (3.13: [bound
        // callable, NULL]); a method call on a runtime value is
        // `call (getattr v .name), args`.
        pushWithNull(st, in, v);
        return;
      }
      case NOp::LoadDeref: {
        // No cell variables (rejected earlier): the argument names a free variable.
        const int j = in.arg - code_.first_free_var;
        if (j < 0 || j >= static_cast<int>(code_.freevars.size()) || !code_.closure ||
            !PyTuple_Check(code_.closure.get()) || j >= PyTuple_GET_SIZE(code_.closure.get()))
          fail(in.loc, "closure", "cannot resolve closure variable " + std::to_string(in.arg));
        const std::string& name = code_.freevars[j];
        PyObject* cell = PyTuple_GET_ITEM(code_.closure.get(), j);
        PyObject* v = PyCell_Check(cell) ? PyCell_GET(cell) : nullptr;
        if (!v)
          fail(in.loc, "closure variable '" + name + "'",
               "closure variable '" + name + "' is referenced before assignment in the enclosing function");
        PyRef hold = PyRef::borrow(v);
        st.stack.push_back(freeze(v, "closure variable '" + name + "'", in));
        return;
      }
      default:
        break;
    }
    notHandled(in);
  }

  // Arithmetic, comparisons, identity, unary operators.
  void executeOperator(const Insn& in, State& st) {
    switch (in.op) {
      case NOp::BinaryOp: {
        int k = in.arg % kNumBinaryOps;
        if (in.arg < 0 || in.arg >= 2 * kNumBinaryOps)
          fail(in.loc, "BINARY_OP", "unknown BINARY_OP argument " + std::to_string(in.arg));
        Instr* rhs = popValue(st, in);
        Instr* lhs = popValue(st, in);
        st.stack.push_back(emit(kBinaryOps[k], {lhs, rhs}));
        return;
      }
      case NOp::CompareOp: {
        if (in.arg < 0 || in.arg >= 6)
          fail(in.loc, "COMPARE_OP", "unknown COMPARE_OP argument " + std::to_string(in.arg));
        Instr* rhs = popValue(st, in);
        Instr* lhs = popValue(st, in);
        st.stack.push_back(emit(kCompareOps[in.arg], {lhs, rhs}));
        return;
      }
      case NOp::IsOp: {
        Instr* rhs = popValue(st, in);
        Instr* lhs = popValue(st, in);
        st.stack.push_back(emit(in.arg ? Op::IsNot : Op::Is, {lhs, rhs}));
        return;
      }
      case NOp::UnaryNeg: st.stack.push_back(emit(Op::Neg, {popValue(st, in)})); return;
      case NOp::UnaryPos: st.stack.push_back(emit(Op::Pos, {popValue(st, in)})); return;
      case NOp::UnaryNot: st.stack.push_back(emit(Op::Not, {popValue(st, in)})); return;
      case NOp::UnaryInvert: st.stack.push_back(emit(Op::Invert, {popValue(st, in)})); return;
      case NOp::CallIntrinsic1: {
        constexpr int n = static_cast<int>(sizeof kIntrinsic1 / sizeof kIntrinsic1[0]);
        if (in.arg != kIntrinsicUnaryPositive) {
          const char* construct = in.arg >= 0 && in.arg < n ? kIntrinsic1[in.arg] : "CALL_INTRINSIC_1";
          fail(in.loc, construct, std::string(construct) + " is not supported in kernels");
        }
        st.stack.push_back(emit(Op::Pos, {popValue(st, in)}));
        return;
      }
      default:
        break;
    }
    notHandled(in);
  }

  // Subscripts, slices, tuples and unpacking.
  // f-string conversions: none and !s print a value the same way; !r and !a
  // have no device form.
  void checkConversion(const Insn& in, int conversion) {
    if (conversion == 2 || conversion == 3)
      fail(in.loc, "f-string", std::string("the conversion !") + (conversion == 2 ? "r" : "a") + " is not supported");
  }

  void executeContainer(const Insn& in, State& st) {
    switch (in.op) {
      case NOp::BinarySubscr: {
        Instr* idx = popValue(st, in);
        Instr* obj = popValue(st, in);
        st.stack.push_back(emit(Op::GetItem, {obj, idx}));
        return;
      }
      case NOp::BuildSlice: {   // slice objects: `call sym(builtins.slice), start, stop[, step]`
        Instr* step = in.arg == 3 ? popValue(st, in) : nullptr;
        Instr* stop = popValue(st, in);
        Instr* start = popValue(st, in);
        std::vector<Instr*> ops = {constant(ir::Const::symbol("builtins.slice")), start, stop};
        if (step) ops.push_back(step);
        st.stack.push_back(emit(Op::Call, ops));
        return;
      }
      case NOp::BinarySlice: {
        Instr* stop = popValue(st, in);
        Instr* start = popValue(st, in);
        Instr* obj = popValue(st, in);
        Instr* slice = emit(Op::Call, {constant(ir::Const::symbol("builtins.slice")), start, stop});
        st.stack.push_back(emit(Op::GetItem, {obj, slice}));
        return;
      }
      case NOp::StoreSubscr: {
        Instr* idx = popValue(st, in);
        Instr* obj = popValue(st, in);
        Instr* v = popValue(st, in);
        b_.emit(Op::SetItem, voidTy(), {obj, idx, v});   // no result
        return;
      }
      case NOp::StoreAttr: {   // TOS is the object, TOS1 the value
        Instr* obj = popValue(st, in);
        Instr* v = popValue(st, in);
        Instr* set = b_.emit(Op::SetAttr, voidTy(), {obj, v});
        set->name = nameAt(in, in.arg);
        return;
      }
      case NOp::BuildTuple: {
        std::vector<Instr*> elems = popN(st, in, in.arg);
        // All-constant tuples (shapes such as (TPB, TPB)) fold to one constant.
        bool all_const = std::all_of(elems.begin(), elems.end(), [](Instr* e) { return e->op == Op::Const; });
        if (all_const) {
          std::vector<ir::Const> cs;
          for (Instr* e : elems) cs.push_back(e->cval);
          st.stack.push_back(constant(ir::Const::tuple(std::move(cs))));
        } else {
          st.stack.push_back(emit(Op::TupleMake, elems));
        }
        return;
      }
      // f-strings: `call sym(cudajit.fstring.value), value, spec` per formatted
      // value and `call sym(cudajit.fstring), parts...` for the whole; type
      // inference gives them a meaning as print's arguments only.
      case NOp::FormatValue: {
        Instr* spec = (in.arg & 4) ? popValue(st, in) : constant(ir::Const::none());
        Instr* value = popValue(st, in);
        checkConversion(in, in.arg & 3);
        st.stack.push_back(emit(Op::Call, {constant(ir::Const::symbol("cudajit.fstring.value")), value, spec}));
        return;
      }
      case NOp::ConvertValue:   // the value stays on the stack
        checkConversion(in, in.arg);
        return;
      case NOp::BuildString: {
        std::vector<Instr*> ops = {constant(ir::Const::symbol("cudajit.fstring"))};
        for (Instr* part : popN(st, in, in.arg)) ops.push_back(part);
        st.stack.push_back(emit(Op::Call, ops));
        return;
      }
      case NOp::UnpackSequence: {
        Instr* seq = popValue(st, in);
        const int n = in.arg;
        std::vector<Instr*> elems;
        if (seq->op == Op::TupleMake && static_cast<int>(seq->operands.size()) == n) {
          elems = seq->operands;
        } else if (seq->op == Op::Const && seq->cval.kind == ir::Const::Kind::Tuple &&
                   static_cast<int>(seq->cval.elems.size()) == n) {
          for (const ir::Const& c : seq->cval.elems) elems.push_back(constant(c));
        } else if (seq->op == Op::Const) {
          fail(in.loc, "unpacking", "cannot unpack " + ir::constToString(seq->cval) + " into " +
                                        std::to_string(n) + " values");
        } else {
          for (int i = 0; i < n; ++i) {
            Instr* e = emit(Op::TupleGet, {seq});
            e->index = i;
            elems.push_back(e);
          }
        }
        for (int i = n - 1; i >= 0; --i) st.stack.push_back(elems[i]);
        return;
      }
      default:
        break;
    }
    notHandled(in);
  }

  // Calls (with the keyword names KW_NAMES gave before).
  void executeCall(const Insn& in, State& st) {
    switch (in.op) {
      case NOp::KwNames: {
        kw_names_.clear();
        PyObject* names = constObject(in, in.arg);
        if (!PyTuple_Check(names)) fail(in.loc, "KW_NAMES", "keyword names are not a tuple");
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(names); ++i) {
          std::string s;
          toString(PyTuple_GET_ITEM(names, i), &s);
          kw_names_.push_back(std::move(s));
        }
        return;
      }
      case NOp::Call: {
        // Below the arguments lie [NULL, callable] or [method, self] (3.11,
        // 3.12; 3.10's CALL_METHOD), [callable, NULL] or [callable, self]
        // (3.13): the lower slot is the callee unless it is NULL, and a value
        // above a callee is the first argument (`self`; also the message
        // LOAD_ASSERTION_ERROR's call passes that way).
        std::vector<Instr*> args = popN(st, in, in.arg);
        Instr* upper = pop(st, in);
        Instr* lower = pop(st, in);
        if (!upper && !lower) fail(in.loc, in.info->name, "unexpected NULL on the value stack");
        Instr* callee = lower ? lower : upper;
        if (lower && upper) args.insert(args.begin(), upper);
        st.stack.push_back(emitCall(in, callee, std::move(args)));
        return;
      }
      case NOp::CallFunction: {   // 3.10: [callable, args]
        std::vector<Instr*> args = popN(st, in, in.arg);
        Instr* callee = popValue(st, in);
        st.stack.push_back(emitCall(in, callee, std::move(args)));
        return;
      }
      default:
        break;
    }
    notHandled(in);
  }

  // `call callee(args...)`, the last len(kw_names_) arguments by keyword.
  Instr* emitCall(const Insn& in, Instr* callee, std::vector<Instr*> args) {
    if (kw_names_.size() > args.size()) fail(in.loc, in.info->name, "more keyword names than arguments");
    std::vector<Instr*> operands{callee};
    operands.insert(operands.end(), args.begin(), args.end());
    Instr* c = emit(Op::Call, std::move(operands));
    c->names = std::move(kw_names_);
    kw_names_.clear();
    return c;
  }

  // Jumps, branches and the for-loop protocol: each ends the block.
  void executeControl(const Insn& in, const CfgBlock& cb, State& st) {
    auto fallthrough = [&] { return cb.succs.at(0); };
    auto target = [&] { return cfg_.block_of[in.target]; };
    auto branch = [&](Instr* cond, const State& if_true, int t, const State& if_false, int f) {
      Instr* term = b_.condBr(cond, ssa_[t].ir, {}, ssa_[f].ir, {});
      addEdge(term, 0, t, if_true);
      addEdge(term, 1, f, if_false);
    };
    switch (in.op) {
      case NOp::Jump: {
        Instr* t = b_.br(ssa_[target()].ir, {});
        addEdge(t, 0, target(), st);
        return;
      }
      case NOp::PopJumpIfFalse:
      case NOp::PopJumpIfTrue:
      case NOp::PopJumpIfNone:
      case NOp::PopJumpIfNotNone: {
        Instr* v = popValue(st, in);
        bool jump_if_true = in.op == NOp::PopJumpIfTrue || in.op == NOp::PopJumpIfNone;
        if (in.op == NOp::PopJumpIfNone || in.op == NOp::PopJumpIfNotNone)
          v = emit(Op::Is, {v, constant(ir::Const::none())});
        Instr* cond = emit(Op::Truth, {v});
        if (jump_if_true) branch(cond, st, target(), st, fallthrough());
        else branch(cond, st, fallthrough(), st, target());
        return;
      }
      case NOp::JumpIfFalseOrPop:
      case NOp::JumpIfTrueOrPop: {
        // The jump keeps the tested value (it is the result of `and`/`or`).
        Instr* v = peek(st, in, 1);
        if (!v) fail(in.loc, in.info->name, "unexpected NULL on the value stack");
        State popped = st;
        popped.stack.pop_back();
        Instr* cond = emit(Op::Truth, {v});
        if (in.op == NOp::JumpIfTrueOrPop) branch(cond, st, target(), popped, fallthrough());
        else branch(cond, popped, fallthrough(), st, target());
        return;
      }
      case NOp::GetIter:
        st.stack.push_back(emit(Op::GetIter, {popValue(st, in)}));
        return;
      case NOp::ForIter: {
        Instr* it = peek(st, in, 1);
        if (!it) fail(in.loc, in.info->name, "unexpected NULL on the value stack");
        Instr* ok = emit(Op::IterValid, {it});
        Instr* v = emit(Op::IterNext, {it});
        State body = st;
        body.stack.push_back(v);
        State done = st;
        done.stack.pop_back();
        branch(ok, body, fallthrough(), done, target());
        return;
      }
      // FOR_ITER's exhaustion continues past these (forIterExit in
      // code_reader.cpp); they keep CPython's stack effect all the same.
      case NOp::EndFor:
        pop(st, in);
        pop(st, in);
        return;
      case NOp::EndForValue:
        pop(st, in);
        return;
      default:
        break;
    }
    notHandled(in);
  }

  // raise and assert.
  void executeRaise(const Insn& in, State& st) {
    switch (in.op) {
      case NOp::RaiseVarargs: {
        if (in.arg == 0)
          fail(in.loc, "re-raise", "a bare `raise` (re-raising the current exception) is not supported in kernels");
        if (in.arg == 2) popValue(st, in);   // `from cause`: irrelevant on the GPU
        Instr* exc = popValue(st, in);
        std::string message = raiseMessage(exc);   // before emitting: it may drop exc
        b_.emit(Op::Raise, voidTy(), {})->name = std::move(message);
        return;
      }
      case NOp::LoadAssertionError: {
        Instr* c = constant(ir::Const::symbol("builtins.AssertionError"));
        frozen_[c] = PyRef::borrow(PyExc_AssertionError);
        st.stack.push_back(c);
        return;
      }
      default:
        break;
    }
    notHandled(in);
  }

  Instr* loadConst(const Insn& in, int index) {
    PyObject* obj = constObject(in, index);
    Frozen f = classifyConstant(obj);
    if (f.kind != Frozen::Kind::Const)
      fail(in.loc, "constant", "constant of type '" + typeNameOf(obj) + "' is not supported in kernels (it is " + f.why + ")");
    if (!f.numpy_type.empty())   // an int above INT64_MAX: uint64 (frozen.h)
      return emit(Op::Call, {constant(ir::Const::symbol(f.numpy_type)), constant(std::move(f.value))});
    return constant(std::move(f.value));
  }

  const CodeInfo& code_;
  ir::Function* fn_;
  DecodeContext& ctx_;
  ir::Builder b_;
  ir::Block* entry_ = nullptr;
  Cfg cfg_;
  std::vector<BlockSsa> ssa_;   // parallel to cfg_.blocks
  std::unordered_map<int, Instr*> undefs_;
  std::unordered_map<Instr*, PyRef> frozen_;   // const instr -> the Python object it froze
  std::vector<std::string> kw_names_;
};

}  // namespace

void decodeInto(const CodeInfo& code, ir::Function* fn, DecodeContext& ctx) {
  FunctionDecoder(code, fn, ctx).run();
}

}  // namespace cj::bytecode
