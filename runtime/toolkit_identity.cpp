#include "runtime/toolkit_identity.h"

#include <Python.h>
#include <dlfcn.h>
#include <sys/stat.h>

#include <cstdlib>
#include <mutex>
#include <sstream>
#include <vector>

#include "link/toolchain.h"
#include "support/disk_cache.h"
#include "support/sha256.h"

namespace cj::rt {
namespace {

std::string g_package_version = "unknown";

// "<size> <mtime ns>" of a file, or "" when it cannot be read.
std::string fileStamp(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return {};
  return std::to_string(static_cast<long long>(st.st_size)) + " " +
         std::to_string(static_cast<long long>(st.st_mtim.tv_sec) * 1000000000LL +
                        st.st_mtim.tv_nsec);
}

bool isDir(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// What steers compiler/link's library search: its variables, and the
// sys.path entries holding pip `nvidia` wheels.
std::vector<std::string> sitePackagesWithWheels() {
  std::vector<std::string> out;
  PyObject* path = PySys_GetObject("path");   // borrowed
  if (!path || !PyList_Check(path)) return out;
  for (Py_ssize_t k = 0; k < PyList_GET_SIZE(path); ++k) {
    PyObject* item = PyList_GET_ITEM(path, k);
    if (!PyUnicode_Check(item)) continue;
    const char* dir = PyUnicode_AsUTF8(item);
    if (!dir) {
      PyErr_Clear();
      continue;
    }
    if (isDir(std::string(dir) + "/nvidia")) out.push_back(dir);
  }
  return out;
}

std::string searchEnvironment(const std::vector<std::string>& sites) {
  std::string env;
  for (const char* name : {"CUDAJIT_LIBNVVM", "CUDAJIT_NVJITLINK", "CUDAJIT_LIBDEVICE", "CUDA_HOME",
                           "CUDA_PATH", "LD_LIBRARY_PATH"}) {
    const char* v = std::getenv(name);
    env += std::string(name) + "=" + (v ? v : "") + "\n";
  }
  for (const auto& s : sites) env += "site=" + s + "\n";
  return env;
}

// The remembered identity, if every file it names is unchanged.
bool rememberedStillTrue(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  int files = 0;
  while (std::getline(in, line)) {
    // "file <what> <path>\t<size> <mtime>"
    if (line.rfind("file ", 0) != 0) continue;
    const size_t tab = line.find('\t');
    const size_t space = line.find(' ', 5);
    if (tab == std::string::npos || space == std::string::npos || space > tab) return false;
    const std::string path = line.substr(space + 1, tab - space - 1);
    if (fileStamp(path) != line.substr(tab + 1)) return false;
    ++files;
  }
  return files == 3;
}

std::string computeIdentity() {
  const std::string version = link::toolchainVersion();   // loads libNVVM and nvJitLink
  std::string out = "toolkit " + version + "\n";
  const std::pair<const char*, std::string> files[] = {
      {"libnvvm", link::libnvvmPath()},
      {"nvjitlink", link::nvjitlinkPath()},
      {"libdevice", link::libdevicePath()},
  };
  for (const auto& [what, path] : files) {
    char* real = realpath(path.c_str(), nullptr);
    const std::string resolved = real ? real : path;
    std::free(real);
    out += std::string("file ") + what + " " + resolved + "\t" + fileStamp(resolved) + "\n";
  }
  return out;
}

}  // namespace

const std::string& toolkitIdentity() {
  static std::mutex mu;
  static std::string identity;
  std::lock_guard<std::mutex> lock(mu);
  if (!identity.empty()) return identity;
  const std::vector<std::string> sites = sitePackagesWithWheels();
  link::addSitePackages(sites);   // the compile path searches the same wheels
  const std::string env = searchEnvironment(sites);
  const std::string memo = userCacheRoot() + "/toolkit/" + sha256Hex(env).substr(0, 24) + ".txt";
  std::string text;
  if (readWholeFile(memo, &text, 1 << 16) == ReadStatus::Ok && rememberedStillTrue(text)) {
    identity = text;
    return identity;
  }
  identity = computeIdentity();
  writeFileAtomic(memo, identity);   // best effort: the next process skips the loading
  return identity;
}

void setPackageVersion(const std::string& version) { g_package_version = version; }

const std::string& cudajitIdentity() {
  static const std::string identity = [] {
    Dl_info info;
    std::string build = "unknown";
    if (dladdr(reinterpret_cast<void*>(&cudajitIdentity), &info) != 0 && info.dli_fname)
      build = fileStamp(info.dli_fname);
    return "cudajit " + g_package_version + " build " + build;
  }();
  return identity;
}

}  // namespace cj::rt
