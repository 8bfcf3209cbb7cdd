// The asynchronous operand pipeline of tile.dot (tile_lowering.h, "asynchronous
// operand copies"). A K loop
//
//   for k in range(n):
//       a = ct.load(A, (i, k), ...); b = ct.load(B, (k, j), ...)
//       acc = ct.mma(a, b, acc)
//
// becomes, with S shared-memory stages per operand (3 where they fit, else 2;
// 4 for 8-warp kernels on sm_90 with room for them):
//
//   preheader:  for j < S-1: request tiles (i, start + j step), (start + j step, j) -> stage j; commit
//   header:     stage (a new i32 parameter: 0 from the preheader, stage + 1 mod S from the latch)
//   at the dot: request tiles of k + (S-1) step -> stage + S-1 mod S; commit
//               wait until S-1 groups are pending (this stage has landed); fence; barrier
//               tensor cores on `stage`; barrier
//   exit:       wait for every group (the requests past the last iteration)
//
// With TMA (AsyncDot::tma) a request is one thread's cp.async.bulk.tensor
// per 64-column box, the wait an mbarrier's phase, and the exit waits for the
// stages still in flight.
//
// Tile coordinates ahead are the load's index values recomputed with
// k + j step (the loop's range step) in place of k; a request past the end
// of the array reads nothing and zero-fills. Loads with another use, padding
// other than zero, or indices that are not pure arithmetic of the induction
// variable and loop invariants keep the register path.
#include <algorithm>
#include <map>

#include "ir/cfg.h"
#include "passes/tile_lowering.h"

