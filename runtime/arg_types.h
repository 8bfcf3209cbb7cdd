// The types of launch arguments, without the type table's lock.
//
// Every launch asks for the type of every argument; types.h interns under a
// mutex with a map lookup, which would cost more than the rest of the
// argument's classification. These tables ask it once per (dtype, ndim,
// layout) and answer lock-free afterwards.
#pragma once
#include "types/types.h"

namespace cj::rt {

// Arrays of up to this many dimensions are accepted as kernel arguments.
constexpr int kMaxArrayDims = 32;

const Type* scalarArgType(Scalar s);
// ndim in [0, kMaxArrayDims].
const Type* arrayArgType(Scalar dtype, int ndim, Layout layout);

}  // namespace cj::rt
