#include "bytecode/cleanup.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

namespace cj::bytecode {
namespace {

using ir::Block;
using ir::Instr;

// An edge into a block: successor `succ` of terminator `term` (edge args are
// changed through the terminator, which keeps the use lists right).
struct EdgeRef {
  Instr* term;
  size_t succ;
  const ir::ValueList& args() const { return term->succs[succ].args; }
  void removeArg(size_t i) const { term->removeEdgeArg(succ, i); }
};

std::unordered_map<Block*, std::vector<EdgeRef>> incomingEdges(ir::Function& fn) {
  std::unordered_map<Block*, std::vector<EdgeRef>> in;
  for (auto& b : fn.blocks)
    if (Instr* t = b->terminator())
      for (size_t s = 0; s < t->succs.size(); ++s) in[t->succs[s].target].push_back({t, s});
  return in;
}

// A parameter is trivial when every edge passes either one value X or the
// parameter itself (a loop that does not change it): it is X.
bool removeTrivialParams(ir::Function& fn) {
  bool any = false;
  for (bool changed = true; changed;) {
    changed = false;
    auto incoming = incomingEdges(fn);
    for (size_t bi = 1; bi < fn.blocks.size(); ++bi) {
      Block* b = fn.blocks[bi].get();
      auto& edges = incoming[b];
      for (size_t i = 0; i < b->params.size();) {
        Instr* p = b->params[i].get();
        Instr* same = nullptr;
        bool trivial = true;
        for (const EdgeRef& e : edges) {
          Instr* a = e.args().at(i);
          if (a == p || a == same) continue;
          if (same) { trivial = false; break; }
          same = a;
        }
        if (!trivial || !same) { ++i; continue; }
        ir::replaceAllUses(p, same);
        for (const EdgeRef& e : edges) e.removeArg(i);
        b->params.erase(b->params.begin() + static_cast<long>(i));
        for (size_t k = 0; k < b->params.size(); ++k) b->params[k]->index = static_cast<int64_t>(k);
        changed = any = true;
      }
    }
  }
  return any;
}

// A parameter nothing reads (a loop variable dead after the loop, a local
// only reassigned) goes, with the arguments passed for it.
void removeDeadParams(ir::Function& fn) {
  auto incoming = incomingEdges(fn);
  std::unordered_set<const Instr*> live;
  std::vector<const Instr*> work;
  auto use = [&](const Instr* v) {
    if (v && v->op == ir::Op::Param && live.insert(v).second) work.push_back(v);
  };
  for (auto& p : fn.entry()->params) use(p.get());
  for (auto& b : fn.blocks)
    for (auto& in : b->instrs)
      for (const Instr* o : in->operands) use(o);
  while (!work.empty()) {
    const Instr* p = work.back();
    work.pop_back();
    for (const EdgeRef& e : incoming[p->parent]) use(e.args().at(static_cast<size_t>(p->index)));
  }
  // Unlink every argument passed for a dead parameter first: a dead parameter
  // may be passed on to another dead one, and must have no uses once erased.
  for (size_t bi = 1; bi < fn.blocks.size(); ++bi) {
    Block* b = fn.blocks[bi].get();
    for (size_t i = b->params.size(); i-- > 0;)
      if (!live.count(b->params[i].get()))
        for (const EdgeRef& e : incoming[b]) e.removeArg(i);
  }
  for (size_t bi = 1; bi < fn.blocks.size(); ++bi) {
    Block* b = fn.blocks[bi].get();
    for (size_t i = b->params.size(); i-- > 0;)
      if (!live.count(b->params[i].get())) b->params.erase(b->params.begin() + static_cast<long>(i));
    for (size_t k = 0; k < b->params.size(); ++k) b->params[k]->index = static_cast<int64_t>(k);
  }
}

// A -> br S, S's only incoming edge: append S to A.
bool mergeStraightLines(ir::Function& fn) {
  bool any = false;
  for (bool changed = true; changed;) {
    changed = false;
    auto incoming = incomingEdges(fn);
    for (auto& a : fn.blocks) {
      Instr* t = a->terminator();
      if (!t || t->op != ir::Op::Br) continue;
      Block* s = t->succs[0].target;
      if (s == a.get() || s == fn.entry() || incoming[s].size() != 1 || !s->params.empty()) continue;
      t->dropAllReferences();
      a->instrs.pop_back();
      for (auto& in : s->instrs) {
        in->parent = a.get();
        a->instrs.push_back(std::move(in));
      }
      fn.blocks.erase(std::find_if(fn.blocks.begin(), fn.blocks.end(),
                                   [s](const std::unique_ptr<Block>& b) { return b.get() == s; }));
      changed = any = true;
      break;
    }
  }
  return any;
}

void removeUnusedConstants(ir::Function& fn) {
  for (auto& b : fn.blocks)
    ir::eraseInstrsIf(b.get(), [](const std::unique_ptr<Instr>& in) {
      // Default argument values (defaults.h) stay for callers.
      bool is_default = in->var.rfind("default:", 0) == 0;
      return (in->op == ir::Op::Const || in->op == ir::Op::Undef) && !in->hasUses() && !is_default;
    });
}

}  // namespace

void cleanupDecoded(ir::Function& fn) {
  removeTrivialParams(fn);
  removeDeadParams(fn);
  mergeStraightLines(fn);
  removeUnusedConstants(fn);
  fn.computePreds();
  fn.renumber();
}

}  // namespace cj::bytecode
