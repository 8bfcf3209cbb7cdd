// PTX -> cubin by the driver's own JIT compiler (cuLinkCreate / AddData /
// Complete), for kernels compiled for the GPU in hand.
//
// Why not nvJitLink, which works without a GPU: both run ptxas, and the
// driver's is never slower; in benchmarks/bench_compile.py on an H100 with
// CUDA 13.0, the two taking turns kernel by kernel, the driver took 15.45 ms
// for a 3-line kernel's PTX where nvJitLink took 15.71, and 100.1 ms for a
// 100-line one where nvJitLink took 103.1. The driver's result is a cubin
// too, so the disk cache still stores one. nvJitLink stays the assembler
// for ahead-of-time compiles (no GPU), other architectures and LTO (CUB).
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
