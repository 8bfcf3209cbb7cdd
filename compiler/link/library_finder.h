// Finding and loading the CUDA toolkit's shared libraries at run time.
//
// Nothing here is linked at build time: libNVVM and nvJitLink are opened
// with dlopen, their entry points looked up with dlsym. Search order for a
// library (first hit wins):
//   1. an explicit file: $CUDAJIT_LIBNVVM / $CUDAJIT_NVJITLINK / $CUDAJIT_LIBDEVICE
//   2. $CUDA_HOME, then $CUDA_PATH     (lib64, lib, nvvm/lib64, nvvm/lib)
//   3. pip wheels under each directory given to addSearchPaths (the Python
//      binding passes sys.path) and the site-packages this library lives in:
//      nvidia/cu13, nvidia/cu12, nvidia/cuda_nvcc, nvidia/nvjitlink,
//      nvidia/cuda_nvrtc   (lib, lib64, nvvm/lib64, nvvm/lib)
//   4. /usr/local/cuda                 (same layouts as 2)
//   5. the system loader (LD_LIBRARY_PATH, ldconfig) by soname
#pragma once
#include <memory>
#include <string>
#include <vector>

namespace cj::link {

// An open shared library; closed when the last owner goes away.
class SharedLibrary {
 public:
  SharedLibrary(void* handle, std::string path) : handle_(handle), path_(std::move(path)) {}
  ~SharedLibrary();
  SharedLibrary(const SharedLibrary&) = delete;
  SharedLibrary& operator=(const SharedLibrary&) = delete;

  const std::string& path() const { return path_; }
  // The address of `symbol`, or null.
  void* find(const char* symbol) const;

 private:
  void* handle_;
  std::string path_;
};

struct LibrarySpec {
  const char* what;                    // "libNVVM" (for messages)
  const char* env;                     // override variable
  std::vector<const char*> filenames;  // tried in each directory, in order
};

// Opens the first library found in the search order above; throws
// ToolchainError listing every place tried.
std::unique_ptr<SharedLibrary> openLibrary(const LibrarySpec& spec);

// libdevice.10.bc: next to the libNVVM that was loaded (../libdevice,
// ../nvvm/libdevice), then the roots above. Throws ToolchainError.
std::string findLibdevice(const std::string& libnvvm_path);

// Directories the search treats as site-packages (see toolchain.h).
void addSiteDirectories(const std::vector<std::string>& dirs);

}  // namespace cj::link
