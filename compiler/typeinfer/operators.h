// Typing and rewriting of Python operators: arithmetic, comparisons, unary,
// `not`, `is None`.
#pragma once
#include "typeinfer/context.h"

namespace cj::typeinfer {

bool isOperator(ir::Op op);   // in operators.def, or is / isnot
bool isComparison(ir::Op op); // < <= > >= == !=
// Result type per numba; fails with the operator and both operand types.
const Type* operatorType(const FunctionContext& ctx, ir::Instr* in);
// Casts the operands in place (returns `in`) or returns the replacing value.
ir::Instr* lowerOperator(const FunctionContext& ctx, ir::Instr* in, Emitter& e);

}  // namespace cj::typeinfer
