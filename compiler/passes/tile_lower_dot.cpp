// tile.dot: x (M x K) @ y (K x N) + acc. Both operands go to shared memory,
// then one of three routes by the result's layout (tile-assign-layouts chose
// it, docs/tiles.md "Matmul"):
//
//   mma v3 (sm_90)   wgmma.mma_async: operands in shared memory, read by the
//                    tensor cores through matrix descriptors (128-byte
//                    swizzled stages of the K loop, else the canonical
//                    core-matrix layouts); warpgroups along M first, each
//                    computing m64 x mma_n blocks of the result.
//   mma v2 (sm_80)   mma.sync m16n8k16 (f16, bf16) / m16n8k8 (tf32): operands
//                    row-major with a padded pitch (ldmatrix and the fragment
//                    loads then hit distinct banks); each warp computes 16-row
//                    x 8-column blocks.
//   blocked          the FMA units: each thread accumulates its registers of
//                    the result from a row of x and a column of y (every
//                    dtype; float16 is widened to the accumulator as stored).
//
// The tensor-core accumulator stays in registers in the mma layout, so a loop
// of dots keeps it there. On the wgmma route, operands that are loads in a K
// loop skip registers: TMA or cp.async copies them into 2-4 shared stages,
// the next iterations' while this one computes (tile_lower_async.cpp).
#include "passes/tile_lowering.h"

