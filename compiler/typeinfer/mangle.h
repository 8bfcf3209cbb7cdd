// Names of specialised device functions: "<name>__<mangled argument types>".
//
//   f32 -> f32            array(f32, 2d, C) -> a2f32C     array(.., shared) -> a1f32Cs
//   tuple(i64, f32) -> Ti64_f32E                          range(i64) -> Ri64
//   none -> none          sym(x.y) -> sym_x_y     fn(x) -> fn_x
//
// Only [A-Za-z0-9_] appear, so the name is a valid NVVM identifier. Distinct
// scalar, array and tuple signatures get distinct names (tuples are bracketed
// by T...E); symbol names are flattened, so only those could collide.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "types/types.h"

namespace cj::typeinfer {

std::string mangleType(const Type* t);
// "helper__f32_a1f32C"; a function with no arguments: "helper__".
std::string mangleFunctionName(std::string_view base, const std::vector<const Type*>& args);

}  // namespace cj::typeinfer
