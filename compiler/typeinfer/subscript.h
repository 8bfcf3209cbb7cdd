// Typing and rewriting of subscripts: `x[i]` / `x[i, j]` on arrays (load,
// store; indices cast to i64, every dimension indexed) and on tuples
// (constant index, negative from the end).
#pragma once
#include "typeinfer/context.h"

namespace cj::typeinfer {

const Type* getItemType(const FunctionContext& ctx, ir::Instr* in);
ir::Instr* lowerGetItem(const FunctionContext& ctx, ir::Instr* in, Emitter& e);
// setitem has no value: checks the target, the index and the stored value.
void checkSetItem(const FunctionContext& ctx, ir::Instr* in);
void lowerSetItem(const FunctionContext& ctx, ir::Instr* in, Emitter& e);

}  // namespace cj::typeinfer
