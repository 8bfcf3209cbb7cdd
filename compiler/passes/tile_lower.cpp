// tile-assign-layouts and tile-lower (tile_passes.h): the driver of the
// lowering (blocks, parameters, edges), the layout arithmetic, the moves of
// values between layouts, and the elementwise and shape operations. Memory,
// reductions and matmul are in tile_lower_memory/reduce/dot.cpp.
#include <algorithm>
#include <map>
#include <set>

#include "ir/cfg.h"
#include "passes/tile_lowering.h"
#include "passes/tile_passes.h"
#include "support/error.h"

namespace cj::passes {

bool isTileOp(const ir::Instr& in) {
  if (in.type->isTile()) return true;
  for (const ir::Instr* o : in.operands)
    if (o->type->isTile()) return true;
  return false;
}

const TileLayout* tileLayoutFor(const std::vector<int64_t>& shape, int num_warps) {
  // One layout per shape, whatever the dtype (4-byte vectors per thread along
  // the last dimension): elementwise operations then never move data.
  return shape.empty() ? nullptr : defaultBlockedLayout(shape, 4, num_warps);
}

namespace {

[[noreturn]] void failAt(const ir::Function& fn, const ir::Instr* in, const std::string& what, const std::string& msg) {
  throw CompileError(fn.filename, in ? in->loc.line : 0, in ? in->loc.col : 0, what, msg);
}

// The most shared memory a block may opt into, by GPU generation.
int64_t dynamicSharedLimit(int sm) {
  switch (sm) {
    case 80: case 87: return 163 * 1024;
    case 90: case 100: case 103: return 227 * 1024;
    case 0: return 48 * 1024;   // unknown: the static limit
    default: return 99 * 1024;  // sm_86, sm_89, sm_120 ...
  }
}

template <class F>
void forEachValue(ir::Function& fn, F f) {
  for (auto& b : fn.blocks) {
    for (auto& p : b->params) f(*p);
    for (auto& in : b->instrs) f(*in);
  }
}

}  // namespace

// The tensor-core layout of a tile.dot's result, or nullptr where the dot
// stays on the FMA units (dtypes, shapes or warps that no instruction fits).
const TileLayout* mmaLayoutFor(const ir::Instr& dot, int num_warps, int target_sm) {
  const Type* x = dot.operands[0]->type;
  const Type* acc = dot.type;
  Scalar in = x->scalar;
  int kmin = 0;
  if ((in == Scalar::Float16 || in == Scalar::BFloat16) && acc->scalar == Scalar::Float32) kmin = 16;
  if (in == Scalar::TFloat32 && acc->scalar == Scalar::Float32) kmin = 8;
  if (!kmin || target_sm < 80 || dot.operands[1]->type->scalar != in) return nullptr;
  int64_t m = acc->shape[0], n = acc->shape[1], k = x->shape[1];
  if (k < kmin) return nullptr;
  const TileLayout* l = nullptr;
  if (target_sm >= 90 && num_warps % 4 == 0 && m >= 64) {
    // wgmma: warpgroups along M first (each then reads all of B's columns
    // with one m64n256 instruction, the shape that reaches the tensor cores'
    // peak from shared memory), the rest along N, mma_n columns each.
    int groups = num_warps / 4, gm = 1;
    while (gm * 2 <= groups && m >= int64_t{64} * gm * 2) gm *= 2;
    int wn = groups / gm;
    if (n >= int64_t{8} * wn) l = mmaLayout(3, {4 * gm, wn}, static_cast<int>(std::min<int64_t>(256, n / wn)));
  }
  if (!l && m >= 16) {
    int wm = static_cast<int>(std::min<int64_t>(num_warps, m / 16));
    int wn = num_warps / wm;
    if (n >= int64_t{8} * wn) l = mmaLayout(2, {wm, wn}, static_cast<int>(std::min<int64_t>(256, n / wn)));
  }
  return l && tileLayoutError(acc->shape, l).empty() ? l : nullptr;
}

bool TileAssignLayouts::run(ir::Function& fn) {
  int64_t largest = 0;
  bool any = false;
  std::vector<const ir::Instr*> dots;
  forEachValue(fn, [&](ir::Instr& in) {
    if (in.type->isTile()) {
      any = true;
      largest = std::max(largest, tileElements(in.type));
    }
    if (in.isIntrinsic(ir::Intrinsic::TileDot)) dots.push_back(&in);
  });
  if (!any) return false;
  if (fn.num_warps == 0) {
    // A matmul: 4 warps, 8 from a 128x256 result on (a float32 accumulator of
    // 128 registers a thread, as cuBLAS and Triton keep it), and from 128x128
    // for tf32 on sm_90, whose threads transpose y in shared memory
    // (tile_lower_dot.cpp): 4096^3 on an H100, 191 -> 236 TFLOP/s.
    int64_t largest_dot = 0;
    bool tf32_wgmma = false;
    for (const ir::Instr* dot : dots) {
      largest_dot = std::max(largest_dot, tileElements(dot->type));
      tf32_wgmma = tf32_wgmma || (fn.target_sm >= 90 && dot->operands[0]->type->scalar == Scalar::TFloat32 &&
                                  tileElements(dot->type) >= 128 * 128);
    }
    fn.num_warps = dots.empty() ? defaultNumWarps(largest) : largest_dot >= 128 * 256 || tf32_wgmma ? 8 : 4;
  }
  // Memory-bound kernels (no dot): blocks enough for 2048 threads per SM
  // (registers fitted to 32 a thread) with at most 8 elements a thread, for
  // 1024 (64 registers) with at most 16, for the loads they keep in flight.
  // Layer norm 8192x4096 f32, 8 warps, four blocks, on an H200: 2314 -> 3060
  // GB/s; on an H100, 16 warps and four blocks against 8 and four: softmax
  // 0.0965 -> 0.0930 ms, layer norm 0.1011 -> 0.0981 ms (Triton 0.095, 0.097).
  int threads = fn.num_warps * 32;
  if (fn.occupancy == 0 && !fn.simt_block[0] && dots.empty()) {
    int per_sm = largest <= 8 * threads ? 2048 : largest <= 16 * threads ? 1024 : 0;
    if (per_sm > threads) fn.occupancy = std::min(32, per_sm / threads);
  }
  // One layout per shape: a dot's result shape takes the tensor-core layout,
  // every other shape the default blocked one.
  std::map<std::vector<int64_t>, const TileLayout*> chosen;
  for (const ir::Instr* dot : dots)
    if (!chosen.count(dot->type->shape))
      if (const TileLayout* l = mmaLayoutFor(*dot, fn.num_warps, fn.target_sm)) chosen[dot->type->shape] = l;
  auto withLayout = [&](const Type* t) {
    if (!t->isTile() || t->tile_layout || t->shape.empty()) return t;
    auto it = chosen.find(t->shape);
    return tileTy(t->scalar, t->shape, it != chosen.end() ? it->second : tileLayoutFor(t->shape, fn.num_warps));
  };
  forEachValue(fn, [&](ir::Instr& in) { in.type = withLayout(in.type); });
  if (fn.return_type) fn.return_type = withLayout(fn.return_type);
  return true;
}

namespace tile {

// ---- layouts -----------------------------------------------------------------------

LayoutInfo::LayoutInfo(const Type* t) : shape(t->shape), layout(t->tile_layout), rank(static_cast<int>(t->shape.size())) {
  if (!layout) {
    off.assign(1, std::vector<int64_t>{});
    return;
  }
  TileGeometry g = tileGeometry(layout, shape);
  regs = g.registers;
  dims = g.dims;
  off.assign(regs, std::vector<int64_t>(rank));
  for (int64_t r = 0; r < regs; ++r) {
    int64_t id = r;
    for (int d : g.order) {
      int64_t rd = id % dims[d].registers();
      id /= dims[d].registers();
      for (size_t b = 0; b < dims[d].reg_strides.size(); ++b)
        if (rd >> b & 1) off[r][d] += dims[d].reg_strides[b];
    }
  }
}

int64_t LayoutInfo::base(int d, int warp, int lane) const {
  if (!layout) return 0;
  const TileDimMap& m = dims[d];
  return ((lane >> m.lane_shift) & (m.lanes - 1)) * m.lane_stride + ((warp >> m.warp_shift) & (m.warps - 1)) * m.warp_stride;
}

std::vector<int64_t> cStrides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (int d = static_cast<int>(shape.size()) - 2; d >= 0; --d) s[d] = s[d + 1] * shape[d + 1];
  return s;
}

// ---- emission --------------------------------------------------------------------------

Lowering::Lowering(ir::Function& f, int warps) : fn(f), num_warps(warps) {
  auto sreg = [&](ir::Intrinsic id) {
    auto in = fn.make(ir::Op::Intrinsic, i32Ty(), {}, {});
    in->intrinsic = id;
    return emitTo(prologue, std::move(in));
  };
  // A tile kernel's block is one-dimensional; a SIMT kernel's (simt_block)
  // is numbered x fastest, as its warps are.
  ir::Instr* tid = sreg(ir::Intrinsic::TidX);
  if (fn.simt_block[1] * fn.simt_block[2] > 1) {
    ir::Instr* yz = fn.simt_block[1] > 1 ? sreg(ir::Intrinsic::TidY) : nullptr;
    if (fn.simt_block[2] > 1) {
      ir::Instr* z = entryOp(ir::Op::Mul, sreg(ir::Intrinsic::TidZ), entryConst(fn.simt_block[1]));
      yz = yz ? entryOp(ir::Op::Add, yz, z) : z;
    }
    tid = entryOp(ir::Op::Add, tid, entryOp(ir::Op::Mul, yz, entryConst(fn.simt_block[0])));
  }
  lane_ = entryOp(ir::Op::BitAnd, tid, entryConst(31));
  warp_ = entryOp(ir::Op::RShift, tid, entryConst(5));
}

void Lowering::sealBlock(std::unique_ptr<ir::Instr> term) {
  out_->push_back(std::move(term));
  for (auto& in : *out_) in->parent = cur_;
  cur_->instrs = std::move(*out_);
  out_->clear();
}

void Lowering::branchTo(ir::Instr* cond, ir::Block* if_true, ir::Block* if_false) {
  auto branch = fn.make(ir::Op::CondBr, voidTy(), {cond}, loc_);
  branch->addSucc(if_true);
  branch->addSucc(if_false);
  sealBlock(std::move(branch));
}

void Lowering::jumpTo(ir::Block* target, std::vector<ir::Instr*> args) {
  auto jump = fn.make(ir::Op::Br, voidTy(), {}, loc_);
  jump->addSucc(target, std::move(args));
  sealBlock(std::move(jump));
}

void Lowering::emitIf(ir::Instr* cond, const std::function<void()>& body) {
  ir::Block* then_block = fn.addBlock();
  ir::Block* cont = fn.addBlock();
  branchTo(cond, then_block, cont);
  cur_ = then_block;
  body();
  jumpTo(cont, {});
  cur_ = cont;
}

std::vector<ir::Instr*> Lowering::emitIfElse(ir::Instr* cond, const std::vector<const Type*>& types,
                                             const std::function<std::vector<ir::Instr*>()>& then_body,
                                             const std::function<std::vector<ir::Instr*>()>& else_body) {
  ir::Block* then_block = fn.addBlock();
  ir::Block* else_block = fn.addBlock();
  ir::Block* join = fn.addBlock();
  branchTo(cond, then_block, else_block);
  for (auto [block, body] : {std::pair{then_block, &then_body}, std::pair{else_block, &else_body}}) {
    cur_ = block;
    jumpTo(join, (*body)());
  }
  std::vector<ir::Instr*> joined;
  for (const Type* t : types) joined.push_back(join->addParam(t));
  cur_ = join;
  return joined;
}

ir::Instr* Lowering::entryConst(int64_t v) {
  auto in = fn.make(ir::Op::Const, i32Ty(), {}, {});
  in->cval = ir::Const::integer(v);
  return emitTo(prologue, std::move(in));
}

ir::Instr* Lowering::entryOp(ir::Op op, ir::Instr* a, ir::Instr* b) {
  return emitTo(prologue, fn.make(op, i32Ty(), {a, b}, {}));
}

ir::Instr* Lowering::emitTo(std::vector<std::unique_ptr<ir::Instr>>& out, std::unique_ptr<ir::Instr> in) {
  ir::Instr* raw = in.get();
  out.push_back(std::move(in));
  return raw;
}

ir::Instr* Lowering::emit(ir::Op op, const Type* type, std::vector<ir::Instr*> operands) {
  return emitTo(*out_, fn.make(op, type, std::move(operands), loc_));
}

ir::Instr* Lowering::intrinsic(ir::Intrinsic id, const Type* type, std::vector<ir::Instr*> operands,
                               std::vector<int64_t> ints) {
  auto in = fn.make(ir::Op::Intrinsic, type, std::move(operands), loc_);
  in->intrinsic = id;
  in->ints = std::move(ints);
  return emitTo(*out_, std::move(in));
}

ir::Instr* Lowering::constant(ir::Const c, const Type* type) {
  auto in = fn.make(ir::Op::Const, type, {}, loc_);
  in->cval = std::move(c);
  return emitTo(*out_, std::move(in));
}

ir::Instr* Lowering::sharedArray(Scalar dtype, int64_t n) {
  int64_t bytes = n * scalarByteSize(dtype);
  shared_bytes += bytes;
  if (bytes > largest_shared) {
    largest_shared = bytes;
    largest_shared_at = current_;
  }
  auto in = fn.make(ir::Op::Intrinsic, arrayTy(dtype, 1, Layout::C, MemSpace::Shared), {}, loc_);
  in->intrinsic = ir::Intrinsic::SharedArray;
  in->ints = {n};
  return emitTo(prologue, std::move(in));
}

ir::Instr* Lowering::scratchArray(Scalar dtype, int64_t n, int slot) {
  auto key = std::make_tuple(slot, dtype, n);
  if (auto it = scratch_.find(key); it != scratch_.end()) return it->second;
  return scratch_[key] = sharedArray(dtype, n);
}

ir::Instr* Lowering::loadShared(ir::Instr* arr, ir::Instr* index) {
  ir::Instr* v = emit(ir::Op::ArrayLoad, scalarTy(arr->type->scalar), {arr, toI64(index)});
  v->facts |= ir::indexNonNegFact(0);
  return v;
}

std::vector<ir::Instr*> Lowering::f32Fields(ir::Instr* tuple, int count) {
  std::vector<ir::Instr*> out;
  for (int k = 0; k < count; ++k) {
    ir::Instr* e = emit(ir::Op::TupleGet, f32Ty(), {tuple});
    e->index = k;
    out.push_back(e);
  }
  return out;
}

void Lowering::storeShared(ir::Instr* arr, ir::Instr* index, ir::Instr* value) {
  ir::Instr* s = emit(ir::Op::ArrayStore, voidTy(), {arr, toI64(index), value});
  s->facts |= ir::indexNonNegFact(0);
}

const LayoutInfo& Lowering::info(const Type* tile) {
  auto& slot = infos_[tile];
  if (!slot) slot = std::make_unique<LayoutInfo>(tile);
  return *slot;
}

ir::Instr* Lowering::position(const LayoutInfo& l, int64_t r, int d) {
  if (!l.layout || l.shape[d] == 1) return i32(0);
  ir::Instr*& base = baseSlot(l.dims[d]);
  if (!base) {
    // base_d = warp_d * warp_stride + lane_d * lane_stride, at the entry.
    auto c = [&](int64_t v) { return entryConst(v); };
    auto op = [&](ir::Op o, ir::Instr* a, ir::Instr* b) { return entryOp(o, a, b); };
    const TileDimMap& m = l.dims[d];
    ir::Instr* lane_d = op(ir::Op::BitAnd, op(ir::Op::RShift, lane_, c(m.lane_shift)), c(m.lanes - 1));
    ir::Instr* warp_d = op(ir::Op::BitAnd, op(ir::Op::RShift, warp_, c(m.warp_shift)), c(m.warps - 1));
    base = op(ir::Op::Add, op(ir::Op::Mul, warp_d, c(m.warp_stride)), op(ir::Op::Mul, lane_d, c(m.lane_stride)));
  }
  ir::Instr* x = l.off[r][d] ? add(base, i32(l.off[r][d])) : base;
  return emit(ir::Op::BitAnd, i32Ty(), {x, i32(l.shape[d] - 1)});
}

namespace {
// The largest unwrapped coordinate a thread's register reaches along d.
int64_t reach(const TileDimMap& m) {
  int64_t x = (m.lanes - 1) * m.lane_stride + (m.warps - 1) * m.warp_stride;
  for (int64_t s : m.reg_strides) x += s;
  return x;
}
}  // namespace

bool Lowering::replicated(const LayoutInfo& l) {
  if (!l.layout) return true;   // a 0-d tile: every thread holds it
  for (int d = 0; d < l.rank; ++d)
    if (reach(l.dims[d]) >= l.shape[d]) return true;
  return false;
}

ir::Instr* Lowering::firstCopy(const LayoutInfo& l, int64_t r) {
  if (!l.layout) return isThreadZero();   // a 0-d tile: thread 0
  ir::Instr* first = nullptr;
  for (int d = 0; d < l.rank; ++d) {
    if (reach(l.dims[d]) < l.shape[d]) continue;   // never wraps along d
    position(l, r, d);                  // makes the base
    ir::Instr* x = add(baseSlot(l.dims[d]), i32(l.off[r][d]));
    ir::Instr* ok = emit(ir::Op::Lt, boolTy(), {x, i32(l.shape[d])});
    first = first ? andBool(first, ok) : ok;
  }
  return first ? first : boolean(true);
}

ir::Instr* Lowering::linear(const LayoutInfo& l, int64_t r, const std::vector<int64_t>& coef) {
  ir::Instr* sum = nullptr;
  for (int d = 0; d < l.rank; ++d) {
    if (coef[d] == 0 || l.shape[d] == 1) continue;
    ir::Instr* p = position(l, r, d);
    ir::Instr* term = coef[d] == 1 ? p : mul(p, i32(coef[d]));
    sum = sum ? add(sum, term) : term;
  }
  return sum ? sum : i32(0);
}

std::vector<ir::Instr*> Lowering::redistribute(const Held& src, Scalar dtype, int64_t space, const LayoutInfo& dst,
                                               const std::vector<int64_t>& dst_coef, int64_t dst_offset) {
  auto srcLin = [&](int w, int l, size_t k) {
    int64_t s = 0;
    for (int d = 0; d < src.layout->rank; ++d) s += src.layout->pos(d, w, l, src.regs[k]) * src.coef[d];
    return s;
  };
  auto dstLin = [&](int w, int l, int64_t r) {
    int64_t s = dst_offset;
    for (int d = 0; d < dst.rank; ++d) s += dst.pos(d, w, l, r) * dst_coef[d];
    return s;
  };
  // In registers: one source slot per destination register, for every thread.
  std::vector<size_t> pick(dst.regs);
  bool in_registers = true;
  for (int64_t r = 0; r < dst.regs && in_registers; ++r) {
    bool found = false;
    for (size_t k = 0; k < src.regs.size() && !found; ++k) {
      bool all = true;
      for (int t = 0; t < threads() && all; ++t) all = srcLin(t / 32, t % 32, k) == dstLin(t / 32, t % 32, r);
      if (all) {
        pick[r] = k;
        found = true;
      }
    }
    in_registers = found;
  }
  std::vector<ir::Instr*> out(dst.regs);
  if (in_registers) {
    for (int64_t r = 0; r < dst.regs; ++r) out[r] = src.values[pick[r]];
    return out;
  }
  // Through shared memory: every thread writes what it holds (copies of one
  // element write the same value), then reads what it needs.
  ir::Instr* buf = scratchArray(dtype, space, 2);
  for (size_t k = 0; k < src.regs.size(); ++k)
    storeShared(buf, linear(*src.layout, src.regs[k], src.coef), src.values[k]);
  barrier();
  for (int64_t r = 0; r < dst.regs; ++r) {
    ir::Instr* at = linear(dst, r, dst_coef);
    out[r] = loadShared(buf, dst_offset ? add(at, i32(dst_offset)) : at);
  }
  barrier();   // the buffer may be written again (a loop) before every thread has read it
  return out;
}

}  // namespace tile

