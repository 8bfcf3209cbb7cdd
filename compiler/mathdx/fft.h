// One cuFFTDx descriptor through libmathdx, uncached (cache.cpp caches).
#pragma once
#include "mathdx/mathdx.h"

namespace cj::mathdx {

// Sets the spec's operators on a new descriptor, reads its traits and
// finalizes its LTO-IR for sm_<spec.sm>. Throws CompileError (libmathdx's
// message) or LibraryMissing.
FftResult compileFft(const FftSpec& spec);

}  // namespace cj::mathdx
