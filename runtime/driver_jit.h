// PTX -> cubin by the driver's own JIT compiler (cuLinkCreate / AddData /
// Complete), for kernels compiled for the GPU in hand.
//
// Why not nvJitLink, which works without a GPU: both run ptxas, and the
// driver's is as fast or a little faster; in benchmarks/bench_compile.py on
// H100 machines with CUDA 13.0, the two taking turns kernel by kernel, first
// calls took 15.45 / 15.7 / 19.7 ms with the driver where nvJitLink took
// 15.71 / 16.1 / 20.7 (3-line kernel), and 100.1 / 89.8 / 113 ms against
// 103.1 / 88.6 / 118 (100-line kernel). The driver's result is a cubin
// too, so the disk cache still stores one. nvJitLink stays the assembler
// for ahead-of-time compiles (no GPU), other architectures and LTO (CUB).
#pragma once
#include <string>
#include <vector>

#include "link/toolchain.h"

namespace cj::rt {

// The cubin, or an empty vector when the driver cannot make it: no usable
// driver, a driver without cuLink*, a target other than the current
// device's architecture, a PTX ISA newer than the driver knows, a
// fast_compile level (the driver has no such option). The caller
// then assembles with nvJitLink (whose errors are the ones users see).
std::vector<char> assembleWithDriver(const std::string& ptx, const link::TargetOptions& target);

}  // namespace cj::rt
