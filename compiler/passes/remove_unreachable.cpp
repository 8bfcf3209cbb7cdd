#include "passes/remove_unreachable.h"

#include "passes/cfg_util.h"

namespace cj::passes {

bool RemoveUnreachable::run(ir::Function& fn) { return removeUnreachableBlocks(fn); }

}  // namespace cj::passes
