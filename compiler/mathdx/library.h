// Finding and loading libmathdx (stage-internal). Search order, first hit
// wins:
//   1. $CUDAJIT_LIBMATHDX (a file)
//   2. the pip wheel nvidia-libmathdx-cu13 (or -cu12) under each site
//      directory (addSiteDirectories: the binding passes sys.path) and the
//      site-packages this library lives in: nvidia/cu13/lib, nvidia/cu12/lib
//   3. $CUDA_HOME/lib64, $CUDA_PATH/lib64, /usr/local/cuda/lib64
//   4. the system loader, by soname
// libmathdx needs libnvrtc.so.13 (DT_NEEDED) and its RPATH names only
// /usr/local/cuda: a pip-only install would fail to load. So an NVRTC is
// loaded first ($CUDA_HOME's, else the one beside libmathdx: the
// nvidia-cuda-nvrtc wheel shares nvidia/cu13/lib); the loader then reuses
// it by soname.
#pragma once
#include <string>

namespace cj::mathdx {

struct Api {
#define CJ_MATHDX_API(ret, name, params) ret(*name) params = nullptr;
#include "mathdx/api.def"
#undef CJ_MATHDX_API
  std::string path;
  std::string version;   // "0.4.1"
  std::string identity;  // path, size and mtime of libmathdx and its NVRTC (cache keys)
};

// Loads once; a failed load throws LibraryMissing and is tried again on the
// next call.
const Api& api();

}  // namespace cj::mathdx
