// cmath.acos / asin / atan / acosh / asinh / atanh on complex numbers
// (cmath_inverse.cpp), for rules_cmath.cpp.
#pragma once
#include <string_view>

#include "typeinfer/rules.h"

namespace cj::typeinfer::rules {

bool isInverseCmath(std::string_view f);
// z (complex, or a number numba converts), the result type (complex64/128).
ir::Instr* lowerInverseCmath(std::string_view f, ir::Instr* z, const Type* result, Emitter& e);

}  // namespace cj::typeinfer::rules
