// One cuRANDDx descriptor through libmathdx, uncached (cache.cpp caches).
#pragma once
#include "mathdx/mathdx.h"

namespace cj::mathdx {

// Sets the spec's operators on a new descriptor (thread execution, the four
// device functions), reads the symbols and the state's size, finalizes its
// LTO-IR for sm_<spec.sm>. Throws CompileError (libmathdx's message) or
// LibraryMissing.
RandomResult compileRandom(const RandomSpec& spec);

}  // namespace cj::mathdx
