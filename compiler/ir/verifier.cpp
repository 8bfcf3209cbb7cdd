// The IR verifier: structure always, types when `typed`. It runs after every
// pass (passes/pass.h), so a broken invariant is reported at the pass that
// broke it. Messages are "func:bbN:vM: message" (an instruction without a
// result is named by its op: "func:bb2:store: ...").
#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/cfg.h"
#include "ir/intrinsics.h"
#include "ir/ir.h"
#include "ir/verify_tile.h"

namespace cj::ir {
namespace {

struct Failure {
  std::string message;
};

// Where each value is defined: its block and its position there (-1 for a
// block parameter, which is defined before every instruction).
struct DefSite {
  const Block* block;
  int pos;
};

std::vector<const Block*> successors(const Block* b) {
  std::vector<const Block*> out;
  if (const Instr* t = b->terminator())
    for (const Edge& e : t->succs)
      if (e.target) out.push_back(e.target);
  return out;
}

class Verifier {
 public:
  Verifier(const Function& fn, bool typed) : fn_(fn), typed_(typed) {}

  void run() {
    if (fn_.blocks.empty()) fail(nullptr, nullptr, "function has no blocks");
    if (typed_ && (!fn_.return_type || fn_.return_type == unknownTy()))
      fail(nullptr, nullptr, "return type is not inferred");
    collectDefinitions();
    DominatorTree dom(fn_);
    checkPreds();
    if (!fn_.entry()->preds.empty() || hasEdgeTo(fn_.entry()))
      fail(fn_.entry(), nullptr, "the entry block has predecessors");
    for (const auto& b : fn_.blocks) {
      for (const auto& p : b->params) checkParam(b.get(), p.get());
      if (b->instrs.empty()) fail(b.get(), nullptr, "block has no terminator");
      for (size_t i = 0; i < b->instrs.size(); ++i) {
        const Instr* in = b->instrs[i].get();
        bool last = i + 1 == b->instrs.size();
        if (in->parent != b.get()) fail(b.get(), in, "instruction's parent is not its block");
        if (in->op == Op::Param) fail(b.get(), in, "param among a block's instructions");
        if (last && !isTerminator(in->op)) fail(b.get(), in, "block does not end with a terminator");
        if (!last && isTerminator(in->op))
          fail(b.get(), in, "terminator '" + std::string(opName(in->op)) + "' in the middle of a block");
        checkStructure(b.get(), in);
        checkOperandsDominate(dom, b.get(), static_cast<int>(i), in);
        if (typed_) checkTypes(b.get(), in);
      }
    }
    checkUseLists();
  }

  [[noreturn]] void fail(const Block* b, const Instr* in, const std::string& message) const {
    std::string where = fn_.name;
    if (b) where += ":bb" + std::to_string(b->id);
    if (in) {
      if (in->type && in->type != voidTy()) where += ":v" + std::to_string(in->id);
      else where += ":" + std::string(opName(in->op));
    }
    throw Failure{where + ": " + message};
  }

 private:
  void collectDefinitions() {
    std::set<int> block_ids;
    std::set<int> value_ids;
    for (const auto& b : fn_.blocks) {
      if (!b) fail(nullptr, nullptr, "null block");
      if (b->parent != &fn_) fail(b.get(), nullptr, "block's parent is not its function");
      if (!block_ids.insert(b->id).second) fail(b.get(), nullptr, "block id used twice");
      blocks_.insert(b.get());
      for (size_t i = 0; i < b->params.size(); ++i) {
        const Instr* p = b->params[i].get();
        defs_[p] = {b.get(), -1};
        if (!value_ids.insert(p->id).second) fail(b.get(), p, "value id used twice");
      }
      for (size_t i = 0; i < b->instrs.size(); ++i) {
        const Instr* in = b->instrs[i].get();
        defs_[in] = {b.get(), static_cast<int>(i)};
        if (in->type && in->type != voidTy() && !value_ids.insert(in->id).second)
          fail(b.get(), in, "value id used twice");
      }
    }
  }

  bool hasEdgeTo(const Block* target) const {
    for (const auto& b : fn_.blocks)
      for (const Block* s : successors(b.get()))
        if (s == target) return true;
    return false;
  }

  // Block::preds must list exactly the blocks that branch to it.
  void checkPreds() {
    std::map<const Block*, std::set<const Block*>> actual;
    for (const auto& b : fn_.blocks)
      for (const Block* s : successors(b.get())) actual[s].insert(b.get());
    for (const auto& b : fn_.blocks) {
      std::set<const Block*> listed(b->preds.begin(), b->preds.end());
      if (listed != actual[b.get()])
        fail(b.get(), nullptr, "preds do not match the edges into the block (call computePreds)");
    }
  }

  void checkParam(const Block* b, const Instr* p) {
    if (p->op != Op::Param) fail(b, p, "block parameter is not a param");
    if (p->parent != b) fail(b, p, "parameter's parent is not its block");
    size_t pos = 0;
    while (b->params[pos].get() != p) ++pos;
    if (p->index != static_cast<int64_t>(pos))
      fail(b, p, "param index " + std::to_string(p->index) + " but position " + std::to_string(pos));
    if (!p->type) fail(b, p, "param has no type");
    if (typed_ && p->type == unknownTy()) fail(b, p, "type is '?' in typed IR");
  }

