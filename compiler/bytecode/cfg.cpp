#include "bytecode/cfg.h"

#include "ir/cfg.h"
#include "support/error.h"

namespace cj::bytecode {

bool endsBlock(NOp op) {
  switch (op) {
    case NOp::Jump:
    case NOp::PopJumpIfFalse:
    case NOp::PopJumpIfTrue:
    case NOp::PopJumpIfNone:
    case NOp::PopJumpIfNotNone:
    case NOp::JumpIfFalseOrPop:
    case NOp::JumpIfTrueOrPop:
    case NOp::ForIter:
    case NOp::ReturnValue:
    case NOp::ReturnConst:
    case NOp::RaiseVarargs:
      return true;
    default:
      return false;
  }
}

bool fallsThrough(NOp op) {
  return op != NOp::Jump && op != NOp::ReturnValue && op != NOp::ReturnConst &&
         op != NOp::RaiseVarargs;
}

bool Cfg::isLoopHeader(int block) const {
  const CfgBlock& b = blocks[block];
  for (int p : b.preds)
    if (blocks[p].rpo >= b.rpo) return true;
  return false;
}

namespace {

void splitBlocks(const CodeInfo& code, Cfg& cfg) {
  const int n = static_cast<int>(code.insns.size());
  std::vector<bool> leader(n, false);
  leader[0] = true;
  for (int i = 0; i < n; ++i) {
    const Insn& in = code.insns[i];
    if (in.target >= 0) leader[in.target] = true;
    if (endsBlock(in.op) && i + 1 < n) leader[i + 1] = true;
  }
  cfg.block_of.assign(n, -1);
  for (int i = 0; i < n; ++i) {
    if (leader[i]) {
      cfg.blocks.emplace_back();
      cfg.blocks.back().first = i;
    }
    cfg.blocks.back().last = i;
    cfg.block_of[i] = static_cast<int>(cfg.blocks.size()) - 1;
  }
  for (CfgBlock& bb : cfg.blocks) {
    const Insn& last = code.insns[bb.last];
    if (fallsThrough(last.op)) {
      if (bb.last + 1 >= n)
        throw CompileError(code.filename, last.loc.line, last.loc.col, last.info->name,
                           "control falls off the end of the bytecode");
      bb.succs.push_back(cfg.block_of[bb.last + 1]);
    }
    if (last.target >= 0) bb.succs.push_back(cfg.block_of[last.target]);
  }
}

// Reverse post-order from the entry (ir/cfg.h): every block comes after its
// forward predecessors, so only loop headers see a predecessor not yet built.
void orderBlocks(Cfg& cfg) {
  ir::Graph g;
  for (const CfgBlock& b : cfg.blocks) {
    g.addNode();
    // The jump target first, so that the search visits it before the
    // fallthrough and the fallthrough comes first in the final order.
    for (auto s = b.succs.rbegin(); s != b.succs.rend(); ++s) g.addSucc(*s);
  }
  cfg.order = ir::reversePostOrder(g);
  for (size_t i = 0; i < cfg.order.size(); ++i) cfg.blocks[cfg.order[i]].rpo = static_cast<int>(i);
  for (int b : cfg.order)
    for (int s : cfg.blocks[b].succs) cfg.blocks[s].preds.push_back(b);
}

}  // namespace

Cfg buildCfg(const CodeInfo& code) {
  Cfg cfg;
  if (code.insns.empty())
    throw CompileError(code.filename, code.first_line, 0, "bytecode", "empty bytecode");
  splitBlocks(code, cfg);
  orderBlocks(cfg);
  return cfg;
}

}  // namespace cj::bytecode
