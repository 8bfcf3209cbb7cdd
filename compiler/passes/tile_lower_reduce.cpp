// tile.reduce / tile.argreduce / tile.scan. A reduction along axis a runs in
// three steps (docs/tiles.md, "How each family lowers"): each thread
// combines its own registers of a row, lanes combine with xor shuffles over
// the lane bits that hold distinct positions of a, and when several warps
// hold one row, their partials meet in shared memory. Every thread that
// holds part of a row ends with the row's total (a butterfly gives every
// lane the same bits), and the result moves into its own layout, in
// registers where it already is. Scans run Hillis-Steele steps through
// shared memory.
#include <map>

#include "passes/tile_lowering.h"

namespace cj::passes::tile {
namespace {

// The type partials are combined in: f16 and bf16 in f32, narrow integers and bool in i32.
Scalar computeType(Scalar s) {
  if (s == Scalar::Float16 || s == Scalar::BFloat16) return Scalar::Float32;
  if (scalarKind(s) == ScalarKind::Bool || (scalarKind(s) == ScalarKind::Int && scalarBits(s) < 32)) return Scalar::Int32;
  return s;
}

ir::Instr* convert(Lowering& lw, ir::Instr* v, Scalar to) {
  return v->type->scalar == to ? v : lw.emit(ir::Op::Cast, scalarTy(to), {v});
}

struct Partial {
  ir::Instr* value;
  ir::Instr* index = nullptr;   // argreduce: i32 position along the axis
};

ir::Instr* pick(Lowering& lw, ir::Instr* cond, ir::Instr* a, ir::Instr* b) {
  return lw.emit(ir::Op::Select, a->type, {cond, a, b});
}

Partial combine(Lowering& lw, ir::TileReduceKind kind, const Partial& x, const Partial& y) {
  const Type* t = x.value->type;
  switch (kind) {
    case ir::TileReduceKind::Sum: return {lw.emit(ir::Op::Add, t, {x.value, y.value})};
    case ir::TileReduceKind::Prod: return {lw.emit(ir::Op::Mul, t, {x.value, y.value})};
    case ir::TileReduceKind::And: return {lw.emit(ir::Op::BitAnd, t, {x.value, y.value})};
    case ir::TileReduceKind::Or: return {lw.emit(ir::Op::BitOr, t, {x.value, y.value})};
    case ir::TileReduceKind::Xor: return {lw.emit(ir::Op::BitXor, t, {x.value, y.value})};
    default: break;
  }
  ir::Op better = kind == ir::TileReduceKind::Max ? ir::Op::Gt : ir::Op::Lt;
  ir::Instr* y_better = lw.emit(better, boolTy(), {y.value, x.value});
  if (!x.index) return {pick(lw, y_better, y.value, x.value)};
  // argmax/argmin: ties go to the lower index.
  ir::Instr* tie = lw.andBool(lw.emit(ir::Op::Eq, boolTy(), {y.value, x.value}),
                              lw.emit(ir::Op::Lt, boolTy(), {y.index, x.index}));
  ir::Instr* take_y = lw.emit(ir::Op::BitOr, boolTy(), {y_better, tie});
  return {pick(lw, take_y, y.value, x.value), pick(lw, take_y, y.index, x.index)};
}

ir::Instr* shuffleXor(Lowering& lw, ir::Instr* v, int mask) {
  Scalar s = v->type->scalar;
  bool native = s == Scalar::Int32 || s == Scalar::Int64 || s == Scalar::Float32 || s == Scalar::Float64;
  ir::Instr* x = native ? v : lw.emit(ir::Op::Cast, i64Ty(), {v});
  ir::Instr* r = lw.intrinsic(ir::Intrinsic::ShflBfly, x->type, {lw.i32(-1), x, lw.i32(mask)});
  return native ? r : lw.emit(ir::Op::Cast, v->type, {r});
}

}  // namespace

void lowerTileReduce(Lowering& lw, ir::Instr* in) {
  ir::Instr* x = in->operands[0];
  const LayoutInfo& l = lw.info(x->type);
  const LayoutInfo& out_l = lw.info(in->type);
  auto kind = static_cast<ir::TileReduceKind>(in->ints[0]);
  int a = static_cast<int>(in->ints[1]);
  bool arg = in->isIntrinsic(ir::Intrinsic::TileArgReduce);
  Scalar c = computeType(x->type->scalar);
  const std::vector<ir::Instr*>& vals = lw.frag(x);

  // 1. Registers of one row (equal offsets off the axis), in axis order.
  std::map<std::vector<int64_t>, std::vector<int64_t>> rows;
  std::vector<std::vector<int64_t>> row_order;
  for (int64_t r = 0; r < l.regs; ++r) {
    std::vector<int64_t> key = l.off[r];
    key[a] = 0;
    auto& regs = rows[key];
    if (regs.empty()) row_order.push_back(key);
    regs.push_back(r);
  }
  std::vector<int64_t> reps;
  std::vector<Partial> parts;
  for (const auto& key : row_order) {
    const std::vector<int64_t>& regs = rows[key];
    reps.push_back(regs.front());
    Partial p{convert(lw, vals[regs.front()], c)};
    if (arg) p.index = lw.position(l, regs.front(), a);
    for (size_t k = 1; k < regs.size(); ++k) {
      Partial q{convert(lw, vals[regs[k]], c)};
      if (arg) q.index = lw.position(l, regs[k], a);
      p = combine(lw, kind, p, q);
    }
    parts.push_back(p);
  }

  // 2. Lanes holding distinct positions along the axis.
  int64_t extent = x->type->shape[a];
  TileDimMap along = l.layout ? l.dims[a] : TileDimMap{};
  int64_t lanes = std::min<int64_t>(along.lanes, std::max<int64_t>(1, extent / along.lane_stride));
  for (int64_t bit = 1; bit < lanes; bit <<= 1) {
    int mask = static_cast<int>(bit << along.lane_shift);
    for (Partial& p : parts) {
      Partial q{shuffleXor(lw, p.value, mask)};
      if (arg) q.index = shuffleXor(lw, p.index, mask);
      p = combine(lw, kind, p, q);
    }
  }

  // 3. Warps holding distinct positions: partials meet in shared memory.
  std::vector<int64_t> row_coef = cStrides(in->type->shape);
  if (row_coef.empty()) row_coef.assign(l.rank, 0);
  row_coef[a] = 0;
  int64_t warps = std::min<int64_t>(along.warps, std::max<int64_t>(1, extent / along.warp_stride));
  int64_t rows_total = std::max<int64_t>(1, tileElements(in->type));
  if (warps > 1) {
    ir::Instr* vbuf = lw.scratchArray(c, rows_total * warps, 0);
    ir::Instr* ibuf = arg ? lw.scratchArray(Scalar::Int32, rows_total * warps, 1) : nullptr;
    ir::Instr* my_warp = lw.emit(ir::Op::BitAnd, i32Ty(),
                                 {lw.emit(ir::Op::RShift, i32Ty(), {lw.warpId(), lw.i32(along.warp_shift)}), lw.i32(warps - 1)});
    std::vector<ir::Instr*> row_base;
    for (size_t k = 0; k < parts.size(); ++k) {
      ir::Instr* base = lw.mul(lw.linear(l, reps[k], row_coef), lw.i32(warps));
      row_base.push_back(base);
      ir::Instr* slot = lw.add(base, my_warp);
      lw.storeShared(vbuf, slot, parts[k].value);
      if (arg) lw.storeShared(ibuf, slot, parts[k].index);
    }
    lw.barrier();
    for (size_t k = 0; k < parts.size(); ++k) {
      Partial p{lw.loadShared(vbuf, row_base[k])};
      if (arg) p.index = lw.loadShared(ibuf, row_base[k]);
      for (int64_t j = 1; j < warps; ++j) {
        ir::Instr* slot = lw.add(row_base[k], lw.i32(j));
        Partial q{lw.loadShared(vbuf, slot)};
        if (arg) q.index = lw.loadShared(ibuf, slot);
        p = combine(lw, kind, p, q);
      }
      parts[k] = p;
    }
    lw.barrier();
  }

  // 4. Into the result's layout.
  std::vector<ir::Instr*> values;
  for (const Partial& p : parts) values.push_back(arg ? p.index : convert(lw, p.value, in->type->scalar));
  Lowering::Held held{&l, reps, values, row_coef};
  lw.frags[in] = lw.redistribute(held, in->type->scalar, rows_total, out_l, cStrides(out_l.shape));
}

void lowerTileScan(Lowering& lw, ir::Instr* in) {
  ir::Instr* x = in->operands[0];
  const LayoutInfo& l = lw.info(x->type);
  auto kind = static_cast<ir::TileReduceKind>(in->ints[0]);
  int a = static_cast<int>(in->ints[1]);
  bool reverse = in->ints.size() > 2 && in->ints[2];
  Scalar c = computeType(x->type->scalar);
  int64_t extent = x->type->shape[a];
  std::vector<int64_t> strides = cStrides(l.shape);
  std::vector<ir::Instr*> cur;
  for (ir::Instr* v : lw.frag(x)) cur.push_back(convert(lw, v, c));
  if (extent > 1) {
    ir::Instr* buf = lw.scratchArray(c, tileElements(x->type), 0);
    std::vector<ir::Instr*> lin, pos;
    for (int64_t r = 0; r < l.regs; ++r) {
      lin.push_back(lw.linear(l, r, strides));
      pos.push_back(lw.position(l, r, a));
    }
    ir::Instr* identity = kind == ir::TileReduceKind::Prod
                              ? lw.constant(scalarKind(c) == ScalarKind::Float ? ir::Const::real(1) : ir::Const::integer(1), scalarTy(c))
                              : lw.constant(scalarKind(c) == ScalarKind::Float ? ir::Const::real(0) : ir::Const::integer(0), scalarTy(c));
    for (int64_t step = 1; step < extent; step <<= 1) {
      for (int64_t r = 0; r < l.regs; ++r) lw.storeShared(buf, lin[r], cur[r]);
      lw.barrier();
      std::vector<ir::Instr*> next(l.regs);
      for (int64_t r = 0; r < l.regs; ++r) {
        // The element `step` before (after, reversed) along the axis, if any.
        ir::Instr* has = reverse ? lw.emit(ir::Op::Lt, boolTy(), {lw.add(pos[r], lw.i32(step)), lw.i32(extent)})
                                 : lw.emit(ir::Op::Ge, boolTy(), {pos[r], lw.i32(step)});
        ir::Instr* shift = lw.i32((reverse ? 1 : -1) * step * strides[a]);
        ir::Instr* at = pick(lw, has, lw.add(lin[r], shift), lin[r]);
        ir::Instr* other = pick(lw, has, lw.loadShared(buf, at), identity);
        next[r] = combine(lw, kind, {cur[r]}, {other}).value;
      }
      lw.barrier();
      cur = next;
    }
  }
  for (ir::Instr*& v : cur) v = convert(lw, v, in->type->scalar);
  lw.frags[in] = cur;
}

}  // namespace cj::passes::tile