  void checkStructure(const Block* b, const Instr* in) {
    if (!in->type) fail(b, in, "instruction has no type");
    int arity = opArity(in->op);
    size_t n = in->operands.size();
    if (arity >= 0 && n != static_cast<size_t>(arity))
      fail(b, in, std::string(opName(in->op)) + " takes " + std::to_string(arity) + " operand(s), has " +
                      std::to_string(n));
    size_t min_operands = 0;
    switch (in->op) {
      case Op::Call: min_operands = 1; break;          // the callee
      case Op::ArrayLoad: min_operands = 1; break;     // the array
      case Op::ArrayView: min_operands = 2; break;     // the array and the offset
      case Op::ArrayStore: min_operands = 2; break;    // the array and the value
      default: break;
    }
    if (n < min_operands)
      fail(b, in, std::string(opName(in->op)) + " needs at least " + std::to_string(min_operands) +
                      " operand(s), has " + std::to_string(n));
    if (in->op == Op::Ret && n > 1) fail(b, in, "ret takes 0 or 1 operand, has " + std::to_string(n));
    for (const Instr* o : in->operands)
      if (!o) fail(b, in, "null operand");
    size_t want_succs = in->op == Op::Br ? 1 : in->op == Op::CondBr ? 2 : 0;
    if (in->succs.size() != want_succs)
      fail(b, in, std::string(opName(in->op)) + " has " + std::to_string(in->succs.size()) +
                      " successor(s), expected " + std::to_string(want_succs));
    for (const Edge& e : in->succs) {
      if (!e.target || !blocks_.count(e.target))
        fail(b, in, "branch to a block that is not in the function");
      if (e.args.size() != e.target->params.size())
        fail(b, in, "edge to bb" + std::to_string(e.target->id) + " passes " + std::to_string(e.args.size()) +
                        " argument(s), the block takes " + std::to_string(e.target->params.size()));
      for (const Instr* a : e.args)
        if (!a) fail(b, in, "null edge argument");
    }
    if (in->op == Op::Call && in->names.size() > n - 1)
      fail(b, in, "more keyword names than arguments");
    checkFacts(b, in);
    if (typed_ && in->type == unknownTy()) fail(b, in, "type is '?' in typed IR");
    if (typed_ && (opFlags(in->op) & PY))
      fail(b, in, "Python-level op '" + std::string(opName(in->op)) + "' in typed IR");
  }

  // Proven facts (ir.h, enum Fact) only on the ops whose lowering reads them.
  void checkFacts(const Block* b, const Instr* in) {
    uint32_t f = in->facts;
    if (!f) return;
    bool wraps = in->op == Op::Add || in->op == Op::Sub || in->op == Op::Mul || in->op == Op::LShift ||
                 in->op == Op::IterNext;
    bool nonneg = in->op == Op::FloorDiv || in->op == Op::Mod || in->op == Op::Cast || in->op == Op::IterValid;
    if ((f & (kFactNsw | kFactNuw)) && !wraps)
      fail(b, in, "nsw/nuw on an op that is not add/sub/mul/lshift/iter_next");
    if ((f & kFactNonNeg) && !nonneg) fail(b, in, "nonneg on an op that is not floordiv/mod/cast/iter_valid");
    uint32_t index_bits = f & ~(kFactNsw | kFactNuw | kFactNonNeg);
    if (index_bits) {
      uint32_t allowed = 0;
      for (int k = 0, n = elementIndexCount(*in); k < n; ++k) allowed |= indexNonNegFact(k);
      if (index_bits & ~allowed) fail(b, in, "nonneg[...] names an index the op does not have");
    }
    if (typed_ && (f & (kFactNsw | kFactNuw | kFactNonNeg)) && in->op != Op::IterValid && !in->type->isInt())
      fail(b, in, "nsw/nuw/nonneg on a non-integer result");
  }

  // Every operand must be defined in this function at a point that dominates
  // the use: earlier in the same block, or in a block that dominates it. An
  // edge argument is used at the end of the branching block.
  void checkOperandsDominate(const DominatorTree& dom, const Block* b, int pos, const Instr* in) {
    auto check = [&](const Instr* v, const char* what) {
      auto it = defs_.find(v);
      if (it == defs_.end())
        fail(b, in, std::string(what) + " v" + std::to_string(v->id) + " is not defined in this function");
      if (!dom.reachable(b)) return;   // unreachable code: nothing to dominate
      const DefSite& d = it->second;
      bool ok = d.block == b ? d.pos < pos : dom.dominates(d.block, b);
      if (!ok)
        fail(b, in, std::string(what) + " v" + std::to_string(v->id) + " (defined in bb" +
                        std::to_string(d.block->id) + ") does not dominate its use");
    };
    for (const Instr* o : in->operands) check(o, "operand");
    for (const Edge& e : in->succs)
      for (const Instr* a : e.args) check(a, "edge argument");
  }

  // Every value's use list (Instr::uses) must be exactly the set of operand
  // slots and edge arguments that hold it: each recorded use names a live
  // instruction of this function whose slot holds the value, no use is
  // recorded twice, and there are as many uses as filled slots. (Each use
  // maps to a distinct slot, so equal counts make the lists complete.) A
  // pass that writes operands around Instr's setters, or erases an
  // instruction without dropAllReferences, fails here.
  void checkUseLists() {
    size_t slots = 0, uses = 0;
    for (const auto& b : fn_.blocks)
      for (const auto& in : b->instrs) {
        for (const Instr* o : in->operands) slots += o != nullptr;
        for (const Edge& e : in->succs)
          for (const Instr* a : e.args) slots += a != nullptr;
      }
    std::vector<Use> sorted;
    auto checkValue = [&](const Block* b, const Instr* v) {
      const std::vector<Use>& list = v->uses();
      uses += list.size();
      for (const Use& u : list) {
        auto it = defs_.find(u.user);
        if (it == defs_.end() || it->second.pos < 0)
          fail(b, v, "use list names an instruction that is not in the function (erased without dropAllReferences?)");
        const Instr* user = u.user;
        bool ok = u.succ == Use::kOperandUse
                      ? u.index < user->operands.size() && user->operands[u.index] == v
                      : u.succ >= 0 && static_cast<size_t>(u.succ) < user->succs.size() &&
                            u.index < user->succs[u.succ].args.size() && user->succs[u.succ].args[u.index] == v;
        if (!ok) fail(b, v, "stale use list: it names a slot of v" + std::to_string(user->id) + " that does not hold the value");
      }
      if (list.size() < 2) return;
      if (list.size() <= 8) {   // the common case: pairwise, no copy
        for (size_t i = 1; i < list.size(); ++i)
          for (size_t k = 0; k < i; ++k)
            if (list[i] == list[k]) fail(b, v, "use list records one use twice");
        return;
      }
      sorted.assign(list.begin(), list.end());
      auto key = [](const Use& u) { return std::make_tuple(u.user, u.succ, u.index); };
      std::sort(sorted.begin(), sorted.end(), [&](const Use& x, const Use& y) { return key(x) < key(y); });
      for (size_t k = 1; k < sorted.size(); ++k)
        if (sorted[k] == sorted[k - 1]) fail(b, v, "use list records one use twice");
    };
    for (const auto& b : fn_.blocks) {
      for (const auto& p : b->params) checkValue(b.get(), p.get());
      for (const auto& in : b->instrs) checkValue(b.get(), in.get());
    }
    if (uses != slots)
      fail(nullptr, nullptr, "use lists record " + std::to_string(uses) + " use(s) but " + std::to_string(slots) +
                                 " operand slot(s) and edge argument(s) hold values (a write bypassed Instr's setters)");
  }