namespace cj::passes::tile {
namespace {

struct DotShape {
  ir::Instr *x, *y, *acc;
  int64_t m, n, k;
  Scalar operand;
  bool tf32;
  int elem_bytes;
};

DotShape dotShape(ir::Instr* in) {
  DotShape d;
  d.x = in->operands[0];
  d.y = in->operands[1];
  d.acc = in->operands[2];
  d.m = d.acc->type->shape[0];
  d.n = d.acc->type->shape[1];
  d.k = d.x->type->shape[1];
  d.operand = d.x->type->scalar;
  d.tf32 = d.operand == Scalar::TFloat32;
  d.elem_bytes = scalarByteSize(d.operand);
  return d;
}


// Stores every register of `t` at the shared index index(row, col), both i32
// coordinates of the element in the tile.
// The stores are inline PTX (shared.store_if): libNVVM's optimizer dropped one
// of them -- and the shared load feeding it -- from a 64x64 fp16 operand that
// a reshape had moved into the mma layout (H100: rows 8-15 of each 16 wrong;
// the LLVM back end kept it), and the tensor cores read these stores through
// descriptors the optimizer cannot see.
template <class Index>
ir::Instr* toShared(Lowering& lw, ir::Instr* t, Scalar dtype, int64_t elements, int slot, Index index) {
  const LayoutInfo& l = lw.info(t->type);
  ir::Instr* buf = lw.scratchArray(dtype, elements, slot);
  ir::Instr* base = lw.intrinsic(ir::Intrinsic::SharedAddress, i32Ty(), {buf});
  ir::Instr* yes = lw.boolean(true);
  const std::vector<ir::Instr*>& regs = lw.frag(t);
  for (int64_t r = 0; r < l.regs; ++r) {
    ir::Instr* at = lw.add(base, lw.mul(index(lw.position(l, r, 0), lw.position(l, r, 1)), lw.i32(scalarByteSize(dtype))));
    ir::Instr* v = regs[r]->type->scalar == dtype ? regs[r] : lw.emit(ir::Op::Cast, scalarTy(dtype), {regs[r]});
    lw.intrinsic(ir::Intrinsic::SharedStoreIf, voidTy(), {at, yes, v});
  }
  return buf;
}

// The accumulator register of an mma layout for row half i and column b of
// the (im, jn) 16x8 block of a warp (TileGeometry's register order: columns
// fastest).
int64_t accRegister(const LayoutInfo& l, int64_t im, int64_t jn, int i, int b) {
  int64_t cols = l.dims[1].registers();
  return (2 * jn + b) + cols * (2 * im + i);
}

// ---- mma.sync ----------------------------------------------------------------------------

void lowerDotMmaSync(Lowering& lw, ir::Instr* in) {
  DotShape d = dotShape(in);
  const TileLayout* layout = in->type->tile_layout;
  const LayoutInfo& cl = lw.info(in->type);
  int wm = layout->warps_per_cta[0], wn = layout->warps_per_cta[1];
  int64_t ns = layout->mma_n;
  // Padded pitches: 16-byte rows of ldmatrix (and the tf32 fragment loads)
  // land in distinct banks.
  int64_t pa = d.k + (d.tf32 ? 4 : 8), pb = d.n + 8;
  ir::Instr* a = toShared(lw, d.x, d.operand, d.m * pa, 0, [&](ir::Instr* r, ir::Instr* c) { return lw.add(lw.mul(r, lw.i32(pa)), c); });
  ir::Instr* b = toShared(lw, d.y, d.operand, d.k * pb, 1, [&](ir::Instr* r, ir::Instr* c) { return lw.add(lw.mul(r, lw.i32(pb)), c); });
  lw.barrier();

  ir::Instr* lane = lw.laneId();
  ir::Instr* warp = lw.warpId();
  ir::Instr* row0 = lw.mul(lw.band(warp, wm - 1), lw.i32(16));
  ir::Instr* col0 = lw.mul(lw.shr(warp, log2Ceil(wm)), lw.i32(ns));
  int64_t reps_m = d.m / (16 * wm);
  int64_t ntiles = (ns / 8) * (d.n / (ns * wn));
  auto colOf = [&](int64_t jn) { return lw.add(col0, lw.i32(8 * (jn % (ns / 8)) + (jn / (ns / 8)) * ns * wn)); };
  auto rowOf = [&](int64_t im) { return lw.add(row0, lw.i32(im * 16 * wm)); };

  ir::Instr* a_addr = d.tf32 ? nullptr : lw.intrinsic(ir::Intrinsic::SharedAddress, i32Ty(), {a});
  ir::Instr* b_addr = d.tf32 ? nullptr : lw.intrinsic(ir::Intrinsic::SharedAddress, i32Ty(), {b});
  ir::Instr* g = lw.shr(lane, 2);         // fragment row (group)
  ir::Instr* t = lw.band(lane, 3);        // fragment column pair
  ir::Instr* lrow = lw.band(lane, 15);    // ldmatrix: the row this lane addresses
  ir::Instr* lcol = lw.mul(lw.shr(lane, 4), lw.i32(8));
  int64_t kstep = d.tf32 ? 8 : 16;
  const Type* tuple4 = tupleTy(std::vector<const Type*>(4, i32Ty()));
  const Type* tuple2 = tupleTy(std::vector<const Type*>(2, i32Ty()));

  std::vector<ir::Instr*> out = lw.frag(d.acc);
  for (int64_t k0 = 0; k0 < d.k; k0 += kstep) {
    std::vector<std::vector<ir::Instr*>> afrag(reps_m), bfrag(ntiles);
    for (int64_t im = 0; im < reps_m; ++im) {
      if (d.tf32) {
        auto at = [&](ir::Instr* r, int64_t dr, ir::Instr* c, int64_t dc) {
          ir::Instr* idx = lw.add(lw.mul(lw.add(r, lw.i32(dr)), lw.i32(pa)), lw.add(c, lw.i32(dc)));
          return lw.loadShared(a, idx);
        };
        ir::Instr* r = lw.add(rowOf(im), g);
        ir::Instr* c = lw.add(t, lw.i32(k0));
        afrag[im] = {at(r, 0, c, 0), at(r, 8, c, 0), at(r, 0, c, 4), at(r, 8, c, 4)};
      } else {
        ir::Instr* idx = lw.add(lw.mul(lw.add(rowOf(im), lrow), lw.i32(pa)), lw.add(lcol, lw.i32(k0)));
        ir::Instr* addr = lw.add(a_addr, lw.mul(idx, lw.i32(d.elem_bytes)));
        ir::Instr* regs = lw.intrinsic(ir::Intrinsic::LdMatrix, tuple4, {addr}, {4, 0});
        for (int q = 0; q < 4; ++q) {
          ir::Instr* e = lw.emit(ir::Op::TupleGet, i32Ty(), {regs});
          e->index = q;
          afrag[im].push_back(e);
        }
      }
    }
    for (int64_t jn = 0; jn < ntiles; ++jn) {
      if (d.tf32) {
        auto at = [&](int64_t dk) {
          ir::Instr* idx = lw.add(lw.mul(lw.add(t, lw.i32(k0 + dk)), lw.i32(pb)), lw.add(colOf(jn), g));
          return lw.loadShared(b, idx);
        };
        bfrag[jn] = {at(0), at(4)};
        continue;
      }
      // ldmatrix.trans of k rows: x4 takes this block and the next 8 columns.
      bool pair = ns >= 16 && jn + 1 < ntiles && jn % 2 == 0;
      if (!pair && !bfrag[jn].empty()) continue;
      ir::Instr* col = pair ? lw.add(colOf(jn), lcol) : colOf(jn);
      ir::Instr* idx = lw.add(lw.mul(lw.add(lrow, lw.i32(k0)), lw.i32(pb)), col);
      ir::Instr* addr = lw.add(b_addr, lw.mul(idx, lw.i32(d.elem_bytes)));
      int count = pair ? 4 : 2;
      ir::Instr* regs = lw.intrinsic(ir::Intrinsic::LdMatrix, pair ? tuple4 : tuple2, {addr}, {count, 1});
      for (int q = 0; q < count; ++q) {
        ir::Instr* e = lw.emit(ir::Op::TupleGet, i32Ty(), {regs});
        e->index = q;
        bfrag[jn + q / 2].push_back(e);
      }
    }
    for (int64_t im = 0; im < reps_m; ++im)
      for (int64_t jn = 0; jn < ntiles; ++jn) {
        int64_t c[4] = {accRegister(cl, im, jn, 0, 0), accRegister(cl, im, jn, 0, 1), accRegister(cl, im, jn, 1, 0),
                        accRegister(cl, im, jn, 1, 1)};
        std::vector<ir::Instr*> ops = afrag[im];
        ops.insert(ops.end(), bfrag[jn].begin(), bfrag[jn].end());
        for (int64_t r : c) ops.push_back(out[r]);
        ir::Instr* res = lw.intrinsic(ir::Intrinsic::MmaSync, tupleTy(std::vector<const Type*>(4, f32Ty())), ops,
                                      {static_cast<int64_t>(d.operand)});
        std::vector<ir::Instr*> v = lw.f32Fields(res, 4);
        for (int q = 0; q < 4; ++q) out[c[q]] = v[q];
      }
  }
  lw.barrier();   // the operands' buffers may be written again (a loop) before every warp has read them
  lw.frags[in] = std::move(out);
}

// ---- wgmma -------------------------------------------------------------------------------

// The K-major operand layout of the register route (kMajorCoreIndex).
struct CoreMatrixLayout {
  int64_t k, kc;   // K, and elements per 16-byte core row
  ir::Instr* index(Lowering& lw, ir::Instr* row, ir::Instr* kk) const { return kMajorCoreIndex(lw, k, kc, row, kk); }
  int64_t sboBytes(int elem_bytes) const { return 8 * k * elem_bytes; }
};

// A wgmma matrix descriptor for the operand starting at byte `start` (i32) of
// the shared window: address, LBO and SBO in 16-byte units, the swizzle mode
// (0: none, 1: 128 bytes).
ir::Instr* descriptor(Lowering& lw, ir::Instr* start, int64_t lbo_bytes, int64_t sbo_bytes, int64_t swizzle = 0) {
  ir::Instr* addr = lw.emit(ir::Op::Cast, i64Ty(), {lw.emit(ir::Op::BitAnd, i32Ty(), {lw.shr(start, 4), lw.i32(0x3FFF)})});
  int64_t fields = (int64_t{(lbo_bytes >> 4) & 0x3FFF} << 16) | (int64_t{(sbo_bytes >> 4) & 0x3FFF} << 32) | (swizzle << 62);
  return lw.emit(ir::Op::BitOr, i64Ty(), {addr, lw.i64(fields)});
}

// The float32 B stage of a tfloat32 dot (k rows of n columns, N-major lines
// of the swizzled layout) into the K-major swizzled buffer at `dst` (n rows
// of k columns), which is how wgmma reads tf32 B. A thread moves 4x4
// blocks: four 16-byte row pieces in, four 16-byte column pieces out. The
// eight threads of a quarter warp take blocks of eight n-neighbours whose k
// blocks rotate with the lane, so that both their loads and their stores
// fall on eight distinct 16-byte chunks of the swizzle: no bank conflicts.
// float32 rounded to tfloat32 (to nearest even), still typed float32 for
// the shared-memory stores; the wgmma path is sm_90's, which has the
// instruction.
ir::Instr* roundedToTf32(Lowering& lw, ir::Instr* v) { return lw.intrinsic(ir::Intrinsic::Tf32RoundRn, f32Ty(), {v}); }

// A float32 stage the tensor cores read as tfloat32, rounded in place: the
// copy lands the float32 bits, and mma would drop their low 13 mantissa bits
// (truncation) where cuBLAS and cuTile round to nearest. 16 bytes a thread
// at a time, over the `bytes` at `at`.
void roundStageToTf32(Lowering& lw, ir::Instr* at, int64_t bytes) {
  int64_t chunks = bytes / 16, threads = lw.threads();
  ir::Instr* tid = lw.add(lw.mul(lw.warpId(), lw.i32(32)), lw.laneId());
  const Type* quad = tupleTy(std::vector<const Type*>(4, f32Ty()));
  for (int64_t first = 0; first < chunks; first += threads) {
    auto round = [&] {
      ir::Instr* addr = lw.add(at, lw.mul(lw.add(tid, lw.i32(first)), lw.i32(16)));
      std::vector<ir::Instr*> v = lw.f32Fields(lw.intrinsic(ir::Intrinsic::SharedLoad4, quad, {addr}), 4);
      for (ir::Instr*& x : v) x = roundedToTf32(lw, x);
      lw.intrinsic(ir::Intrinsic::SharedStore4, voidTy(), {addr, v[0], v[1], v[2], v[3]});
    };
    if (first + threads <= chunks) round();
    else lw.emitIf(lw.emit(ir::Op::Lt, boolTy(), {tid, lw.i32(chunks - first)}), round);
  }
}

// The tf32 A fragments of wgmma m64nNk8 for x's stage at `at`: warp w of the
// warpgroup holds rows 16w..16w+15 of each 64-row block, lane (g, t) =
// (lane / 4, lane % 4) the elements (g, t), (g + 8, t), (g, t + 4),
// (g + 8, t + 4) of each k step. One ldmatrix.x4 per k step: its four 8x8
// b16 matrices are 8 rows of 4 floats (16 bytes, one piece of the stage's
// layout), and a lane's b16 pair of matrix j is float (g, t) of it, so the
// matrices are (rows 0-7, k 0-3), (8-15, 0-3), (0-7, 4-7), (8-15, 4-7).
// Rounded to nearest even on the way (what cuBLAS and cuTile feed).
std::vector<ir::Instr*> tf32AFragments(Lowering& lw, const AsyncOperand& x, ir::Instr* at, ir::Instr* block, int64_t k) {
  const Type* tuple4 = tupleTy(std::vector<const Type*>(4, i32Ty()));
  ir::Instr* lane = lw.laneId();
  ir::Instr* row = lw.add(lw.add(lw.mul(block, lw.i32(64)), lw.mul(lw.band(lw.warpId(), 3), lw.i32(16))), lw.band(lane, 15));
  ir::Instr* col = lw.mul(lw.shr(lane, 4), lw.i32(4));
  std::vector<ir::Instr*> regs;
  for (int64_t k0 = 0; k0 < k; k0 += 8) {
    ir::Instr* addr = lw.add(at, x.offset(lw, row, lw.add(col, lw.i32(k0))));
    ir::Instr* four = lw.intrinsic(ir::Intrinsic::LdMatrix, tuple4, {addr}, {4, 0});
    for (int q = 0; q < 4; ++q) {
      ir::Instr* e = lw.emit(ir::Op::TupleGet, i32Ty(), {four});
      e->index = q;
      regs.push_back(roundedToTf32(lw, lw.intrinsic(ir::Intrinsic::Bitcast, f32Ty(), {e})));
    }
  }
  return regs;
}

void transposeStageToKMajor(Lowering& lw, ir::Instr* src, ir::Instr* dst, int64_t k, int64_t n, bool round) {
  int64_t blocks = (k / 4) * (n / 4), threads = lw.threads();
  int kq_shift = log2Ceil(k / 4);
  ir::Instr* tid = lw.add(lw.mul(lw.warpId(), lw.i32(32)), lw.laneId());
  ir::Instr* lane8 = lw.band(tid, 7);
  const Type* quad = tupleTy(std::vector<const Type*>(4, f32Ty()));
  for (int64_t first = 0; first < blocks; first += threads) {
    auto move = [&] {
      ir::Instr* q = lw.shr(lw.add(tid, lw.i32(first)), 3);   // quarter-warp's group
      ir::Instr* s = lw.band(q, k / 4 - 1);
      ir::Instr* c = lw.shr(q, kq_shift);
      ir::Instr* kb = lw.emit(ir::Op::BitOr, i32Ty(), {lw.band(s, ~int64_t{7}), lw.band(lw.add(lane8, s), 7)});
      ir::Instr* k0 = lw.mul(kb, lw.i32(4));
      ir::Instr* n0 = lw.add(lw.mul(c, lw.i32(32)), lw.mul(lane8, lw.i32(4)));
      std::vector<std::vector<ir::Instr*>> v(4);
      for (int i = 0; i < 4; ++i) {
        ir::Instr* at = lw.add(src, swizzled128Offset(lw, k, lw.add(k0, lw.i32(i)), n0, 4));
        ir::Instr* row = lw.intrinsic(ir::Intrinsic::SharedLoad4, quad, {at});
        v[i] = lw.f32Fields(row, 4);
        if (round)
          for (ir::Instr*& x : v[i]) x = roundedToTf32(lw, x);
      }
      for (int j = 0; j < 4; ++j) {
        ir::Instr* at = lw.add(dst, swizzled128Offset(lw, n, lw.add(n0, lw.i32(j)), k0, 4));
        lw.intrinsic(ir::Intrinsic::SharedStore4, voidTy(), {at, v[0][j], v[1][j], v[2][j], v[3][j]});
      }
    };
    if (first + threads <= blocks) move();
    else lw.emitIf(lw.emit(ir::Op::Lt, boolTy(), {tid, lw.i32(blocks - first)}), move);
  }
}

void lowerDotWgmma(Lowering& lw, ir::Instr* in) {
  DotShape d = dotShape(in);
  const TileLayout* layout = in->type->tile_layout;
  const LayoutInfo& cl = lw.info(in->type);
  int wn = layout->warps_per_cta[1];
  int64_t ns = layout->mma_n;
  CoreMatrixLayout core{d.k, 16 / d.elem_bytes};
  // Operands copied asynchronously (tile_lower_async.cpp) are in shared
  // memory already, at this iteration's stage; the ones S-1 iterations ahead
  // are requested while the tensor cores work on these.
  auto found = lw.async_dots.find(in);
  AsyncDot* plan = found == lw.async_dots.end() ? nullptr : found->second;
  // Operands in registers: x as rows m, y transposed (rows n), both K-major.
  ir::Instr* a_addr = nullptr;
  ir::Instr* b_addr = nullptr;
  if (plan && plan->x.load) {
    a_addr = stageAddress(lw, plan->x, plan->stage);
  } else {
    ir::Instr* a = toShared(lw, d.x, d.operand, d.m * d.k, 0, [&](ir::Instr* r, ir::Instr* c) { return core.index(lw, r, c); });
    a_addr = lw.intrinsic(ir::Intrinsic::SharedAddress, i32Ty(), {a});
  }
  // y copied asynchronously: N-major (wgmma's transposed B) as it lies in
  // global memory; for tf32 K-major, where the copy transposed it or the
  // threads transpose the stage below.
  bool b_async = plan && plan->y.load;
  bool b_transpose_stage = b_async && plan->y.transpose_in_shared;
  bool b_transposed = b_async && plan->y.n_major && !b_transpose_stage;
  bool a_swizzled = plan && plan->x.load && plan->x.swizzled;
  bool b_swizzled = b_transposed && plan->y.swizzled;
  if (b_async) {
    b_addr = stageAddress(lw, plan->y, plan->stage);
  } else {
    ir::Instr* b = toShared(lw, d.y, d.operand, d.n * d.k, 1, [&](ir::Instr* r, ir::Instr* c) { return core.index(lw, c, r); });
    b_addr = lw.intrinsic(ir::Intrinsic::SharedAddress, i32Ty(), {b});
  }
  if (plan) waitForStage(lw, *plan);
  if (b_transpose_stage) {   // into this iteration's half of the K-major buffer
    ir::Instr* base = lw.intrinsic(ir::Intrinsic::SharedAddress, i32Ty(), {plan->y.transposed});
    base = lw.band(lw.add(base, lw.i32(1023)), ~int64_t{1023});
    ir::Instr* dst = lw.add(base, lw.mul(plan->half, lw.i32(plan->y.stage_bytes)));
    transposeStageToKMajor(lw, b_addr, dst, d.k, d.n, plan->y.convert != nullptr);
    b_addr = dst;
    ir::Instr* last = lw.emit(ir::Op::Eq, boolTy(), {plan->half, lw.i32(plan->y.transposed_buffers - 1)});
    plan->next_half = lw.emit(ir::Op::Select, i32Ty(), {last, lw.i32(0), lw.add(plan->half, lw.i32(1))});
  }
  // The warpgroup's place: gm warpgroups along M (its 64-row block in each
  // repetition of 64 * gm rows), then along N (its mma_n columns).
  int gm = layout->warps_per_cta[0] / 4;
  ir::Instr* warpgroup = lw.shr(lw.warpId(), 2);
  ir::Instr* row_group = lw.band(warpgroup, gm - 1);
  ir::Instr* group = lw.shr(warpgroup, log2Ceil(gm));
  int64_t kstep = d.tf32 ? 8 : 16;
  int64_t sbo = core.sboBytes(d.elem_bytes);
  int64_t reps_m = d.m / (64 * gm), reps_n = d.n / (ns * wn);

  // float32 copied for tfloat32 dots. The tensor cores truncate what they
  // read from shared memory (measured: their results match truncated
  // inputs), where cuBLAS and cuTile round to nearest even. x is rounded in
  // registers and given to wgmma as its A fragments (rounding it in place
  // took two more passes over its stage: 0.53x cuBLAS against 0.69x); y is
  // rounded as it is transposed, or in place.
  bool a_regs = plan && plan->x.load && plan->x.convert;
  bool round_b = b_async && plan->y.convert && !b_transpose_stage;
  if (round_b) roundStageToTf32(lw, b_addr, plan->y.stage_bytes);
  bool threads_stored = !plan || !plan->x.load || !plan->y.load || b_transpose_stage || round_b;
  if (threads_stored) lw.intrinsic(ir::Intrinsic::FenceProxyAsync, voidTy(), {});
  // A in registers, in a chained loop: the registers an iteration loads are
  // still read by the previous iteration's tensor-core work until a wait
  // says it is done (ptxas does not order that). Where y is read from the
  // transposed buffer, nothing reads the stages after the loads, and each
  // 64-row block is a group of its own (plan->x_groups): a block waits only
  // for its predecessor (the same registers) while the others' work goes on,
  // so the tensor cores never wait for a load; the refill follows the first
  // barrier. Else one group, which waits for all of the previous one.
  bool staggered = a_regs && plan->chained;
  int64_t groups_per_iteration = staggered ? plan->x_groups : 1;
  if (threads_stored && !staggered) lw.barrier();
  // The byte offset of column k0 of a K-major swizzled operand of `rows`
  // rows: its block of 128-byte lines, then the start inside a line (the
  // swizzle applies to the address bits).
  int64_t line = 128 / d.elem_bytes;
  auto swizzledK = [&](int64_t rows, int64_t k0) { return (k0 / line) * rows * 128 + (k0 % line) * d.elem_bytes; };
  int regs = static_cast<int>(ns / 2);
  const Type* result = tupleTy(std::vector<const Type*>(regs, f32Ty()));
  std::vector<std::vector<ir::Instr*>> a_frags(reps_m);
  auto loadA = [&](int64_t first, int64_t last) {
    for (int64_t im = first; im < last; ++im)
      a_frags[im] = tf32AFragments(lw, plan->x, a_addr, lw.add(row_group, lw.i32(im * gm)), d.k);
  };

  std::vector<ir::Instr*> out = lw.frag(d.acc);
  // The wgmmas of 64-row blocks [first, last), k steps outermost.
  auto issue = [&](int64_t first, int64_t last) {
    for (int64_t k0 = 0; k0 < d.k; k0 += kstep) {
      int64_t k_bytes = (k0 / core.kc) * 128;
      for (int64_t im = first; im < last; ++im) {
        // Swizzled A: 64 rows of 128-byte lines are 8 KB.
        ir::Instr* block = lw.add(row_group, lw.i32(im * gm));   // of 64 rows
        std::vector<ir::Instr*> a_ops;
        if (a_regs) {
          auto at = a_frags[im].begin() + (k0 / 8) * 4;
          a_ops.assign(at, at + 4);
        } else if (a_swizzled) {
          a_ops = {descriptor(lw, lw.add(a_addr, lw.add(lw.mul(block, lw.i32(64 * 128)), lw.i32(swizzledK(d.m, k0)))), 16, 1024, 1)};
        } else {
          a_ops = {descriptor(lw, lw.add(a_addr, lw.add(lw.mul(block, lw.i32(8 * sbo)), lw.i32(k_bytes))), 128, sbo)};
        }
        for (int64_t rn = 0; rn < reps_n; ++rn) {
          // This warpgroup's columns: group * ns + rn * ns * wn.
          ir::Instr* db;
          if (b_transpose_stage) {   // K-major swizzled: a 128-byte line per column
            ir::Instr* at = lw.add(lw.mul(group, lw.i32(ns * 128)), lw.i32(rn * ns * wn * 128 + swizzledK(d.n, k0)));
            db = descriptor(lw, lw.add(b_addr, at), 16, 1024, 1);
          } else if (b_swizzled) {   // blocks of 64 columns, d.k lines of 128 bytes each
            int64_t bytes = d.k * 128;
            ir::Instr* at = lw.add(lw.mul(group, lw.i32(ns / 64 * bytes)), lw.i32((rn * ns * wn / 64) * bytes + k0 * 128));
            db = descriptor(lw, lw.add(b_addr, at), bytes, 1024, 1);
          } else {
            ir::Instr* rows_b = lw.add(lw.mul(group, lw.i32(ns / 8 * sbo)), lw.i32((rn * ns * wn / 8) * sbo + k_bytes));
            db = descriptor(lw, lw.add(b_addr, rows_b), 128, sbo);
          }
          std::vector<ir::Instr*> ops = a_ops;
          ops.push_back(db);
          std::vector<int64_t> slots;
          for (int64_t j = 0; j < ns / 8; ++j)
            for (int i = 0; i < 2; ++i)
              for (int bb = 0; bb < 2; ++bb) slots.push_back(accRegister(cl, im, j + (ns / 8) * rn, i, bb));
          for (int64_t r : slots) ops.push_back(out[r]);
          ir::Instr* res = lw.intrinsic(ir::Intrinsic::Wgmma, result, ops,
                                        {static_cast<int64_t>(d.operand), ns, b_transposed ? 1 : 0, a_regs ? 1 : 0});
          std::vector<ir::Instr*> v = lw.f32Fields(res, regs);
          for (size_t q = 0; q < slots.size(); ++q) out[slots[q]] = v[q];
        }
      }
    }
  };

  if (staggered) {
    // Groups of reps_m / groups_per_iteration blocks; before loading group
    // g, the groups issued after its predecessor may stay in flight.
    int64_t per = reps_m / groups_per_iteration;
    for (int64_t g = 0; g < groups_per_iteration; ++g) {
      lw.intrinsic(ir::Intrinsic::WgmmaWait, voidTy(), {}, {groups_per_iteration - 1});
      loadA(g * per, (g + 1) * per);
      if (g == 0) {
        lw.barrier();
        requestNextOperands(lw, *plan);
      }
      lw.intrinsic(ir::Intrinsic::WgmmaFence, voidTy(), {});
      issue(g * per, (g + 1) * per);
      lw.intrinsic(ir::Intrinsic::WgmmaCommit, voidTy(), {});
    }
    // With two transposed buffers the next iteration writes the one the
    // previous iteration's groups read: every warpgroup has waited for them
    // (the last wait above) once all pass a barrier.
    if (groups_per_iteration > 1 && plan->y.transposed_buffers < 3) lw.barrier();
  } else {
    if (a_regs) loadA(0, reps_m);
    lw.intrinsic(ir::Intrinsic::WgmmaFence, voidTy(), {});
    issue(0, reps_m);
    lw.intrinsic(ir::Intrinsic::WgmmaCommit, voidTy(), {});
    // The stage the request fills was last read by the previous iteration's
    // tensor-core work. Chained: this iteration's stays in flight; the
    // barrier after each warpgroup's wait(1) says the previous one is done
    // everywhere. Else every warp finished it before its final barrier.
    if (plan && plan->chained) {
      lw.intrinsic(ir::Intrinsic::WgmmaWait, voidTy(), {}, {1});
      lw.barrier();
      requestNextOperands(lw, *plan);
    } else {
      if (plan) requestNextOperands(lw, *plan);
      lw.intrinsic(ir::Intrinsic::WgmmaWait, voidTy(), {}, {0});
      lw.barrier();
    }
  }
  lw.frags[in] = std::move(out);
}

// ---- FMA ---------------------------------------------------------------------------------

void lowerDotFma(Lowering& lw, ir::Instr* in) {
  DotShape d = dotShape(in);
  Scalar accum = d.acc->type->scalar;
  // 16-bit accumulators add up in float32, rounded once per dot (libNVVM
  // refuses the half-precision multiply-adds LLVM forms from the loop).
  Scalar compute = scalarBits(accum) == 16 && scalarKind(accum) == ScalarKind::Float ? Scalar::Float32 : accum;
  const Type* ct = scalarTy(compute);
  auto stored = [&](ir::Instr* t, int slot) {
    // Widened as stored: libNVVM refuses some folds of (fpext half) products.
    const LayoutInfo& l = lw.info(t->type);
    ir::Instr* buf = lw.scratchArray(compute, tileElements(t->type), slot);
    std::vector<int64_t> strides = cStrides(l.shape);
    const std::vector<ir::Instr*>& regs = lw.frag(t);
    for (int64_t r = 0; r < l.regs; ++r) {
      ir::Instr* v = d.operand == compute ? regs[r] : lw.emit(ir::Op::Cast, ct, {regs[r]});
      lw.storeShared(buf, lw.linear(l, r, strides), v);
    }
    return buf;
  };
  ir::Instr* xs = stored(d.x, 0);
  ir::Instr* ys = stored(d.y, 1);
  lw.barrier();
  const LayoutInfo& cl = lw.info(d.acc->type);
  std::vector<ir::Instr*> out = lw.frag(d.acc);
  for (int64_t r = 0; r < cl.regs; ++r) {
    ir::Instr* row = lw.mul(lw.position(cl, r, 0), lw.i32(d.k));
    ir::Instr* col = lw.position(cl, r, 1);
    ir::Instr* sum = compute == accum ? out[r] : lw.emit(ir::Op::Cast, ct, {out[r]});
    for (int64_t kk = 0; kk < d.k; ++kk) {
      ir::Instr* x = lw.loadShared(xs, lw.add(row, lw.i32(kk)));
      ir::Instr* y = lw.loadShared(ys, lw.add(col, lw.i32(kk * d.n)));
      sum = lw.add(sum, lw.mul(x, y));
    }
    out[r] = compute == accum ? sum : lw.emit(ir::Op::Cast, scalarTy(accum), {sum});
  }
  lw.barrier();
  lw.frags[in] = std::move(out);
}

}  // namespace

ir::Instr* kMajorCoreIndex(Lowering& lw, int64_t k, int64_t kc, ir::Instr* row, ir::Instr* kk) {
  ir::Instr* group = lw.mul(lw.shr(row, 3), lw.i32(8 * k));
  ir::Instr* core = lw.mul(lw.shr(kk, log2Ceil(kc)), lw.i32(8 * kc));
  return lw.add(lw.add(group, core), lw.add(lw.mul(lw.band(row, 7), lw.i32(kc)), lw.band(kk, kc - 1)));
}

ir::Instr* swizzled128Offset(Lowering& lw, int64_t rows, ir::Instr* row, ir::Instr* col, int elem_bytes) {
  int chunk_shift = log2Ceil(16 / elem_bytes);
  ir::Instr* line = lw.add(lw.mul(lw.shr(col, chunk_shift + 3), lw.i32(rows)), row);
  ir::Instr* chunk = lw.emit(ir::Op::BitXor, i32Ty(), {lw.band(lw.shr(col, chunk_shift), 7), lw.band(row, 7)});
  return lw.add(lw.mul(line, lw.i32(128)), lw.mul(chunk, lw.i32(16)));
}

ir::Instr* nMajorCoreIndex(Lowering& lw, int64_t k, ir::Instr* kk, ir::Instr* n) {
  ir::Instr* group = lw.mul(lw.shr(n, 3), lw.i32(8 * k));
  ir::Instr* core = lw.mul(lw.shr(kk, 3), lw.i32(64));
  return lw.add(lw.add(group, core), lw.add(lw.mul(lw.band(kk, 7), lw.i32(8)), lw.band(n, 7)));
}

void lowerTileDot(Lowering& lw, ir::Instr* in) {
  const TileLayout* l = in->type->tile_layout;
  if (l && l->kind == TileLayoutKind::Mma) {
    if (l->mma_version == 3) return lowerDotWgmma(lw, in);
    return lowerDotMmaSync(lw, in);
  }
  lowerDotFma(lw, in);
}

}  // namespace cj::passes::tile
