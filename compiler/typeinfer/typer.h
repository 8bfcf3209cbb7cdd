// The fixpoint: types flow forward over the CFG in reverse post order until
// nothing changes. A block parameter is the unification of what its
// predecessors pass (numba's rules); an instruction is typed once all its
// operands are, by its rule. Loop-carried values widen round after round.
#pragma once
#include <unordered_map>

#include "typeinfer/context.h"

namespace cj::typeinfer {

class Typer {
 public:
  explicit Typer(const FunctionContext& ctx) : ctx_(ctx) {}
  // Types every instruction in place (Instr::type; voidTy for no result) and
  // returns the function's return type. Fails on conflicts, on values used
  // before assignment, and on unsupported constructs.
  const Type* run();

 private:
  struct Incoming {
    ir::Instr* terminator;
    size_t succ;
  };
  bool typeParams(ir::Block* b);
  const Type* typeOf(ir::Instr* in);   // nullptr: an operand is not typed yet
  void checkAllTyped();
  [[noreturn]] void explainUntyped(ir::Instr* in);
  const Type* returnType();

  // A value that is None so far at a join may still become Optional in a
  // later round (a loop assigns it a number): its uses wait until the
  // fixpoint settles (final_), then are typed with what it ended up as.
  bool waitsOnNone(const ir::Instr* in) const;

  const FunctionContext& ctx_;
  bool final_ = false;
  std::vector<ir::Block*> order_;
  std::unordered_map<ir::Block*, std::vector<Incoming>> incoming_;   // edges into each block
};

}  // namespace cj::typeinfer
