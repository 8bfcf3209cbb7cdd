// Integer value ranges on typed IR, and the facts (ir.h, enum Fact) they
// prove for codegen:
//   load/store/atomic_*  nonneg[k]  index k is >= 0: no negative-index wraparound
//   add/sub/mul/lshift  nsw, nuw  the exact result fits the type
//   floordiv/mod  nonneg  dividend >= 0 and divisor > 0: a plain udiv/urem
//                         (no floor fix-up, no zero-divisor check)
//   cast  nonneg  the operand is >= 0 (a widening zext instead of sext)
//   iter_valid  nonneg  the range's step is > 0: the test is cur < stop
//   iter_next  nsw, nuw  the iterator's cur + step cannot wrap (a trip count)
//
// Every integer value gets an interval [lo, hi] from its definition:
// constants, special registers (tid.x in [0, 1024), nctaid.x in [1, 2^31),
// ...), array dimensions (in [0, (2^63 - 1) / itemsize]: numpy and CUDA cap
// an array's bytes at 2^63 - 1), arithmetic that cannot wrap, floor division
// and modulo, range-loop variables, and block parameters (the join over their
// incoming edges, to a fixpoint with widening to thresholds). A branch on a
// comparison narrows its operands (and the values they were cast from) in the
// blocks only that branch reaches, and in the arguments it passes: inside
// `if 0 < i < n - 1:`, `i - 1` is known to be >= 0.
//
// The pass owns Instr::facts: it clears them first, and sets only what it
// proves, so a wrong guess is never possible; a value it knows nothing about
// keeps Python's semantics (wraparound, floor fix-up).
#pragma once
#include "passes/pass.h"

namespace cj::passes {

class ValueRange : public Pass {
 public:
  static constexpr std::string_view kName = "range";
  std::string_view name() const override { return kName; }
  bool run(ir::Function& fn) override;
};

}  // namespace cj::passes
