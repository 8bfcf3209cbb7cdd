#include "typeinfer/typer.h"

#include <algorithm>
#include <functional>
#include <set>
#include <unordered_map>

#include "ir/cfg.h"
#include "typeinfer/iterators.h"
#include "typeinfer/operators.h"
#include "typeinfer/records.h"
#include "typeinfer/subscript.h"
#include "typeinfer/sites.h"
#include "typeinfer/unify.h"

namespace cj::typeinfer {
namespace {

// A loop whose values widen every round (a tuple growing by one element per
// iteration) never settles; numba rejects those too.
constexpr int kMaxRounds = 100;

bool ready(const ir::Instr* v) {
  return !v->type->is(TypeKind::Unknown) && !v->type->is(TypeKind::Undef);
}

std::string describe(const ir::Instr* v) {
  return v->var.empty() ? std::string("a temporary value") : "variable '" + v->var + "'";
}

}  // namespace

const Type* Typer::run() {
  ir::Function& fn = ctx_.fn();
  order_ = ir::reversePostOrder(fn);
  for (ir::Block* b : order_) {
    ir::Instr* t = b->terminator();
    for (size_t s = 0; t && s < t->succs.size(); ++s) incoming_[t->succs[s].target].push_back({t, s});
  }

  for (int pass = 0; pass < 2; ++pass) {
    final_ = pass == 1;   // the second pass types the uses that waited on a None
    for (int round = 0;; ++round) {
      if (round == kMaxRounds)
        ctx_.fail(nullptr, "type inference",
                  "types did not settle after " + std::to_string(kMaxRounds) +
                      " rounds (a value grows on every loop iteration?)");
      bool changed = false;
      for (ir::Block* b : order_) {
        if (b != fn.entry()) changed |= typeParams(b);
        for (auto& in : b->instrs) {
          if (ir::isTerminator(in->op)) continue;
          const Type* t = typeOf(in.get());
          if (t && t != in->type) {
            in->type = t;
            changed = true;
          }
        }
      }
      if (!changed) break;
    }
  }
  checkAllTyped();
  return returnType();
}

bool Typer::typeParams(ir::Block* b) {
  bool changed = false;
  for (auto& p : b->params) {
    const Type* t = p->type;
    for (const Incoming& inc : incoming_[b]) {
      const ir::Edge& edge = inc.terminator->succs[inc.succ];
      ir::Instr* arg = edge.args.at(static_cast<size_t>(p->index));
      const Type* at = arg->op == ir::Op::Undef ? undefTy() : arg->type;
      if (at->is(TypeKind::Unknown)) continue;
      const Type* u = unifyTypes(t, at);
      // numba would merge arrays of different layouts into layout A; typed IR
      // has no conversion between array types yet, so that stays an error.
      // Arrays of different layouts merge into layout A (numba); the lowering
      // converts each incoming view (Emitter::convert: array_view).
      bool layout_merge = false;
      if (!u || layout_merge) {
        const ir::Instr* where = arg->loc.line > 0 ? arg : inc.terminator;
        std::string name = p->var.empty() ? "a value" : "variable '" + p->var + "'";
        ctx_.fail(where, "unify " + (p->var.empty() ? std::string("value") : p->var),
                  name + " is " + typeToString(t) + " on one path and " + typeToString(at) +
                      " on another",
                  layout_merge ? "merging arrays of different layouts or memory spaces is not "
                                 "supported yet: use one array type on every path"
                               : "give it one type on every path into this point");
      }
      t = u;
    }
    if (t != p->type) {
      p->type = t;
      changed = true;
    }
  }
  return changed;
}

bool Typer::waitsOnNone(const ir::Instr* in) const {
  if (final_) return false;
  for (const ir::Instr* o : in->operands)
    if (o->op == ir::Op::Param && o->type->is(TypeKind::None) && o->parent != ctx_.fn().entry()) return true;
  return false;
}

const Type* Typer::typeOf(ir::Instr* in) {
  for (ir::Instr* o : in->operands)
    if (!ready(o)) return nullptr;
  if (waitsOnNone(in)) return nullptr;
  switch (in->op) {
    case ir::Op::Const:
      // Every cudajit name is in the symbol table (or is a Matmul's): another
      // one is a typo or something not supported yet (the decoder keeps them
      // as symbols).
      if (in->cval.kind == ir::Const::Kind::Symbol && in->cval.s.rfind("cudajit.", 0) == 0 &&
          !findSymbol(in->cval.s) && !isMathdxSymbol(in->cval.s) &&
          !isForeignSymbol(in->cval.s))
        ctx_.fail(in, in->cval.s, "unsupported attribute " + in->cval.s);
      return constantType(ctx_, in, in->cval);
    case ir::Op::Undef:
      return undefTy();
    case ir::Op::Param:
      return in->type;
    case ir::Op::GetAttr: {
      Bound b = bindGetAttr(ctx_, in);
      return b.rule->type(b.site);
    }
    case ir::Op::Call: {
      Bound b = bindCall(ctx_, in);
      return b.rule->type(b.site);
    }
    case ir::Op::GetItem:
      return getItemType(ctx_, in);
    case ir::Op::SetItem:
      checkSetItem(ctx_, in);
      return voidTy();
    case ir::Op::SetAttr:
      checkSetAttr(ctx_, in);
      return voidTy();
    case ir::Op::Truth: {
      const Type* t = in->operands[0]->type;
      if (t->isTile() && !t->shape.empty())   // a 0-d tile is a scalar (cuTile)
        ctx_.fail(in, "truth", "a tile of shape " + typeToNumbaString(t) + " has no truth value",
                  "reduce it first (ct.max, ct.sum, ...) or test one element");
      if (!t->isScalar() && !t->isTile() && !t->is(TypeKind::None) && !t->is(TypeKind::Tuple))
        ctx_.fail(in, "truth", "cannot use " + typeToString(t) + " as a condition");
      return boolTy();
    }
    case ir::Op::TupleMake: {
      std::vector<const Type*> elems;
      for (ir::Instr* o : in->operands) elems.push_back(o->type);
      return tupleTy(elems);
    }
    case ir::Op::TupleGet: {
      const Type* t = in->operands[0]->type;
      if (!t->is(TypeKind::Tuple) || isOptional(t))
        ctx_.fail(in, "unpack", "cannot unpack " + typeToString(t) + " (only tuples unpack)");
      if (in->index < 0 || in->index >= static_cast<int64_t>(t->elems.size()))
        ctx_.fail(in, "unpack", "cannot unpack " + typeToString(t) + ": index " +
                                    std::to_string(in->index) + " out of range");
      return t->elems[static_cast<size_t>(in->index)];
    }
    case ir::Op::GetIter:
    case ir::Op::IterValid:
    case ir::Op::IterNext:
      return iterationOpType(ctx_, in);   // iterators.h: range, tuple, enumerate, zip
    default:
      if (isOperator(in->op)) return operatorType(ctx_, in);
      // Already-typed operations (hand-written IR) keep their type.
      if (!in->type->is(TypeKind::Unknown)) return in->type;
      ctx_.fail(in, std::string(ir::opName(in->op)),
                "cannot type operation '" + std::string(ir::opName(in->op)) + "'");
  }
}

void Typer::checkAllTyped() {
  for (ir::Block* b : order_) {
    for (auto& in : b->instrs) {
      bool untyped = in->type->is(TypeKind::Unknown);
      // Terminators have no result; their operands must still be usable.
      if (ir::isTerminator(in->op) || untyped)
        for (ir::Instr* o : in->operands)
          if (!ready(o)) explainUntyped(in.get());
      if (untyped) explainUntyped(in.get());
    }
  }
}

void Typer::explainUntyped(ir::Instr* in) {
  // Find the value at the root of the problem: one that was never assigned
  // (undef) on some path, or a value with no typed source at all.
  std::set<ir::Instr*> seen;
  std::function<ir::Instr*(ir::Instr*)> root = [&](ir::Instr* v) -> ir::Instr* {
    if (!seen.insert(v).second) return nullptr;
    if (v->type->is(TypeKind::Undef)) return v;
    for (ir::Instr* o : v->operands)
      if (!ready(o))
        if (ir::Instr* r = root(o)) return r;
    return nullptr;
  };
  ir::Instr* culprit = nullptr;
  for (ir::Instr* o : in->operands)
    if (!ready(o) && (culprit = root(o))) break;
  if (culprit)
    ctx_.fail(in, "undefined", describe(culprit) + " is used before it is assigned on some path");
  ctx_.fail(in, std::string(ir::opName(in->op)),
            "could not infer a type for " + describe(in) + " (no path gives it a value)");
}

const Type* Typer::returnType() {
  const Type* ret = nullptr;
  const ir::Instr* first = nullptr;
  for (ir::Block* b : order_) {
    ir::Instr* t = b->terminator();
    if (!t || t->op != ir::Op::Ret) continue;
    const Type* rt = t->operands.empty() ? noneTy() : t->operands[0]->type;
    if (!ret) {
      ret = rt;
      first = t;
      continue;
    }
    const Type* u = unifyTypes(ret, rt);
    if (!u) {
      // Python 3.12 duplicates `return x` into each branch: a variable with
      // two types then shows up here rather than at a join.
      const std::string& var = t->operands.empty() ? std::string() : t->operands[0]->var;
      std::string what = var.empty() ? "the function returns " + typeToString(rt) + " here"
                                     : "variable '" + var + "' is " + typeToString(rt) + " here";
      ctx_.fail(t, "return",
                what + " but the function returns " + typeToString(ret) + " on another path (line " +
                    std::to_string(first->loc.line) + ")",
                "return one type on every path");
    }
    ret = u;
  }
  return ret ? ret : noneTy();   // no `ret` at all: every path raises
}

}  // namespace cj::typeinfer
