// Where NVRTC and the CCCL headers (cub/, cuda/, nv/) are, found at run time
// the way compiler/link finds libNVVM, so nothing CUDA is needed at build time.
//
// Search order (first hit wins):
//   1. explicit: $CUDAJIT_NVRTC (a file), $CUDAJIT_CCCL_INCLUDE (a directory)
//   2. $CUDA_HOME, then $CUDA_PATH
//   3. pip wheels under the site directories given to addSiteDirectories and
//      the site-packages this library was loaded from: nvidia/cu13,
//      nvidia/cu12, nvidia/cuda_nvrtc, nvidia/cuda_cccl
//   4. /usr/local/cuda
//   5. (NVRTC only) the system loader by soname
// Library layouts tried under a root: lib64, lib, targets/<arch>-linux/lib.
// Include layouts: include/cccl, targets/<arch>-linux/include/cccl, include
// (CUDA 12 puts cub/ directly in include/). A directory counts when it holds
// cub/block/block_reduce.cuh. NVRTC's own builtin headers (cuda_runtime
// etc.) ship inside libnvrtc-builtins and need no -I.
#pragma once
#include <string>
#include <vector>

namespace cj::cub {

// Throws ToolchainError listing every place tried.
std::string findNvrtcLibrary();        // a path to try with dlopen, or a bare soname
std::string findCcclIncludeDir();

void addSiteDirectories(const std::vector<std::string>& dirs);

}  // namespace cj::cub
