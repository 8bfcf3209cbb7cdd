#include "runtime/toolkit_identity.h"

#include <Python.h>
#include <dlfcn.h>
#include <sys/stat.h>

#include <cstdlib>
#include <mutex>
#include <sstream>
#include <vector>

#include "cub/toolkit.h"
#include "link/toolchain.h"
#include "support/disk_cache.h"
#include "support/sha256.h"
#include "cudajit_build_id.h"

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

// A fingerprint of a file's content: its size and the SHA-256 of 16 blocks
// of 64 KB spread over it (whole when smaller), read in a millisecond where
// hashing nvJitLink's 100 MB would take most of a second.
std::string contentFingerprint(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return "unreadable";
  std::fseek(f, 0, SEEK_END);
  const long long size = std::ftell(f);
  constexpr long long kBlock = 64 * 1024, kBlocks = 16;
  Sha256 h;
  std::vector<char> buf(kBlock);
  for (long long b = 0; b < kBlocks; ++b) {
    const long long at = size <= kBlock * kBlocks ? b * kBlock : (size - kBlock) / (kBlocks - 1) * b;
    if (at >= size) break;
    std::fseek(f, static_cast<long>(at), SEEK_SET);
    const size_t n = std::fread(buf.data(), 1, static_cast<size_t>(kBlock), f);
    h.update(buf.data(), n);
  }
  std::fclose(f);
  const std::array<uint8_t, 32> d = h.digest();
  return std::to_string(size) + " " + toHex(d.data(), 16);
}

// The remembered identity, if every file it was made from is unchanged.
bool rememberedStillTrue(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  int files = 0;
  while (std::getline(in, line)) {
    // "stamp <what> <path>\t<size> <mtime>"
    if (line.rfind("stamp ", 0) != 0) continue;
    const size_t tab = line.find('\t');
    const size_t space = line.find(' ', 6);
    if (tab == std::string::npos || space == std::string::npos || space > tab) return false;
    const std::string path = line.substr(space + 1, tab - space - 1);
    if (fileStamp(path) != line.substr(tab + 1)) return false;
    ++files;
  }
  return files == 3;
}

// The identity, then the stamps that say when to compute it again.
std::string computeIdentity() {
  const std::string version = link::toolchainVersion();   // loads libNVVM and nvJitLink
  std::string out = "toolkit " + version + "\n", stamps;
  const std::pair<const char*, std::string> files[] = {
      {"libnvvm", link::libnvvmPath()},
      {"nvjitlink", link::nvjitlinkPath()},
      {"libdevice", link::libdevicePath()},
  };
  for (const auto& [what, path] : files) {
    char* real = realpath(path.c_str(), nullptr);
    const std::string resolved = real ? real : path;
    std::free(real);
    out += std::string(what) + " " + contentFingerprint(resolved) + "\n";
    stamps += std::string("stamp ") + what + " " + resolved + "\t" + fileStamp(resolved) + "\n";
  }
  return out + stamps;
}

// The identity part of a remembered text (its stamp lines dropped).
std::string withoutStamps(const std::string& text) {
  std::istringstream in(text);
  std::string line, out;
  while (std::getline(in, line))
    if (line.rfind("stamp ", 0) != 0) out += line + "\n";
  return out;
}

}  // namespace

const std::vector<std::string>& registerWheelDirectories() {
  static const std::vector<std::string> sites = [] {
    std::vector<std::string> found = sitePackagesWithWheels();
    link::addSitePackages(found);
    cub::addSiteDirectories(found);
    return found;
  }();
  return sites;
}

const std::string& toolkitIdentity() {
  static std::mutex mu;
  static std::string identity;
  std::lock_guard<std::mutex> lock(mu);
  if (!identity.empty()) return identity;
  // The compile path searches the same wheels.
  const std::string env = searchEnvironment(registerWheelDirectories());
  const std::string memo = userCacheRoot() + "/toolkit/" + sha256Hex(env).substr(0, 24) + ".txt";
  std::string text;
  if (readWholeFile(memo, &text, 1 << 16) == ReadStatus::Ok && rememberedStillTrue(text)) {
    identity = withoutStamps(text);
    return identity;
  }
  text = computeIdentity();
  identity = withoutStamps(text);
  // Best effort (a read-only cache stays unwritten): the next process skips the loading.
  if (!cacheReadOnly(userCacheRoot())) writeFileAtomic(memo, text);
  return identity;
}

void setPackageVersion(const std::string& version) { g_package_version = version; }

const std::string& cudajitIdentity() {
  static const std::string identity = "cudajit " + g_package_version + " build " + std::string(CJ_BUILD_ID).substr(0, 24);
  return identity;
}

}  // namespace cj::rt
