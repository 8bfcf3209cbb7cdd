// cuTile's implicit promotion of two tile operand dtypes (docs/tiles.md).
#pragma once
#include <string>

#include "types/types.h"

namespace cj {

// Not numba's rules: the higher of bool < integer < float wins; within a
// category the wider, and signed with unsigned is refused. False (and why)
// where cuTile asks for an explicit astype. Literals ("loosely typed"
// constants) are the caller's business: they take the other operand's dtype.
bool promoteTileDtypes(Scalar a, Scalar b, Scalar* out, std::string* why = nullptr);

}  // namespace cj
