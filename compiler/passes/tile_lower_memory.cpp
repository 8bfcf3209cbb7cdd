// tile.load / tile.store -> global memory by address. Element e of the tile
// at tile coordinates t lies at array index t_d * extent_d + e_d. A thread's
// registers that are consecutive along the last dimension form one vector
// access (up to 16 bytes) taken when the whole vector is inside the array
// and the array allows it (aligned base and row strides, unit last stride);
// otherwise, at ragged edges or on strided views, each element is accessed
// alone under its own in-bounds predicate. Both are predicated PTX, so the
// fast path costs no branch and an out-of-bounds element is never touched.
#include <algorithm>
#include <cmath>

#include "passes/tile_lowering.h"

namespace cj::passes::tile {
namespace {

struct ArrayView {
  ir::Instr* address;                 // i64, element 0
  std::vector<ir::Instr*> dims;       // i64
  std::vector<ir::Instr*> strides;    // i64 bytes
  std::vector<ir::Instr*> origin;     // i64: tile coordinate * tile extent
  // i32, per dimension: the tile's positions lo <= p < hi lie inside the
  // array (uniform, computed once: the per-element checks are then i32
  // compares of a position, not i64 index arithmetic).
  std::vector<ir::Instr*> lo, hi;
  ir::Instr* vector_ok = nullptr;     // b1: the array allows vectors of `width`
  int width = 1;
  int elem_bytes = 1;
};

// The view of `arr` at tile coordinates `index` (i64 values, one per
// dimension) for tiles of `shape`, with vectors of `width` elements where
// the array allows them (vector_ok).
ArrayView arrayView(Lowering& lw, ir::Instr* arr, const std::vector<ir::Instr*>& index, const std::vector<int64_t>& shape,
                    Scalar dtype, int max_width) {
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
    v.origin.push_back(lw.mul(index[d], lw.i64(shape[d])));
    auto clamped = [&](ir::Instr* x) {   // min(max(x, 0), extent) as i32
      ir::Instr* low = lw.emit(ir::Op::Lt, boolTy(), {x, lw.i64(0)});
      x = lw.emit(ir::Op::Select, i64Ty(), {low, lw.i64(0), x});
      ir::Instr* high = lw.emit(ir::Op::Lt, boolTy(), {lw.i64(shape[d]), x});
      x = lw.emit(ir::Op::Select, i64Ty(), {high, lw.i64(shape[d]), x});
      return lw.emit(ir::Op::Cast, i32Ty(), {x});
    };
    v.lo.push_back(clamped(lw.emit(ir::Op::Sub, i64Ty(), {lw.i64(0), v.origin[d]})));
    v.hi.push_back(clamped(lw.emit(ir::Op::Sub, i64Ty(), {dim, v.origin[d]})));
  }
  v.elem_bytes = scalarByteSize(dtype);
  int last = nd - 1;
  v.width = max_width;
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

// A load's or store's view: vectors as long as the registers of its layout
// hold along the last dimension (16 bytes at most).
ArrayView view(Lowering& lw, ir::Instr* in, const LayoutInfo& l, Scalar dtype) {
  ir::Instr* arr = in->operands[0];
  int last = arr->type->ndim - 1;
  int64_t run = l.layout ? l.dims[last].contiguous() : 1;
  bool fastest_last = l.layout && l.layout->order[0] == last;
  int width = fastest_last ? static_cast<int>(std::min<int64_t>(run, 16 / scalarByteSize(dtype))) : 1;
  width = std::min(width, 4);   // ld.global.v4 at most (v8 is sm_100's)
  std::vector<ir::Instr*> index(in->operands.begin() + 1, in->operands.begin() + 1 + arr->type->ndim);
  return arrayView(lw, arr, index, l.shape, dtype, width);
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
  ir::Instr* last_pos = nullptr;
  auto inside = [&](ir::Instr* pos, int d) {
    ir::Instr* above = lw.emit(ir::Op::Ge, boolTy(), {pos, v.lo[d]});
    return lw.andBool(above, lw.emit(ir::Op::Lt, boolTy(), {pos, v.hi[d]}));
  };
  for (int d = 0; d < nd; ++d) {
    ir::Instr* pos = lw.position(l, first, d);
    ir::Instr* idx = lw.add(v.origin[d], lw.toI64(pos));
    address = lw.add(address, lw.mul(idx, v.strides[d]));
    if (d == last) {
      last_pos = pos;
    } else {
      ir::Instr* ok = inside(pos, d);
      rows_ok = rows_ok ? lw.andBool(rows_ok, ok) : ok;
    }
  }
  a.address = address;
  for (int k = 0; k < count; ++k) {
    ir::Instr* ok = inside(k ? lw.add(last_pos, lw.i32(k)) : last_pos, last);
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
  return lw.constant(ir::tilePaddingConst(static_cast<ir::TilePadding>(mode), dtype), scalarTy(dtype));
}

}  // namespace

namespace {

// The whole tile lies inside the array and the array allows its vectors: a
// uniform test, so a branch picks the unpredicated path (every element
// tested and an element fallback per vector cost a 4096-wide row's load as
// many instructions as its arithmetic).
ir::Instr* wholeTileInside(Lowering& lw, const ArrayView& v, const std::vector<int64_t>& shape) {
  ir::Instr* inside = v.vector_ok ? v.vector_ok : lw.boolean(true);
  for (size_t d = 0; d < v.lo.size(); ++d) {
    inside = lw.andBool(inside, lw.emit(ir::Op::Eq, boolTy(), {v.lo[d], lw.i32(0)}));
    inside = lw.andBool(inside, lw.emit(ir::Op::Eq, boolTy(), {v.hi[d], lw.i32(shape[d])}));
  }
  return inside;
}

// The tile's registers in groups: `width` consecutive elements along the
// last dimension where the layout holds them so (one vector access), else
// one element; `f(first register, count, access)` for each.
template <typename F>
void forEachGroup(Lowering& lw, const ArrayView& v, const LayoutInfo& l, F&& f) {
  for (int64_t r = 0; r < l.regs;) {
    int w = v.width > 1 && contiguous(l, r, v.width) ? v.width : 1;
    f(r, w, access(lw, v, l, r, w));
    r += w;
  }
}

// `w` elements at `address` where `pred` holds (else `pad`): one vector load
// for w > 1.
std::vector<ir::Instr*> loadGroup(Lowering& lw, ir::Instr* address, ir::Instr* pred, ir::Instr* pad, int w,
                                  const Type* elem) {
  std::vector<ir::Instr*> ops = {address, pred};
  for (int k = 0; k < w; ++k) ops.push_back(pad);
  if (w == 1) return {lw.intrinsic(ir::Intrinsic::GlobalLoadIf, elem, ops)};
  ir::Instr* vec = lw.intrinsic(ir::Intrinsic::GlobalLoadIf, tupleTy(std::vector<const Type*>(w, elem)), ops);
  std::vector<ir::Instr*> out;
  for (int k = 0; k < w; ++k) {
    out.push_back(lw.emit(ir::Op::TupleGet, elem, {vec}));
    out.back()->index = k;
  }
  return out;
}

// The tile's elements each tested against the array's bounds: vectors where
// the whole vector is inside, elements at ragged edges (padded).
std::vector<ir::Instr*> maskedLoad(Lowering& lw, const LayoutInfo& l, const ArrayView& v, const Type* elem, ir::Instr* pad) {
  std::vector<ir::Instr*> out(l.regs);
  forEachGroup(lw, v, l, [&](int64_t r, int w, const Access& a) {
    if (w == 1) {
      out[r] = loadGroup(lw, a.address, a.each_ok[0], pad, 1, elem)[0];
      return;
    }
    std::vector<ir::Instr*> got = loadGroup(lw, a.address, a.vector_ok, pad, w, elem);
    // The element path (ragged or unaligned) loads into its own registers and
    // a select picks: had it started from the vector's values, each of its
    // loads would wait for the vector load, and the next vector load behind
    // it (a row of 4096 float32 on an H200: 87 us, Triton 70).
    ir::Instr* scalar_path = lw.emit(ir::Op::Not, boolTy(), {a.vector_ok});
    for (int k = 0; k < w; ++k) {
      ir::Instr* p = lw.andBool(a.each_ok[k], scalar_path);
      ir::Instr* one = lw.intrinsic(ir::Intrinsic::GlobalLoadIf, elem, {a.addresses[k], p, pad});
      out[r + k] = lw.emit(ir::Op::Select, elem, {a.vector_ok, got[k], one});
    }
  });
  return out;
}

}  // namespace

void lowerTileLoad(Lowering& lw, ir::Instr* in) {
  const LayoutInfo& l = lw.info(in->type);
  Scalar dtype = in->type->scalar;
  const Type* elem = scalarTy(dtype);
  ArrayView v = view(lw, in, l, dtype);
  ir::Instr* pad = paddingValue(lw, dtype, in->ints.empty() ? 0 : in->ints[0]);
  if (v.width > 1) {   // whole tiles: vectors, no tests
    auto whole = [&] {
      std::vector<ir::Instr*> out(l.regs);
      forEachGroup(lw, v, l, [&](int64_t r, int w, const Access& a) {
        std::vector<ir::Instr*> got = loadGroup(lw, a.address, lw.boolean(true), pad, w, elem);
        std::copy(got.begin(), got.end(), out.begin() + r);
      });
      return out;
    };
    auto masked = [&] { return maskedLoad(lw, l, v, elem, pad); };
    lw.frags[in] = lw.emitIfElse(wholeTileInside(lw, v, l.shape), std::vector<const Type*>(l.regs, elem), whole, masked);
    return;
  }
  lw.frags[in] = maskedLoad(lw, l, v, elem, pad);
}

namespace {

// Per register of an element-indexed access (gather, scatter, atomics): the
// address of arr[i0, ..., i{nd-1}] and whether to access it (the mask, and
// with bounds checking every index inside the array).
struct ElementAccess {
  ir::Instr* address;
  ir::Instr* ok;
};
ElementAccess elementAccess(Lowering& lw, ir::Instr* in, int64_t r, ir::Instr* mask, bool check_bounds) {
  ir::Instr* arr = in->operands[0];
  int nd = arr->type->ndim;
  ir::Instr* address = lw.intrinsic(ir::Intrinsic::ArrayAddress, i64Ty(), {arr});
  ir::Instr* ok = lw.frag(mask)[r];
  for (int d = 0; d < nd; ++d) {
    ir::Instr* i = lw.frag(in->operands[1 + d])[r];
    ir::Instr* stride = lw.emit(ir::Op::ArrayStride, i64Ty(), {arr});
    stride->index = d;
    address = lw.add(address, lw.mul(i, stride));
    if (check_bounds) {
      ir::Instr* dim = lw.emit(ir::Op::ArrayDim, i64Ty(), {arr});
      dim->index = d;
      ok = lw.andBool(ok, inRange(lw, i, dim));
    }
  }
  return {address, ok};
}

}  // namespace

void lowerTileGather(Lowering& lw, ir::Instr* in) {
  const LayoutInfo& l = lw.info(in->type);
  int nd = in->operands[0]->type->ndim;
  ir::Instr* mask = in->operands[1 + nd];
  ir::Instr* padding = in->operands[2 + nd];
  std::vector<ir::Instr*> out(l.regs);
  for (int64_t r = 0; r < l.regs; ++r) {
    ElementAccess a = elementAccess(lw, in, r, mask, in->ints[0] != 0);
    out[r] = lw.intrinsic(ir::Intrinsic::GlobalLoadIf, scalarTy(in->type->scalar), {a.address, a.ok, lw.frag(padding)[r]});
  }
  lw.frags[in] = std::move(out);
}

void lowerTileScatter(Lowering& lw, ir::Instr* in) {
  int nd = in->operands[0]->type->ndim;
  ir::Instr* value = in->operands[1 + nd];
  ir::Instr* mask = in->operands[2 + nd];
  const LayoutInfo& l = lw.info(value->type);
  for (int64_t r = 0; r < l.regs; ++r) {
    ElementAccess a = elementAccess(lw, in, r, mask, in->ints[0] != 0);
    ir::Instr* ok = lw.andBool(a.ok, lw.firstCopy(l, r));
    lw.intrinsic(ir::Intrinsic::GlobalStoreIf, voidTy(), {a.address, ok, lw.frag(value)[r]});
  }
}

void lowerTileAtomic(Lowering& lw, ir::Instr* in) {
  const LayoutInfo& l = lw.info(in->type);
  int nd = in->operands[0]->type->ndim;
  bool cas = static_cast<ir::TileAtomicKind>(in->ints[0]) == ir::TileAtomicKind::Cas;
  ir::Instr* update = in->operands[1 + nd];
  ir::Instr* mask = in->operands.back();
  auto order = in->ints.size() >= 4 ? static_cast<ir::TileMemoryOrder>(in->ints[2]) : ir::TileMemoryOrder::Relaxed;
  bool releases = order == ir::TileMemoryOrder::Release || order == ir::TileMemoryOrder::AcqRel;
  bool acquires = order == ir::TileMemoryOrder::Acquire || order == ir::TileMemoryOrder::AcqRel;
  // The block is one program in cuTile's model: a release publishes what
  // every thread of the block wrote before it (a lock released by thread 0
  // after the block's stores), and what any thread reads after an acquire
  // comes after it. The barriers make one thread's atomic order the others'.
  if (releases) lw.barrier();
  std::vector<ir::Instr*> out(l.regs);
  for (int64_t r = 0; r < l.regs; ++r) {
    ElementAccess a = elementAccess(lw, in, r, mask, in->ints[1] != 0);
    // Only the first copy of an element performs the operation.
    std::vector<ir::Instr*> ops = {a.address, lw.andBool(a.ok, lw.firstCopy(l, r)), lw.frag(update)[r]};
    if (cas) ops.push_back(lw.frag(in->operands[2 + nd])[r]);
    std::vector<int64_t> attrs = {in->ints[0]};
    if (in->ints.size() >= 4) attrs.insert(attrs.end(), {in->ints[2], in->ints[3]});
    out[r] = lw.intrinsic(ir::Intrinsic::GlobalAtomicIf, scalarTy(in->type->scalar), ops, attrs);
  }
  if (Lowering::replicated(l)) {
    // The replicas take the old value their first copy read, through shared memory.
    Scalar dtype = in->type->scalar;
    ir::Instr* buf = lw.scratchArray(dtype, std::max<int64_t>(1, tileElements(in->type)), 2);
    ir::Instr* base = lw.intrinsic(ir::Intrinsic::SharedAddress, i32Ty(), {buf});
    std::vector<int64_t> strides = cStrides(l.shape);
    for (int64_t r = 0; r < l.regs; ++r) {
      ir::Instr* at = lw.add(base, lw.mul(lw.linear(l, r, strides), lw.i32(scalarByteSize(dtype))));
      lw.intrinsic(ir::Intrinsic::SharedStoreIf, voidTy(), {at, lw.firstCopy(l, r), out[r]});
    }
    lw.barrier();
    for (int64_t r = 0; r < l.regs; ++r) out[r] = lw.loadShared(buf, lw.linear(l, r, strides));
    lw.barrier();
  } else if (acquires) {
    lw.barrier();
  }
  lw.frags[in] = std::move(out);
}

namespace {

// Stores of 16-bit tiles in an mma layout (tensor-core results) through
// shared memory. Such a layout gives each thread pairs of neighbouring
// elements, so stored directly a warp instruction writes 8 rows x 16 bytes
// (fp16 4096^3 matmul on an H100: the store took 38 us of 92 at K = 1024,
// Triton's 9). Staged by column chunks of 16 KB, each thread stores 16
// contiguous bytes and a warp whole rows. For tiles wholly inside an array
// that allows 16-byte vectors; the others keep the direct path.
struct StagedStore {
  int64_t chunk_cols = 0;     // columns per chunk
  int64_t pitch_words = 0;    // a staged row, in 4-byte words (padded against bank conflicts)
  std::vector<std::vector<int64_t>> pairs;   // per chunk: first registers of its pairs
};

bool planStagedStore(const Lowering& lw, const LayoutInfo& l, Scalar dtype, StagedStore& plan) {
  if (lw.fn.simt_block[0] || !l.layout || l.layout->kind != TileLayoutKind::Mma || l.rank != 2 ||
      scalarBits(dtype) != 16 || Lowering::replicated(l))
    return false;
  const int64_t rows = l.shape[0], cols = l.shape[1], per_vector = 8;   // 16 bytes of 16-bit elements
  int64_t cw = cols;
  while (cw > per_vector && rows * cw * 2 > 16 * 1024) cw /= 2;
  if (cw < per_vector || (rows * cw / per_vector) % lw.threads() != 0) return false;
  plan.chunk_cols = cw;
  // A quad of lanes holds 16 bytes of a row, eight quads eight rows: 16
  // bytes of padding put those rows in distinct banks.
  plan.pitch_words = cw / 2 + 4;
  plan.pairs.assign(cols / cw, {});
  for (int64_t r = 0; r < l.regs; r += 2) {
    if (!contiguous(l, r, 2)) return false;
    int64_t chunk = l.pos(1, 0, 0, r) / cw;
    for (int t = 0; t < lw.threads(); ++t)
      if (l.pos(1, t / 32, t % 32, r) / cw != chunk) return false;
    plan.pairs[chunk].push_back(r);
  }
  return true;
}

// The 32-bit word of two 16-bit values, `lo` at the lower address.
ir::Instr* packPair(Lowering& lw, ir::Instr* lo, ir::Instr* hi) {
  auto bits = [&](ir::Instr* v) {
    ir::Instr* u16 = lw.intrinsic(ir::Intrinsic::Bitcast, scalarTy(Scalar::UInt16), {v});
    return lw.emit(ir::Op::Cast, scalarTy(Scalar::UInt32), {u16});
  };
  ir::Instr* high = lw.emit(ir::Op::LShift, scalarTy(Scalar::UInt32),
                            {bits(hi), lw.constant(ir::Const::integer(16), scalarTy(Scalar::UInt32))});
  ir::Instr* word = lw.emit(ir::Op::BitOr, scalarTy(Scalar::UInt32), {high, bits(lo)});
  return lw.intrinsic(ir::Intrinsic::Bitcast, f32Ty(), {word});
}

void storeStaged(Lowering& lw, const StagedStore& plan, const LayoutInfo& l, const ArrayView& v,
                 const std::vector<ir::Instr*>& values) {
  const int64_t cw = plan.chunk_cols, vectors_per_row = cw / 8;
  const int64_t rounds = l.shape[0] * vectors_per_row / lw.threads();
  ir::Instr* buf = lw.scratchArray(Scalar::Float32, l.shape[0] * plan.pitch_words, 0);
  ir::Instr* base = lw.intrinsic(ir::Intrinsic::SharedAddress, i32Ty(), {buf});
  ir::Instr* tid = lw.threadIndex();
  ir::Instr* yes = lw.boolean(true);
  for (size_t c = 0; c < plan.pairs.size(); ++c) {
    for (int64_t r : plan.pairs[c]) {
      ir::Instr* row = lw.position(l, r, 0);
      ir::Instr* word = lw.emit(ir::Op::RShift, i32Ty(), {lw.position(l, r, 1), lw.i32(1)});
      ir::Instr* at = lw.add(lw.mul(row, lw.i32(plan.pitch_words)), lw.add(word, lw.i32(-static_cast<int64_t>(c) * cw / 2)));
      lw.intrinsic(ir::Intrinsic::SharedStoreIf, voidTy(), {lw.add(base, lw.mul(at, lw.i32(4))), yes, packPair(lw, values[r], values[r + 1])});
    }
    lw.barrier();
    for (int64_t k = 0; k < rounds; ++k) {
      ir::Instr* vec = lw.add(tid, lw.i32(k * lw.threads()));
      ir::Instr* row = lw.emit(ir::Op::RShift, i32Ty(), {vec, lw.i32(log2Ceil(vectors_per_row))});
      ir::Instr* col = lw.mul(lw.band(vec, vectors_per_row - 1), lw.i32(8));
      ir::Instr* at = lw.add(lw.mul(row, lw.i32(plan.pitch_words * 4)), lw.mul(col, lw.i32(2)));
      std::vector<ir::Instr*> words = lw.f32Fields(lw.intrinsic(ir::Intrinsic::SharedLoad4, tupleTy(std::vector<const Type*>(4, f32Ty())), {lw.add(base, at)}), 4);
      ir::Instr* g_row = lw.add(v.origin[0], lw.toI64(row));
      ir::Instr* g_col = lw.add(v.origin[1], lw.toI64(lw.add(col, lw.i32(static_cast<int64_t>(c) * cw))));
      ir::Instr* address = lw.add(v.address, lw.add(lw.mul(g_row, v.strides[0]), lw.mul(g_col, lw.i64(2))));
      std::vector<ir::Instr*> ops = {address, yes};
      ops.insert(ops.end(), words.begin(), words.end());
      lw.intrinsic(ir::Intrinsic::GlobalStoreIf, voidTy(), ops);
    }
    lw.barrier();   // the chunk buffer is written again
  }
}

}  // namespace

namespace {

// Each element tested against the array's bounds: vectors where the whole
// vector is inside, elements at ragged edges.
// values[r .. r+w-1] stored at `address` where `pred` holds: one vector store for w > 1.
void storeGroup(Lowering& lw, ir::Instr* address, ir::Instr* pred, const std::vector<ir::Instr*>& values, int64_t r,
                int w) {
  std::vector<ir::Instr*> ops = {address, pred};
  ops.insert(ops.end(), values.begin() + r, values.begin() + r + w);
  lw.intrinsic(ir::Intrinsic::GlobalStoreIf, voidTy(), ops);
}

void maskedStore(Lowering& lw, const LayoutInfo& l, const ArrayView& v, const std::vector<ir::Instr*>& values) {
  forEachGroup(lw, v, l, [&](int64_t r, int w, const Access& a) {
    if (w == 1) return storeGroup(lw, a.address, a.each_ok[0], values, r, 1);
    storeGroup(lw, a.address, a.vector_ok, values, r, w);
    ir::Instr* scalar_path = lw.emit(ir::Op::Not, boolTy(), {a.vector_ok});
    for (int k = 0; k < w; ++k)
      storeGroup(lw, a.addresses[k], lw.andBool(a.each_ok[k], scalar_path), values, r + k, 1);
  });
}

}  // namespace

void lowerTileStore(Lowering& lw, ir::Instr* in) {
  ir::Instr* tile = in->operands.back();
  const LayoutInfo& l = lw.info(tile->type);
  const std::vector<ir::Instr*>& values = lw.frag(tile);
  auto direct = [&] {
    ArrayView v = view(lw, in, l, tile->type->scalar);
    if (v.width > 1) {   // whole tiles: vectors, no tests
      ir::Instr* inside = wholeTileInside(lw, v, l.shape);
      lw.emitIf(inside, [&] {
        forEachGroup(lw, v, l, [&](int64_t r, int w, const Access& a) {
          storeGroup(lw, a.address, lw.boolean(true), values, r, w);
        });
      });
      lw.emitIf(lw.emit(ir::Op::Not, boolTy(), {inside}), [&] { maskedStore(lw, l, v, values); });
      return;
    }
    maskedStore(lw, l, v, values);
  };
  StagedStore plan;
  if (!planStagedStore(lw, l, tile->type->scalar, plan)) return direct();
  ir::Instr* arr = in->operands[0];
  std::vector<ir::Instr*> index(in->operands.begin() + 1, in->operands.begin() + 3);
  ArrayView v = arrayView(lw, arr, index, l.shape, tile->type->scalar, 8);
  ir::Instr* inside = wholeTileInside(lw, v, l.shape);
  lw.emitIf(inside, [&] { storeStaged(lw, plan, l, v, values); });
  lw.emitIf(lw.emit(ir::Op::Not, boolTy(), {inside}), direct);
}

void copyTileToSharedAsync(Lowering& lw, ir::Instr* arr, const std::vector<ir::Instr*>& index,
                           const std::vector<int64_t>& shape, bool by_rows, const SharedChunkAddress& shared_address) {
  Scalar dtype = arr->type->scalar;
  int eb = scalarByteSize(dtype);
  int64_t w = 16 / eb;   // elements of a chunk
  ArrayView v = arrayView(lw, arr, index, shape, dtype, static_cast<int>(w));
  int64_t rows = shape[0], cols = shape[1], per_row = cols / w, total = rows * per_row, threads = lw.threads();
  int shift = log2Ceil(per_row);
  // Chunk c, by columns: eight consecutive chunks go to eight consecutive
  // rows of one column, so that eight threads fill a 16-byte x 8-row core
  // matrix (128 contiguous bytes of the unswizzled wgmma layouts: no bank
  // conflicts), then the next column, then the next eight rows.
  bool by_core = !by_rows && rows % 8 == 0;
  ir::Instr* tid = lw.threadIndex();
  struct Chunk {
    int64_t first;
    ir::Instr *c, *row, *col, *dst;
  };
  std::vector<Chunk> chunks;
  for (int64_t first = 0; first < total; first += threads) {
    ir::Instr* c = lw.add(tid, lw.i32(first));
    ir::Instr* row = by_core ? lw.add(lw.band(c, 7), lw.mul(lw.shr(c, 3 + shift), lw.i32(8))) : lw.shr(c, shift);
    ir::Instr* col = lw.mul(lw.band(by_core ? lw.shr(c, 3) : c, per_row - 1), lw.i32(w));
    chunks.push_back({first, c, row, col, shared_address(row, col)});
  }
  auto rowAddress = [&](ir::Instr* row, ir::Instr* col) {
    ir::Instr* grow = lw.add(v.origin[0], lw.toI64(row));
    ir::Instr* gcol = lw.add(v.origin[1], lw.toI64(col));
    return lw.add(v.address, lw.add(lw.mul(grow, v.strides[0]), lw.mul(gcol, v.strides[1])));
  };

  // The tile lies inside the array (every tile but the ragged edges'): no
  // bounds, and the chunks' addresses a constant number of rows apart.
  ir::Instr* inside = v.vector_ok;
  for (int d = 0; d < 2; ++d) {
    ir::Instr* end = lw.add(v.origin[d], lw.i64(shape[d]));
    inside = lw.andBool(inside, lw.emit(ir::Op::Le, boolTy(), {end, v.dims[d]}));
  }
  if (total % threads) inside = lw.boolean(false);
  lw.emitIf(inside, [&] {
    bool uniform = by_core ? threads % (8 * per_row) == 0 : threads % per_row == 0;
    ir::Instr* base = rowAddress(chunks.front().row, chunks.front().col);
    for (const Chunk& c : chunks) {
      ir::Instr* address = uniform ? lw.add(base, lw.mul(lw.i64(c.first / per_row), v.strides[0])) : rowAddress(c.row, c.col);
      lw.intrinsic(ir::Intrinsic::CpAsync, voidTy(), {c.dst, address, lw.i32(16), lw.boolean(true)});
    }
  });

  // Edge tiles: each chunk clipped to the array (the rest zero-filled), and
  // arrays that do not allow 16-byte chunks element by element.
  lw.emitIf(lw.emit(ir::Op::Not, boolTy(), {inside}), [&] {
    ir::Instr* scalar_path = lw.emit(ir::Op::Not, boolTy(), {v.vector_ok});
    ir::Instr* zero = lw.constant(scalarKind(dtype) == ScalarKind::Float ? ir::Const::real(0.0) : ir::Const::integer(0),
                                  scalarTy(dtype));
    struct Clipped {
      ir::Instr *dst, *grow, *gcol, *row_ok;
    };
    std::vector<Clipped> clipped;
    for (const Chunk& c : chunks) {
      ir::Instr* grow = lw.add(v.origin[0], lw.toI64(c.row));
      ir::Instr* gcol = lw.add(v.origin[1], lw.toI64(c.col));
      ir::Instr* row_ok = inRange(lw, grow, v.dims[0]);
      if (c.first + threads > total) row_ok = lw.andBool(row_ok, lw.emit(ir::Op::Lt, boolTy(), {c.c, lw.i32(total)}));
      // Elements of the chunk inside the array: min(max(dim1 - gcol, 0), w).
      ir::Instr* left = lw.emit(ir::Op::Sub, i64Ty(), {v.dims[1], gcol});
      left = lw.emit(ir::Op::Select, i64Ty(), {lw.emit(ir::Op::Lt, boolTy(), {left, lw.i64(0)}), lw.i64(0), left});
      left = lw.emit(ir::Op::Select, i64Ty(), {lw.emit(ir::Op::Gt, boolTy(), {left, lw.i64(w)}), lw.i64(w), left});
      ir::Instr* bytes = lw.emit(ir::Op::Cast, i32Ty(), {lw.mul(left, lw.i64(eb))});
      bytes = lw.emit(ir::Op::Select, i32Ty(), {row_ok, bytes, lw.i32(0)});
      ir::Instr* address = lw.add(v.address, lw.add(lw.mul(grow, v.strides[0]), lw.mul(gcol, v.strides[1])));
      // No source bytes: point at the array itself (nothing is read).
      ir::Instr* any = lw.emit(ir::Op::Gt, boolTy(), {bytes, lw.i32(0)});
      address = lw.emit(ir::Op::Select, i64Ty(), {any, address, v.address});
      lw.intrinsic(ir::Intrinsic::CpAsync, voidTy(), {c.dst, address, bytes, v.vector_ok});
      clipped.push_back({c.dst, grow, gcol, row_ok});
    }
    lw.emitIf(scalar_path, [&] {
      for (const Clipped& c : clipped)
        for (int64_t k = 0; k < w; ++k) {
          ir::Instr* gk = lw.add(c.gcol, lw.i64(k));
          ir::Instr* ok = lw.andBool(c.row_ok, inRange(lw, gk, v.dims[1]));
          ir::Instr* at = lw.add(lw.add(v.address, lw.mul(c.grow, v.strides[0])), lw.mul(gk, v.strides[1]));
          ir::Instr* value = lw.intrinsic(ir::Intrinsic::GlobalLoadIf, scalarTy(dtype), {at, ok, zero});
          lw.intrinsic(ir::Intrinsic::SharedStoreIf, voidTy(), {lw.add(c.dst, lw.i32(k * eb)), lw.boolean(true), value});
        }
    });
  });
}

void copyTileElementsToSharedAsync(Lowering& lw, ir::Instr* arr, const std::vector<ir::Instr*>& index,
                                   const std::vector<int64_t>& shape, const SharedChunkAddress& element_address) {
  Scalar dtype = arr->type->scalar;
  ArrayView v = arrayView(lw, arr, index, shape, dtype, 1);
  int64_t cols = shape[1], total = shape[0] * cols, threads = lw.threads();
  int shift = log2Ceil(cols);
  ir::Instr* tid = lw.threadIndex();
  // A thread's elements: one column, rows `threads / cols` apart (where the
  // block spans whole rows), else recomputed per element.
  bool whole_rows = threads % cols == 0 && total % threads == 0;
  ir::Instr* row0 = lw.shr(tid, shift);
  ir::Instr* col0 = lw.band(tid, cols - 1);
  auto position = [&](int64_t first) -> std::pair<ir::Instr*, ir::Instr*> {
    if (whole_rows) return {lw.add(row0, lw.i32(first / cols)), col0};
    ir::Instr* e = lw.add(tid, lw.i32(first));
    return {lw.shr(e, shift), lw.band(e, cols - 1)};
  };
  ir::Instr* inside = lw.boolean(true);
  for (int d = 0; d < 2; ++d)
    inside = lw.andBool(inside, lw.emit(ir::Op::Le, boolTy(), {lw.add(v.origin[d], lw.i64(shape[d])), v.dims[d]}));
  if (!whole_rows) inside = lw.boolean(false);
  // The whole tile inside the array: addresses a constant number of rows
  // apart, no bounds.
  lw.emitIf(inside, [&] {
    ir::Instr* base = lw.add(v.address, lw.add(lw.mul(lw.add(v.origin[0], lw.toI64(row0)), v.strides[0]),
                                               lw.mul(lw.add(v.origin[1], lw.toI64(col0)), v.strides[1])));
    for (int64_t first = 0; first < total; first += threads) {
      auto [row, col] = position(first);
      ir::Instr* address = lw.add(base, lw.mul(lw.i64(first / cols), v.strides[0]));
      lw.intrinsic(ir::Intrinsic::CpAsync, voidTy(), {element_address(row, col), address, lw.i32(4), lw.boolean(true)}, {4});
    }
  });
  lw.emitIf(lw.emit(ir::Op::Not, boolTy(), {inside}), [&] {
    for (int64_t first = 0; first < total; first += threads) {
      auto [row, col] = position(first);
      ir::Instr* grow = lw.add(v.origin[0], lw.toI64(row));
      ir::Instr* gcol = lw.add(v.origin[1], lw.toI64(col));
      ir::Instr* ok = lw.andBool(inRange(lw, grow, v.dims[0]), inRange(lw, gcol, v.dims[1]));
      if (first + threads > total)
        ok = lw.andBool(ok, lw.emit(ir::Op::Lt, boolTy(), {lw.add(tid, lw.i32(first)), lw.i32(total)}));
      ir::Instr* address = lw.add(v.address, lw.add(lw.mul(grow, v.strides[0]), lw.mul(gcol, v.strides[1])));
      address = lw.emit(ir::Op::Select, i64Ty(), {ok, address, v.address});   // nothing read: the array itself
      ir::Instr* bytes = lw.emit(ir::Op::Select, i32Ty(), {ok, lw.i32(4), lw.i32(0)});
      lw.intrinsic(ir::Intrinsic::CpAsync, voidTy(), {element_address(row, col), address, bytes, lw.boolean(true)}, {4});
    }
  });
}

}  // namespace cj::passes::tile
