#include "ir/cfg.h"

#include <algorithm>

namespace cj::ir {

// ---- Graph ----------------------------------------------------------------------------

int Graph::addNode() {
  begin_.push_back(static_cast<int>(succ_.size()));
  return size() - 1;
}

void Graph::addSucc(int to) { succ_.push_back(to); }

Graph::Range Graph::succs(int n) const {
  const int* base = succ_.data();
  int last = n + 1 < size() ? begin_[n + 1] : static_cast<int>(succ_.size());
  return {base + begin_[n], base + last};
}

std::vector<char> reachableAfter(const Graph& g, int n) {
  std::vector<char> reached(g.size(), 0);
  std::vector<int> work(g.succs(n).begin(), g.succs(n).end());
  while (!work.empty()) {
    int x = work.back();
    work.pop_back();
    if (reached[x]) continue;
    reached[x] = 1;
    for (int s : g.succs(x)) work.push_back(s);
  }
  return reached;
}

std::vector<int> immediatePostDominators(const Graph& g) {
  // Dominators of the reversed graph, entered from a virtual exit (node n)
  // with an edge to every exit.
  const int n = g.size();
  std::vector<std::vector<int>> preds(n + 1);
  for (int u = 0; u < n; ++u) {
    if (g.succs(u).size() == 0) preds[n].push_back(u);
    for (int s : g.succs(u)) preds[s].push_back(u);
  }
  Graph reversed;
  for (int u = 0; u <= n; ++u) {
    reversed.addNode();
    for (int p : preds[u]) reversed.addSucc(p);
  }
  reversed.setEntry(n);
  DomTree tree(reversed);
  std::vector<int> ipdom(n, -1);
  for (int u = 0; u < n; ++u) {
    int d = tree.reachable(u) ? tree.idom(u) : -1;
    ipdom[u] = d == n ? -1 : d;
  }
  return ipdom;
}

std::vector<int> reversePostOrder(const Graph& g) {
  std::vector<int> post;
  if (g.size() == 0) return post;
  post.reserve(g.size());
  std::vector<char> seen(g.size(), 0);
  // Iterative DFS (deep CFGs must not overflow the stack): node, next successor.
  std::vector<std::pair<int, size_t>> stack{{g.entry(), 0}};
  seen[g.entry()] = 1;
  while (!stack.empty()) {
    auto& [n, next] = stack.back();
    Graph::Range s = g.succs(n);
    if (next < s.size()) {
      int to = s.first[next++];
      if (!seen[to]) {
        seen[to] = 1;
        stack.push_back({to, 0});
      }
    } else {
      post.push_back(n);
      stack.pop_back();
    }
  }
  std::reverse(post.begin(), post.end());
  return post;
}

// ---- DomTree ----------------------------------------------------------------------------

DomTree::DomTree(const Graph& g)
    : entry_(g.entry()),
      rpo_(reversePostOrder(g)),
      rpo_index_(g.size(), -1),
      idom_(g.size(), -1),
      depth_(g.size(), -1),
      pre_(g.size(), -1),
      post_(g.size(), -1),
      children_(g.size()),
      preds_(g.size()) {
  if (rpo_.empty()) return;
  for (size_t i = 0; i < rpo_.size(); ++i) rpo_index_[rpo_[i]] = static_cast<int>(i);
  for (int n : rpo_)
    for (int s : g.succs(n)) preds_[s].push_back(n);

  // Cooper-Harvey-Kennedy: iterate idom(b) = intersection of the processed
  // predecessors' dominator chains, in rpo, until nothing changes.
  auto intersect = [&](int a, int b) {
    while (a != b) {
      while (rpo_index_[a] > rpo_index_[b]) a = idom_[a];
      while (rpo_index_[b] > rpo_index_[a]) b = idom_[b];
    }
    return a;
  };
  idom_[entry_] = entry_;
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i = 1; i < rpo_.size(); ++i) {
      int b = rpo_[i];
      int d = -1;
      for (int p : preds_[b]) {
        if (idom_[p] < 0) continue;   // not processed yet (a retreating edge)
        d = d < 0 ? p : intersect(p, d);
      }
      if (d != idom_[b]) {
        idom_[b] = d;
        changed = true;
      }
    }
  }

  // The tree: children in rpo, depth, and DFS entry/exit numbers so that
  // dominates() is an interval test.
  depth_[entry_] = 0;
  for (size_t i = 1; i < rpo_.size(); ++i) {
    int b = rpo_[i];
    children_[idom_[b]].push_back(b);
    depth_[b] = depth_[idom_[b]] + 1;
  }
  int clock = 0;
  std::vector<std::pair<int, size_t>> stack{{entry_, 0}};
  pre_[entry_] = clock++;
  while (!stack.empty()) {
    auto& [n, next] = stack.back();
    if (next < children_[n].size()) {
      int c = children_[n][next++];
      pre_[c] = clock++;
      stack.push_back({c, 0});
    } else {
      post_[n] = clock++;
      stack.pop_back();
    }
  }
}

