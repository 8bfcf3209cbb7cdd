#include "mathdx/library.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <memory>
#include <mutex>
#include <vector>

#include "mathdx/mathdx.h"
#include "support/paths.h"

namespace cj::mathdx {
namespace {

SiteList g_sites;

const char* const kLibraryNames[] = {"libmathdx.so.0", "libmathdx.so"};
const char* const kNvrtcName = "libnvrtc.so.13";
const char* const kWheelLibDirs[] = {"nvidia/cu13/lib", "nvidia/cu12/lib"};

bool statFile(const std::string& p, struct stat* st) {
  return stat(p.c_str(), st) == 0 && S_ISREG(st->st_mode);
}

// Directories to look in, in the header's order (2 and 3).
std::vector<std::string> searchDirs() {
  std::vector<std::string> dirs;
  for (const auto& s : wheelSites(g_sites))
    for (const char* sub : kWheelLibDirs) dirs.push_back(s + "/" + sub);
  for (const char* e : {"CUDA_HOME", "CUDA_PATH"}) {
    std::string root = envString(e);
    if (!root.empty()) dirs.push_back(root + "/lib64");
  }
  dirs.push_back("/usr/local/cuda/lib64");
  return dirs;
}

// "path:size:mtime" (cache keys change when either library is replaced).
std::string fileIdentity(const std::string& path) {
  struct stat st;
  if (!statFile(path, &st)) return path;
  return path + ":" + std::to_string(st.st_size) + ":" + std::to_string(st.st_mtime);
}

// Loads the NVRTC libmathdx will need and returns its path ("" when none
// was found: the loader's search decides). The toolkit of $CUDA_HOME comes
// first, as for libNVVM and nvJitLink (compiler/link): LTO-IR from an NVRTC
// newer than the nvJitLink that links it is refused. Then the directory of
// libmathdx (its wheel's nvidia-cuda-nvrtc dependency), then the rest.
std::string preloadNvrtc(const std::string& mathdx_path) {
  std::vector<std::string> dirs;
  for (const char* e : {"CUDA_HOME", "CUDA_PATH"}) {
    std::string root = envString(e);
    if (!root.empty()) dirs.push_back(root + "/lib64");
  }
  dirs.push_back(parentDirectory(mathdx_path));
  for (const auto& d : searchDirs()) dirs.push_back(d);
  for (const auto& d : dirs) {
    std::string p = d + "/" + kNvrtcName;
    if (isRegularFile(p) && dlopen(p.c_str(), RTLD_NOW | RTLD_LOCAL)) return p;  // kept open
  }
  return {};
}

// The fix first: this is the text of the ImportError users see.
std::string missingMessage(const std::string& tried) {
  return "libmathdx could not be loaded: pip install nvidia-libmathdx-cu13 (or: pip install "
         "cudajit[mathdx]), or set $CUDAJIT_LIBMATHDX to libmathdx.so.0. Tried:" + tried;
}

std::unique_ptr<Api> load() {
  std::string tried;
  std::vector<std::string> candidates;
  std::string explicit_path = envString("CUDAJIT_LIBMATHDX");
  if (!explicit_path.empty()) {
    candidates.push_back(explicit_path);
  } else {
    for (const auto& d : searchDirs())
      for (const char* n : kLibraryNames)
        if (isRegularFile(d + "/" + n)) candidates.push_back(d + "/" + n);
        else tried += "\n  " + d + "/" + n;
    for (const char* n : kLibraryNames) candidates.push_back(n);
  }
  for (const auto& path : candidates) {
    std::string nvrtc = preloadNvrtc(path);
    void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      const char* err = dlerror();
      tried += "\n  " + path + (err ? std::string(": ") + err : std::string());
      continue;
    }
    // The handle stays open for the life of the process: LTO-IR and
    // strings libmathdx returned may be in use anywhere.
    auto a = std::make_unique<Api>();
    a->path = path;
#define CJ_MATHDX_API(ret, name, params)                                              \
  a->name = reinterpret_cast<ret(*) params>(dlsym(h, #name));                        \
  if (!a->name) throw LibraryMissing(path + " does not export " #name                \
                                     " (libmathdx too old? pip install -U nvidia-libmathdx-cu13)");
#include "mathdx/api.def"
#undef CJ_MATHDX_API
    int major = 0, minor = 0, patch = 0;
    a->mathdxGetVersionEx(&major, &minor, &patch);
    a->version = std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
    Dl_info dl;
    std::string real = dladdr(reinterpret_cast<void*>(a->cublasdxCreateDescriptor), &dl) && dl.dli_fname
                           ? std::string(dl.dli_fname) : path;
    a->identity = a->version + "|" + fileIdentity(real) + "|" + fileIdentity(nvrtc);
    return a;
  }
  throw LibraryMissing(missingMessage(tried));
}

}  // namespace

const Api& api() {
  static std::mutex mutex;
  static std::unique_ptr<Api> loaded;
  std::lock_guard<std::mutex> lock(mutex);
  if (!loaded) loaded = load();
  return *loaded;
}

void addSiteDirectories(const std::vector<std::string>& dirs) { g_sites.add(dirs); }

std::string libraryDescription() {
  const Api& a = api();
  return "libmathdx " + a.version + " at " + a.path;
}

}  // namespace cj::mathdx
