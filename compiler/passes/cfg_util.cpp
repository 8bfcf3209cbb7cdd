#include "passes/cfg_util.h"

namespace cj::passes {

std::map<ir::Block*, std::vector<ir::Edge*>> incomingEdges(ir::Function& fn) {
  std::map<ir::Block*, std::vector<ir::Edge*>> in;
  for (auto& b : fn.blocks)
    if (ir::Instr* t = b->terminator())
      for (ir::Edge& e : t->succs) in[e.target].push_back(&e);
  return in;
}

void removeParam(ir::Function& fn, ir::Block* block, size_t index) {
  for (auto& b : fn.blocks)
    if (ir::Instr* t = b->terminator())
      for (ir::Edge& e : t->succs)
        if (e.target == block) e.args.erase(e.args.begin() + static_cast<long>(index));
  block->params.erase(block->params.begin() + static_cast<long>(index));
  for (size_t i = 0; i < block->params.size(); ++i) block->params[i]->index = static_cast<int64_t>(i);
}

}  // namespace cj::passes