  // ---- typed rules (docs/internals.md, "Contract: typed IR") ----

  static std::string ty(const Type* t) { return typeToString(t); }

  void expectType(const Block* b, const Instr* in, const Type* got, const Type* want, const std::string& what) {
    if (got != want) fail(b, in, what + " is " + ty(got) + ", expected " + ty(want));
  }
  // An elementwise op on tiles: every operand and a non-void, non-b1-scalar
  // result are tiles of one shape and layout. False when no operand is a tile.
  bool checkTileElementwise(const Block* b, const Instr* in) {
    const Type* first = nullptr;
    for (const Instr* o : in->operands)
      if (o->type->isTile()) { first = o->type; break; }
    if (!first) {
      if (in->type->isTile()) fail(b, in, "result is " + ty(in->type) + " but no operand is a tile");
      return false;
    }
    auto same = [&](const Type* x, const std::string& what) {
      if (!x->isTile() || x->shape != first->shape || x->tile_layout != first->tile_layout)
        fail(b, in, what + " is " + ty(x) + ", expected a tile shaped like " + ty(first));
    };
    for (size_t i = 0; i < in->operands.size(); ++i) same(in->operands[i]->type, "operand " + std::to_string(i));
    same(in->type, "result");
    return true;
  }
  static const Type* tileElementType(const Type* t) { return t->isTile() ? scalarTy(t->scalar) : t; }

  void expectSameOperands(const Block* b, const Instr* in) {
    const Type* a = in->operands[0]->type;
    const Type* c = in->operands[1]->type;
    if (a != c) fail(b, in, "operand types differ: " + ty(a) + " and " + ty(c));
  }
  void expectScalar(const Block* b, const Instr* in, const Type* t, const std::string& what) {
    if (!t->isScalar()) fail(b, in, what + " is " + ty(t) + ", expected a scalar");
  }
  void expectIndices(const Block* b, const Instr* in, size_t first, int ndim) {
    for (int k = 0; k < ndim; ++k)
      expectType(b, in, in->operands[first + k]->type, i64Ty(), "index " + std::to_string(k));
  }
  const Type* expectArray(const Block* b, const Instr* in, const Instr* v) {
    if (!v->type->is(TypeKind::Array)) fail(b, in, "operand is " + ty(v->type) + ", expected an array");
    return v->type;
  }

  void checkConst(const Block* b, const Instr* in) {
    const Type* t = in->type;
    bool ok = true;
    switch (in->cval.kind) {
      case Const::Kind::None: ok = t == noneTy(); break;
      case Const::Kind::Bool: ok = t == boolTy(); break;
      case Const::Kind::Int: ok = t->isInt() || t->isBool(); break;
      case Const::Kind::Float: ok = t->isFloat(); break;
      case Const::Kind::Complex: ok = t->isComplex(); break;
      case Const::Kind::Str: ok = t == stringTy(); break;
      case Const::Kind::Symbol: ok = t->is(TypeKind::Symbol) || t->is(TypeKind::Function); break;
      case Const::Kind::Tuple: ok = t->is(TypeKind::Tuple) && t->elems.size() == in->cval.elems.size(); break;
      case Const::Kind::Array: ok = t == constType(in->cval); break;
    }
    if (!ok) fail(b, in, "constant " + constToString(in->cval) + " cannot have type " + ty(t));
  }

  // Intrinsics: the table's arity, then the typing rule of the
  // instruction's family (intrinsics.def's family column), one method each.
  void checkIntrinsic(const Block* b, const Instr* in) {
    if (in->intrinsic == Intrinsic::Count) fail(b, in, "unknown intrinsic '" + in->name + "'");
    const IntrinsicInfo* info = &intrinsicInfo(in->intrinsic);
    size_t n = in->operands.size();
    if (info->arity >= 0 && n != static_cast<size_t>(info->arity))
      fail(b, in, "intrinsic " + std::string(info->name) + " takes " + std::to_string(info->arity) +
                      " operand(s), has " + std::to_string(n));
    using F = IntrinsicFamily;
    switch (info->family) {
      case F::Sreg: case F::Sync: case F::Memory: return checkSimtIntrinsic(b, in, info);
      case F::Atomic: return checkAtomicIntrinsic(b, in, info);
      case F::Hint: return checkHintIntrinsic(b, in, info);
      case F::Mathdx: return;   // operands per descriptor: checked by its typing rule and provider
      case F::Cub: return checkCubIntrinsic(b, in, info);
      case F::Libdevice:
        if (in->cval.kind != Const::Kind::Str || in->cval.s.empty())
          fail(b, in, "intrinsic libdevice needs the function's name as a string attribute");
        for (const Instr* o : in->operands) expectScalar(b, in, o->type, "operand");
        return;
      case F::Foreign:
        if (in->cval.kind != Const::Kind::Str || in->cval.s.empty())
          fail(b, in, "intrinsic foreign needs its declaration's key as a string attribute");
        for (const Instr* o : in->operands) expectScalar(b, in, o->type, "operand");
        if (in->type != voidTy() && !in->type->isScalar())
          fail(b, in, "result of intrinsic foreign is " + ty(in->type) + ", expected void or a scalar");
        return;
      case F::Complex: case F::Cmath: case F::Round: return checkComplexIntrinsic(b, in, info);
      case F::Print:
        expectType(b, in, in->type, voidTy(), "result");
        for (const Instr* o : in->operands) expectScalar(b, in, o->type, "operand");
        return;
      case F::Warp: case F::Bits: return checkWarpIntrinsic(b, in, info);
      case F::Math: return checkMathIntrinsic(b, in, info);
      case F::Global: case F::Tile: case F::Mma: {
        std::string why = info->family == F::Tile   ? tileIntrinsicError(*in)
                          : info->family == F::Mma ? mmaIntrinsicError(*in)
                                                   : globalIntrinsicError(*in);
        if (!why.empty()) fail(b, in, why);
        return;
      }
    }
  }

