#include "passes/cfg_util.h"

namespace cj::passes {

std::map<ir::Block*, std::vector<const ir::Edge*>> incomingEdges(ir::Function& fn) {
  std::map<ir::Block*, std::vector<const ir::Edge*>> in;
  for (auto& b : fn.blocks)
    if (ir::Instr* t = b->terminator())
      for (const ir::Edge& e : t->succs) in[e.target].push_back(&e);
  return in;
}

void removeParamArgs(ir::Function& fn, ir::Block* block, size_t index) {
  for (auto& b : fn.blocks)
    if (ir::Instr* t = b->terminator())
      for (size_t s = 0; s < t->succs.size(); ++s)
        if (t->succs[s].target == block) t->removeEdgeArg(s, index);
}

void removeParam(ir::Function& fn, ir::Block* block, size_t index) {
  removeParamArgs(fn, block, index);
  block->params.erase(block->params.begin() + static_cast<long>(index));
  for (size_t i = 0; i < block->params.size(); ++i) block->params[i]->index = static_cast<int64_t>(i);
}

}  // namespace cj::passes
