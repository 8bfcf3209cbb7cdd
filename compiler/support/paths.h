// File-system and environment helpers of the library searches (compiler/link:
// libNVVM, nvJitLink, libdevice; compiler/cub: NVRTC, CCCL; compiler/mathdx:
// libmathdx), and where they look for NVIDIA's pip wheels.
#pragma once
#include <string>
#include <vector>

#include "support/site_list.h"

namespace cj {

bool isRegularFile(const std::string& path);
// The directory part of `path` ("." when it has none).
std::string parentDirectory(const std::string& path);
// The variable's value, "" when it is unset.
std::string envString(const char* name);
// The directory of the cudajit extension this code is linked into
// (site-packages/cudajit for site-packages/cudajit/_core*.so), "" when it
// cannot be told.
std::string ownPackageDirectory();
// Its site-packages directory (the parent of ownPackageDirectory()).
std::string ownSitePackages();
// The directories of `sites`, then ownSitePackages(): where pip's `nvidia`
// wheels are looked for.
std::vector<std::string> wheelSites(const SiteList& sites);

}  // namespace cj