  // special registers, barriers and fences, shared / local arrays
  void checkSimtIntrinsic(const Block* b, const Instr* in, const IntrinsicInfo* info) {
    using I = Intrinsic;
    [[maybe_unused]] const std::string name(info->name);
    [[maybe_unused]] size_t n = in->operands.size();
    switch (info->id) {
      case I::TidX: case I::TidY: case I::TidZ: case I::CtaidX: case I::CtaidY: case I::CtaidZ:
      case I::NtidX: case I::NtidY: case I::NtidZ: case I::NctaidX: case I::NctaidY: case I::NctaidZ:
      case I::LaneId: case I::WarpSize:
        expectType(b, in, in->type, i32Ty(), "result");
        break;
      case I::SyncThreads: case I::ThreadFence: case I::ThreadFenceBlock:
        expectType(b, in, in->type, voidTy(), "result");
        break;
      case I::SharedArray: case I::LocalArray: {
        MemSpace want = info->id == I::SharedArray ? MemSpace::Shared : MemSpace::Local;
        const Type* t = in->type;
        if (!t->is(TypeKind::Array) || t->space != want)
          fail(b, in, "result is " + ty(t) + ", expected a " +
                          (want == MemSpace::Shared ? "shared" : "local") + " array");
        if (in->ints.size() != static_cast<size_t>(t->ndim))
          fail(b, in, "shape has " + std::to_string(in->ints.size()) + " dimension(s), the array " +
                          std::to_string(t->ndim));
        // A 1-d shared array of size 0 is the dynamic shared memory.
        bool dynamic = want == MemSpace::Shared && in->ints.size() == 1 && in->ints[0] == 0;
        for (int64_t d : in->ints)
          if (d <= 0 && !dynamic) fail(b, in, "array dimension " + std::to_string(d) + " is not positive");
        break;
      }
      case I::SharedSlice:
        if (!in->type->is(TypeKind::Array) || in->type->space != MemSpace::Shared || in->type->ndim != 1)
          fail(b, in, "result is " + ty(in->type) + ", expected a 1-d shared array");
        if (in->ints.size() != 2 || in->ints[0] <= 0 || in->ints[1] < 0 || in->ints[1] % 16)
          fail(b, in, "ints are {elements > 0, byte offset: a multiple of 16}");
        break;
      case I::SyncThreadsCount: case I::SyncThreadsAnd: case I::SyncThreadsOr:
        expectType(b, in, in->operands[0]->type, i32Ty(), "predicate");
        expectType(b, in, in->type, i32Ty(), "result");
        break;
      case I::ThreadFenceSystem: case I::GridSync: case I::GridDepWait: case I::GridDepLaunch:
        expectType(b, in, in->type, voidTy(), "result");
        break;
      case I::SyncWarp: case I::NanoSleep:
        expectType(b, in, in->operands[0]->type, info->id == I::SyncWarp ? i32Ty() : u32Ty(), "operand");
        expectType(b, in, in->type, voidTy(), "result");
        break;
      default:
        fail(b, in, "intrinsic " + name + " has no typing rule in its family");
    }
  }

  // ld.<op>: (arr, indices...) -> element; st.<op>: (arr, indices..., element) -> void
  void checkHintIntrinsic(const Block* b, const Instr* in, const IntrinsicInfo* info) {
    const std::string name(info->name);
    const size_t n = in->operands.size(), nvals = static_cast<size_t>(info->access);
    if (n < 1 + nvals) fail(b, in, name + " takes an array, its indices" + (nvals ? " and a value" : ""));
    const Type* arr = expectArray(b, in, in->operands[0]);
    if (n != static_cast<size_t>(arr->ndim) + 1 + nvals)
      fail(b, in, name + " on a " + std::to_string(arr->ndim) + "d array takes " + std::to_string(arr->ndim) +
                      " index(es)");
    expectIndices(b, in, 1, arr->ndim);
    const Type* dtype = scalarTy(arr->scalar);
    if (nvals) {
      expectType(b, in, in->operands.back()->type, dtype, "value");
      expectType(b, in, in->type, voidTy(), "result");
    } else {
      expectType(b, in, in->type, dtype, "result");
    }
  }

  // atomics: (arr, indices..., values...) -> the old value
  void checkAtomicIntrinsic(const Block* b, const Instr* in, const IntrinsicInfo* info) {
    using I = Intrinsic;
    [[maybe_unused]] const std::string name(info->name);
    [[maybe_unused]] size_t n = in->operands.size();
    switch (info->id) {
      case I::AtomicAdd: {
        if (n < 2) fail(b, in, "atomic_add takes an array, its indices and a value");
        const Type* arr = expectArray(b, in, in->operands[0]);
        if (n != static_cast<size_t>(arr->ndim) + 2)
          fail(b, in, "atomic_add on a " + std::to_string(arr->ndim) + "d array takes " +
                          std::to_string(arr->ndim) + " index(es), has " + std::to_string(n - 2));
        expectIndices(b, in, 1, arr->ndim);
        const Type* dtype = scalarTy(arr->scalar);
        expectType(b, in, in->operands.back()->type, dtype, "value");
        expectType(b, in, in->type, dtype, "result");
        break;
      }
      case I::AtomicSub: case I::AtomicMax: case I::AtomicMin: case I::AtomicNanMax: case I::AtomicNanMin:
      case I::AtomicAnd: case I::AtomicOr: case I::AtomicXor: case I::AtomicExch: case I::AtomicInc:
      case I::AtomicDec: case I::AtomicCas: {
        size_t nvals = info->id == I::AtomicCas ? 2 : 1;
        if (n < 1 + nvals) fail(b, in, name + " takes an array, its indices and value(s)");
        const Type* arr = expectArray(b, in, in->operands[0]);
        if (n != static_cast<size_t>(arr->ndim) + 1 + nvals)
          fail(b, in, name + " on a " + std::to_string(arr->ndim) + "d array takes " +
                          std::to_string(arr->ndim) + " index(es)");
        expectIndices(b, in, 1, arr->ndim);
        const Type* dtype = scalarTy(arr->scalar);
        for (size_t k = n - nvals; k < n; ++k) expectType(b, in, in->operands[k]->type, dtype, "value");
        expectType(b, in, in->type, dtype, "result");
        break;
      }
      default:
        fail(b, in, "intrinsic " + name + " has no typing rule in its family");
    }
  }

