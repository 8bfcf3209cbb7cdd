// Small CFG edits the passes share (the analyses are in ir/cfg.h).
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

}  // namespace cj::passes
