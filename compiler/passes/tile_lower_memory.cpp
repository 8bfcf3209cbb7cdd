// tile.load / tile.store -> global memory by address. Element e of the tile
// at tile coordinates t lies at array index t_d * extent_d + e_d. A thread's
// registers that are consecutive along the last dimension form one vector
// access (up to 16 bytes) taken when the whole vector is inside the array
// and the array allows it (aligned base and row strides, unit last stride);
// otherwise, at ragged edges or on strided views, each element is accessed
// alone under its own in-bounds predicate. Both are predicated PTX, so the
// fast path costs no branch and an out-of-bounds element is never touched.
#include <cmath>
#include <limits>

#include "passes/tile_lowering.h"

namespace cj::passes::tile {
namespace {

struct ArrayView {
  ir::Instr* address;                 // i64, element 0
  std::vector<ir::Instr*> dims;       // i64
  std::vector<ir::Instr*> strides;    // i64 bytes
  std::vector<ir::Instr*> origin;     // i64: tile coordinate * tile extent
  ir::Instr* vector_ok = nullptr;     // b1: the array allows vectors of `width`
  int width = 1;
  int elem_bytes = 1;
};

ArrayView view(Lowering& lw, ir::Instr* in, const LayoutInfo& l, Scalar dtype) {
  ir::Instr* arr = in->operands[0];
  ArrayView v;
  int nd = arr->type->ndim;
  v.address = lw.intrinsic(ir::Intrinsic::ArrayAddress, i64Ty(), {arr});
  for (int d = 0; d < nd; ++d) {
    ir::Instr* dim = lw.emit(ir::Op::ArrayDim, i64Ty(), {arr});
    dim->index = d;
    ir::Instr* stride = lw.emit(ir::Op::ArrayStride, i64Ty(), {arr});
    stride->index = d;
    v.dims.push_back(dim);
    v.strides.push_back(stride);
    v.origin.push_back(lw.mul(in->operands[1 + d], lw.i64(l.shape[d])));
  }
  v.elem_bytes = scalarByteSize(dtype);
  int last = nd - 1;
  int64_t run = l.layout ? l.dims[last].contiguous() : 1;
  bool fastest_last = l.layout && l.layout->order[0] == last;
  v.width = fastest_last ? static_cast<int>(std::min<int64_t>(run, 16 / v.elem_bytes)) : 1;
  if (v.width > 4) v.width = 4;   // ld.global.v4 at most (v8 is sm_100's)
  if (v.width > 1) {
    int64_t mask = int64_t{v.width} * v.elem_bytes - 1;
    ir::Instr* bits = v.address;
    for (int d = 0; d < last; ++d) bits = lw.emit(ir::Op::BitOr, i64Ty(), {bits, v.strides[d]});
    ir::Instr* aligned = lw.emit(ir::Op::Eq, boolTy(), {lw.emit(ir::Op::BitAnd, i64Ty(), {bits, lw.i64(mask)}), lw.i64(0)});
    ir::Instr* unit = lw.emit(ir::Op::Eq, boolTy(), {v.strides[last], lw.i64(v.elem_bytes)});
    v.vector_ok = lw.andBool(aligned, unit);
  }
  return v;
}

// 0 <= i < n (i64).
ir::Instr* inRange(Lowering& lw, ir::Instr* i, ir::Instr* n) {
  ir::Instr* lo = lw.emit(ir::Op::Ge, boolTy(), {i, lw.i64(0)});
  ir::Instr* hi = lw.emit(ir::Op::Lt, boolTy(), {i, n});
  return lw.andBool(lo, hi);
}

// One group of registers: `count` registers from `first`, consecutive along
// the last dimension (or a single register).
struct Access {
  ir::Instr* address;                 // of the first element
  std::vector<ir::Instr*> each_ok;    // per element: inside the array
  ir::Instr* vector_ok = nullptr;     // the whole group as one vector
  std::vector<ir::Instr*> addresses;  // per element
};

Access access(Lowering& lw, const ArrayView& v, const LayoutInfo& l, int64_t first, int count) {
  int nd = static_cast<int>(v.dims.size()), last = nd - 1;
  Access a;
  ir::Instr* rows_ok = nullptr;
  ir::Instr* address = v.address;
  ir::Instr* last_index = nullptr;
  for (int d = 0; d < nd; ++d) {
    ir::Instr* idx = lw.add(v.origin[d], lw.toI64(lw.position(l, first, d)));
    address = lw.add(address, lw.mul(idx, v.strides[d]));
    if (d == last) {
      last_index = idx;
    } else {
      ir::Instr* ok = inRange(lw, idx, v.dims[d]);
      rows_ok = rows_ok ? lw.andBool(rows_ok, ok) : ok;
    }
  }
  a.address = address;
  for (int k = 0; k < count; ++k) {
    ir::Instr* idx = k ? lw.add(last_index, lw.i64(k)) : last_index;
    ir::Instr* ok = inRange(lw, idx, v.dims[last]);
    a.each_ok.push_back(rows_ok ? lw.andBool(rows_ok, ok) : ok);
    a.addresses.push_back(k ? lw.add(address, lw.mul(lw.i64(k), v.strides[last])) : address);
  }
  if (count > 1) {
    // Inside when its first and last elements are (they share the row).
    a.vector_ok = lw.andBool(lw.andBool(a.each_ok.front(), a.each_ok.back()), v.vector_ok);
  }
  return a;
}

// Registers r .. r+w-1 hold consecutive elements along the last dimension.
bool contiguous(const LayoutInfo& l, int64_t r, int w) {
  if (r + w > l.regs || l.off[r][l.rank - 1] % w != 0) return false;
  for (int k = 1; k < w; ++k)
    for (int d = 0; d < l.rank; ++d)
      if (l.off[r + k][d] != l.off[r][d] + (d == l.rank - 1 ? k : 0)) return false;
  return true;
}

ir::Instr* paddingValue(Lowering& lw, Scalar dtype, int64_t mode) {
  double v = 0;
  switch (static_cast<ir::TilePadding>(mode)) {
    case ir::TilePadding::NegZero: v = -0.0; break;
    case ir::TilePadding::Nan: v = std::numeric_limits<double>::quiet_NaN(); break;
    case ir::TilePadding::PosInf: v = std::numeric_limits<double>::infinity(); break;
    case ir::TilePadding::NegInf: v = -std::numeric_limits<double>::infinity(); break;
    default: break;
  }
  if (scalarKind(dtype) == ScalarKind::Float) return lw.constant(ir::Const::real(v), scalarTy(dtype));
  if (dtype == Scalar::Bool) return lw.boolean(false);
  return lw.constant(ir::Const::integer(0), scalarTy(dtype));
}

}  // namespace

void lowerTileLoad(Lowering& lw, ir::Instr* in) {
  const LayoutInfo& l = lw.info(in->type);
  Scalar dtype = in->type->scalar;
  const Type* elem = scalarTy(dtype);
  ArrayView v = view(lw, in, l, dtype);
  ir::Instr* pad = paddingValue(lw, dtype, in->ints.empty() ? 0 : in->ints[0]);
  std::vector<ir::Instr*> out(l.regs);
  for (int64_t r = 0; r < l.regs;) {
    int w = v.width > 1 && contiguous(l, r, v.width) ? v.width : 1;
    Access a = access(lw, v, l, r, w);
    if (w == 1) {
      out[r] = lw.intrinsic(ir::Intrinsic::GlobalLoadIf, elem, {a.address, a.each_ok[0], pad});
      ++r;
      continue;
    }
    std::vector<ir::Instr*> ops = {a.address, a.vector_ok};
    for (int k = 0; k < w; ++k) ops.push_back(pad);
    ir::Instr* vec = lw.intrinsic(ir::Intrinsic::GlobalLoadIf, tupleTy(std::vector<const Type*>(w, elem)), ops);
    ir::Instr* scalar_path = lw.emit(ir::Op::Not, boolTy(), {a.vector_ok});
    for (int k = 0; k < w; ++k) {
      ir::Instr* got = lw.emit(ir::Op::TupleGet, elem, {vec});
      got->index = k;
      ir::Instr* p = lw.andBool(a.each_ok[k], scalar_path);
      out[r + k] = lw.intrinsic(ir::Intrinsic::GlobalLoadIf, elem, {a.addresses[k], p, got});
    }
    r += w;
  }
  lw.frags[in] = std::move(out);
}

void lowerTileStore(Lowering& lw, ir::Instr* in) {
  ir::Instr* tile = in->operands.back();
  const LayoutInfo& l = lw.info(tile->type);
  ArrayView v = view(lw, in, l, tile->type->scalar);
  const std::vector<ir::Instr*>& values = lw.frag(tile);
  for (int64_t r = 0; r < l.regs;) {
    int w = v.width > 1 && contiguous(l, r, v.width) ? v.width : 1;
    Access a = access(lw, v, l, r, w);
    if (w == 1) {
      lw.intrinsic(ir::Intrinsic::GlobalStoreIf, voidTy(), {a.address, a.each_ok[0], values[r]});
      ++r;
      continue;
    }
    std::vector<ir::Instr*> ops = {a.address, a.vector_ok};
    for (int k = 0; k < w; ++k) ops.push_back(values[r + k]);
    lw.intrinsic(ir::Intrinsic::GlobalStoreIf, voidTy(), ops);
    ir::Instr* scalar_path = lw.emit(ir::Op::Not, boolTy(), {a.vector_ok});
    for (int k = 0; k < w; ++k)
      lw.intrinsic(ir::Intrinsic::GlobalStoreIf, voidTy(), {a.addresses[k], lw.andBool(a.each_ok[k], scalar_path), values[r + k]});
    r += w;
  }
}

}  // namespace cj::passes::tile
