#include "typeinfer/prune.h"

#include <optional>

#include "typeinfer/context.h"

namespace cj::typeinfer {
namespace {

// Whether `v` is None, when known before typing: a constant, or an entry
// parameter whose type the caller set.
std::optional<bool> knownNone(const ir::Instr* v) {
  if (v->op == ir::Op::Const) return v->cval.kind == ir::Const::Kind::None;
  if (v->op == ir::Op::Param && v->type && !v->type->is(TypeKind::Unknown))
    return v->type->is(TypeKind::None);
  return std::nullopt;
}

// A dtype known before typing: a dtype symbol (np.float32, ct.bfloat16) or
// the .dtype of an array argument whose type the caller set.
std::optional<Scalar> knownDtype(const ir::Instr* v) {
  if (v->op == ir::Op::Const && v->cval.kind == ir::Const::Kind::Symbol) {
    std::string_view name = v->cval.s;
    for (std::string_view prefix : {"numpy.", "cudajit.tile."})
      if (name.substr(0, prefix.size()) == prefix) {
        Scalar s;
        if (parseScalar(name.substr(prefix.size()), &s)) return s;
      }
    return std::nullopt;
  }
  if (v->op == ir::Op::GetAttr && v->name == "dtype") {
    const ir::Instr* a = v->operands[0];
    if (a->op == ir::Op::Param && a->type && a->type->is(TypeKind::Array)) return a->type->scalar;
  }
  return std::nullopt;
}

// The value of a condition built from `is None` / `is not None` / not, dtype
// comparisons (`A.dtype == ct.float32`) and comparisons of integer constants
// (`if BK == 64`, a Constant parameter): what cuTile decides at compile time.
std::optional<bool> knownCondition(const ir::Instr* v) {
  switch (v->op) {
    case ir::Op::Eq: case ir::Op::Ne: case ir::Op::Lt: case ir::Op::Le: case ir::Op::Gt: case ir::Op::Ge: {
      // Integer constants and their arithmetic (constantOf folds the comparison).
      if (auto c = constantOf(v); c && (c->kind == ir::Const::Kind::Bool || c->kind == ir::Const::Kind::Int))
        return c->i != 0;
      if (v->op != ir::Op::Eq && v->op != ir::Op::Ne) return std::nullopt;
      auto x = knownDtype(v->operands[0]), y = knownDtype(v->operands[1]);
      if (!x || !y) return std::nullopt;
      return (*x == *y) == (v->op == ir::Op::Eq);
    }
    case ir::Op::Truth:
      return knownCondition(v->operands[0]);
    case ir::Op::Call: {   // ct.ensure_constant(cond): cuTile's way to say the branch folds
      const ir::Instr* callee = v->operands[0];
      bool ensure = callee->op == ir::Op::Const && callee->cval.kind == ir::Const::Kind::Symbol &&
                    callee->cval.s == "cudajit.tile.ensure_constant";
      if (ensure && v->operands.size() == 2 && v->names.empty()) return knownCondition(v->operands[1]);
      return std::nullopt;
    }
    case ir::Op::Not: {
      auto c = knownCondition(v->operands[0]);
      if (c) return !*c;
      return std::nullopt;
    }
    case ir::Op::Is:
    case ir::Op::IsNot: {
      auto x = knownDtype(v->operands[0]), y = knownDtype(v->operands[1]);
      if (x && y) return (*x == *y) == (v->op == ir::Op::Is);
      auto a = knownNone(v->operands[0]), b = knownNone(v->operands[1]);
      if (!a || !b) return std::nullopt;
      // Only None is compared by identity: None is None, value is not None.
      if (!*a && !*b) return std::nullopt;
      bool same = *a == *b;
      return v->op == ir::Op::Is ? same : !same;
    }
    default:
      return std::nullopt;
  }
}

}  // namespace

bool pruneNoneBranches(ir::Function& fn) {
  bool changed = false;
  for (auto& b : fn.blocks) {
    ir::Instr* t = b->terminator();
    if (!t || t->op != ir::Op::CondBr || t->succs.size() != 2) continue;
    auto c = knownCondition(t->operands[0]);
    if (!c) continue;
    t->removeSucc(*c ? 1 : 0);   // the edge not taken
    t->op = ir::Op::Br;
    t->setOperands({});
    changed = true;
  }
  if (changed) fn.computePreds();
  return changed;
}

}  // namespace cj::typeinfer
