// The verifier's rules for the tile intrinsics and the address-based global
// loads and stores and tensor-core instructions they lower to
// (intrinsics.def, families Tile, Global and Mma).
// Internal to the ir stage: verifier.cpp calls them; each returns why the
// instruction is malformed, or "".
#pragma once
#include <string>

#include "ir/ir.h"

namespace cj::ir {

std::string tileIntrinsicError(const Instr& in);
std::string globalIntrinsicError(const Instr& in);
std::string mmaIntrinsicError(const Instr& in);

}  // namespace cj::ir
