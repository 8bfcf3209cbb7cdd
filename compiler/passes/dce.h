// Dead-code elimination: deletes unreachable blocks, pure instructions whose
// results nobody uses, and block parameters nobody uses (with the edge
// arguments that fed them). Liveness is a mark from the roots, so dead cycles
// (a loop-carried value that is never read) go too.
#pragma once
#include "passes/pass.h"

namespace cj::passes {

class DeadCodeElimination : public Pass {
 public:
  static constexpr std::string_view kName = "dce";
  std::string_view name() const override { return kName; }
  bool run(ir::Function& fn) override;
};

}  // namespace cj::passes