  // CUB calls: the spec attribute and the operand shapes
  void checkCubIntrinsic(const Block* b, const Instr* in, const IntrinsicInfo* info) {
    using I = Intrinsic;
    [[maybe_unused]] const std::string name(info->name);
    [[maybe_unused]] size_t n = in->operands.size();
    switch (info->id) {
      case I::CubCall: {
        // The spec's meaning is CUB's (cub/spec.h; checked by type inference
        // and codegen): here only its presence and the operand shapes.
        const std::string& spec = in->cval.s;
        if (in->cval.kind != Const::Kind::Str ||
            (spec.rfind("block_", 0) != 0 && spec.rfind("warp_", 0) != 0))
          fail(b, in, "intrinsic cub needs its CUB spec as a string attribute");
        if (n < 1 || n > 3) fail(b, in, "intrinsic cub takes 1 to 3 operands, has " + std::to_string(n));
        for (const Instr* o : in->operands)
          if (!o->type->isScalar() && !o->type->is(TypeKind::Array))
            fail(b, in, "operand of intrinsic cub is " + ty(o->type) + ", expected a scalar or an array");
        const Type* t = in->type;
        if (t != voidTy() && !t->isScalar() && !t->is(TypeKind::Tuple))
          fail(b, in, "result of intrinsic cub is " + ty(t) + ", expected void, a scalar or a tuple");
        break;
      }
      default:
        fail(b, in, "intrinsic " + name + " has no typing rule in its family");
    }
  }

  // complex parts and construction, cmath, round
  void checkComplexIntrinsic(const Block* b, const Instr* in, const IntrinsicInfo* info) {
    using I = Intrinsic;
    [[maybe_unused]] const std::string name(info->name);
    [[maybe_unused]] size_t n = in->operands.size();
    switch (info->id) {
      case I::ComplexReal: case I::ComplexImag: case I::ComplexAbs: {
        const Type* c = in->operands[0]->type;
        if (!c->isComplex()) fail(b, in, name + " of " + ty(c) + ", expected a complex number");
        expectType(b, in, in->type, c->scalar == Scalar::Complex64 ? f32Ty() : f64Ty(), "result");
        break;
      }
      case I::ComplexMake: {
        if (!in->type->isComplex()) fail(b, in, "complex.make gives " + ty(in->type));
        const Type* part = in->type->scalar == Scalar::Complex64 ? f32Ty() : f64Ty();
        for (const Instr* o : in->operands) expectType(b, in, o->type, part, "operand");
        break;
      }
      case I::CmathExp: case I::CmathLog: case I::CmathSqrt: case I::CmathSinh: case I::CmathCosh:
      case I::CmathTanh:
        if (!in->type->isComplex()) fail(b, in, "result of " + name + " is " + ty(in->type) + ", expected complex");
        expectType(b, in, in->operands[0]->type, in->type, "operand");
        break;
      case I::CmathRect: {
        if (!in->type->isComplex()) fail(b, in, "result of " + name + " is " + ty(in->type) + ", expected complex");
        const Type* part = in->type->scalar == Scalar::Complex64 ? f32Ty() : f64Ty();
        for (const Instr* o : in->operands) expectType(b, in, o->type, part, "operand");
        break;
      }
      case I::RoundHalfEven:
        expectType(b, in, in->operands[0]->type, f64Ty(), "operand");
        expectType(b, in, in->type, i64Ty(), "result");
        break;
      case I::RoundNdigits:
        expectType(b, in, in->operands[0]->type, f64Ty(), "operand");
        expectType(b, in, in->operands[1]->type, i64Ty(), "ndigits");
        expectType(b, in, in->type, f64Ty(), "result");
        break;
      default:
        fail(b, in, "intrinsic " + name + " has no typing rule in its family");
    }
  }

  // warp masks, shuffles, votes, match; bit operations
  void checkWarpIntrinsic(const Block* b, const Instr* in, const IntrinsicInfo* info) {
    using I = Intrinsic;
    [[maybe_unused]] const std::string name(info->name);
    [[maybe_unused]] size_t n = in->operands.size();
    switch (info->id) {
      case I::ActiveMask: case I::LaneMaskLt:
        expectType(b, in, in->type, u32Ty(), "result");
        break;
      case I::ShflIdx: case I::ShflUp: case I::ShflDown: case I::ShflBfly: {
        const Type* t = in->type;
        if (t != i32Ty() && t != i64Ty() && t != f32Ty() && t != f64Ty())
          fail(b, in, name + " shuffles " + ty(t) + ", expected i32, i64, f32 or f64");
        expectType(b, in, in->operands[0]->type, i32Ty(), "mask");
        expectType(b, in, in->operands[1]->type, t, "value");
        expectType(b, in, in->operands[2]->type, i32Ty(), "lane");
        break;
      }
      case I::VoteAll: case I::VoteAny: case I::VoteUni: case I::VoteBallot:
        expectType(b, in, in->operands[0]->type, i32Ty(), "mask");
        expectType(b, in, in->operands[1]->type, boolTy(), "predicate");
        expectType(b, in, in->type, info->id == I::VoteBallot ? i32Ty() : boolTy(), "result");
        break;
      case I::MatchAny: case I::MatchAllMask: case I::MatchAllPred: {
        const Type* v = in->operands[1]->type;
        if (v != i32Ty() && v != i64Ty() && v != f32Ty() && v != f64Ty())
          fail(b, in, name + " on " + ty(v) + ", expected i32, i64, f32 or f64");
        expectType(b, in, in->operands[0]->type, i32Ty(), "mask");
        expectType(b, in, in->type, info->id == I::MatchAllPred ? boolTy() : i32Ty(), "result");
        break;
      }
      case I::Popc: case I::Brev: case I::Clz: case I::Ffs:
        if (!in->operands[0]->type->isInt()) fail(b, in, name + " takes an integer");
        expectType(b, in, in->type, info->id == I::Ffs ? u32Ty() : in->operands[0]->type, "result");
        break;
      case I::Bitcast: {   // scalars, or tiles of one shape (ct.bitcast) element by element
        const Type* from = in->operands[0]->type;
        const Type* to = in->type;
        bool tiles = from->isTile() && to->isTile() && from->shape == to->shape;
        auto bits = [](const Type* t) {
          ScalarKind k = scalarKind(t->scalar);
          return (t->isScalar() || t->isTile()) && (k == ScalarKind::Int || k == ScalarKind::Float) ? scalarBits(t->scalar) : -1;
        };
        bool ok = (tiles || (from->isScalar() && to->isScalar())) && bits(from) > 0 && bits(from) == bits(to);
        if (!ok) fail(b, in, name + " from " + ty(from) + " to " + ty(to) + ": needs int/float scalars (or tiles of one shape) of one width");
        break;
      }
      default:
        fail(b, in, "intrinsic " + name + " has no typing rule in its family");
    }
  }

