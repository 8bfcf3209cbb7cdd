// Shapes, dtypes and attributes of tile intrinsics and of the address-based
// global accesses they lower to: the invariants type inference establishes
// (every operand already broadcast and cast) and the tile passes rely on.
#include "ir/verify_tile.h"

#include <algorithm>
#include <vector>

namespace cj::ir {
namespace {

std::string expectTile(const Instr* v, const std::string& what) {
  return v->type->isTile() ? "" : what + " is " + typeToString(v->type) + ", expected a tile";
}

// Array operand, then one i64 tile coordinate per dimension.
std::string checkArrayAndCoordinates(const Instr& in, size_t extra) {
  if (in.operands.empty() || !in.operands[0]->type->is(TypeKind::Array))
    return "first operand must be an array";
  const Type* arr = in.operands[0]->type;
  if (in.operands.size() != 1 + static_cast<size_t>(arr->ndim) + extra)
    return "takes the array, " + std::to_string(arr->ndim) + " tile coordinate(s)" +
           (extra ? " and a tile" : "") + ", has " + std::to_string(in.operands.size()) + " operand(s)";
  for (int d = 0; d < arr->ndim; ++d)
    if (in.operands[1 + d]->type != i64Ty()) return "tile coordinate " + std::to_string(d) + " must be i64";
  return "";
}

std::string checkMemory(const Instr& in, const Type* tile) {
  const Type* arr = in.operands[0]->type;
  if (!tile->isTile()) return "expected a tile, found " + typeToString(tile);
  if (static_cast<int>(tile->shape.size()) != arr->ndim)
    return "a " + std::to_string(tile->shape.size()) + "-d tile with a " + std::to_string(arr->ndim) + "-d array";
  if (tile->scalar != arr->scalar)
    return "tile element " + std::string(scalarNumbaName(tile->scalar)) + " but array element " + std::string(scalarNumbaName(arr->scalar));
  return "";
}

int64_t attr(const Instr& in, size_t k) { return k < in.ints.size() ? in.ints[k] : -1; }

}  // namespace

std::string tileIntrinsicError(const Instr& in) {
  const Type* t = in.type;
  auto operand = [&](size_t i) { return in.operands[i]->type; };
  switch (in.intrinsic) {
    case Intrinsic::TileLoad: {
      std::string why = checkArrayAndCoordinates(in, 0);
      if (why.empty()) why = checkMemory(in, t);
      if (why.empty() && (attr(in, 0) < 0 || attr(in, 0) > static_cast<int64_t>(TilePadding::NegInf)))
        why = "padding mode missing or unknown";
      return why;
    }
    case Intrinsic::TileExtract: {
      if (auto why = expectTile(in.operands[0], "operand"); !why.empty()) return why;
      const auto& from = operand(0)->shape;
      if (!t->isTile() || t->scalar != operand(0)->scalar || t->shape.size() != from.size() || in.ints.size() != from.size())
        return "takes a tile, one offset per dimension, and gives a tile of its rank and dtype";
      for (size_t d = 0; d < from.size(); ++d)
        if (in.ints[d] < 0 || in.ints[d] + t->shape[d] > from[d]) return "the sub-tile is outside the tile";
      return "";
    }
    case Intrinsic::TileAssert:
      if (!operand(0)->isTile() || operand(0)->scalar != Scalar::Bool) return "asserts a tile of bools";
      return t == voidTy() ? "" : "tile.assert has no result";
    case Intrinsic::TilePrint:
      for (const Instr* o : in.operands)
        if (!o->type->isTile() && !o->type->isScalar()) return "prints tiles and scalars, not " + typeToString(o->type);
      return t == voidTy() ? "" : "tile.print has no result";
    case Intrinsic::TileStore: {
      std::string why = checkArrayAndCoordinates(in, 1);
      if (why.empty()) why = checkMemory(in, in.operands.back()->type);
      if (why.empty() && t != voidTy()) why = "tile.store has no result";
      return why;
    }
    case Intrinsic::TileFull:
      if (!t->isTile()) return "result must be a tile";
      if (operand(0) != scalarTy(t->scalar)) return "value is " + typeToString(operand(0)) + ", expected the tile's dtype";
      return "";
    case Intrinsic::TileArange:
      if (!t->isTile() || t->shape.size() != 1) return "result must be a 1-d tile";
      if (scalarKind(t->scalar) != ScalarKind::Int && scalarKind(t->scalar) != ScalarKind::Float)
        return "arange of " + typeToString(t);
      return "";
    case Intrinsic::TileBroadcast: {
      if (auto why = expectTile(in.operands[0], "operand"); !why.empty()) return why;
      if (!t->isTile() || t->scalar != operand(0)->scalar) return "result must be a tile of the operand's dtype";
      const auto& from = operand(0)->shape;
      if (from.size() != t->shape.size()) return "broadcast keeps the rank";
      for (size_t d = 0; d < from.size(); ++d)
        if (from[d] != t->shape[d] && from[d] != 1)
          return "cannot broadcast " + typeToString(operand(0)) + " to " + typeToString(t);
      return "";
    }
    case Intrinsic::TileReshape:
    case Intrinsic::TileConvertLayout:
      if (auto why = expectTile(in.operands[0], "operand"); !why.empty()) return why;
      if (!t->isTile() || t->scalar != operand(0)->scalar || tileElements(t) != tileElements(operand(0)))
        return "result must be a tile of the operand's dtype and element count";
      if (in.intrinsic == Intrinsic::TileConvertLayout && t->shape != operand(0)->shape)
        return "convert_layout keeps the shape";
      return "";
    case Intrinsic::TilePermute: {
      if (auto why = expectTile(in.operands[0], "operand"); !why.empty()) return why;
      const auto& from = operand(0)->shape;
      if (in.ints.size() != from.size() || !t->isTile() || t->shape.size() != from.size())
        return "permute needs one axis per dimension";
      std::vector<int64_t> seen(in.ints);
      std::sort(seen.begin(), seen.end());
      for (size_t d = 0; d < seen.size(); ++d)
        if (seen[d] != static_cast<int64_t>(d)) return "permute axes are not a permutation";
      for (size_t d = 0; d < from.size(); ++d)
        if (t->shape[d] != from[in.ints[d]]) return "permuted shape does not match the result";
      return "";
    }
    case Intrinsic::TileReduce:
    case Intrinsic::TileArgReduce:
    case Intrinsic::TileScan: {
      if (auto why = expectTile(in.operands[0], "operand"); !why.empty()) return why;
      const Type* x = operand(0);
      int64_t axis = attr(in, 1);
      if (attr(in, 0) < 0 || attr(in, 0) > static_cast<int64_t>(TileReduceKind::Xor)) return "unknown combining kind";
      if (axis < 0 || axis >= static_cast<int64_t>(x->shape.size())) return "axis out of range for " + typeToString(x);
      if (!t->isTile()) return "result must be a tile";
      if (in.intrinsic == Intrinsic::TileScan) {
        if (t != x) return "a scan keeps the operand's type";
        return "";
      }
      std::vector<int64_t> want = x->shape;
      want[axis] = 1;
      if (t->shape != want) return "result shape must be the operand's with axis " + std::to_string(axis) + " of extent 1";
      if (in.intrinsic == Intrinsic::TileReduce && t->scalar != x->scalar) return "a reduction keeps the dtype";
      return "";
    }
    case Intrinsic::TileDot: {
      for (size_t i = 0; i < 3; ++i)
        if (auto why = expectTile(in.operands[i], "operand " + std::to_string(i)); !why.empty()) return why;
      const Type *x = operand(0), *y = operand(1), *acc = operand(2);
      if (x->shape.size() != 2 || y->shape.size() != 2 || acc->shape.size() != 2)
        return "tile.dot takes 2-d tiles";
      if (x->shape[1] != y->shape[0] || acc->shape[0] != x->shape[0] || acc->shape[1] != y->shape[1])
        return "shapes do not chain: " + typeToString(x) + " @ " + typeToString(y) + " + " + typeToString(acc);
      if (x->scalar != y->scalar) return "operands of different dtypes";
      if (t != acc) return "result must have the accumulator's type";
      return "";
    }
    case Intrinsic::TileGather: case Intrinsic::TileScatter: case Intrinsic::TileAtomic: {
      if (in.operands.empty() || !operand(0)->is(TypeKind::Array)) return "operand 0 must be an array";
      size_t nd = static_cast<size_t>(operand(0)->ndim);
      bool cas = in.intrinsic == Intrinsic::TileAtomic && !in.ints.empty() &&
                 static_cast<TileAtomicKind>(in.ints[0]) == TileAtomicKind::Cas;
      size_t values = in.intrinsic == Intrinsic::TileGather ? 2 : cas ? 3 : 2;   // (mask, padding) / (value(s), mask)
      if (in.operands.size() != 1 + nd + values) return "takes an array, one index tile per dimension and " + std::to_string(values) + " tiles";
      const Type* first = operand(1);
      for (size_t i = 1; i < in.operands.size(); ++i) {
        if (auto why = expectTile(in.operands[i], "operand " + std::to_string(i)); !why.empty()) return why;
        if (operand(i)->shape != first->shape || operand(i)->tile_layout != first->tile_layout)
          return "operands of one shape and layout";
      }
      for (size_t d = 1; d <= nd; ++d)
        if (operand(d)->scalar != Scalar::Int64) return "indices are int64 tiles";
      size_t mask = in.intrinsic == Intrinsic::TileGather ? 1 + nd : in.operands.size() - 1;
      if (operand(mask)->scalar != Scalar::Bool) return "the mask is a bool tile";
      if (in.intrinsic == Intrinsic::TileScatter) return t == voidTy() ? "" : "scatter has no result";
      if (t->shape != first->shape || t->scalar != operand(0)->scalar) return "result: a tile of the array's dtype, the indices' shape";
      return "";
    }
    case Intrinsic::TileItem:
      if (auto why = expectTile(in.operands[0], "operand"); !why.empty()) return why;
      if (tileElements(operand(0)) != 1) return "item of a tile with more than one element";
      if (t != scalarTy(operand(0)->scalar)) return "result must be the tile's dtype";
      return "";
    default:
      return "not a tile intrinsic";
  }
}

std::string globalIntrinsicError(const Instr& in) {
  auto operand = [&](size_t i) { return in.operands[i]->type; };
  switch (in.intrinsic) {
    case Intrinsic::ArrayAddress:
      if (!operand(0)->is(TypeKind::Array) && !operand(0)->is(TypeKind::Record))
        return "operand must be an array or a record";
      return in.type == i64Ty() ? "" : "result must be i64";
    case Intrinsic::GlobalLoadIf: {
      size_t w = in.operands.size() < 3 ? 0 : in.operands.size() - 2;
      if (w == 0 || operand(0) != i64Ty() || operand(1) != boolTy()) return "takes (i64 address, b1 predicate, others...)";
      if (w != 1 && w != 2 && w != 4) return "vector width must be 1, 2 or 4";
      for (size_t i = 2; i < in.operands.size(); ++i)
        if (operand(i) != operand(2) || !operand(i)->isScalar()) return "others must be one scalar type";
      if (w == 1) return in.type == operand(2) ? "" : "result must be the others' type";
      if (in.type != tupleTy(std::vector<const Type*>(w, operand(2)))) return "result must be a tuple of the others' type";
      return "";
    }
    case Intrinsic::GlobalAtomicIf: {
      if (in.operands.size() < 3 || in.operands.size() > 4 || operand(0) != i64Ty() || operand(1) != boolTy())
        return "takes (i64 address, b1 predicate, value[, desired])";
      if (!operand(2)->isScalar() || in.type != operand(2)) return "result and value of one scalar type";
      if (in.ints.size() != 1 && in.ints.size() != 3) return "ints are {TileAtomicKind[, TileMemoryOrder, TileMemoryScope]}";
      if (in.ints.size() == 3 && (in.ints[1] < 0 || in.ints[1] > 3 || in.ints[2] < 0 || in.ints[2] > 3))
        return "unknown memory order or scope";
      return "";
    }
    case Intrinsic::GlobalStoreIf: {
      size_t w = in.operands.size() < 3 ? 0 : in.operands.size() - 2;
      if (w == 0 || operand(0) != i64Ty() || operand(1) != boolTy()) return "takes (i64 address, b1 predicate, values...)";
      if (w != 1 && w != 2 && w != 4) return "vector width must be 1, 2 or 4";
      for (size_t i = 2; i < in.operands.size(); ++i)
        if (operand(i) != operand(2) || !operand(i)->isScalar()) return "values must be one scalar type";
      return in.type == voidTy() ? "" : "a store has no result";
    }
    default:
      return "not a global memory intrinsic";
  }
}

std::string mmaIntrinsicError(const Instr& in) {
  auto operand = [&](size_t i) { return in.operands[i]->type; };
  auto tupleOf = [](const Type* t, size_t n) { return tupleTy(std::vector<const Type*>(n, t)); };
  auto dtypeOk = [&] {
    if (in.ints.empty()) return false;
    auto s = static_cast<Scalar>(in.ints[0]);
    return s == Scalar::Float16 || s == Scalar::BFloat16 || s == Scalar::TFloat32;
  };
  switch (in.intrinsic) {
    case Intrinsic::SharedAddress:
      if (!operand(0)->is(TypeKind::Array) || operand(0)->space != MemSpace::Shared) return "operand must be a shared array";
      return in.type == i32Ty() ? "" : "result must be i32";
    case Intrinsic::LdMatrix: {
      if (in.ints.size() != 2 || (in.ints[0] != 1 && in.ints[0] != 2 && in.ints[0] != 4)) return "ints are {count 1, 2 or 4, transposed}";
      if (operand(0) != i32Ty()) return "the address is i32";
      size_t n = static_cast<size_t>(in.ints[0]);
      return in.type == (n == 1 ? i32Ty() : tupleOf(i32Ty(), n)) ? "" : "result must be the loaded i32 registers";
    }
    case Intrinsic::MmaSync:
      if (!dtypeOk()) return "ints are {operand dtype: f16, bf16 or tf32}";
      for (size_t i = 6; i < 10; ++i)
        if (operand(i) != f32Ty()) return "the accumulators are f32";
      return in.type == tupleOf(f32Ty(), 4) ? "" : "result must be tuple of 4 f32";
    case Intrinsic::Wgmma: {
      if (!dtypeOk() || (in.ints.size() != 3 && in.ints.size() != 4))
        return "ints are {operand dtype, n, b transposed[, a in registers]}";
      int64_t n = in.ints[1];
      if (n < 8 || n > 256 || n % 8) return "n is a multiple of 8 up to 256";
      // A in registers: its four tf32 fragments (as f32) in place of the descriptor.
      bool a_regs = in.ints.size() == 4 && in.ints[3];
      size_t a = a_regs ? 4 : 1;
      if (a_regs && static_cast<Scalar>(in.ints[0]) != Scalar::TFloat32) return "A in registers is tf32 only";
      if (in.operands.size() != a + 1 + static_cast<size_t>(n / 2) || operand(a) != i64Ty())
        return "takes (A: i64 descriptor or 4 f32 fragments, i64 b descriptor, n/2 f32 accumulators)";
      for (size_t i = 0; i < a; ++i)
        if (operand(i) != (a_regs ? f32Ty() : i64Ty())) return "A is an i64 descriptor or 4 f32 fragments";
      for (size_t i = a + 1; i < in.operands.size(); ++i)
        if (operand(i) != f32Ty()) return "the accumulators are f32";
      return in.type == tupleOf(f32Ty(), static_cast<size_t>(n / 2)) ? "" : "result must be a tuple of n/2 f32";
    }
    case Intrinsic::CpAsync:
      if (operand(0) != i32Ty() || operand(1) != i64Ty() || operand(2) != i32Ty() || operand(3) != boolTy())
        return "takes (i32 shared address, i64 global address, i32 source bytes, b1 predicate)";
      return in.type == voidTy() ? "" : "has no result";
    case Intrinsic::SharedStoreIf:
      if (operand(0) != i32Ty() || operand(1) != boolTy() || !operand(2)->isScalar())
        return "takes (i32 shared address, b1 predicate, scalar value)";
      return in.type == voidTy() ? "" : "has no result";
    case Intrinsic::SharedLoad4:
      if (operand(0) != i32Ty()) return "the address is i32";
      return in.type == tupleOf(f32Ty(), 4) ? "" : "result must be tuple of 4 f32";
    case Intrinsic::Tf32RoundRn:
      if (operand(0) != f32Ty()) return "rounds an f32";
      return in.type == f32Ty() ? "" : "result must be f32";
    case Intrinsic::SharedStore4:
      if (operand(0) != i32Ty()) return "the address is i32";
      for (size_t i = 1; i < 5; ++i)
        if (operand(i) != f32Ty()) return "stores four f32 values";
      return in.type == voidTy() ? "" : "has no result";
    case Intrinsic::TensorMapAddress:
      if (in.ints.size() != 1 || in.ints[0] < 0) return "ints are {tensor map index}";
      if (!in.parent || in.ints[0] >= static_cast<int64_t>(in.parent->parent->tensor_maps.size()))
        return "names a tensor map the function does not have (tmaps=)";
      return in.type == i64Ty() ? "" : "result must be i64";
    case Intrinsic::TensorMapsValid:
      return in.type == boolTy() ? "" : "result must be b1";
    case Intrinsic::TmaLoad:
      if (operand(0) != i32Ty() || operand(1) != i64Ty() || operand(2) != i32Ty() || operand(3) != i32Ty() || operand(4) != i32Ty())
        return "takes (i32 shared address, i64 map, i32 c0, i32 c1, i32 mbarrier)";
      return in.type == voidTy() ? "" : "has no result";
    case Intrinsic::MbarrierInit:
      if (in.ints.size() != 1 || in.ints[0] < 1) return "ints are {arrival count}";
      [[fallthrough]];
    case Intrinsic::MbarrierExpectTx: case Intrinsic::MbarrierWait:
      for (size_t i = 0; i < in.operands.size(); ++i)
        if (operand(i) != i32Ty()) return "takes i32 operands (the mbarrier's shared address first)";
      return in.type == voidTy() ? "" : "has no result";
    case Intrinsic::RegisterFence:
      if (in.operands.empty()) return "takes at least one value";
      for (size_t i = 0; i < in.operands.size(); ++i)
        if (operand(i) != f32Ty()) return "takes f32 values";
      return in.type == tupleOf(f32Ty(), in.operands.size()) ? "" : "result must be a tuple of the operands' f32";
    case Intrinsic::MbarrierInitFence:
      return in.type == voidTy() ? "" : "has no result";
    case Intrinsic::WgmmaWait: case Intrinsic::CpAsyncWait:
      if (in.ints.size() != 1) return "ints are {pending groups}";
      [[fallthrough]];
    case Intrinsic::WgmmaFence: case Intrinsic::WgmmaCommit: case Intrinsic::FenceProxyAsync: case Intrinsic::CpAsyncCommit:
      return in.type == voidTy() ? "" : "has no result";
    default:
      return "not a tensor-core intrinsic";
  }
}

}  // namespace cj::ir
