// What every libmathdx routine shares once its descriptor is set: a handle
// owner and the finalization of a descriptor into LTO-IR (stage-internal).
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "mathdx/library.h"

namespace cj::mathdx {

// Owns a libmathdx handle (descriptor or code).
struct Handle {
  long long h = 0;
  int (*destroy)(long long);
  Handle(int (*d)(long long)) : destroy(d) {}
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() {
    if (h) destroy(h);
  }
};

// A commondx code handle for sm_<sm> LTO-IR, finalized by `finalize(code)`
// (cublasdxFinalizeCode / cufftdxFinalizeCode of the descriptor, its status
// checked as `finalize_call`); all its LTO-IR modules. `spec` names the
// descriptor in errors.
std::vector<std::vector<char>> finalizeLtoir(const Api& a, int sm, const std::function<int(long long)>& finalize,
                                             const std::string& finalize_call, const std::string& spec);

}  // namespace cj::mathdx
