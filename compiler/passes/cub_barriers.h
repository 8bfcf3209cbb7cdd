// "cub-barriers": block algorithms end with __syncthreads() so that the next
// one may reuse the shared storage. A call after which no call that uses the
// storage can run (none later in the kernel on any path, and not in a loop)
// needs no barrier: its CUB descriptor becomes `nosync` (CUB's own
// contract). Only when every such call is in the kernel itself (device
// functions may run any number of times from anywhere); histograms keep
// theirs (it publishes the counts to the block). A module without a kernel
// (a device function compiled alone) is left as it is.
//
// A module pass: it looks at the calls in every function before deciding.
#pragma once
#include "passes/pass.h"

namespace cj::passes {

class CubBarriers : public Pass {
 public:
  static constexpr std::string_view kName = "cub-barriers";
  std::string_view name() const override { return kName; }
  // Only the module as a whole means anything; on one function alone it
  // treats that function as the module.
  bool run(ir::Function& fn) override;
  bool runOnModule(ir::Module& m) override;
};

}  // namespace cj::passes
