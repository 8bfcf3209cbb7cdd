// Names of what a compiled kernel depends on besides its source: the
// toolkit that compiled it and the cudajit build that drove it. Both go into
// the disk cache's keys (kernel_cache.h).
#pragma once
#include <string>

namespace cj::rt {

// The libNVVM, nvJitLink and libdevice this process compiles with: their
// versions, paths, sizes and modification times.
//
// Asking libNVVM and nvJitLink for their versions means loading them (tens
// of milliseconds, more than a whole warm-cache launch may take), so the
// answer is remembered on disk, per environment (the variables and wheel
// directories that steer the library search), in <cache root>/toolkit/. A
// remembered answer is used only while each file it names still has its
// size and modification time; otherwise the libraries are loaded and the
// answer written again. Throws ToolchainError when the toolkit is missing.
const std::string& toolkitIdentity();

// "cudajit <version> build <size>-<mtime> of the extension module": a
// rebuilt or reinstalled cudajit never reads another build's entries.
const std::string& cudajitIdentity();
void setPackageVersion(const std::string& version);   // from cudajit/__init__.py

}  // namespace cj::rt
