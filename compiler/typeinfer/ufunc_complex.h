// The complex loops of numpy ufuncs on scalars (ufunc_complex.cpp), for
// rules_ufunc.cpp.
#pragma once
#include <string_view>
#include <vector>

#include "typeinfer/rules.h"

namespace cj::typeinfer::rules {

// numpy's `name` (exp, sinh, arccos, ...) on the complex loop's inputs `x`
// (already of `loop_type`); nullptr when numba has no complex lowering for it.
ir::Instr* lowerComplexUfunc(std::string_view name, const std::vector<ir::Instr*>& x, const Type* loop_type,
                             Emitter& e);
// greater / greater_equal / less / less_equal of two complex numbers (numpy's order).
ir::Instr* lowerComplexCompare(ir::Op op, ir::Instr* a, ir::Instr* b, Emitter& e);

}  // namespace cj::typeinfer::rules