  // math.*: float tests and parts; every other one is a uniform libdevice call
  void checkMathIntrinsic(const Block* b, const Instr* in, const IntrinsicInfo* info) {
    if (checkTileElementwise(b, in)) {
      // The scalar rule on element types: same as below, with tiles unwrapped.
      const Type* t = tileElementType(in->type);
      if (info->id == Intrinsic::IsNan || info->id == Intrinsic::IsInf || info->id == Intrinsic::IsFinite) {
        expectType(b, in, t, boolTy(), "result element");
        return;
      }
      if (t != f32Ty() && t != f64Ty()) fail(b, in, "result element of " + std::string(info->name) + " is " + ty(t) + ", expected f32 or f64");
      for (const Instr* o : in->operands) expectType(b, in, tileElementType(o->type), t, "operand element");
      return;
    }
    using I = Intrinsic;
    [[maybe_unused]] const std::string name(info->name);
    [[maybe_unused]] size_t n = in->operands.size();
    switch (info->id) {
      case I::IsNan: case I::IsInf: case I::IsFinite:
        if (in->operands[0]->type != f32Ty() && in->operands[0]->type != f64Ty())
          fail(b, in, name + " takes f32 or f64");
        expectType(b, in, in->type, boolTy(), "result");
        break;
      case I::FrexpExp:
        if (in->operands[0]->type != f32Ty() && in->operands[0]->type != f64Ty())
          fail(b, in, name + " takes f32 or f64");
        expectType(b, in, in->type, i32Ty(), "result");
        break;
      case I::HalfFma:   // fp16.hfma: f16 only
        expectType(b, in, in->type, scalarTy(Scalar::Float16), "result");
        for (const Instr* o : in->operands) expectType(b, in, o->type, scalarTy(Scalar::Float16), "operand");
        break;
      case I::Ldexp:
        if (in->type != f32Ty() && in->type != f64Ty()) fail(b, in, "ldexp result must be f32 or f64");
        expectType(b, in, in->operands[0]->type, in->type, "operand");
        expectType(b, in, in->operands[1]->type, i32Ty(), "exponent");
        break;
      default: {
        // math.*: every operand and the result share one float type (f32/f64).
        if (in->type != f32Ty() && in->type != f64Ty())
          fail(b, in, "result of " + name + " is " + ty(in->type) + ", expected f32 or f64");
        for (const Instr* o : in->operands) expectType(b, in, o->type, in->type, "operand");
        break;
      }
    }
  }

  // Typed rules per op family: every operand typed, the family's rule, then
  // edge arguments against the target's parameters.
  void checkTypes(const Block* b, const Instr* in) {
    for (const Instr* o : in->operands)
      if (o->type == unknownTy() || o->type == voidTy())
        fail(b, in, "operand v" + std::to_string(o->id) + " has type " + ty(o->type));
    switch (in->op) {
      case Op::Param: case Op::Undef: break;
      case Op::Const: checkConst(b, in); break;
      case Op::GetIter: case Op::Truth: case Op::RangeMake: case Op::IterValid: case Op::IterNext:
        checkIteration(b, in);
        break;
      case Op::Pow: case Op::Add: case Op::Sub: case Op::Mul: case Op::FloorDiv: case Op::Mod:
      case Op::TrueDiv: case Op::LShift: case Op::RShift: case Op::BitAnd: case Op::BitOr: case Op::BitXor:
      case Op::Neg: case Op::Pos: case Op::Invert: case Op::Not: case Op::Lt: case Op::Le: case Op::Eq:
      case Op::Ne: case Op::Gt: case Op::Ge: case Op::Is: case Op::IsNot: case Op::Cast: case Op::Select:
        checkArithmetic(b, in);
        break;
      case Op::TupleMake: case Op::TupleGet: case Op::ArrayDim: case Op::ArrayStride: case Op::ArraySize:
      case Op::ArrayLoad: case Op::ArrayView: case Op::ArrayStore:
        checkAggregate(b, in);
        break;
      case Op::RecordGet: case Op::RecordSet: case Op::RecordCopy:
        checkRecord(b, in);
        break;
      case Op::Intrinsic: checkIntrinsic(b, in); break;
      case Op::CallFunc: break;   // needs the module: verifyModule checks it
      case Op::CondBr: case Op::Ret: checkControl(b, in); break;
      default: break;   // Br, Raise, PY ops (rejected above)
    }
    for (const Edge& e : in->succs)
      for (size_t i = 0; i < e.args.size(); ++i)
        expectType(b, in, e.args[i]->type, e.target->params[i]->type,
                   "argument " + std::to_string(i) + " to bb" + std::to_string(e.target->id));
  }

  // truth, ranges and their iterators
  void checkIteration(const Block* b, const Instr* in) {
    [[maybe_unused]] const Type* t = in->type;
    [[maybe_unused]] auto opnd = [&](size_t i) { return in->operands[i]->type; };
    switch (in->op) {
      case Op::GetIter:
        if (!opnd(0)->is(TypeKind::Range)) fail(b, in, "getiter of " + ty(opnd(0)) + ", expected a range");
        expectType(b, in, t, rangeIterTy(opnd(0)->scalar), "result");
        break;
      case Op::Truth:
        expectScalar(b, in, opnd(0), "operand");
        expectType(b, in, t, boolTy(), "result");
        break;
      case Op::RangeMake:
        if (!t->is(TypeKind::Range)) fail(b, in, "result is " + ty(t) + ", expected a range");
        for (size_t i = 0; i < 3; ++i) expectType(b, in, opnd(i), scalarTy(t->scalar), "range operand");
        break;
      case Op::IterValid:
        if (!opnd(0)->is(TypeKind::RangeIter)) fail(b, in, "iter_valid of " + ty(opnd(0)));
        expectType(b, in, t, boolTy(), "result");
        break;
      case Op::IterNext:
        if (!opnd(0)->is(TypeKind::RangeIter)) fail(b, in, "iter_next of " + ty(opnd(0)));
        expectType(b, in, t, scalarTy(opnd(0)->scalar), "result");
        break;
      default: break;
    }
  }

