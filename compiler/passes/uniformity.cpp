// The uniformity analysis (uniformity.h): a fixpoint over values and
// branches, since a varying branch makes its join's parameters vary and
// those may decide further branches.
#include "passes/uniformity.h"

#include <set>
#include <string>
#include <vector>

#include "ir/cfg.h"
#include "ir/intrinsics.h"

namespace cj::passes {
namespace {

// Intrinsics whose result may differ between the threads of a block even
// when their operands do not.
bool variesByItself(const ir::Instr& in) {
  if (in.op != ir::Op::Intrinsic) return false;
  if (threadIndexSource(in.intrinsic)) return true;
  switch (ir::intrinsicFamily(in.intrinsic)) {
    case ir::IntrinsicFamily::Atomic:   // the old value: each thread sees another
    case ir::IntrinsicFamily::Warp:     // per warp at best
    case ir::IntrinsicFamily::Cub:      // block results are valid in thread 0 only
    case ir::IntrinsicFamily::Foreign:  // the user's code: anything
    case ir::IntrinsicFamily::Global:
      return !in.type->is(TypeKind::Void) && in.type != noneTy();
    default:
      return false;
  }
}

bool isLocalArray(const ir::Instr* a) {
  return a->type->is(TypeKind::Array) && a->type->space == MemSpace::Local;
}

// Whether each device function analysed so far returns a varying value (its
// arguments uniform): one analysis per callee, however often it is called.
using CalleeMemo = std::unordered_map<const ir::Function*, bool>;

class Analysis {
 public:
  Analysis(const ir::Function& fn, const ir::Module* module, Uniformity& out, CalleeMemo& callees)
      : fn_(fn), module_(module), out_(out), callees_(callees), cfg_(fn),
        ipdom_(ir::immediatePostDominators(cfg_.graph())) {}

  void run() {
    std::vector<ir::Block*> order = ir::reversePostOrder(fn_);
    bool changed = true;
    while (changed) {
      changed = false;
      for (ir::Block* b : order)
        for (const auto& in : b->instrs) {
          if (!out_.varying.count(in.get()))
            if (const ir::Instr* origin = originOf(*in)) {
              out_.varying[in.get()] = origin;
              changed = true;
            }
          changed = edgeArgs(*in) || changed;
          if (in->op == ir::Op::CondBr && !in->operands.empty() && out_.varying.count(in->operands[0]) &&
              branched_.insert(in.get()).second) {
            diverge(*in);
            changed = true;
          }
        }
    }
  }

 private:
  // Why `in` varies (the instruction the variation comes from); null: uniform so far.
  const ir::Instr* originOf(const ir::Instr& in) {
    if (in.type->isTile()) return nullptr;   // a tile is one value of the whole block
    if (variesByItself(in)) return &in;
    if (in.op == ir::Op::ArrayLoad && !in.operands.empty() && isLocalArray(in.operands[0])) return &in;
    for (const ir::Instr* o : in.operands)
      if (const ir::Instr* origin = out_.varyingOrigin(o)) return origin;
    if (in.op == ir::Op::CallFunc && callReturnsVarying(in)) return &in;
    return nullptr;
  }

  // A varying edge argument makes the target's parameter vary.
  bool edgeArgs(const ir::Instr& term) {
    bool changed = false;
    for (const ir::Edge& e : term.succs)
      for (size_t k = 0; k < e.args.size() && k < e.target->params.size(); ++k)
        if (const ir::Instr* origin = out_.varyingOrigin(e.args[k]))
          changed = out_.varying.emplace(e.target->params[k].get(), origin).second || changed;
    return changed;
  }

  // Every block from the branch's successors up to (not through) its
  // immediate post-dominator is divergent; their parameters and the join's vary.
  void diverge(const ir::Instr& branch) {
    const int from = cfg_.node(branch.parent);
    if (from < 0) return;
    const int join = ipdom_[from];
    std::vector<int> work;
    std::vector<char> seen(cfg_.size(), 0);
    for (int s : cfg_.graph().succs(from)) work.push_back(s);
    while (!work.empty()) {
      int n = work.back();
      work.pop_back();
      if (n == join || seen[n]) continue;
      seen[n] = 1;
      const ir::Block* b = cfg_.block(n);
      out_.divergent.emplace(b, &branch);
      for (const auto& p : b->params) out_.varying.emplace(p.get(), &branch);
      for (int s : cfg_.graph().succs(n)) work.push_back(s);
    }
    if (join >= 0)
      for (const auto& p : cfg_.block(join)->params) out_.varying.emplace(p.get(), &branch);
  }

  // A device function returns a varying value when a return's operand
  // varies or a return is in divergent code (threads take different returns).
  bool callReturnsVarying(const ir::Instr& call) {
    const ir::Function* callee = module_ ? module_->find(call.name) : nullptr;
    if (!callee || callee == &fn_) return true;
    // Recursion (direct or through others) is taken as varying: the entry
    // made before the callee's analysis answers a call that comes back to it.
    auto [it, fresh] = callees_.emplace(callee, true);
    if (!fresh) return it->second;
    Uniformity inner;
    if (!callee->blocks.empty()) Analysis(*callee, module_, inner, callees_).run();
    bool varies = false;
    for (const auto& b : callee->blocks) {
      const ir::Instr* t = b->terminator();
      if (!t || t->op != ir::Op::Ret) continue;
      varies = varies || inner.divergentBranch(b.get());
      for (const ir::Instr* o : t->operands) varies = varies || inner.varyingOrigin(o);
    }
    callees_[callee] = varies;
    return varies;
  }

  const ir::Function& fn_;
  const ir::Module* module_;
  Uniformity& out_;
  CalleeMemo& callees_;
  ir::Cfg cfg_;
  std::vector<int> ipdom_;
  std::set<const ir::Instr*> branched_;
};

}  // namespace

const char* threadIndexSource(ir::Intrinsic id) {
  switch (id) {
    case ir::Intrinsic::TidX: return "cuda.threadIdx.x";
    case ir::Intrinsic::TidY: return "cuda.threadIdx.y";
    case ir::Intrinsic::TidZ: return "cuda.threadIdx.z";
    case ir::Intrinsic::LaneId: return "cuda.laneid";
    default: return nullptr;
  }
}

Uniformity analyzeUniformity(const ir::Function& fn, const ir::Module* module) {
  Uniformity u;
  CalleeMemo callees;
  if (!fn.blocks.empty()) Analysis(fn, module, u, callees).run();
  return u;
}

}  // namespace cj::passes