// ---- the pass ------------------------------------------------------------------------------

namespace {

using tile::LayoutInfo;
using tile::Lowering;

std::vector<int64_t> allRegs(const LayoutInfo& l) {
  std::vector<int64_t> r(l.regs);
  for (int64_t i = 0; i < l.regs; ++i) r[i] = i;
  return r;
}

// A tile moved into the layout and shape of `to`: element e of the result is
// the source element of linear index Σ e_d * coef_d.
std::vector<ir::Instr*> moveTile(Lowering& lw, const ir::Instr* from, const Type* to, const std::vector<int64_t>& coef,
                                 int64_t offset = 0) {
  const LayoutInfo& src = lw.info(from->type);
  const LayoutInfo& dst = lw.info(to);
  Lowering::Held held{&src, allRegs(src), lw.frag(from), tile::cStrides(src.shape)};
  return lw.redistribute(held, to->scalar, std::max<int64_t>(1, tileElements(from->type)), dst, coef, offset);
}

std::vector<int64_t> broadcastCoef(const Type* from, const Type* to) {
  std::vector<int64_t> strides = tile::cStrides(from->shape);
  std::vector<int64_t> coef(to->shape.size());
  for (size_t d = 0; d < coef.size(); ++d) coef[d] = from->shape[d] == 1 ? 0 : strides[d];
  return coef;
}

std::vector<int64_t> permuteCoef(const Type* from, const std::vector<int64_t>& perm) {
  std::vector<int64_t> strides = tile::cStrides(from->shape);
  std::vector<int64_t> coef(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) coef[i] = strides[perm[i]];
  return coef;
}

// Elementwise: the scalar op once per register.
void lowerElementwise(Lowering& lw, ir::Instr* in) {
  const LayoutInfo& l = lw.info(in->type);
  std::vector<ir::Instr*> out(l.regs);
  const Type* elem = scalarTy(in->type->scalar);
  for (int64_t r = 0; r < l.regs; ++r) {
    std::vector<ir::Instr*> ops;
    for (ir::Instr* o : in->operands) ops.push_back(lw.frag(o)[r]);
    ir::Instr* v = in->op == ir::Op::Intrinsic ? lw.intrinsic(in->intrinsic, elem, ops, in->ints) : lw.emit(in->op, elem, ops);
    v->facts = in->facts;
    out[r] = v;
  }
  lw.frags[in] = std::move(out);
}

void lowerTileIntrinsic(Lowering& lw, ir::Instr* in) {
  using I = ir::Intrinsic;
  switch (in->intrinsic) {
    case I::TileLoad: return tile::lowerTileLoad(lw, in);
    case I::TileStore: return tile::lowerTileStore(lw, in);
    case I::TileGather: return tile::lowerTileGather(lw, in);
    case I::TileScatter: return tile::lowerTileScatter(lw, in);
    case I::TileAtomic: return tile::lowerTileAtomic(lw, in);
    case I::TileReduce: case I::TileArgReduce: return tile::lowerTileReduce(lw, in);
    case I::TileDot: return tile::lowerTileDot(lw, in);
    case I::TileScan: return tile::lowerTileScan(lw, in);
    case I::TilePrint: return tile::lowerTilePrint(lw, in);
    case I::TileAssert: return tile::lowerTileAssert(lw, in);
    case I::TileFull:
      lw.frags[in] = std::vector<ir::Instr*>(lw.info(in->type).regs, in->operands[0]);
      return;
    case I::TileArange: {
      const LayoutInfo& l = lw.info(in->type);
      std::vector<ir::Instr*> out(l.regs);
      for (int64_t r = 0; r < l.regs; ++r) {
        ir::Instr* p = lw.position(l, r, 0);
        out[r] = in->type->scalar == Scalar::Int32 ? p : lw.emit(ir::Op::Cast, scalarTy(in->type->scalar), {p});
      }
      lw.frags[in] = std::move(out);
      return;
    }
    case I::TileBroadcast:
      lw.frags[in] = moveTile(lw, in->operands[0], in->type, broadcastCoef(in->operands[0]->type, in->type));
      return;
    case I::TileReshape:
    case I::TileConvertLayout:
      lw.frags[in] = moveTile(lw, in->operands[0], in->type, tile::cStrides(in->type->shape));
      return;
    case I::TilePermute:
      lw.frags[in] = moveTile(lw, in->operands[0], in->type, permuteCoef(in->operands[0]->type, in->ints));
      return;
    case I::TileExtract: {   // element e of the result is the operand's element at e + origin
      std::vector<int64_t> strides = tile::cStrides(in->operands[0]->type->shape);
      int64_t offset = 0;
      for (size_t d = 0; d < strides.size(); ++d) offset += in->ints[d] * strides[d];
      lw.frags[in] = moveTile(lw, in->operands[0], in->type, strides, offset);
      return;
    }
    case I::TileItem:
      ir::replaceAllUses(in, lw.frag(in->operands[0])[0]);
      return;
    default:
      failAt(lw.fn, in, in->intrinsicName(), "internal error: no tile lowering for " + in->intrinsicName());
  }
}

// Lowers the tiles of `fn` with async dots at most `max_stages` deep within
// `stage_budget` bytes. With `fits`, a kernel past the shared-memory limit
// sets it false instead of failing.
bool lowerTiles(ir::Function& fn, int max_stages, int64_t stage_budget, bool* fits);

}  // namespace

