// What the tile rules share (rules_tile.cpp: functions; tile_elementwise.cpp:
// operators, math and selection on tiles): cuTile's operand model, where a
// scalar is a 0-d tile whose dtype gives way to the tiles' ("weakly typed").
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "typeinfer/context.h"

namespace cj::typeinfer {

// "ct.load" for "cudajit.tile.load" (errors spell cuTile's names).
std::string tileOpName(std::string_view qualified);
// tileTy(dtype, shape), or a CompileError at `at` saying why there is none.
const Type* tileTypeOrFail(const FunctionContext& ctx, const ir::Instr* at, const std::string& op, Scalar dtype,
                           const std::vector<int64_t>& shape);

// One operand of an elementwise operation.
struct TileOperand {
  bool valid = true;     // a tile or a scalar
  bool tile = false;     // a tile (else a scalar: a 0-d tile)
  bool weak = false;     // a scalar: takes the tiles' dtype where its category allows
  Scalar dtype = Scalar::Float32;
  std::vector<int64_t> shape;
};
TileOperand tileOperand(const ir::Instr* v);
// The dtype the operands compute in (cuTile's promotion, scalars weakly
// typed); false and why where cuTile asks for an explicit astype.
bool tileResultDtype(const std::vector<TileOperand>& ops, Scalar* out, std::string* why);
// `v` (a tile or a scalar) as a tile of `dtype` and `shape`: casts, rank
// padding (leading 1s), broadcasting, or tile.full for a scalar.
ir::Instr* toTile(Emitter& e, ir::Instr* v, Scalar dtype, const std::vector<int64_t>& shape);

// t[:, None], t[None]: a tile indexed with `:` (a whole dimension) and
// None (a new dimension of 1), the dimensions not named kept at the end: a
// reshape (subscript.cpp sends tiles here).
const Type* tileGetItemType(const FunctionContext& ctx, ir::Instr* in);
ir::Instr* lowerTileGetItem(const FunctionContext& ctx, ir::Instr* in, Emitter& e);

// Python operators with a tile operand (operators.cpp sends them here).
bool isTileOperation(const ir::Instr* in);
const Type* tileOperatorType(const FunctionContext& ctx, ir::Instr* in);
ir::Instr* lowerTileOperator(const FunctionContext& ctx, ir::Instr* in, Emitter& e);

}  // namespace cj::typeinfer