namespace cj::passes::tile {
namespace {

bool inLoop(const AsyncDot& p, const ir::Instr* v) { return v->parent && p.blocks.count(v->parent); }

// Values the request may recompute at another point: pure scalar arithmetic,
// constants, special registers and array shapes.
bool recomputable(const ir::Instr* v) {
  switch (v->op) {
    case ir::Op::Const: case ir::Op::Cast: case ir::Op::Add: case ir::Op::Sub: case ir::Op::Mul:
    case ir::Op::BitAnd: case ir::Op::BitOr: case ir::Op::BitXor: case ir::Op::LShift: case ir::Op::RShift:
    case ir::Op::ArrayDim: case ir::Op::ArrayStride:
      return v->type->isScalar() || v->op == ir::Op::ArrayDim || v->op == ir::Op::ArrayStride;
    case ir::Op::Intrinsic:
      return ir::intrinsicFamily(v->intrinsic) == ir::IntrinsicFamily::Sreg;
    default:
      return false;
  }
}

bool indexRecomputable(const AsyncDot& p, const ir::Instr* v) {
  if (!inLoop(p, v) || v == p.induction) return true;
  if (!recomputable(v)) return false;
  for (const ir::Instr* o : v->operands)
    if (!indexRecomputable(p, o)) return false;
  return true;
}

// Where a request's tile coordinates are taken: `ahead` iterations after the
// loop's first (at_entry) or after the current one.
struct Point {
  bool at_entry;
  int64_t ahead;
};

// `v` at `at`, emitted at the lowering's output.
ir::Instr* valueAt(Lowering& lw, const AsyncDot& p, ir::Instr* v, Point at, std::map<ir::Instr*, ir::Instr*>& memo) {
  if (!inLoop(p, v)) return v;
  if (v == p.induction) {
    ir::Instr* from = at.at_entry ? p.start : v;
    if (at.ahead == 0) return from;
    return lw.add(from, lw.mul(p.step, lw.constant(ir::Const::integer(at.ahead), p.step->type)));
  }
  if (auto it = memo.find(v); it != memo.end()) return it->second;
  std::vector<ir::Instr*> ops;
  for (ir::Instr* o : v->operands) ops.push_back(valueAt(lw, p, o, at, memo));
  ir::Instr* out;
  if (v->op == ir::Op::Const) {
    out = lw.constant(v->cval, v->type);
  } else if (v->op == ir::Op::Intrinsic) {
    out = lw.intrinsic(v->intrinsic, v->type, ops, v->ints);
  } else {
    out = lw.emit(v->op, v->type, ops);
    out->index = v->index;
  }
  memo[v] = out;
  return out;
}

// Operand `which` (0: x, 1: y) of the dot, if it can be copied asynchronously.
bool planOperand(Lowering& lw, AsyncDot& p, int which) {
  ir::Instr* load = p.dot->operands[which];
  ir::Instr* convert = nullptr;
  // A float32 load converted to tfloat32 for the dot alone: copied as
  // float32 and rounded to tfloat32 in shared memory (tile_lower_dot.cpp).
  if (load->op == ir::Op::Cast && load->type->isTile() && load->type->scalar == Scalar::TFloat32 &&
      load->uses().size() == 1 && load->operands[0]->type->scalar == Scalar::Float32) {
    convert = load;
    load = load->operands[0];
  }
  if (!load->isIntrinsic(ir::Intrinsic::TileLoad) || load->uses().size() != 1 || !inLoop(p, load)) return false;
  if (convert && !inLoop(p, convert)) return false;
  auto padding = static_cast<ir::TilePadding>(load->ints.empty() ? 0 : load->ints[0]);
  if (padding != ir::TilePadding::Zero && padding != ir::TilePadding::Undetermined) return false;
  Scalar dtype = load->type->scalar;
  if ((scalarBits(dtype) != 16 && !convert) || load->operands[0]->type->ndim != 2) return false;
  int eb = scalarByteSize(dtype);
  for (size_t d = 1; d < load->operands.size(); ++d)
    if (!indexRecomputable(p, load->operands[d])) return false;
  const std::vector<int64_t>& shape = load->type->shape;
  if (shape[1] % 8 || (convert && shape[0] % 8)) return false;
  AsyncOperand& op = which == 0 ? p.x : p.y;
  op.load = load;
  op.convert = convert;
  op.elem_bytes = eb;
  int64_t line = 128 / eb;   // elements of a 128-byte line
  // tf32 B: transposed in shared memory where its K and N are whole lines
  // (the transposition's 4x4 blocks then cover it, tile_lower_dot.cpp).
  op.transpose_in_shared = convert && which == 1 && shape[0] % line == 0 && shape[1] % line == 0;
  op.transposed_copy = convert && which == 1 && !op.transpose_in_shared;
  op.n_major = which == 1 && !op.transposed_copy;
  op.rows = shape[0];
  op.cols = shape[1];
  op.stage_bytes = shape[0] * shape[1] * eb;
  // The swizzled layout where whole 128-byte lines fit and, for a B the
  // tensor cores read N-major, each warpgroup's columns start a column block.
  int64_t rows = shape[0];
  op.swizzled = !op.transposed_copy && shape[1] % line == 0 && rows % 8 == 0 &&
                (which == 0 || op.transpose_in_shared || p.dot->type->tile_layout->mma_n % line == 0);
  if (op.swizzled) {
    op.offset = [rows, eb](Lowering& l, ir::Instr* row, ir::Instr* col) { return swizzled128Offset(l, rows, row, col, eb); };
  } else if (which == 0) {
    int64_t k = shape[1];
    op.offset = [k, eb](Lowering& l, ir::Instr* row, ir::Instr* col) { return l.mul(kMajorCoreIndex(l, k, 16 / eb, row, col), l.i32(eb)); };
  } else if (op.transposed_copy) {   // element (k, n) at row n of the K-major layout
    int64_t k = shape[0];
    op.offset = [k, eb](Lowering& l, ir::Instr* row, ir::Instr* col) { return l.mul(kMajorCoreIndex(l, k, 16 / eb, col, row), l.i32(eb)); };
  } else {
    int64_t k = shape[0];
    op.offset = [k](Lowering& l, ir::Instr* row, ir::Instr* col) { return l.mul(nMajorCoreIndex(l, k, row, col), l.i32(2)); };
  }
  return true;
}

// Requests operand `op` for the iteration `next` says into `stage`.
void request(Lowering& lw, const AsyncDot& p, const AsyncOperand& op, ir::Instr* stage, Point at,
             std::map<ir::Instr*, ir::Instr*>& memo) {
  std::vector<ir::Instr*> index;
  for (size_t d = 1; d < op.load->operands.size(); ++d) index.push_back(valueAt(lw, p, op.load->operands[d], at, memo));
  ir::Instr* base = stageAddress(lw, op, stage);
  auto address = [&](ir::Instr* row, ir::Instr* col) { return lw.add(base, op.offset(lw, row, col)); };
  if (op.transposed_copy) return copyTileElementsToSharedAsync(lw, op.load->operands[0], index, op.load->type->shape, address);
  copyTileToSharedAsync(lw, op.load->operands[0], index, op.load->type->shape, op.swizzled, address);
}

ir::Instr* barrierAddress(Lowering& lw, const AsyncDot& p, ir::Instr* stage) {
  ir::Instr* base = lw.intrinsic(ir::Intrinsic::SharedAddress, i32Ty(), {p.barriers});
  return lw.add(base, lw.mul(stage, lw.i32(8)));
}

void requestCpAsync(Lowering& lw, const AsyncDot& p, ir::Instr* stage, Point at) {
  std::map<ir::Instr*, ir::Instr*> memo;
  for (const AsyncOperand* op : {&p.x, &p.y})
    if (op->load) request(lw, p, *op, stage, at, memo);
  lw.intrinsic(ir::Intrinsic::CpAsyncCommit, voidTy(), {});
}

void requestTma(Lowering& lw, const AsyncDot& p, ir::Instr* stage, Point at) {
  lw.emitIf(lw.isThreadZero(), [&] {
    std::map<ir::Instr*, ir::Instr*> memo;
    ir::Instr* bar = barrierAddress(lw, p, stage);
    lw.intrinsic(ir::Intrinsic::MbarrierExpectTx, voidTy(), {bar, lw.i32(p.x.stage_bytes + p.y.stage_bytes)});
    for (const AsyncOperand* op : {&p.x, &p.y}) {
      if (!op->load) continue;
      ir::Instr* map = lw.intrinsic(ir::Intrinsic::TensorMapAddress, i64Ty(), {}, {op->map});
      auto origin = [&](int d, int64_t extent) {
        ir::Instr* t = valueAt(lw, p, op->load->operands[1 + d], at, memo);
        return lw.emit(ir::Op::Cast, i32Ty(), {lw.mul(lw.toI64(t), lw.i64(extent))});
      };
      ir::Instr* row0 = origin(0, op->rows);
      ir::Instr* col0 = origin(1, op->cols);
      ir::Instr* base = stageAddress(lw, *op, stage);
      int64_t line = 128 / op->elem_bytes;   // a box is one 128-byte line wide
      for (int64_t j = 0; j < op->cols / line; ++j)
        lw.intrinsic(ir::Intrinsic::TmaLoad, voidTy(),
                     {lw.add(base, lw.i32(j * op->rows * 128)), map, lw.add(col0, lw.i32(line * j)), row0, bar});
    }
  });
}

void requestBoth(Lowering& lw, const AsyncDot& p, ir::Instr* stage, Point at) {
  if (!p.tma) return requestCpAsync(lw, p, stage, at);
  ir::Instr* ok = lw.intrinsic(ir::Intrinsic::TensorMapsValid, boolTy(), {});
  lw.emitIf(ok, [&] { requestTma(lw, p, stage, at); });
  lw.emitIf(lw.emit(ir::Op::Not, boolTy(), {ok}), [&] { requestCpAsync(lw, p, stage, at); });
}

// The argument index of `arr` if it is one of the kernel's arguments.
int argumentIndex(const ir::Function& fn, const ir::Instr* arr) {
  const auto& params = fn.entry()->params;
  for (size_t i = 0; i < params.size(); ++i)
    if (params[i].get() == arr) return static_cast<int>(i);
  return -1;
}

// Whether the dot's accumulator chains from iteration to iteration: both
// operands copied, the result passed back to the header only, the header's
// accumulator read in the loop by the dot alone.
bool planChained(const AsyncDot& p) {
  if (!p.x.load || !p.y.load) return false;
  ir::Instr* acc = p.dot->operands[2];
  if (acc->op != ir::Op::Param || acc->parent != p.header) return false;
  // The loop's only way out is the header's edge to the exit (which then
  // dominates every use after the loop: they read the accumulator after the
  // exit's wait).
  for (const ir::Block* b : p.blocks) {
    const ir::Instr* t = b->terminator();
    for (size_t s = 0; t && s < t->succs.size(); ++s)
      if (!p.blocks.count(t->succs[s].target) && (b != p.header || t->succs[s].target != p.exit)) return false;
  }
  for (const ir::Use& u : p.dot->uses())
    if (u.succ == ir::Use::kOperandUse || u.user->succs[u.succ].target != p.header) return false;
  for (const ir::Use& u : acc->uses()) {
    if (u.user == p.dot || !inLoop(p, u.user)) continue;
    if (u.succ != ir::Use::kOperandUse && !p.blocks.count(u.user->succs[u.succ].target)) continue;   // an edge out of the loop
    return false;
  }
  return true;
}

// TMA where every copied operand is a kernel argument in the swizzled layout
// and its box fits (at most 256 rows).
bool planTma(Lowering& lw, AsyncDot& p) {
  if (lw.fn.target_sm < 90 || !lw.fn.entry()) return false;
  for (const AsyncOperand* op : {&p.x, &p.y})
    if (op->load && (!op->swizzled || op->rows > 256 || argumentIndex(lw.fn, op->load->operands[0]) < 0)) return false;
  for (AsyncOperand* op : {&p.x, &p.y}) {
    if (!op->load) continue;
    TensorMapSpec spec{argumentIndex(lw.fn, op->load->operands[0]), op->load->type->scalar, op->rows, 128 / op->elem_bytes};
    auto& maps = lw.fn.tensor_maps;
    auto found = std::find(maps.begin(), maps.end(), spec);
    op->map = static_cast<int>(found - maps.begin());
    if (found == maps.end()) maps.push_back(spec);
  }
  return true;
}

}  // namespace

std::vector<std::unique_ptr<AsyncDot>> planAsyncDots(Lowering& lw) {
  std::vector<std::unique_ptr<AsyncDot>> plans;
  ir::Function& fn = lw.fn;
  std::vector<ir::Instr*> dots;
  for (auto& b : fn.blocks)
    for (auto& in : b->instrs) {
      const TileLayout* l = in->type->tile_layout;
      if (in->isIntrinsic(ir::Intrinsic::TileDot) && l && l->kind == TileLayoutKind::Mma && l->mma_version == 3)
        dots.push_back(in.get());
    }
  if (dots.empty()) return plans;
  fn.computePreds();
  ir::DominatorTree dom(fn);
  ir::LoopInfo loops(dom);
  const ir::Cfg& cfg = dom.cfg();
  for (ir::Instr* dot : dots) {
    int node = cfg.node(dot->parent);
    int li = node < 0 ? -1 : loops.forest().loopOf(node);
    if (li < 0) continue;
    const auto& loop = loops.loops()[li];
    if (loop.latches.size() != 1 || cfg.block(loop.latches[0]) != dot->parent) continue;
    auto p = std::make_unique<AsyncDot>();
    p->dot = dot;
    p->header = cfg.block(loop.header);
    p->latch = dot->parent;
    for (int n : loop.blocks) p->blocks.insert(cfg.block(n));
    for (ir::Block* pred : p->header->preds)
      if (!p->blocks.count(pred)) p->preheader = p->preheader ? nullptr : pred;
    ir::Instr* term = p->header->terminator();
    for (size_t s = 0; term && s < term->succs.size(); ++s)
      if (!p->blocks.count(term->succs[s].target)) p->exit = term->succs[s].target;
    if (!p->preheader || !p->exit || p->exit->preds.size() != 1 || p->preheader->terminator()->op != ir::Op::Br ||
        p->latch->terminator()->op != ir::Op::Br)
      continue;
    // The induction variable: the header's iter_next of a range.
    for (auto& in : p->header->instrs)
      if (in->op == ir::Op::IterNext && in->operands[0]->op == ir::Op::GetIter &&
          in->operands[0]->operands[0]->op == ir::Op::RangeMake) {
        ir::Instr* range = in->operands[0]->operands[0];
        if (inLoop(*p, range)) break;
        p->induction = in.get();
        p->start = range->operands[0];
        p->step = range->operands[2];
        break;
      }
    if (!p->induction) continue;
    bool x = planOperand(lw, *p, 0), y = planOperand(lw, *p, 1);
    if (!x && !y) continue;
    // As many stages as the lowering allows within its budget: three in
    // 160 KB beside the rest of a large kernel's buffers; four, or three in
    // more room, where TileLower::run found them to fit (sm_90, 8 warps and
    // more, whose registers leave one block per SM anyway: 128x256x64 fp16
    // +4% on an H200; a 4-warp 128x128x64 lost 3% to its second block per SM).
    int64_t stage_bytes = p->x.stage_bytes + p->y.stage_bytes;
    p->chained = planChained(*p);
    // y transposed in shared memory: a buffer per iteration whose tensor-core
    // work may be in flight, two; three where a tf32 x goes to wgmma from
    // registers in several 64-row groups (tile_lower_dot.cpp: an iteration
    // then writes the buffer that two iterations back read, which every
    // warpgroup has waited for by the previous barrier), if it costs no stage.
    auto stagesWith = [&](int buffers) {
      int64_t transposed_bytes = p->y.transpose_in_shared ? buffers * p->y.stage_bytes + 1024 : 0;
      for (int s = lw.max_stages; s > 2; --s)
        if (s * stage_bytes + transposed_bytes <= lw.stage_budget) return s;
      return 2;
    };
    const TileLayout* layout = dot->type->tile_layout;
    if (p->chained && p->x.convert && p->y.transpose_in_shared && layout->mma_version == 3)
      p->x_groups = dot->type->shape[0] / (16 * layout->warps_per_cta[0]);   // 64-row blocks a warpgroup
    p->y.transposed_buffers = p->x_groups > 1 && stagesWith(3) == stagesWith(2) ? 3 : 2;
    p->stages = stagesWith(p->y.transposed_buffers);
    int64_t transposed_bytes = p->y.transposed_buffers * p->y.stage_bytes + 1024;
    for (AsyncOperand* op : {&p->x, &p->y})
      if (op->load)   // swizzled: 1 KB more, to align the stages
        op->buffer = lw.sharedArray(op->load->type->scalar, (p->stages * op->stage_bytes + (op->swizzled ? 1024 : 0)) / op->elem_bytes);
    if (p->y.transpose_in_shared) p->y.transposed = lw.sharedArray(p->y.load->type->scalar, transposed_bytes / p->y.elem_bytes);
    p->stage = p->header->addParam(i32Ty(), "stage");
    p->tma = planTma(lw, *p);
    if (p->tma) {
      p->barriers = lw.sharedArray(Scalar::Int64, p->stages);
      p->phase = p->header->addParam(i32Ty(), "phase");
    }
    if (p->y.transpose_in_shared) p->half = p->header->addParam(i32Ty(), "half");
    lw.async_dots[dot] = p.get();
    for (const AsyncOperand* op : {&p->x, &p->y}) {
      if (op->load) lw.async_loads.insert(op->load);
      if (op->convert) lw.async_loads.insert(op->convert);
    }
    plans.push_back(std::move(p));
  }
  return plans;
}

ir::Instr* stageAddress(Lowering& lw, const AsyncOperand& op, ir::Instr* stage) {
  ir::Instr* base = lw.intrinsic(ir::Intrinsic::SharedAddress, i32Ty(), {op.buffer});
  if (op.swizzled) base = lw.band(lw.add(base, lw.i32(1023)), ~int64_t{1023});
  return lw.add(base, lw.mul(stage, lw.i32(op.stage_bytes)));
}

// (stage + by) mod stages.
ir::Instr* stagePlus(Lowering& lw, const AsyncDot& plan, int64_t by) {
  ir::Instr* s = lw.add(plan.stage, lw.i32(by));
  ir::Instr* wrap = lw.emit(ir::Op::Ge, boolTy(), {s, lw.i32(plan.stages)});
  return lw.emit(ir::Op::Select, i32Ty(), {wrap, lw.emit(ir::Op::Sub, i32Ty(), {s, lw.i32(plan.stages)}), s});
}

void waitForStage(Lowering& lw, const AsyncDot& plan) {
  // cp.async: this stage's group has landed when at most S-2 newer ones are
  // pending (this iteration's request is not made yet).
  auto cpAsyncWait = [&] {
    lw.intrinsic(ir::Intrinsic::CpAsyncWait, voidTy(), {}, {plan.stages - 2});
    lw.intrinsic(ir::Intrinsic::FenceProxyAsync, voidTy(), {});
    lw.barrier();
  };
  if (!plan.tma) return cpAsyncWait();
  // TMA: each thread sees the stage once its mbarrier's phase completed.
  ir::Instr* ok = lw.intrinsic(ir::Intrinsic::TensorMapsValid, boolTy(), {});
  lw.emitIf(ok, [&] { lw.intrinsic(ir::Intrinsic::MbarrierWait, voidTy(), {barrierAddress(lw, plan, plan.stage), plan.phase}); });
  lw.emitIf(lw.emit(ir::Op::Not, boolTy(), {ok}), cpAsyncWait);
}

void requestNextOperands(Lowering& lw, AsyncDot& plan) {
  plan.next_stage = stagePlus(lw, plan, 1);
  if (plan.tma) {   // the parity flips after the last stage
    ir::Instr* last = lw.emit(ir::Op::Eq, boolTy(), {plan.stage, lw.i32(plan.stages - 1)});
    ir::Instr* flipped = lw.emit(ir::Op::BitXor, i32Ty(), {plan.phase, lw.i32(1)});
    plan.next_phase = lw.emit(ir::Op::Select, i32Ty(), {last, flipped, plan.phase});
  }
  requestBoth(lw, plan, stagePlus(lw, plan, plan.stages - 1), Point{false, plan.stages - 1});
}

void finishAsyncDots(Lowering& lw, std::vector<std::unique_ptr<AsyncDot>>& plans) {
  for (auto& p : plans) {
    // The latch passes the next stage (its branch back may now end a block
    // that emitIf split off the latch).
    for (auto& b : lw.fn.blocks) {
      ir::Instr* t = b->terminator();
      if (b.get() == p->preheader || !t) continue;
      for (size_t s = 0; s < t->succs.size(); ++s)
        if (t->succs[s].target == p->header) {
          t->addEdgeArg(s, p->next_stage);
          if (p->tma) t->addEdgeArg(s, p->next_phase);
          if (p->half) t->addEdgeArg(s, p->next_half);
        }
    }
    // The first request, at the end of the preheader (which emitIf may split).
    ir::Block* pre = p->preheader;
    std::unique_ptr<ir::Instr> term = std::move(pre->instrs.back());
    pre->instrs.pop_back();
    std::vector<std::unique_ptr<ir::Instr>> code = std::move(pre->instrs);
    lw.beginBlock(pre);
    lw.setOutput(&code, term->loc);
    if (p->tma) {   // one thread sets up the stages' mbarriers before anyone uses them
      lw.emitIf(lw.isThreadZero(), [&] {
        for (int s = 0; s < p->stages; ++s)
          lw.intrinsic(ir::Intrinsic::MbarrierInit, voidTy(), {barrierAddress(lw, *p, lw.i32(s))}, {1});
        lw.intrinsic(ir::Intrinsic::MbarrierInitFence, voidTy(), {});
      });
      lw.barrier();
    }
    for (int j = 0; j < p->stages - 1; ++j) requestBoth(lw, *p, lw.i32(j), Point{true, j});
    term->addEdgeArg(0, lw.i32(0));
    if (p->tma) term->addEdgeArg(0, lw.i32(0));
    if (p->half) term->addEdgeArg(0, lw.i32(0));
    code.push_back(std::move(term));
    ir::Block* tail = lw.currentBlock();
    for (auto& in : code) in->parent = tail;
    tail->instrs = std::move(code);
    // The requests the last iterations made land before the loop's code
    // after it: the S-1 stages from the header's stage on, with TMA.
    std::vector<std::unique_ptr<ir::Instr>> rest = std::move(p->exit->instrs);
    std::vector<std::unique_ptr<ir::Instr>> drain;
    lw.beginBlock(p->exit);
    lw.setOutput(&drain, rest.front()->loc);
    // Chained: the last tensor-core work lands, and its accumulators pass
    // through a register fence so that nothing after the loop reads them
    // before the wait (LLVM would move conversions above it).
    std::vector<std::pair<ir::Instr*, ir::Instr*>> fenced;   // (register, after the wait)
    std::set<const ir::Instr*> fences;
    if (p->chained) {
      lw.intrinsic(ir::Intrinsic::WgmmaWait, voidTy(), {}, {0});
      const std::vector<ir::Instr*>& regs = lw.frag(p->dot->operands[2]);
      for (size_t first = 0; first < regs.size(); first += 32) {
        std::vector<ir::Instr*> chunk(regs.begin() + first, regs.begin() + std::min(regs.size(), first + 32));
        ir::Instr* fence = lw.intrinsic(ir::Intrinsic::RegisterFence, tupleTy(std::vector<const Type*>(chunk.size(), f32Ty())), chunk);
        fences.insert(fence);
        for (size_t k = 0; k < chunk.size(); ++k) {
          ir::Instr* e = lw.emit(ir::Op::TupleGet, f32Ty(), {fence});
          e->index = static_cast<int64_t>(k);
          fenced.push_back({chunk[k], e});
        }
      }
    }
    if (p->tma) {
      ir::Instr* ok = lw.intrinsic(ir::Intrinsic::TensorMapsValid, boolTy(), {});
      lw.emitIf(ok, [&] {
        for (int j = 0; j < p->stages - 1; ++j) {
          ir::Instr* s = lw.add(p->stage, lw.i32(j));
          ir::Instr* wrap = lw.emit(ir::Op::Ge, boolTy(), {s, lw.i32(p->stages)});
          ir::Instr* stage = lw.emit(ir::Op::Select, i32Ty(), {wrap, lw.emit(ir::Op::Sub, i32Ty(), {s, lw.i32(p->stages)}), s});
          ir::Instr* parity = lw.emit(ir::Op::BitXor, i32Ty(), {p->phase, lw.emit(ir::Op::Cast, i32Ty(), {wrap})});
          lw.intrinsic(ir::Intrinsic::MbarrierWait, voidTy(), {barrierAddress(lw, *p, stage), parity});
        }
      });
    }
    lw.intrinsic(ir::Intrinsic::CpAsyncWait, voidTy(), {}, {0});
    // Every thread is past its waits before a next run of the loop re-arms the mbarriers.
    if (p->tma) lw.barrier();
    for (auto& in : rest) drain.push_back(std::move(in));
    ir::Block* exit_tail = lw.currentBlock();
    for (auto& in : drain) in->parent = exit_tail;
    exit_tail->instrs = std::move(drain);
    if (!fenced.empty()) {   // uses the exit dominates read the fenced values
      lw.fn.computePreds();
      ir::DominatorTree dom(lw.fn);
      for (auto& [reg, after] : fenced) {
        std::vector<ir::Use> uses = reg->uses();
        for (const ir::Use& u : uses) {
          if (fences.count(u.user) || !dom.dominates(p->exit, u.user->parent)) continue;
          if (u.succ == ir::Use::kOperandUse) u.user->setOperand(u.index, after);
          else u.user->setEdgeArg(u.succ, u.index, after);
        }
      }
    }
  }
}

}  // namespace cj::passes::tile