bool TileLower::run(ir::Function& fn) {
  bool any = false;
  // A tile kernel's prints are the pass's too (once a block).
  forEachValue(fn, [&](ir::Instr& in) {
    any = any || in.type->isTile() || in.isIntrinsic(ir::Intrinsic::TilePrint) ||
          (in.isIntrinsic(ir::Intrinsic::Print) && !fn.simt_block[0]);
  });
  if (!any) return false;
  // A function that takes or returns tiles has no lowering of its own: such
  // device functions are to be inlined into their callers (docs/tiles.md);
  // the call site reports the error meanwhile.
  for (auto& p : fn.entry()->params)
    if (p->type->isTile()) return false;
  if (fn.return_type && fn.return_type->isTile()) return false;
  // Run alone (tools, tests), it assigns the layouts first.
  if (fn.num_warps == 0) TileAssignLayouts().run(fn);
  // Deeper pipelines where they may pay (tile_lower_async.cpp): four
  // stages, or three of larger tiles, in up to 216 of sm_90's 227 KB, if the
  // kernel's other buffers leave room for them: tried on a copy first.
  constexpr int64_t kDeepStageBudget = 216 * 1024;
  int max_stages = 3;
  int64_t stage_budget = 160 * 1024;
  bool dots = false;
  forEachValue(fn, [&](ir::Instr& in) { dots = dots || in.isIntrinsic(ir::Intrinsic::TileDot); });
  if (dots && fn.target_sm >= 90 && fn.num_warps >= 8) {
    bool fits = true;
    try {
      std::unique_ptr<ir::Function> trial = ir::cloneFunction(fn, fn.name);
      lowerTiles(*trial, 4, kDeepStageBudget, &fits);
    } catch (const std::exception&) {
      fits = false;   // the real lowering reports it
    }
    if (fits) {
      max_stages = 4;
      stage_budget = kDeepStageBudget;
    }
  }
  return lowerTiles(fn, max_stages, stage_budget, nullptr);
}

