// Dead-branch pruning before typing, as numba does: a condition that only
// tests whether an argument (or a default) is None is known once the
// argument types are, so the branch not taken is removed before it is typed.
// This is what makes `if out is None: ... else: out[i] = v` compile when
// `out` is passed None. Likewise a dtype test (`if A.dtype == ct.float32:`)
// and a comparison of constants (`if BK == 64:` on a Constant parameter),
// which cuTile decides at compile time: the branches may then give a
// variable different types.
#pragma once
#include "ir/ir.h"

namespace cj::typeinfer {

// Rewrites each decidable `cbr` into a `br`; returns true if any changed
// (the caller then removes the unreachable blocks).
bool pruneNoneBranches(ir::Function& fn);

}  // namespace cj::typeinfer
