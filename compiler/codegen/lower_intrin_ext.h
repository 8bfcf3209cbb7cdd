// Issue-5 intrinsics (numba.cuda parity): barriers with predicates, warp
// shuffles/votes/matches, bit operations, every atomic, float tests and
// float decomposition. lower_intrinsic.cpp tries this before failing.
#pragma once
#include "codegen/emitter.h"

namespace cj::codegen {

// Lowers `in` if it is one of the intrinsics above; false otherwise.
bool lowerIntrinsicExt(FunctionEmitter& fe, const ir::Instr& in);

}  // namespace cj::codegen
