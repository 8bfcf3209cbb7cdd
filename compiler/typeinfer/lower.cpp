#include "typeinfer/lower.h"

#include <algorithm>
#include <functional>
#include <set>

#include "ir/cfg.h"
#include "typeinfer/iterators.h"
#include "typeinfer/operators.h"
#include "typeinfer/records.h"
#include "typeinfer/subscript.h"
#include "typeinfer/sites.h"
#include "typeinfer/typer.h"

namespace cj::typeinfer {

ir::Instr* Lowerer::mapped(ir::Instr* v) const {
  for (auto it = replaced_.find(v); it != replaced_.end(); it = replaced_.find(v)) v = it->second;
  return v;
}

void Lowerer::run() {
  ir::Function& fn = ctx_.fn();
  for (ir::Block* b : ir::reversePostOrder(fn)) {
    std::vector<std::unique_ptr<ir::Instr>> old = std::move(b->instrs);
    b->instrs.clear();
    for (auto& in : old) {
      remapOperands(in.get());
      Emitter e(fn, b, b->instrs, in->loc);
      ir::Instr* r = lower(in.get(), e);
      if (r == in.get()) {
        e.append(std::move(in));
        continue;
      }
      if (!r && in->type != voidTy()) r = e.constant(ir::Const::none(), noneTy());
      if (r) {
        replaced_[in.get()] = r;
        if (r->var.empty()) r->var = in->var;   // keep the Python name for messages and the text form
      }
      graveyard_.push_back(std::move(in));
    }
  }
  // Uses that come before their definition in block order (loop back edges).
  for (auto& b : fn.blocks)
    for (auto& in : b->instrs) {
      remapOperands(in.get());
      for (size_t s = 0; s < in->succs.size(); ++s)
        for (size_t i = 0; i < in->succs[s].args.size(); ++i)
          in->setEdgeArg(s, i, mapped(in->succs[s].args[i]));
    }
  // Nothing in the blocks refers to a replaced instruction now; unlink the
  // replaced ones' own operands so that the use lists count live uses only.
  for (auto& dead : graveyard_) dead->dropAllReferences();
  coerceEdges();
  removeUndefParams();
  removeDeadValues();
  graveyard_.clear();
  fn.return_type = ret_;
  fn.computePreds();
  fn.renumber();
}

ir::Instr* Lowerer::lower(ir::Instr* in, Emitter& e) {
  switch (in->op) {
    case ir::Op::Const:
      return lowerConst(in, e);
    case ir::Op::GetAttr: {
      Bound b = bindGetAttr(ctx_, in);
      return b.rule->lower(b.site, e);
    }
    case ir::Op::Call: {
      Bound b = bindCall(ctx_, in);
      return b.rule->lower(b.site, e);
    }
    case ir::Op::GetItem:
      return lowerGetItem(ctx_, in, e);
    case ir::Op::SetItem:
      lowerSetItem(ctx_, in, e);
      return nullptr;
    case ir::Op::SetAttr:
      lowerSetAttr(ctx_, in, e);
      return nullptr;
    case ir::Op::Truth:
      return e.truth(in->operands[0]);
    case ir::Op::TupleGet:
      return e.element(in->operands[0], in->index);
    case ir::Op::GetIter:
    case ir::Op::IterValid:
    case ir::Op::IterNext:
      return lowerIterationOp(ctx_, in, e);
    case ir::Op::CondBr:
      in->setOperand(0, e.truth(in->operands[0]));
      return in;
    case ir::Op::Ret:
      if (!in->operands.empty()) in->setOperand(0, e.convert(in->operands[0], ret_));
      return in;
    default:
      if (isOperator(in->op)) return lowerOperator(ctx_, in, e);
      return in;   // typed in place by the fixpoint (tuple, tuple_get, getiter, undef, ...)
  }
}

ir::Instr* Lowerer::lowerConst(ir::Instr* in, Emitter& e) {
  // Scalars, none, strings and opaque symbols stay as they are (typed by the fixpoint).
  bool plain = in->cval.kind != ir::Const::Kind::Tuple &&
               ir::constType(in->cval) == in->type;
  if (plain) return in;
  return lowerConstant(ctx_, in, in->cval, e);
}

void Lowerer::coerceEdges() {
  for (auto& b : ctx_.fn().blocks) {
    ir::Instr* term = b->terminator();
    if (!term) continue;
    for (size_t s = 0; s < term->succs.size(); ++s) {
      const ir::Edge& edge = term->succs[s];
      for (size_t i = 0; i < edge.args.size(); ++i) {
        const Type* want = edge.target->params.at(i)->type;
        if (want->is(TypeKind::Undef) || want->is(TypeKind::Unknown)) continue;   // removed below
        if (edge.args[i]->type == want) continue;
        // Converting instructions go just before the terminator.
        std::unique_ptr<ir::Instr> owned = std::move(b->instrs.back());
        b->instrs.pop_back();
        Emitter e(ctx_.fn(), b.get(), b->instrs, term->loc);
        term->setEdgeArg(s, i, e.convert(edge.args[i], want));
        b->instrs.push_back(std::move(owned));
      }
    }
  }
}

void Lowerer::removeUndefParams() {
  ir::Function& fn = ctx_.fn();
  for (auto& b : fn.blocks) {
    if (b.get() == fn.entry()) continue;
    std::vector<bool> drop;
    bool any = false;
    for (auto& p : b->params) {
      bool d = p->type->is(TypeKind::Undef) || p->type->is(TypeKind::Unknown);
      drop.push_back(d);
      any = any || d;
    }
    if (!any) continue;
    auto filter = [&](auto& vec) {
      size_t k = 0;
      for (size_t i = 0; i < vec.size(); ++i)
        if (!drop[i]) vec[k++] = std::move(vec[i]);
      vec.resize(k);
    };
    for (auto& pred : fn.blocks) {
      ir::Instr* t = pred->terminator();
      if (!t) continue;
      for (size_t s = 0; s < t->succs.size(); ++s)
        if (t->succs[s].target == b.get())
          for (size_t i = drop.size(); i-- > 0;)
            if (drop[i]) t->removeEdgeArg(s, i);
    }
    for (size_t i = 0; i < b->params.size(); ++i)
      if (drop[i]) graveyard_.push_back(std::move(b->params[i]));
    filter(b->params);
    for (size_t i = 0; i < b->params.size(); ++i) b->params[i]->index = static_cast<int64_t>(i);
  }
}

void Lowerer::removeDeadValues() {
  // Pure and never-assigned values that nothing uses.
  // Pure values go too: the operands of rewritten calls (the 1 of
  // cuda.grid(1), the shape tuple of shared.array) would otherwise linger.
  auto removable = [](const ir::Instr* in) {
    return in->op == ir::Op::Undef || (ir::opFlags(in->op) & ir::PURE);
  };
  ir::Function& fn = ctx_.fn();
  for (bool changed = true; changed;) {
    changed = false;
    for (auto& b : fn.blocks) {
      size_t before = b->instrs.size();
      ir::eraseInstrsIf(b.get(), [&](const std::unique_ptr<ir::Instr>& in) {
        return removable(in.get()) && !in->hasUses();
      });
      changed |= b->instrs.size() != before;
    }
  }
}

}  // namespace cj::typeinfer
