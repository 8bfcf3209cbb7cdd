// Constant folding on typed IR, with the semantics the GPU code would have
// (numba's: Python floor division and modulo, wrapping integer arithmetic,
// float32 arithmetic in float32, IEEE comparisons). Also: cbr on a constant
// becomes br, select on a constant picks its arm, tuple_get of a tuple
// (built or constant) becomes the element, cast to the same type disappears.
// Leaves what the program would trap or be undefined on unfolded: division by
// zero, INT_MIN // -1, shifts by >= the width, out-of-range float -> int.
// Dead constants are left for `dce`.
#pragma once
#include "passes/pass.h"

namespace cj::passes {

class Fold : public Pass {
 public:
  static constexpr std::string_view kName = "fold";
  std::string_view name() const override { return kName; }
  bool run(ir::Function& fn) override;
};

}  // namespace cj::passes
