// Dispatch of Python-level instructions to their rules: a `const` symbol used
// as a value, `getattr`, `call`. The fixpoint typer asks the bound rule for a
// type; the rewrite asks it for typed instructions.
#pragma once
#include <optional>

#include "typeinfer/rules.h"

namespace cj::typeinfer {

struct Bound {
  const Rule* rule;
  Site site;
};

// The type of a constant in typed IR: Python ints are i64, floats f64;
// symbols with a value rule (cuda.threadIdx.x) have that rule's type, also
// inside constant tuples (the decoder folds `(ty, tx)` of such locals).
const Type* constantType(const FunctionContext& ctx, ir::Instr* in, const ir::Const& c);
// Typed instructions computing constant `c` (of instruction `in`): scalars
// stay constants, value symbols go through their rule, tuples are built with
// `tuple` element by element (typed IR has no aggregate constants).
ir::Instr* lowerConstant(const FunctionContext& ctx, ir::Instr* in, const ir::Const& c, Emitter& e);
// `getattr obj .name` with a typed receiver. Fails on unknown attributes.
Bound bindGetAttr(const FunctionContext& ctx, ir::Instr* in);
// `call callee, args...` with a typed callee. Fails on non-callables.
Bound bindCall(const FunctionContext& ctx, ir::Instr* in);

namespace rules {
extern const Rule symbolRef;    // a namespace or function symbol as a value: sym(name)
extern const Rule deviceCall;   // a user device function: specialised and called with call_func
}  // namespace rules

}  // namespace cj::typeinfer
