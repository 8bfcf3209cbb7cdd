// One cuBLASDx descriptor through libmathdx, uncached (cache.cpp caches).
#pragma once
#include <vector>

#include "mathdx/code.h"
#include "mathdx/mathdx.h"

namespace cj::mathdx {

// Sets the spec's operators on a new descriptor, reads its traits and
// finalizes its LTO-IR for sm_<spec.sm>. Throws CompileError (libmathdx's
// message) or LibraryMissing.
MatmulResult compileMatmul(const MatmulSpec& spec);

// The operators a spec sets on a cuBLASDx descriptor, in cuBLASDx's order
// (CompileError for a spelling not in enums.def).
std::vector<Operator> matmulOperators(const MatmulSpec& spec);

}  // namespace cj::mathdx
