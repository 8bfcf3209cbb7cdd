// Which values of a SIMT function may differ between the threads of a block,
// and which blocks some threads of a block may skip (divergent code).
//
// Tile operations in a SIMT kernel are block-collective: every thread must
// reach them, with the same scalar operands (docs/tiles.md, "Tiles inside
// SIMT kernels"). This analysis is what the tile-check-simt pass checks that
// with. It is conservative in the direction that matters: a value it calls
// uniform is the same in every thread of the block.
//
// Sources of variation: the thread's index (tid.x/y/z, laneid), what atomics,
// warp operations and CUB's block algorithms return (a CUB block reduction's
// result is only valid in thread 0), loads through a varying address or from
// a local (per-thread) array, and device functions whose result depends on
// one of these. A branch on a varying value makes divergent every block
// between it and its immediate post-dominator, and makes varying the block
// parameters of those blocks and of the join (the value a thread brings
// depends on its path).
#pragma once
#include <unordered_map>

#include "ir/ir.h"

namespace cj::passes {

struct Uniformity {
  // A varying value -> the instruction its variation comes from (a thread
  // index read, an atomic, the branch whose join it is), for messages.
  std::unordered_map<const ir::Instr*, const ir::Instr*> varying;
  // A divergent block -> the branch on a varying value that makes it so.
  std::unordered_map<const ir::Block*, const ir::Instr*> divergent;

  const ir::Instr* varyingOrigin(const ir::Instr* v) const {
    auto it = varying.find(v);
    return it == varying.end() ? nullptr : it->second;
  }
  const ir::Instr* divergentBranch(const ir::Block* b) const {
    auto it = divergent.find(b);
    return it == divergent.end() ? nullptr : it->second;
  }
};

// The Python spelling of an intrinsic that reads the thread's index
// (cuda.threadIdx.x, cuda.laneid), nullptr for any other: the values that
// vary by themselves, named in messages.
const char* threadIndexSource(ir::Intrinsic id);

// The analysis of `fn`, whose arguments are uniform (kernel arguments; a
// device function analysed for its callers). `module` finds the callees of
// CallFunc (null: every call result is taken as varying).
Uniformity analyzeUniformity(const ir::Function& fn, const ir::Module* module);

}  // namespace cj::passes
