// Whether a decoded function uses block algorithms (cudajit.block /
// cudajit.warp, MathDx's block GEMMs): the dispatcher then specialises its kernels on the launch
// block shape. The calls themselves are library calls (libcalls/).
#pragma once
#include "ir/ir.h"

namespace cj::driver {

// Whether the decoded (untyped) module refers to cudajit.block / cudajit.warp
// / cudajit.mathdx anywhere: its kernels are then specialised on the launch block shape.
// Cheap (a scan of the constants), so the dispatcher asks before compiling.
// `tiles_too`: cudajit.tile as well (a SIMT kernel's tile operations are
// lowered for its block shape; a tile kernel's block is its compiler's).
bool usesBlockAlgorithms(const ir::Module& untyped, bool tiles_too = false);

}  // namespace cj::driver
