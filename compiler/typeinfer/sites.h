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

// A `const sym(...)` whose symbol has a value rule (cuda.threadIdx.x); nullopt
// for other constants.
std::optional<Bound> bindConstSymbol(const FunctionContext& ctx, ir::Instr* in);
// `getattr obj .name` with a typed receiver. Fails on unknown attributes.
Bound bindGetAttr(const FunctionContext& ctx, ir::Instr* in);
// `call callee, args...` with a typed callee. Fails on non-callables.
Bound bindCall(const FunctionContext& ctx, ir::Instr* in);

namespace rules {
extern const Rule symbolRef;    // a namespace or function symbol as a value: sym(name)
extern const Rule deviceCall;   // a user device function: specialised and called with call_func
}  // namespace rules

}  // namespace cj::typeinfer
