// The control-flow graph of normalised bytecode: basic blocks split at jump
// targets and after jumps, returns and raises, with successors, predecessors
// and a reverse post-order over the blocks reachable from the entry (computed
// by ir/cfg.h on a Graph of these blocks: there is one RPO in the compiler).
#pragma once
#include <vector>

#include "bytecode/code_reader.h"

namespace cj::bytecode {

// Instructions that end a basic block.
bool endsBlock(NOp op);
// Instructions after which execution may continue with the next instruction.
bool fallsThrough(NOp op);

struct CfgBlock {
  int first = 0, last = 0;     // instruction range, inclusive
  std::vector<int> succs;      // block indices; [fallthrough, target] for conditionals
  std::vector<int> preds;      // reachable predecessors
  int rpo = -1;                // position in Cfg::order; -1: unreachable
};

struct Cfg {
  std::vector<CfgBlock> blocks;   // blocks[0] starts at instruction 0
  std::vector<int> block_of;      // instruction index -> index of its block
  std::vector<int> order;         // reachable blocks in reverse post-order

  // A block with a predecessor that does not come before it in `order` (the
  // target of a retreating edge: a loop header, or an entry of an irreducible
  // cycle): its incoming values are not all known when it is built.
  bool isLoopHeader(int block) const;
};

// Throws CompileError when control falls off the end of the bytecode.
Cfg buildCfg(const CodeInfo& code);

}  // namespace cj::bytecode
