#include "passes/simplify_params.h"

#include "passes/cfg_util.h"

namespace cj::passes {
namespace {

// The one value `param` receives on every edge, ignoring edges that pass the
// parameter back to itself; nullptr if there are several or none. (If every
// edge from outside passes v, v dominates the block: a path's first entry
// into the block comes from outside it.)
ir::Instr* soleIncomingValue(ir::Instr* param, const std::vector<const ir::Edge*>& edges) {
  ir::Instr* sole = nullptr;
  for (const ir::Edge* e : edges) {
    ir::Instr* v = e->args[static_cast<size_t>(param->index)];
    if (v == param || v == sole) continue;
    if (sole) return nullptr;
    sole = v;
  }
  return sole;
}

}  // namespace

bool SimplifyParams::run(ir::Function& fn) {
  bool changed_any = false;
  for (bool changed = true; changed;) {
    changed = false;
    auto incoming = incomingEdges(fn);
    for (size_t bi = 1; bi < fn.blocks.size(); ++bi) {   // bb0's params are the arguments
      ir::Block* b = fn.blocks[bi].get();
      const auto& edges = incoming[b];
      for (size_t k = 0; k < b->params.size();) {
        ir::Instr* p = b->params[k].get();
        ir::Instr* v = soleIncomingValue(p, edges);
        if (!v) {
          ++k;
          continue;
        }
        ir::replaceAllUses(p, v);
        if (v->var.empty()) v->var = p->var;   // keep the variable name in the text
        removeParam(fn, b, k);                 // edges keep pointing at b: `edges` stays valid
        changed = changed_any = true;
      }
    }
  }
  return changed_any;
}

}  // namespace cj::passes
