// A library behind library calls (library_call.h): turns its descriptors
// into entry points and LTO-IR modules. CUB is the first (cub_provider.cpp);
// a provider is one class and one row of the registry (registry.cpp).
#pragma once
#include <string>
#include <vector>

#include "libcalls/library_call.h"

namespace cj::libcalls {

class Provider {
 public:
  virtual ~Provider() = default;
  virtual Library library() const = 0;
  // One result per descriptor, in order; may compile (and should do so in
  // parallel: forEachInParallel, parallel.h) and use its disk cache.
  // Throws ToolchainError (a compiler's log) or CompileError.
  virtual std::vector<ResolvedCall> resolve(const std::vector<std::string>& descriptors) const = 0;
};

// The provider of a library (registry.cpp).
const Provider& providerFor(Library lib);

}  // namespace cj::libcalls