namespace {

bool lowerTiles(ir::Function& fn, int max_stages, int64_t stage_budget, bool* fits) {
  Lowering lw(fn, fn.num_warps);
  lw.max_stages = max_stages;
  lw.stage_budget = stage_budget;
  std::vector<std::unique_ptr<ir::Instr>> graveyard;

  // Tile block parameters become one parameter per register.
  for (auto& b : fn.blocks) {
    std::vector<std::unique_ptr<ir::Instr>> params;
    for (auto& p : b->params) {
      if (!p->type->isTile()) {
        params.push_back(std::move(p));
        continue;
      }
      std::vector<ir::Instr*> regs;
      for (int64_t r = 0; r < lw.info(p->type).regs; ++r) {
        auto np = fn.make(ir::Op::Param, scalarTy(p->type->scalar), {}, p->loc);
        np->parent = b.get();
        np->var = p->var;
        regs.push_back(np.get());
        params.push_back(std::move(np));
      }
      lw.frags[p.get()] = regs;
      graveyard.push_back(std::move(p));
    }
    b->params = std::move(params);
    for (size_t k = 0; k < b->params.size(); ++k) b->params[k]->index = static_cast<int64_t>(k);
  }

  std::vector<std::unique_ptr<tile::AsyncDot>> async_dots = tile::planAsyncDots(lw);

  for (ir::Block* b : ir::reversePostOrder(fn)) {
    std::vector<std::unique_ptr<ir::Instr>> out;
    std::vector<std::unique_ptr<ir::Instr>> source = std::move(b->instrs);
    lw.beginBlock(b);
    for (auto& in : source) {
      lw.setOutput(&out, in->loc);
      if (ir::isTerminator(in->op)) {
        if (std::any_of(in->operands.begin(), in->operands.end(), [](const ir::Instr* o) { return o->type->isTile(); }))
          failAt(fn, in.get(), "tile", "a tile cannot be returned or branched on");
        for (size_t s = 0; s < in->succs.size(); ++s) {
          std::vector<ir::Instr*> args;
          bool tiles = false;
          for (ir::Instr* a : in->succs[s].args) {
            if (!a->type->isTile()) {
              args.push_back(a);
              continue;
            }
            tiles = true;
            for (ir::Instr* r : lw.frag(a)) args.push_back(r);
          }
          if (tiles) in->setEdgeArgs(s, args);
        }
        out.push_back(std::move(in));
        continue;
      }
      if (in->isIntrinsic(ir::Intrinsic::Print) && !fn.simt_block[0]) {
        // A tile kernel's scalar code runs in every thread; cuTile prints once a block.
        lw.setCurrent(in.get());
        lw.emitIf(lw.isThreadZero(), [&] { lw.intrinsic(ir::Intrinsic::Print, voidTy(), in->operands, in->ints); });
        graveyard.push_back(std::move(in));
        continue;
      }
      if (!isTileOp(*in) && !in->isIntrinsic(ir::Intrinsic::TilePrint)) {
        out.push_back(std::move(in));
        continue;
      }
      lw.setCurrent(in.get());
      if (lw.async_loads.count(in.get())) {   // its dot copies it (tile_lower_async.cpp)
        graveyard.push_back(std::move(in));
        continue;
      }
      if (in->op == ir::Op::CallFunc)
        failAt(fn, in.get(), "tile", "tiles cannot be passed to or returned from device functions yet");
      if (in->type->is(TypeKind::Tuple) || std::any_of(in->operands.begin(), in->operands.end(), [](const ir::Instr* o) {
            return o->type->is(TypeKind::Tuple);
          }))
        failAt(fn, in.get(), "tile", "a tuple of tiles is not supported here (unpack it where it is made: a, b = f(...))");
      if (in->op == ir::Op::Intrinsic && ir::intrinsicFamily(in->intrinsic) == ir::IntrinsicFamily::Tile)
        lowerTileIntrinsic(lw, in.get());
      else
        lowerElementwise(lw, in.get());
      graveyard.push_back(std::move(in));
    }
    ir::Block* tail = lw.currentBlock();   // b, or the last block emitIf split it into
    for (auto& in : out)
      if (in) in->parent = tail;
    tail->instrs = std::move(out);
  }
  tile::finishAsyncDots(lw, async_dots);
  // The prologue (thread ids, layout bases, shared buffers) opens the entry block.
  ir::Block* entry = fn.entry();
  for (auto& in : lw.prologue) in->parent = entry;
  lw.prologue.insert(lw.prologue.end(), std::make_move_iterator(entry->instrs.begin()),
                     std::make_move_iterator(entry->instrs.end()));
  entry->instrs = std::move(lw.prologue);
  // Static shared memory is 48 KB a block; beyond, the buffers become slices
  // of the dynamic shared memory, up to what the GPU generation allows a
  // block (the launch passes the size: CompiledKernel::dynamic_shared_bytes).
  constexpr int64_t kStaticSharedLimit = 48 * 1024;
  // A SIMT kernel's tiles keep to static shared memory: the launch's dynamic
  // shared memory is the kernel's own (cuda.shared.array(0, ...)).
  const int64_t limit = fn.simt_block[0] ? kStaticSharedLimit : dynamicSharedLimit(fn.target_sm);
  if (lw.shared_bytes > kStaticSharedLimit && lw.shared_bytes <= limit) {
    int64_t offset = 0;
    for (auto& in : entry->instrs) {
      if (!in->isIntrinsic(ir::Intrinsic::SharedArray) || in->ints.size() != 1) continue;
      int64_t n = in->ints[0];
      in->intrinsic = ir::Intrinsic::SharedSlice;
      in->ints = {n, offset};
      offset += (n * scalarByteSize(in->type->scalar) + 127) / 128 * 128;
    }
  }
  if (lw.shared_bytes > limit && fits) {
    *fits = false;
  } else if (lw.shared_bytes > limit) {
    const ir::Instr* at = lw.largest_shared_at;
    std::string what = at ? (at->op == ir::Op::Intrinsic ? at->intrinsicName() : std::string(ir::opName(at->op))) : "tile";
    std::string shapes;
    if (at)
      for (const ir::Instr* o : at->operands)
        if (o->type->isTile()) shapes += (shapes.empty() ? "" : ", ") + typeToNumbaString(o->type);
    failAt(fn, at, what,
           "the tiles of this kernel need " + std::to_string(lw.shared_bytes / 1024) +
               " KB of shared memory (" + what + (shapes.empty() ? "" : " of " + shapes) + " takes " +
               std::to_string(lw.largest_shared / 1024) + " KB); " +
               (fn.simt_block[0] ? std::string("a SIMT kernel's tiles have static shared memory only:")
                : fn.target_sm ? "a block of sm_" + std::to_string(fn.target_sm) + " has"
                               : std::string("a tile kernel has")) + " " +
               std::to_string(limit / 1024) + " KB: use smaller tiles");
  }
  for (auto& g : graveyard) g->dropAllReferences();
  graveyard.clear();
  fn.computePreds();
  return true;
}

}  // namespace

}  // namespace cj::passes
