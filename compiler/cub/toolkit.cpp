#include "cub/toolkit.h"


#include <mutex>

#include "support/error.h"
#include "support/paths.h"

namespace cj::cub {
namespace {

SiteList g_sites;

#if defined(__aarch64__)
const char* const kTargetDir = "targets/sbsa-linux";
#else
const char* const kTargetDir = "targets/x86_64-linux";
#endif
const char* const kWheelPackages[] = {"nvidia/cu13", "nvidia/cu12", "nvidia/cuda_nvrtc",
                                      "nvidia/cuda_cccl"};

std::vector<std::string> toolkitRoots() {
  std::vector<std::string> roots;
  for (const char* e : {"CUDA_HOME", "CUDA_PATH"}) {
    std::string r = envString(e);
    if (!r.empty()) roots.push_back(r);
  }
  for (const auto& s : wheelSites(g_sites))
    for (const char* pkg : kWheelPackages) roots.push_back(s + "/" + pkg);
  roots.push_back("/usr/local/cuda");
  return roots;
}

const char* const kNvrtcNames[] = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"};

}  // namespace

void addSiteDirectories(const std::vector<std::string>& dirs) { g_sites.add(dirs); }

std::string findNvrtcLibrary() {
  std::string explicit_path = envString("CUDAJIT_NVRTC");
  if (!explicit_path.empty()) {
    if (isRegularFile(explicit_path)) return explicit_path;
    throw ToolchainError("$CUDAJIT_NVRTC names a missing file: " + explicit_path);
  }
  for (const auto& root : toolkitRoots()) {
    for (const std::string& layout : {std::string("lib64"), std::string("lib"), std::string(kTargetDir) + "/lib"}) {
      for (const char* name : kNvrtcNames) {
        std::string p = root + "/" + layout + "/" + name;
        if (isRegularFile(p)) return p;
      }
    }
  }
  return kNvrtcNames[0];  // the system loader's search; dlopen reports failure
}

std::string findCcclIncludeDir() {
  std::string tried;
  auto holdsCub = [&](const std::string& dir) {
    tried += "\n  " + dir;
    return isRegularFile(dir + "/cub/block/block_reduce.cuh");
  };
  std::string explicit_dir = envString("CUDAJIT_CCCL_INCLUDE");
  if (!explicit_dir.empty()) {
    if (holdsCub(explicit_dir)) return explicit_dir;
    throw ToolchainError("$CUDAJIT_CCCL_INCLUDE has no cub/block/block_reduce.cuh: " + explicit_dir);
  }
  for (const auto& root : toolkitRoots()) {
    for (const std::string& layout : {std::string("include/cccl"), std::string(kTargetDir) + "/include/cccl",
                                      std::string("include")}) {
      std::string dir = root + "/" + layout;
      if (holdsCub(dir)) return dir;
    }
  }
  throw ToolchainError(
      "the CCCL headers (cub/) were not found. Install the CUDA toolkit (set CUDA_HOME) or the "
      "nvidia-cuda-cccl wheel, or set $CUDAJIT_CCCL_INCLUDE. Tried:" + tried);
}

}  // namespace cj::cub
