// Names of what a compiled kernel depends on besides its source: the
// toolkit that compiled it and the cudajit build that drove it. Both go into
// the disk cache's keys (kernel_cache.h).
#pragma once
#include <string>
#include <vector>

namespace cj::rt {

// The libNVVM, nvJitLink and libdevice this process compiles with: their
// reported versions and a fingerprint of each file's content (its size and
// SHA-256 over 16 spread 64 KB samples), not their paths or times, so that
// the same toolkit installed elsewhere (another machine, virtual
// environment or container) gives the same identity.
//
// Asking libNVVM and nvJitLink for their versions means loading them (tens
// of milliseconds, more than a whole warm-cache launch may take), so the
// answer is remembered on disk, per environment (the variables and wheel
// directories that steer the library search), in <cache root>/toolkit/. A
// remembered answer is used only while each file it names still has its
// size and modification time; otherwise the libraries are loaded and the
// answer written again (the remembered answer is a local shortcut; the
// identity itself names no path). Throws ToolchainError when the toolkit is
// missing.
const std::string& toolkitIdentity();

// Hands the sys.path entries that hold NVIDIA's pip wheels (`nvidia/`) to
// the library searches of libNVVM/nvJitLink and of NVRTC/CCCL, once per
// process, before the first compile (needs the GIL): a toolkit from
// `pip install cudajit[cuda]` anywhere on sys.path is found. Returns them.
const std::vector<std::string>& registerWheelDirectories();

// "cudajit <version> build <id>": the id is a hash of the compiler's sources
// made at build time (cmake/build_id.cmake), so every build of the same
// sources shares entries, and a changed compiler never reads old ones.
const std::string& cudajitIdentity();
void setPackageVersion(const std::string& version);   // from cudajit/__init__.py

}  // namespace cj::rt
