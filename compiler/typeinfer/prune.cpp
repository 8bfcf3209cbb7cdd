#include "typeinfer/prune.h"

#include <optional>

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

// The value of a condition built from `is None` / `is not None` / not.
std::optional<bool> knownCondition(const ir::Instr* v) {
  switch (v->op) {
    case ir::Op::Truth:
      return knownCondition(v->operands[0]);
    case ir::Op::Not: {
      auto c = knownCondition(v->operands[0]);
      if (c) return !*c;
      return std::nullopt;
    }
    case ir::Op::Is:
    case ir::Op::IsNot: {
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
