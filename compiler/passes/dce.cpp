#include "passes/dce.h"

#include <algorithm>
#include <set>

#include "ir/cfg.h"
#include "passes/cfg_util.h"

namespace cj::passes {
namespace {

// Kept whatever uses it: side effects, terminators, and ops that are not
// marked PURE (a load may fault; iter_next advances its iterator).
bool isRoot(const ir::Instr& in) {
  if (in.op == ir::Op::Intrinsic && in.intrinsic != ir::Intrinsic::Count && ir::isPureIntrinsic(in.intrinsic)) return false;
  return !(ir::opFlags(in.op) & ir::PURE);
}

}  // namespace

bool DeadCodeElimination::run(ir::Function& fn) {
  bool changed = ir::removeUnreachableBlocks(fn);
  auto incoming = incomingEdges(fn);

  // Mark: roots, then operands of live instructions; a live parameter makes
  // the matching argument of every edge into its block live.
  std::set<const ir::Instr*> live;
  std::vector<ir::Instr*> work;
  auto mark = [&](ir::Instr* v) {
    if (live.insert(v).second) work.push_back(v);
  };
  for (auto& p : fn.entry()->params) mark(p.get());   // the signature stays
  for (auto& b : fn.blocks)
    for (auto& in : b->instrs)
      if (isRoot(*in)) mark(in.get());
  while (!work.empty()) {
    ir::Instr* v = work.back();
    work.pop_back();
    for (ir::Instr* o : v->operands) mark(o);
    if (v->op == ir::Op::Param && v->parent != fn.entry())
      for (const ir::Edge* e : incoming[v->parent]) mark(e->args[static_cast<size_t>(v->index)]);
  }

  // Sweep: unlink every dead use first (dead values use one another across
  // blocks), then erase; an erased value must have no uses left.
  for (auto& b : fn.blocks)
    for (size_t k = b->params.size(); k-- > 0;)
      if (!live.count(b->params[k].get())) removeParamArgs(fn, b.get(), k);
  for (auto& b : fn.blocks)
    for (auto& in : b->instrs)
      if (!live.count(in.get())) in->dropAllReferences();
  for (auto& b : fn.blocks) {
    auto& params = b->params;
    for (size_t k = params.size(); k-- > 0;)
      if (!live.count(params[k].get())) {
        params.erase(params.begin() + static_cast<long>(k));
        changed = true;
      }
    for (size_t k = 0; k < params.size(); ++k) params[k]->index = static_cast<int64_t>(k);
    auto& instrs = b->instrs;
    size_t before = instrs.size();
    instrs.erase(std::remove_if(instrs.begin(), instrs.end(),
                                [&](const std::unique_ptr<ir::Instr>& in) { return !live.count(in.get()); }),
                 instrs.end());
    changed |= instrs.size() != before;
  }
  return changed;
}

}  // namespace cj::passes
