// See paths.h.
#include "support/paths.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <cstdlib>

namespace cj {

bool isRegularFile(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string parentDirectory(const std::string& path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
}

std::string envString(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

std::string ownPackageDirectory() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&ownPackageDirectory), &info) == 0 || !info.dli_fname) return {};
  return parentDirectory(info.dli_fname);
}

std::string ownSitePackages() {
  std::string package = ownPackageDirectory();
  return package.empty() ? package : parentDirectory(package);
}

std::vector<std::string> wheelSites(const SiteList& sites) {
  std::vector<std::string> out = sites.get();
  std::string own = ownSitePackages();
  if (!own.empty()) out.push_back(own);
  return out;
}

}  // namespace cj
