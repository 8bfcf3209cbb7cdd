// Small CFG helpers the passes share.
#pragma once
#include <map>
#include <vector>

#include "ir/ir.h"

namespace cj::passes {

// Every edge into each block, across all terminators (a cbr with both arms to
// one block contributes two edges).
std::map<ir::Block*, std::vector<const ir::Edge*>> incomingEdges(ir::Function& fn);

// Removes parameter `index` of `block` and the matching argument from every
// edge into it; renumbers the remaining parameters' Instr::index.
void removeParam(ir::Function& fn, ir::Block* block, size_t index);
// Only the arguments every edge into `block` passes for parameter `index`
// (the parameter stays; erase it once nothing uses it).
void removeParamArgs(ir::Function& fn, ir::Block* block, size_t index);

// Deletes blocks that the entry cannot reach; recomputes preds. True if any.
bool removeUnreachableBlocks(ir::Function& fn);

// The blocks the entry reaches, in reverse post-order (every block after its
// immediate dominator; loop headers before their bodies).
std::vector<ir::Block*> reversePostOrder(ir::Function& fn);

// Immediate dominator of every block in `rpo` (reversePostOrder); the entry
// maps to itself (Cooper, Harvey, Kennedy: "A Simple, Fast Dominance Algorithm").
std::map<ir::Block*, ir::Block*> immediateDominators(const std::vector<ir::Block*>& rpo);

}  // namespace cj::passes