  // arithmetic, comparisons, casts, select: numba's rules on scalar operands
  void checkArithmetic(const Block* b, const Instr* in) {
    // On tiles: the scalar rule on the element types, once the shapes agree.
    const bool tiles = checkTileElementwise(b, in);
    [[maybe_unused]] const Type* t = tiles ? tileElementType(in->type) : in->type;
    [[maybe_unused]] auto opnd = [&](size_t i) {
      return tiles ? tileElementType(in->operands[i]->type) : in->operands[i]->type;
    };
    switch (in->op) {
      case Op::Pow:
        // numba types float ** int as the float type without converting the
        // exponent (float32 ** int32 -> float32): allowed besides same types.
        if (opnd(0)->isFloat() && opnd(1)->isInt()) {
          expectType(b, in, t, opnd(0), "result");
          break;
        }
        [[fallthrough]];
      case Op::Add: case Op::Sub: case Op::Mul:
        expectSameOperands(b, in);
        expectScalar(b, in, opnd(0), "operand");
        expectType(b, in, t, opnd(0), "result");
        break;
      case Op::FloorDiv: case Op::Mod:
        expectSameOperands(b, in);
        if (!opnd(0)->isInt() && !opnd(0)->isFloat())
          fail(b, in, std::string(opName(in->op)) + " of " + ty(opnd(0)) + ", expected an int or float");
        expectType(b, in, t, opnd(0), "result");
        break;
      case Op::TrueDiv:
        expectSameOperands(b, in);
        if (!opnd(0)->isFloat() && !opnd(0)->isComplex())
          fail(b, in, "truediv of " + ty(opnd(0)) + ", expected float or complex operands");
        expectType(b, in, t, opnd(0), "result");
        break;
      case Op::LShift: case Op::RShift:
        expectSameOperands(b, in);
        if (!opnd(0)->isInt()) fail(b, in, "shift of " + ty(opnd(0)) + ", expected an int");
        expectType(b, in, t, opnd(0), "result");
        break;
      case Op::BitAnd: case Op::BitOr: case Op::BitXor:
        expectSameOperands(b, in);
        if (!opnd(0)->isInt() && !opnd(0)->isBool())
          fail(b, in, std::string(opName(in->op)) + " of " + ty(opnd(0)) + ", expected an int or bool");
        expectType(b, in, t, opnd(0), "result");
        break;
      case Op::Neg: case Op::Pos:
        expectScalar(b, in, opnd(0), "operand");
        expectType(b, in, t, opnd(0), "result");
        break;
      case Op::Invert:
        if (!opnd(0)->isInt() && !opnd(0)->isBool())
          fail(b, in, "invert of " + ty(opnd(0)) + ", expected an int or bool");
        expectType(b, in, t, opnd(0), "result");
        break;
      case Op::Not:
        expectType(b, in, opnd(0), boolTy(), "operand");
        expectType(b, in, t, boolTy(), "result");
        break;
      case Op::Lt: case Op::Le: case Op::Eq: case Op::Ne: case Op::Gt: case Op::Ge:
        expectSameOperands(b, in);
        expectScalar(b, in, opnd(0), "operand");
        expectType(b, in, t, boolTy(), "result");
        break;
      case Op::Is: case Op::IsNot:
        fail(b, in, "'" + std::string(opName(in->op)) + "' must be folded by type inference");
      case Op::Cast:
        expectScalar(b, in, opnd(0), "operand");
        expectScalar(b, in, t, "result");
        break;
      case Op::Select:
        expectType(b, in, opnd(0), boolTy(), "condition");
        expectType(b, in, opnd(1), t, "true value");
        expectType(b, in, opnd(2), t, "false value");
        break;
      default: break;
    }
  }

  // tuples and arrays
  void checkAggregate(const Block* b, const Instr* in) {
    [[maybe_unused]] const Type* t = in->type;
    [[maybe_unused]] auto opnd = [&](size_t i) { return in->operands[i]->type; };
    switch (in->op) {
      case Op::TupleMake: {
        std::vector<const Type*> elems;
        for (const Instr* o : in->operands) elems.push_back(o->type);
        // A namedtuple (a vector type) is the tuple of its elements with a name.
        if (!(t->is(TypeKind::Tuple) && !t->name.empty() && t->elems == elems))
          expectType(b, in, t, tupleTy(elems), "result");
        break;
      }
      case Op::TupleGet:
        if (!opnd(0)->is(TypeKind::Tuple)) fail(b, in, "tuple_get of " + ty(opnd(0)) + ", expected a tuple");
        if (in->index < 0 || in->index >= static_cast<int64_t>(opnd(0)->elems.size()))
          fail(b, in, "tuple index " + std::to_string(in->index) + " out of range for " + ty(opnd(0)));
        expectType(b, in, t, opnd(0)->elems[in->index], "result");
        break;
      case Op::ArrayDim: case Op::ArrayStride: {
        const Type* arr = expectArray(b, in, in->operands[0]);
        if (in->index < 0 || in->index >= arr->ndim)
          fail(b, in, "dimension " + std::to_string(in->index) + " out of range for " + ty(arr));
        expectType(b, in, t, i64Ty(), "result");
        break;
      }
      case Op::ArraySize:
        expectArray(b, in, in->operands[0]);
        expectType(b, in, t, i64Ty(), "result");
        break;
      case Op::ArrayLoad: {
        const Type* arr = expectArray(b, in, in->operands[0]);
        if (in->operands.size() != static_cast<size_t>(arr->ndim) + 1)
          fail(b, in, "load from a " + std::to_string(arr->ndim) + "d array takes " +
                          std::to_string(arr->ndim) + " index(es), has " +
                          std::to_string(in->operands.size() - 1));
        expectIndices(b, in, 1, arr->ndim);
        expectType(b, in, t, arrayElementType(arr), "result");
        break;
      }
      case Op::ArrayView: {
        const Type* arr = expectArray(b, in, in->operands[0]);
        if (!t->is(TypeKind::Array) || t->space != arr->space)   // another dtype: a.view(dtype)
          fail(b, in, "array_view of " + ty(arr) + " gives " + ty(t));
        if (in->operands.size() != static_cast<size_t>(2 + 2 * t->ndim))
          fail(b, in, "array_view to a " + std::to_string(t->ndim) + "d view takes " +
                          std::to_string(2 + 2 * t->ndim) + " operands");
        expectIndices(b, in, 1, 1 + 2 * t->ndim);
        break;
      }
      case Op::ArrayStore: {
        const Type* arr = expectArray(b, in, in->operands[0]);
        if (in->operands.size() != static_cast<size_t>(arr->ndim) + 2)
          fail(b, in, "store to a " + std::to_string(arr->ndim) + "d array takes " +
                          std::to_string(arr->ndim) + " index(es), has " +
                          std::to_string(in->operands.size() - 2));
        if (arr->readonly) fail(b, in, "store to a read-only array");
        expectIndices(b, in, 1, arr->ndim);
        if (arr->record) fail(b, in, "store to an array of records (records are copied with record_copy)");
        expectType(b, in, in->operands.back()->type, arrayElementType(arr), "stored value");
        break;
      }
      default: break;
    }
  }

