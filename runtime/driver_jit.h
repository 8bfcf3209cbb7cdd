// PTX -> cubin by the driver's own JIT compiler (cuLinkCreate / AddData /
// Complete), for kernels compiled for the GPU in hand.
//
// Why not nvJitLink, which works without a GPU: on the H100 machine with
// CUDA 13.0 the driver assembled a fresh 100-line kernel's PTX in 46-52 ms
// where nvJitLink took 78-82 ms, and a 3-line one about 1 ms faster; both
// run ptxas, and the driver's result is a cubin too, so the disk cache
// still stores one. nvJitLink stays the assembler for ahead-of-time
// compiles (no GPU), for other architectures and for LTO (CUB).
#pragma once
#include <string>
#include <vector>

#include "link/toolchain.h"

namespace cj::rt {

// The cubin, or an empty vector when the driver cannot make it: no usable
// driver, a driver without cuLink*, a target other than the current
// device's architecture, a PTX ISA newer than the driver knows. The caller
// then assembles with nvJitLink (whose errors are the ones users see).
std::vector<char> assembleWithDriver(const std::string& ptx, const link::TargetOptions& target);

}  // namespace cj::rt
