// tile.dot on the FMA units: both operands go to shared memory in C order,
// then each thread accumulates its registers of the result, reading a row of
// x and a column of y. The portable path every dtype takes (float16 is
// widened to the float32 accumulator as it is stored); the tensor-core paths
// (mma.sync, wgmma) are docs/tiles.md's next step.
#include "passes/tile_lowering.h"

namespace cj::passes::tile {

void lowerTileDot(Lowering& lw, ir::Instr* in) {
  ir::Instr* x = in->operands[0];
  ir::Instr* y = in->operands[1];
  ir::Instr* acc = in->operands[2];
  int64_t k = x->type->shape[1], n = y->type->shape[1];
  Scalar operand = x->type->scalar, accum = acc->type->scalar;
  const Type* at = scalarTy(accum);
  auto toShared = [&](ir::Instr* t) {
    const LayoutInfo& l = lw.info(t->type);
    // Widened as stored: libNVVM refuses some folds of (fpext half) products.
    ir::Instr* buf = lw.sharedArray(accum, tileElements(t->type));
    std::vector<int64_t> strides = cStrides(l.shape);
    const std::vector<ir::Instr*>& regs = lw.frag(t);
    for (int64_t r = 0; r < l.regs; ++r) {
      ir::Instr* v = operand == accum ? regs[r] : lw.emit(ir::Op::Cast, at, {regs[r]});
      lw.storeShared(buf, lw.linear(l, r, strides), v);
    }
    return buf;
  };
  ir::Instr* xs = toShared(x);
  ir::Instr* ys = toShared(y);
  lw.barrier();
  const LayoutInfo& cl = lw.info(acc->type);
  std::vector<ir::Instr*> out = lw.frag(acc);
  for (int64_t r = 0; r < cl.regs; ++r) {
    ir::Instr* row = lw.mul(lw.position(cl, r, 0), lw.i32(k));
    ir::Instr* col = lw.position(cl, r, 1);
    ir::Instr* sum = out[r];
    for (int64_t kk = 0; kk < k; ++kk) {
      ir::Instr* a = lw.loadShared(xs, lw.add(row, lw.i32(kk)));
      ir::Instr* b = lw.loadShared(ys, lw.add(col, lw.i32(kk * n)));
      sum = lw.add(sum, lw.mul(a, b));
    }
    out[r] = sum;
  }
  lw.barrier();
  lw.frags[in] = std::move(out);
}

}  // namespace cj::passes::tile
