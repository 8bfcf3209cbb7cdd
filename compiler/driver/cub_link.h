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

// Block algorithms end with __syncthreads() so that the next one may reuse
// the shared storage. A call after which no call that uses the storage can
// run (none later in the kernel on any path, and not in a loop) needs no
// barrier: its spec becomes `nosync` (CUB's own contract). Only when every
// such call is in the kernel itself; histograms keep theirs (it publishes
// the counts to the block).
void dropUnneededCubBarriers(ir::Module& typed);

// The normalized specs of every `intrinsic cub` in the module, one per entry
// point, in order of appearance. Empty for kernels without block algorithms.
std::vector<cub::Spec> cubSpecs(const ir::Module& typed);

// One LTO-IR input per spec. Instantiates the specs concurrently (NVRTC
// takes about a second per cold spec); rethrows the first failure
// (ToolchainError with NVRTC's log).
std::vector<link::LinkInput> cubLinkInputs(const std::vector<cub::Spec>& specs);

}  // namespace cj::driver
