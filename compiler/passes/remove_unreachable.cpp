#include "passes/remove_unreachable.h"

#include "ir/cfg.h"

namespace cj::passes {

bool RemoveUnreachable::run(ir::Function& fn) { return ir::removeUnreachableBlocks(fn); }

}  // namespace cj::passes
