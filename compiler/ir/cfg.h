// Control-flow analyses, written once for every stage: reverse post-order,
// reachability, dominators and natural loops.
//
// Two layers:
//  - Graph, DomTree, LoopForest work on dense node numbers 0..n-1 with
//    successor lists. Anything with basic blocks can use them: the bytecode
//    decoder runs them on its bytecode blocks before any IR exists.
//  - Cfg, DominatorTree, LoopInfo wrap them for an ir::Function (node i is
//    fn.blocks[i]) and answer in Block*.
// All results are vectors indexed by node number; nothing is O(n^2) or
// map-based, since they run for every kernel compile. An analysis describes
// the function as it was when built: rebuild it after the CFG changes.
#pragma once
#include <utility>
#include <vector>

#include "ir/ir.h"

namespace cj::ir {

// ---- dense layer ------------------------------------------------------------------

// A directed graph over nodes 0..size()-1 with an entry node. Successor lists
// keep the order they are added in (DFS visits them in that order) and may
// repeat a target (a cbr whose arms go to one block).
class Graph {
 public:
  struct Range {
    const int* first;
    const int* last;
    const int* begin() const { return first; }
    const int* end() const { return last; }
    size_t size() const { return static_cast<size_t>(last - first); }
  };

  void reserve(int nodes, int edges) {
    begin_.reserve(nodes);
    succ_.reserve(edges);
  }
  // Starts a new node (numbered in order) whose successors follow via addSucc.
  int addNode();
  void addSucc(int to);   // an edge from the node added last
  void setEntry(int n) { entry_ = n; }

  int size() const { return static_cast<int>(begin_.size()); }
  int entry() const { return entry_; }
  Range succs(int n) const;

 private:
  int entry_ = 0;
  std::vector<int> begin_;   // first index in succ_ of each node
  std::vector<int> succ_;
};

// The nodes reachable from the entry, in reverse post-order of a depth-first
// search that takes successors in list order. Every node comes after its
// immediate dominator, and after all its predecessors except along retreating
// edges (a loop header before its body).
std::vector<int> reversePostOrder(const Graph& g);

// The nodes reachable from `n` by one edge or more (so `n` itself only when it
// lies on a cycle), as a flag per node.
std::vector<char> reachableAfter(const Graph& g, int n);

// Dominator tree of the nodes reachable from the entry (Cooper, Harvey,
// Kennedy: "A Simple, Fast Dominance Algorithm"). a dominates b when every
// path from the entry to b passes a; the immediate dominator is the closest
// strict dominator.
class DomTree {
 public:
  explicit DomTree(const Graph& g);

  const std::vector<int>& rpo() const { return rpo_; }   // reachable nodes, reverse post-order
  int rpoIndex(int n) const { return rpo_index_[n]; }     // position in rpo(); -1: unreachable
  bool reachable(int n) const { return rpo_index_[n] >= 0; }
  // -1 for the entry and for unreachable nodes.
  int idom(int n) const { return n == entry_ ? -1 : idom_[n]; }
  // Reflexive; false when either node is unreachable. O(1).
  bool dominates(int a, int b) const;
  int depth(int n) const { return depth_[n]; }            // entry 0; unreachable -1
  const std::vector<int>& children(int n) const { return children_[n]; }   // in rpo order
  // Reachable predecessors of n (one entry per edge, so a node may repeat).
  const std::vector<int>& preds(int n) const { return preds_[n]; }

 private:
  int entry_;
  std::vector<int> rpo_, rpo_index_, idom_, depth_, pre_, post_;
  std::vector<std::vector<int>> children_, preds_;
};

// Immediate post-dominators: for each node, the first node every path from it
// to an exit passes (an exit: a node without successors); -1 for exits, for
// nodes that reach no exit (an endless loop), and for nodes whose paths leave
// through different exits (their post-dominator is the virtual exit).
std::vector<int> immediatePostDominators(const Graph& g);

// Natural loops. An edge u -> h is a back edge when h dominates u; the loop
// of header h is h plus every node that reaches a latch (a back edge's
// source) without passing h. Loops with one header are one loop, so a loop
// with several latches (`continue`) is one loop. Loops nest or are disjoint.
// A retreating edge (u -> v with v not after u in rpo) that is not a back
// edge means the CFG is irreducible: a cycle with two entries, which has no
// header and is not a loop here.
class LoopForest {
 public:
  struct Loop {
    int header = -1;
    std::vector<int> latches;   // sources of the back edges, each once, in node order
    std::vector<int> blocks;    // every node of the loop (nested loops' too), in rpo; header first
    int parent = -1;            // index of the enclosing loop in loops(); -1: outermost
    int depth = 1;              // 1: outermost
  };

