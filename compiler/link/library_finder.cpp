#include "link/library_finder.h"

#include <dlfcn.h>

#include <mutex>

#include "support/error.h"
#include "support/paths.h"

namespace cj::link {
namespace {

SiteList& sites() {
  static SiteList list;
  return list;
}

const char* const kRootLayouts[] = {"lib64", "lib", "nvvm/lib64", "nvvm/lib"};
const char* const kWheelPackages[] = {"nvidia/cu13", "nvidia/cu12", "nvidia/cuda_nvcc",
                                      "nvidia/nvjitlink", "nvidia/cuda_nvrtc"};

// Directories where a toolkit library may live, in search order (1 and 5
// of the header's list are handled by the callers).
std::vector<std::string> candidateDirs() {
  std::vector<std::string> roots;
  for (const char* env : {"CUDA_HOME", "CUDA_PATH"}) {
    std::string r = envString(env);
    if (!r.empty()) roots.push_back(r);
  }
  std::vector<std::string> dirs;
  for (const auto& r : roots) {
    for (const char* l : kRootLayouts) dirs.push_back(r + "/" + l);
  }
  for (const auto& s : wheelSites(sites())) {
    for (const char* pkg : kWheelPackages) {
      for (const char* l : kRootLayouts) dirs.push_back(s + "/" + pkg + "/" + l);
    }
  }
  for (const char* l : kRootLayouts) dirs.push_back(std::string("/usr/local/cuda/") + l);
  return dirs;
}

// The toolkit roots a libdevice may hang off (CUDA_HOME, wheels, /usr/local/cuda).
std::vector<std::string> libdeviceDirs() {
  std::vector<std::string> dirs;
  for (const auto& d : candidateDirs()) {
    // <root>/<layout> -> <root>/nvvm/libdevice and <root>/../nvvm/libdevice
    dirs.push_back(parentDirectory(d) + "/nvvm/libdevice");
    dirs.push_back(parentDirectory(d) + "/libdevice");
    dirs.push_back(parentDirectory(parentDirectory(d)) + "/nvvm/libdevice");
  }
  return dirs;
}

}  // namespace

SharedLibrary::~SharedLibrary() {
  if (handle_) dlclose(handle_);
}

void* SharedLibrary::find(const char* symbol) const { return dlsym(handle_, symbol); }

void addSiteDirectories(const std::vector<std::string>& dirs) { sites().add(dirs); }

std::unique_ptr<SharedLibrary> openLibrary(const LibrarySpec& spec) {
  std::string tried;
  auto attempt = [&](const std::string& path) -> std::unique_ptr<SharedLibrary> {
    void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (h) return std::make_unique<SharedLibrary>(h, path);
    const char* err = dlerror();
    tried += "\n  " + path + (err ? std::string(": ") + err : std::string());
    return nullptr;
  };
  std::string explicit_path = envString(spec.env);
  if (!explicit_path.empty()) {
    if (auto lib = attempt(explicit_path)) return lib;
    throw ToolchainError(std::string("cannot load ") + spec.what + " from $" + spec.env + ":" + tried);
  }
  for (const auto& dir : candidateDirs()) {
    for (const char* name : spec.filenames) {
      std::string path = dir + "/" + name;
      if (!isRegularFile(path)) continue;
      if (auto lib = attempt(path)) return lib;
    }
  }
  for (const char* name : spec.filenames) {   // the system loader's own search
    if (auto lib = attempt(name)) return lib;
  }
  throw ToolchainError(std::string(spec.what) +
                       " was not found. Install the CUDA toolkit (set CUDA_HOME) or the pip "
                       "wheels (nvidia-cuda-nvcc, nvidia-nvjitlink), or set $" + spec.env +
                       ". Tried:" + tried);
}

std::string findLibdevice(const std::string& libnvvm_path) {
  std::string explicit_path = envString("CUDAJIT_LIBDEVICE");
  if (!explicit_path.empty()) {
    if (isRegularFile(explicit_path)) return explicit_path;
    throw ToolchainError("$CUDAJIT_LIBDEVICE names a missing file: " + explicit_path);
  }
  std::vector<std::string> dirs;
  if (!libnvvm_path.empty()) {
    std::string libdir = parentDirectory(libnvvm_path);
    dirs.push_back(parentDirectory(libdir) + "/libdevice");        // nvvm/lib64/../libdevice
    dirs.push_back(parentDirectory(libdir) + "/nvvm/libdevice");   // lib/../nvvm/libdevice
  }
  for (const auto& d : libdeviceDirs()) dirs.push_back(d);
  std::string tried;
  for (const auto& d : dirs) {
    std::string path = d + "/libdevice.10.bc";
    if (isRegularFile(path)) return path;
    tried += "\n  " + path;
  }
  throw ToolchainError("libdevice.10.bc was not found. Tried:" + tried);
}

}  // namespace cj::link
