#include "passes/cfg_util.h"

#include <algorithm>
#include <set>

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

bool removeUnreachableBlocks(ir::Function& fn) {
  if (fn.blocks.empty()) return false;
  std::set<ir::Block*> reached{fn.entry()};
  std::vector<ir::Block*> work{fn.entry()};
  while (!work.empty()) {
    ir::Block* b = work.back();
    work.pop_back();
    if (ir::Instr* t = b->terminator())
      for (ir::Edge& e : t->succs)
        if (reached.insert(e.target).second) work.push_back(e.target);
  }
  size_t before = fn.blocks.size();
  fn.blocks.erase(std::remove_if(fn.blocks.begin(), fn.blocks.end(),
                                 [&](const std::unique_ptr<ir::Block>& b) { return !reached.count(b.get()); }),
                  fn.blocks.end());
  fn.computePreds();
  return fn.blocks.size() != before;
}

}  // namespace cj::passes