  LoopForest(const Graph& g, const DomTree& dom);

  const std::vector<Loop>& loops() const { return loops_; }   // ordered by header rpo: outer first
  int loopOf(int n) const { return loop_of_[n]; }            // innermost loop containing n; -1: none
  int depth(int n) const { return loop_of_[n] < 0 ? 0 : loops_[loop_of_[n]].depth; }
  bool isHeader(int n) const { return loop_of_[n] >= 0 && loops_[loop_of_[n]].header == n; }
  bool irreducible() const { return !irreducible_edges_.empty(); }
  // The retreating edges that are not back edges (from, to).
  const std::vector<std::pair<int, int>>& irreducibleEdges() const { return irreducible_edges_; }

 private:
  std::vector<Loop> loops_;
  std::vector<int> loop_of_;
  std::vector<std::pair<int, int>> irreducible_edges_;
};

// ---- ir::Function layer -------------------------------------------------------------

// The CFG of a function as a Graph: node i is fn.blocks[i], the entry is node 0.
// Edges to blocks that are not in the function are left out (the verifier
// reports those itself).
class Cfg {
 public:
  explicit Cfg(const Function& fn);
  const Graph& graph() const { return graph_; }
  int size() const { return graph_.size(); }
  Block* block(int n) const { return blocks_[n]; }
  int node(const Block* b) const;   // -1: not a block of this function

 private:
  std::vector<Block*> blocks_;
  std::vector<int> node_by_id_;     // Block::id -> node; empty when ids are not dense and unique
  Graph graph_;
};

// The blocks the entry reaches, in reverse post-order (see the dense version).
std::vector<Block*> reversePostOrder(const Function& fn);
// The blocks the entry reaches, in fn.blocks order.
std::vector<Block*> reachableBlocks(const Function& fn);
// Deletes the blocks the entry cannot reach (keeping the others' order) and
// recomputes preds. True if any was deleted.
bool removeUnreachableBlocks(Function& fn);

// Dominators of a function's blocks (DomTree in Block*).
class DominatorTree {
 public:
  explicit DominatorTree(const Function& fn) : cfg_(fn), tree_(cfg_.graph()) {}

  bool reachable(const Block* b) const;
  Block* idom(const Block* b) const;                     // nullptr: the entry, or unreachable
  bool dominates(const Block* a, const Block* b) const;  // reflexive; false if either is unreachable
  int depth(const Block* b) const;                       // entry 0; -1: unreachable
  std::vector<Block*> children(const Block* b) const;
  std::vector<Block*> rpo() const;                       // reachable blocks in reverse post-order

  const Cfg& cfg() const { return cfg_; }
  const DomTree& tree() const { return tree_; }

 private:
  Cfg cfg_;
  DomTree tree_;
};

// Natural loops of a function (LoopForest in Block*); node numbers index
// fn.blocks (dom.cfg().block(n)). Keeps a reference to `dom`: it must outlive this.
class LoopInfo {
 public:
  explicit LoopInfo(const DominatorTree& dom) : dom_(dom), forest_(dom.cfg().graph(), dom.tree()) {}

  const std::vector<LoopForest::Loop>& loops() const { return forest_.loops(); }
  Block* header(const LoopForest::Loop& l) const { return dom_.cfg().block(l.header); }
  int depth(const Block* b) const;        // loops around b; 0: none
  bool isHeader(const Block* b) const;
  bool irreducible() const { return forest_.irreducible(); }
  const LoopForest& forest() const { return forest_; }

 private:
  const DominatorTree& dom_;
  LoopForest forest_;
};

}  // namespace cj::ir
