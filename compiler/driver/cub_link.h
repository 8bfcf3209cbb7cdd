// The CUB instantiations a typed module calls (its `intrinsic cub` specs,
// typeinfer/cub_calls.h), compiled with NVRTC or fetched from the caches,
// in parallel, as nvJitLink inputs for the kernel's link (cub/cub.h).
#pragma once
#include <string>
#include <vector>

#include "cub/spec.h"
#include "ir/ir.h"
#include "link/toolchain.h"

namespace cj::driver {

// Whether the decoded (untyped) module refers to cudajit.block / cudajit.warp
// anywhere: its kernels are then specialised on the launch block shape.
// Cheap (a scan of the constants), so the dispatcher asks before compiling.
bool usesBlockAlgorithms(const ir::Module& untyped);

// A kernel whose only call of a block algorithm that uses the shared
// storage runs once per thread (in the kernel itself, outside any loop)
// needs no barrier after it: nothing reuses the storage. That call's spec
// becomes `nosync` (CUB's own contract; saves the trailing __syncthreads()).
// Histograms keep theirs: it publishes the counts to the block.
void dropUnneededCubBarrier(ir::Module& typed);

// The normalized specs of every `intrinsic cub` in the module, one per entry
// point, in order of appearance. Empty for kernels without block algorithms.
std::vector<cub::Spec> cubSpecs(const ir::Module& typed);

// One LTO-IR input per spec. Instantiates the specs concurrently (NVRTC
// takes about a second per cold spec); rethrows the first failure
// (ToolchainError with NVRTC's log).
std::vector<link::LinkInput> cubLinkInputs(const std::vector<cub::Spec>& specs);

}  // namespace cj::driver