  // record_get, record_set, record_copy
  void checkRecord(const Block* b, const Instr* in) {
    const Type* r = in->operands[0]->type;
    if (!isRecord(r)) fail(b, in, std::string(opName(in->op)) + " of " + ty(r) + ", expected a record");
    if (in->op == Op::RecordCopy) {
      if (!sameRecordLayout(r, in->operands[1]->type))
        fail(b, in, "record_copy of " + ty(in->operands[1]->type) + " into " + ty(r));
      return;
    }
    const int k = recordFieldIndex(r, in->name);
    if (k < 0) fail(b, in, "record " + ty(r) + " has no field '" + in->name + "'");
    const Type* value = recordFieldValueType(r, k);
    if (in->op == Op::RecordGet) {
      expectType(b, in, in->type, value, "result");
      return;
    }
    const Type* v = in->operands[1]->type;
    if (isNestedArray(r->elems[static_cast<size_t>(k)])) fail(b, in, "record_set of the nested array field '" + in->name + "'");
    if (isRecord(value) ? !sameRecordLayout(v, value) : v != value)
      fail(b, in, "record_set of " + ty(v) + " into field '" + in->name + "' of type " + ty(value));
  }

  // cbr and ret
  void checkControl(const Block* b, const Instr* in) {
    [[maybe_unused]] const Type* t = in->type;
    [[maybe_unused]] auto opnd = [&](size_t i) { return in->operands[i]->type; };
    switch (in->op) {
      case Op::CondBr:
        expectType(b, in, opnd(0), boolTy(), "condition");
        break;
      case Op::Ret: {
        const Type* rt = fn_.return_type;
        if (rt == noneTy() || rt == voidTy()) {
          if (!in->operands.empty() && opnd(0) != noneTy())
            fail(b, in, "returns " + ty(opnd(0)) + " from a function returning " + ty(rt));
        } else if (in->operands.empty()) {
          fail(b, in, "ret without a value in a function returning " + ty(rt));
        } else {
          expectType(b, in, opnd(0), rt, "returned value");
        }
        break;
      }
      default: break;
    }
  }

  const Function& fn_;
  bool typed_;
  std::set<const Block*> blocks_;
  std::unordered_map<const Instr*, DefSite> defs_;
};

// What only the module can check: callees of call_func and fn: symbols.
void verifyCalls(const Module& m, const Function& fn, bool typed) {
  Verifier v(fn, typed);
  for (const auto& b : fn.blocks)
    for (const auto& in : b->instrs) {
      if (in->op == Op::Const && in->cval.kind == Const::Kind::Symbol && in->cval.s.rfind("fn:", 0) == 0 &&
          !m.find(in->cval.s.substr(3)))
        v.fail(b.get(), in.get(), "no function '" + in->cval.s.substr(3) + "' in the module");
      if (in->op != Op::CallFunc) continue;
      const Function* callee = m.find(in->name);
      if (!callee) v.fail(b.get(), in.get(), "call_func of '" + in->name + "': no such function in the module");
      if (!typed) continue;
      const auto& params = callee->entry()->params;
      if (in->operands.size() != params.size())
        v.fail(b.get(), in.get(), "call of " + in->name + " passes " + std::to_string(in->operands.size()) +
                                      " argument(s), it takes " + std::to_string(params.size()));
      for (size_t i = 0; i < params.size(); ++i)
        if (in->operands[i]->type != params[i]->type)
          v.fail(b.get(), in.get(), "argument " + std::to_string(i) + " of " + in->name + " is " +
                                        typeToString(in->operands[i]->type) + ", expected " +
                                        typeToString(params[i]->type));
      const Type* rt = callee->return_type;
      bool ok = in->type == rt || ((rt == noneTy() || rt == voidTy()) && (in->type == noneTy() || in->type == voidTy()));
      if (!ok)
        v.fail(b.get(), in.get(), "call of " + in->name + " has type " + typeToString(in->type) +
                                      ", the callee returns " + typeToString(rt));
    }
}

}  // namespace

bool verifyFunction(const Function& fn, bool typed, std::string* error) {
  try {
    Verifier(fn, typed).run();
  } catch (const Failure& f) {
    if (error) *error = f.message;
    return false;
  }
  return true;
}

bool verifyModule(const Module& m, bool typed, std::string* error) {
  std::set<std::string> names;
  for (const auto& fn : m.functions) {
    if (!names.insert(fn->name).second) {
      if (error) *error = fn->name + ": function defined twice in the module";
      return false;
    }
    if (!verifyFunction(*fn, typed, error)) return false;
  }
  try {
    for (const auto& fn : m.functions) verifyCalls(m, *fn, typed);
  } catch (const Failure& f) {
    if (error) *error = f.message;
    return false;
  }
  return true;
}

}  // namespace cj::ir