bool DomTree::dominates(int a, int b) const {
  if (!reachable(a) || !reachable(b)) return false;
  return pre_[a] <= pre_[b] && post_[b] <= post_[a];
}

// ---- LoopForest --------------------------------------------------------------------------

LoopForest::LoopForest(const Graph& g, const DomTree& dom) : loop_of_(g.size(), -1) {
  const std::vector<int>& rpo = dom.rpo();
  std::vector<Loop> found;   // in discovery order: inner loops first
  std::vector<int> work;
  // Headers in post-order, so a nested loop exists before the loop around it.
  for (auto it = rpo.rbegin(); it != rpo.rend(); ++it) {
    const int h = *it;
    Loop loop;
    loop.header = h;
    for (int p : dom.preds(h)) {
      if (dom.rpoIndex(p) < dom.rpoIndex(h)) continue;   // a forward edge
      if (!dom.dominates(h, p)) {
        irreducible_edges_.push_back({p, h});
        continue;
      }
      if (std::find(loop.latches.begin(), loop.latches.end(), p) == loop.latches.end())
        loop.latches.push_back(p);
    }
    if (loop.latches.empty()) continue;
    std::sort(loop.latches.begin(), loop.latches.end());
    const int id = static_cast<int>(found.size());
    loop_of_[h] = id;
    // Walk back from the latches to the header. A node already in a loop
    // belongs to a nested one: that loop's outermost ancestor becomes a child
    // of this one, and the walk continues from its header.
    work.assign(loop.latches.begin(), loop.latches.end());
    while (!work.empty()) {
      int n = work.back();
      work.pop_back();
      int l = loop_of_[n];
      if (l < 0) {
        loop_of_[n] = id;
      } else {
        while (l != id && found[l].parent >= 0) l = found[l].parent;
        if (l == id) continue;
        found[l].parent = id;
        n = found[l].header;
      }
      for (int p : dom.preds(n))
        if (loop_of_[p] != id) work.push_back(p);
    }
    found.push_back(std::move(loop));
  }
  // Number the loops outer first (by header rpo) and fill in blocks and depth.
  std::vector<int> order(found.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  std::sort(order.begin(), order.end(),
            [&](int a, int b) { return dom.rpoIndex(found[a].header) < dom.rpoIndex(found[b].header); });
  std::vector<int> renumber(found.size());
  for (size_t i = 0; i < order.size(); ++i) renumber[order[i]] = static_cast<int>(i);
  loops_.reserve(found.size());
  for (int old : order) {
    loops_.push_back(std::move(found[old]));
    Loop& l = loops_.back();
    if (l.parent >= 0) l.parent = renumber[l.parent];
    l.depth = l.parent >= 0 ? loops_[l.parent].depth + 1 : 1;   // parents come first
  }
  for (int& l : loop_of_)
    if (l >= 0) l = renumber[l];
  for (int n : rpo)
    for (int l = loop_of_[n]; l >= 0; l = loops_[l].parent) loops_[l].blocks.push_back(n);
}

// ---- ir::Function layer --------------------------------------------------------------------

Cfg::Cfg(const Function& fn) {
  blocks_.reserve(fn.blocks.size());
  for (const auto& b : fn.blocks) blocks_.push_back(b.get());
  // Look blocks up by id when ids are small and unique (the usual case);
  // otherwise by a linear scan fallback in node().
  int max_id = -1;
  bool dense = true;
  for (Block* b : blocks_) {
    if (!b || b->id < 0 || b->id > 4 * static_cast<int>(blocks_.size()) + 64) dense = false;
    else max_id = std::max(max_id, b->id);
  }
  if (dense) {
    node_by_id_.assign(static_cast<size_t>(max_id + 1), -1);
    for (size_t i = 0; i < blocks_.size() && dense; ++i) {
      int& slot = node_by_id_[blocks_[i]->id];
      if (slot >= 0) dense = false;
      slot = static_cast<int>(i);
    }
    if (!dense) node_by_id_.clear();
  }
  graph_.reserve(size(), 2 * size());   // br and cbr: at most two edges per block
  for (const Block* b : blocks_) {
    graph_.addNode();
    if (!b) continue;
    if (const Instr* t = b->terminator())
      for (const Edge& e : t->succs) {
        int n = e.target ? node(e.target) : -1;
        if (n >= 0) graph_.addSucc(n);
      }
  }
}

int Cfg::node(const Block* b) const {
  if (!b) return -1;
  if (!node_by_id_.empty()) {
    if (b->id < 0 || b->id >= static_cast<int>(node_by_id_.size())) return -1;
    int n = node_by_id_[b->id];
    return n >= 0 && blocks_[n] == b ? n : -1;
  }
  auto it = std::find(blocks_.begin(), blocks_.end(), b);
  return it == blocks_.end() ? -1 : static_cast<int>(it - blocks_.begin());
}

std::vector<Block*> reversePostOrder(const Function& fn) {
  std::vector<Block*> out;
  if (fn.blocks.empty()) return out;
  Cfg cfg(fn);
  for (int n : reversePostOrder(cfg.graph())) out.push_back(cfg.block(n));
  return out;
}

std::vector<Block*> reachableBlocks(const Function& fn) {
  std::vector<Block*> out;
  if (fn.blocks.empty()) return out;
  Cfg cfg(fn);
  std::vector<char> reached(cfg.size(), 0);
  for (int n : reversePostOrder(cfg.graph())) reached[n] = 1;
  for (int n = 0; n < cfg.size(); ++n)
    if (reached[n]) out.push_back(cfg.block(n));
  return out;
}

bool removeUnreachableBlocks(Function& fn) {
  if (fn.blocks.empty()) return false;
  std::vector<char> reached(fn.blocks.size(), 0);
  {
    Cfg cfg(fn);
    for (int n : reversePostOrder(cfg.graph())) reached[n] = 1;
  }
  size_t before = fn.blocks.size();
  // Unreachable blocks may use one another's values (and reachable ones):
  // drop every reference first, so that use lists stay exact.
  for (size_t i = 0; i < before; ++i)
    if (!reached[i]) dropBlockReferences(fn.blocks[i].get());
  size_t kept = 0;
  for (size_t i = 0; i < before; ++i)
    if (reached[i]) fn.blocks[kept++] = std::move(fn.blocks[i]);
  fn.blocks.resize(kept);
  fn.computePreds();
  return kept != before;
}

bool DominatorTree::reachable(const Block* b) const {
  int n = cfg_.node(b);
  return n >= 0 && tree_.reachable(n);
}

Block* DominatorTree::idom(const Block* b) const {
  int n = cfg_.node(b);
  int d = n >= 0 ? tree_.idom(n) : -1;
  return d >= 0 ? cfg_.block(d) : nullptr;
}

bool DominatorTree::dominates(const Block* a, const Block* b) const {
  int x = cfg_.node(a), y = cfg_.node(b);
  return x >= 0 && y >= 0 && tree_.dominates(x, y);
}

int DominatorTree::depth(const Block* b) const {
  int n = cfg_.node(b);
  return n >= 0 ? tree_.depth(n) : -1;
}

std::vector<Block*> DominatorTree::children(const Block* b) const {
  std::vector<Block*> out;
  int n = cfg_.node(b);
  if (n >= 0)
    for (int c : tree_.children(n)) out.push_back(cfg_.block(c));
  return out;
}

std::vector<Block*> DominatorTree::rpo() const {
  std::vector<Block*> out;
  out.reserve(tree_.rpo().size());
  for (int n : tree_.rpo()) out.push_back(cfg_.block(n));
  return out;
}

int LoopInfo::depth(const Block* b) const {
  int n = dom_.cfg().node(b);
  return n >= 0 ? forest_.depth(n) : 0;
}

bool LoopInfo::isHeader(const Block* b) const {
  int n = dom_.cfg().node(b);
  return n >= 0 && forest_.isHeader(n);
}

}  // namespace cj::ir
