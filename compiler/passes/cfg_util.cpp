#include "passes/cfg_util.h"

#include <algorithm>
#include <set>

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

bool removeUnreachableBlocks(ir::Function& fn) {
  if (fn.blocks.empty()) return false;
  std::set<ir::Block*> reached{fn.entry()};
  std::vector<ir::Block*> work{fn.entry()};
  while (!work.empty()) {
    ir::Block* b = work.back();
    work.pop_back();
    if (ir::Instr* t = b->terminator())
      for (const ir::Edge& e : t->succs)
        if (reached.insert(e.target).second) work.push_back(e.target);
  }
  size_t before = fn.blocks.size();
  for (auto& b : fn.blocks)
    if (!reached.count(b.get())) ir::dropBlockReferences(b.get());   // their values may use one another
  fn.blocks.erase(std::remove_if(fn.blocks.begin(), fn.blocks.end(),
                                 [&](const std::unique_ptr<ir::Block>& b) { return !reached.count(b.get()); }),
                  fn.blocks.end());
  fn.computePreds();
  return fn.blocks.size() != before;
}

std::vector<ir::Block*> reversePostOrder(ir::Function& fn) {
  std::vector<ir::Block*> post;
  if (fn.blocks.empty()) return post;
  std::set<ir::Block*> seen{fn.entry()};
  std::vector<std::pair<ir::Block*, size_t>> stack{{fn.entry(), 0}};
  while (!stack.empty()) {
    auto& [b, next] = stack.back();
    ir::Instr* t = b->terminator();
    if (t && next < t->succs.size()) {
      ir::Block* s = t->succs[next++].target;
      if (seen.insert(s).second) stack.push_back({s, 0});
    } else {
      post.push_back(b);
      stack.pop_back();
    }
  }
  return {post.rbegin(), post.rend()};
}

std::map<ir::Block*, ir::Block*> immediateDominators(const std::vector<ir::Block*>& rpo) {
  std::map<ir::Block*, ir::Block*> idom;
  if (rpo.empty()) return idom;
  std::map<ir::Block*, int> order;   // position in rpo
  for (size_t i = 0; i < rpo.size(); ++i) order[rpo[i]] = static_cast<int>(i);
  std::map<ir::Block*, std::vector<ir::Block*>> preds;
  for (ir::Block* b : rpo)
    if (ir::Instr* t = b->terminator())
      for (const ir::Edge& e : t->succs) preds[e.target].push_back(b);
  auto intersect = [&](ir::Block* a, ir::Block* b) {
    while (a != b) {
      while (order.at(a) > order.at(b)) a = idom.at(a);
      while (order.at(b) > order.at(a)) b = idom.at(b);
    }
    return a;
  };
  idom[rpo.front()] = rpo.front();
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i = 1; i < rpo.size(); ++i) {
      ir::Block* b = rpo[i];
      ir::Block* d = nullptr;
      for (ir::Block* p : preds[b]) {
        if (!idom.count(p)) continue;
        d = d ? intersect(p, d) : p;
      }
      auto it = idom.find(b);
      if (d && (it == idom.end() || it->second != d)) {
        idom[b] = d;
        changed = true;
      }
    }
  }
  return idom;
}

}  // namespace cj::passes
