// Versions and locations of the toolkit pieces (cache keys, diagnostics).
#include <string>

#include "link/api.h"
#include "link/toolchain.h"
#include "support/error.h"

namespace cj::link {

std::string toolchainVersion() {
  const NvvmApi& nvvm = nvvmApi();
  int major = 0, minor = 0, ir_major = 0, ir_minor = 0, dbg_major = 0, dbg_minor = 0;
  if (nvvm.Version(&major, &minor) != 0) throw ToolchainError("libNVVM: nvvmVersion failed");
  if (nvvm.IRVersion(&ir_major, &ir_minor, &dbg_major, &dbg_minor) != 0) {
    throw ToolchainError("libNVVM: nvvmIRVersion failed");
  }
  std::string out = "libNVVM " + std::to_string(major) + "." + std::to_string(minor) + " (IR " +
                    std::to_string(ir_major) + "." + std::to_string(ir_minor) + ")";
  std::string jit;
  try {
    const JitLinkApi& link = jitLinkApi();
    unsigned jmajor = 0, jminor = 0;
    if (link.Version && link.Version(&jmajor, &jminor) == 0) {
      jit = "nvJitLink " + std::to_string(jmajor) + "." + std::to_string(jminor);
    } else {
      jit = "nvJitLink (version unknown: " + link.lib->path() + ")";
    }
  } catch (const ToolchainError&) {
    jit = "nvJitLink not found";
  }
  return out + "; " + jit;
}

const char* backendName(BackendKind b) { return b == BackendKind::Llvm ? "llvm" : "nvvm"; }

bool parseBackendName(const std::string& name, BackendKind* out) {
  if (name == "nvvm") *out = BackendKind::Nvvm;
  else if (name == "llvm") *out = BackendKind::Llvm;
  else return false;
  return true;
}

std::string libnvvmPath() { return nvvmApi().lib->path(); }
std::string nvjitlinkPath() { return jitLinkApi().lib->path(); }
std::string libdevicePath() { return nvvmApi().libdevice_path; }

void addSitePackages(const std::vector<std::string>& dirs) { addSiteDirectories(dirs); }

}  // namespace cj::link
