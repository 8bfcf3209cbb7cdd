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

std::string ownSitePackages() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&ownSitePackages), &info) == 0 || !info.dli_fname) return {};
  return parentDirectory(parentDirectory(info.dli_fname));
}

std::vector<std::string> wheelSites(const SiteList& sites) {
  std::vector<std::string> out = sites.get();
  std::string own = ownSitePackages();
  if (!own.empty()) out.push_back(own);
  return out;
}

}  // namespace cj
