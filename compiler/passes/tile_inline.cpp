// tile-inline: device functions with tiles are inlined into their callers.
// A tile lives in registers spread over the block's threads, with a layout
// chosen for the whole kernel: it has no calling convention, so a function
// that takes, returns or makes tiles (a cuTile helper called from a tile
// kernel) becomes part of the kernel. The call's block is split after the
// call; the callee's blocks are copied in, its parameters read the call's
// arguments, each `ret` branches to the continuation, whose parameter is the
// call's result. Callees left with no caller leave the module.
#include <algorithm>
#include <set>
#include <unordered_map>

#include "passes/tile_passes.h"
#include "support/error.h"

namespace cj::passes {
namespace {

bool hasTiles(const ir::Function& fn) {
  for (auto& b : fn.blocks) {
    for (auto& p : b->params)
      if (p->type->isTile()) return true;
    for (auto& in : b->instrs)
      if (isTileOp(*in) || in->isIntrinsic(ir::Intrinsic::TilePrint)) return true;
  }
  return fn.return_type && fn.return_type->isTile();
}

// Inlines `call` (a call_func in `caller`) of `callee`.
void inlineCall(ir::Function& caller, ir::Instr* call, const ir::Function& callee) {
  ir::Block* block = call->parent;
  size_t at = 0;
  while (block->instrs[at].get() != call) ++at;

  // The continuation: what followed the call, with the result as its parameter.
  ir::Block* rest = caller.addBlock();
  for (size_t k = at + 1; k < block->instrs.size(); ++k) {
    block->instrs[k]->parent = rest;
    rest->instrs.push_back(std::move(block->instrs[k]));
  }
  block->instrs.resize(at + 1);
  bool has_result = !call->type->is(TypeKind::None) && !call->type->is(TypeKind::Void);
  // A tuple result (a helper returning several tiles) arrives as one
  // parameter per element: no tuple of tiles reaches the tile passes.
  bool split = has_result && call->type->is(TypeKind::Tuple);
  ir::Instr* result = nullptr;
  std::vector<ir::Instr*> parts;
  if (split) {
    for (const Type* e : call->type->elems) parts.push_back(rest->addParam(e, call->var));
  } else if (has_result) {
    result = rest->addParam(call->type, call->var);
  }

  // The callee's blocks, its entry parameters mapped to the arguments.
  std::unordered_map<const ir::Instr*, ir::Instr*> values;
  std::unordered_map<const ir::Block*, ir::Block*> blocks;
  const auto& params = callee.entry()->params;
  if (params.size() != call->operands.size())
    throw CompileError(caller.filename, call->loc.line, call->loc.col, "call " + callee.name,
                       "internal error: inlining a call with the wrong argument count");
  for (size_t i = 0; i < params.size(); ++i) values[params[i].get()] = call->operands[i];
  for (auto& b : callee.blocks) {
    ir::Block* nb = caller.addBlock();
    blocks[b.get()] = nb;
    if (b.get() == callee.entry()) continue;
    for (auto& p : b->params) values[p.get()] = nb->addParam(p->type, p->var);
  }
  auto map = [&](ir::Instr* v) {
    auto it = values.find(v);
    return it == values.end() ? v : it->second;
  };
  // Values first (an operand may be defined in a later block), then operands and edges.
  std::vector<std::pair<const ir::Instr*, ir::Instr*>> copies;
  for (auto& b : callee.blocks) {
    ir::Block* nb = blocks.at(b.get());
    for (auto& in : b->instrs) {
      if (in->op == ir::Op::Ret) continue;
      auto c = caller.make(in->op, in->type, {}, in->loc);
      int id = c->id;
      c->copyAttributesFrom(*in);
      c->id = id;
      c->parent = nb;
      values[in.get()] = c.get();
      copies.push_back({in.get(), c.get()});
      nb->instrs.push_back(std::move(c));
    }
  }
  for (auto& [from, to] : copies) {
    std::vector<ir::Instr*> ops;
    for (ir::Instr* o : from->operands) ops.push_back(map(o));
    to->setOperands(std::move(ops));
    for (const ir::Edge& e : from->succs) {
      std::vector<ir::Instr*> args;
      for (ir::Instr* a : e.args) args.push_back(map(a));
      to->addSucc(blocks.at(e.target), std::move(args));
    }
  }
  // Each ret branches to the continuation.
  for (auto& b : callee.blocks) {
    const ir::Instr* t = b->terminator();
    if (!t || t->op != ir::Op::Ret) continue;
    ir::Block* nb = blocks.at(b.get());
    auto br = caller.make(ir::Op::Br, voidTy(), {}, t->loc);
    std::vector<ir::Instr*> args;
    if (split && !t->operands.empty()) {
      ir::Instr* v = map(t->operands[0]);
      for (size_t k = 0; k < parts.size(); ++k) {
        if (v->op == ir::Op::TupleMake) {
          args.push_back(v->operands[k]);
          continue;
        }
        auto get = caller.make(ir::Op::TupleGet, parts[k]->type, {v}, t->loc);
        get->index = static_cast<int64_t>(k);
        get->parent = nb;
        args.push_back(get.get());
        nb->instrs.push_back(std::move(get));
      }
    } else if (has_result && !t->operands.empty()) {
      args.push_back(map(t->operands[0]));
    }
    if (args.size() != rest->params.size())
      throw CompileError(callee.filename, t->loc.line, t->loc.col, "return",
                         "internal error: inlining a function whose return does not match its call");
    br->addSucc(rest, std::move(args));
    br->parent = nb;
    nb->instrs.push_back(std::move(br));
  }
  // The call becomes a branch into the copy.
  if (result) ir::replaceAllUses(call, result);
  if (split) {   // the tuple made again from the parameters; t[k] reads parameter k (DCE drops the rest)
    auto make = caller.make(ir::Op::TupleMake, call->type, parts, call->loc);
    make->parent = rest;
    ir::Instr* whole = ir::insertBefore(rest, 0, std::move(make));
    ir::replaceAllUses(call, whole);
    for (const ir::Use& u : std::vector<ir::Use>(whole->uses()))
      if (u.succ == ir::Use::kOperandUse && u.user->op == ir::Op::TupleGet && u.user->index >= 0 &&
          u.user->index < static_cast<int64_t>(parts.size()))
        ir::replaceAllUses(u.user, parts[u.user->index]);
  }
  auto br = caller.make(ir::Op::Br, voidTy(), {}, call->loc);
  br->addSucc(blocks.at(callee.entry()), {});
  br->parent = block;
  call->dropAllReferences();
  block->instrs.back() = std::move(br);
}

}  // namespace

bool TileInline::runOnModule(ir::Module& m) {
  std::set<std::string> inlined;
  bool changed = false;
  for (auto& fn : m.functions) {
    // Calls of tile functions, until none is left (an inlined body may call more).
    for (bool again = true; again;) {
      again = false;
      for (auto& b : fn->blocks) {
        for (auto& in : b->instrs) {
          if (in->op != ir::Op::CallFunc) continue;
          const ir::Function* callee = m.find(in->name);
          if (!callee || callee == fn.get() || !hasTiles(*callee)) continue;
          inlineCall(*fn, in.get(), *callee);
          inlined.insert(callee->name);
          again = changed = true;
          break;
        }
        if (again) break;
      }
    }
    if (changed) fn->computePreds();
  }
  if (inlined.empty()) return false;
  // Inlined functions that nothing calls any more (the entry stays).
  std::set<std::string> called;
  for (auto& fn : m.functions)
    for (auto& b : fn->blocks)
      for (auto& in : b->instrs)
        if (in->op == ir::Op::CallFunc) called.insert(in->name);
  auto first = m.functions.begin() + 1;
  m.functions.erase(std::remove_if(first, m.functions.end(),
                                   [&](const std::unique_ptr<ir::Function>& f) {
                                     return inlined.count(f->name) && !called.count(f->name);
                                   }),
                    m.functions.end());
  return changed;
}

}  // namespace cj::passes
