// The cmath functions on complex numbers as lowerings other rules reuse
// (numpy's complex ufunc loops, ufunc_complex.cpp): the inverse functions
// (cmath_inverse.cpp) and every one-argument function (rules_cmath.cpp).
#pragma once
#include <string_view>

#include "typeinfer/rules.h"

namespace cj::typeinfer::rules {

bool isInverseCmath(std::string_view f);
// z (complex, or a number numba converts), the result type (complex64/128).
ir::Instr* lowerInverseCmath(std::string_view f, ir::Instr* z, const Type* result, Emitter& e);
// cmath.<f>(z) for exp, log, sqrt, sin, cos, tan and the inverse functions,
// z already complex64/complex128 (the result's type).
ir::Instr* lowerCmathUnary(std::string_view f, ir::Instr* z, Emitter& e);

}  // namespace cj::typeinfer::rules
