// Internal to the tile passes (tile_lower*.cpp): the state of lowering one
// function's tile IR to SIMT IR, and the compile-time facts of a blocked
// layout (docs/tiles.md, "Layouts").
//
// A tile value with layout L becomes, in each thread, registers(L) scalar
// values (its fragment). Register r of thread (warp, lane) holds the element
// whose coordinate along dimension d is (base_d(warp, lane) + off_d(r)) mod
// extent_d: the base is computed once per layout at the kernel's entry, the
// offsets are constants, so every address and index the lowering emits is a
// base plus a constant. Blocked and mma layouts alike (TileGeometry).
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "ir/ir.h"
#include "types/tile_layout.h"

namespace cj::passes::tile {

struct LayoutInfo {
  std::vector<int64_t> shape;
  const TileLayout* layout = nullptr;   // null for a 0-d tile: one register, in every thread
  int rank = 0;
  int64_t regs = 1;
  std::vector<std::vector<int64_t>> off;   // [register][dimension]
  std::vector<TileDimMap> dims;            // lanes and warps along each dimension

  explicit LayoutInfo(const Type* tile);
  int64_t base(int d, int warp, int lane) const;
  int64_t pos(int d, int warp, int lane, int64_t r) const { return (base(d, warp, lane) + off[r][d]) & (shape[d] - 1); }
};

// C-order strides of a shape, in elements.
std::vector<int64_t> cStrides(const std::vector<int64_t>& shape);

// log2 of a power of two (the smallest n with 2^n >= v).
inline int log2Ceil(int64_t v) {
  int n = 0;
  while ((int64_t{1} << n) < v) ++n;
  return n;
}

struct AsyncDot;

class Lowering {
 public:
  Lowering(ir::Function& fn, int num_warps);
  ir::Function& fn;
  const int num_warps;
  // An async dot's pipeline: at most max_stages deep, its stage buffers
  // within stage_budget bytes (TileLower::run).
  int max_stages = 3;
  int64_t stage_budget = 160 * 1024;

  // ---- emission into the block being rewritten ----------------------------------
  void setOutput(std::vector<std::unique_ptr<ir::Instr>>* out, ir::Loc loc) { out_ = out; loc_ = loc; }
  // The block the output belongs to: the one being rewritten, or the last
  // block emitIf split it into (the driver gives that one the rest).
  void beginBlock(ir::Block* b) { cur_ = b; }
  ir::Block* currentBlock() const { return cur_; }
  // Code that runs only where `cond` holds, in a block of its own (a branch
  // around it, where predicating every instruction would cost more); the
  // output continues in a new block after it.
  void emitIf(ir::Instr* cond, const std::function<void()>& body);
  // Values of `types` from one of two branches (each body returns its values),
  // joined as the parameters of the block the output continues in.
  std::vector<ir::Instr*> emitIfElse(ir::Instr* cond, const std::vector<const Type*>& types,
                                     const std::function<std::vector<ir::Instr*>()>& then_body,
                                     const std::function<std::vector<ir::Instr*>()>& else_body);
  ir::Instr* emit(ir::Op op, const Type* type, std::vector<ir::Instr*> operands);
  ir::Instr* intrinsic(ir::Intrinsic id, const Type* type, std::vector<ir::Instr*> operands,
                       std::vector<int64_t> ints = {});
  ir::Instr* constant(ir::Const c, const Type* type);
  ir::Instr* i32(int64_t v) { return constant(ir::Const::integer(v), i32Ty()); }
  ir::Instr* i64(int64_t v) { return constant(ir::Const::integer(v), i64Ty()); }
  ir::Instr* boolean(bool v) { return constant(ir::Const::boolean(v), boolTy()); }
  ir::Instr* add(ir::Instr* a, ir::Instr* b) { return emit(ir::Op::Add, a->type, {a, b}); }
  ir::Instr* mul(ir::Instr* a, ir::Instr* b) { return emit(ir::Op::Mul, a->type, {a, b}); }
  ir::Instr* andBool(ir::Instr* a, ir::Instr* b) { return emit(ir::Op::BitAnd, boolTy(), {a, b}); }
  ir::Instr* shr(ir::Instr* a, int64_t bits) { return emit(ir::Op::RShift, a->type, {a, constant(ir::Const::integer(bits), a->type)}); }
  ir::Instr* band(ir::Instr* a, int64_t mask) { return emit(ir::Op::BitAnd, a->type, {a, constant(ir::Const::integer(mask), a->type)}); }
  ir::Instr* toI64(ir::Instr* v) { return v->type == i64Ty() ? v : emit(ir::Op::Cast, i64Ty(), {v}); }
  // A shared array of n elements, allocated at the entry.
  ir::Instr* sharedArray(Scalar dtype, int64_t n);
  // A shared array for one operation that writes it, reads it and ends with
  // a barrier (a layout conversion, a reduction's partials, a dot's
  // operands): the next such operation reuses it, so these buffers take the
  // largest need, not the sum. `slot` tells apart the buffers one operation
  // uses at once (0, 1, ...).
  ir::Instr* scratchArray(Scalar dtype, int64_t n, int slot);
  void barrier() { intrinsic(ir::Intrinsic::SyncThreads, voidTy(), {}); }
  ir::Instr* loadShared(ir::Instr* arr, ir::Instr* index);
  void storeShared(ir::Instr* arr, ir::Instr* index, ir::Instr* value);
  // The first `count` fields of a tuple of f32 (what the tensor-core and
  // vector shared-memory intrinsics return).
  std::vector<ir::Instr*> f32Fields(ir::Instr* tuple, int count);

  // ---- layouts ------------------------------------------------------------------------
  const LayoutInfo& info(const Type* tile);
  // Coordinate of register r along d, an i32 IR value in [0, extent).
  ir::Instr* position(const LayoutInfo& l, int64_t r, int d);
  // Σ_d position_d * coef_d (i32).
  ir::Instr* linear(const LayoutInfo& l, int64_t r, const std::vector<int64_t>& coef);
  // Whether register r of this thread holds the first copy of its element
  // (b1; true where the layout has no replicas): what stores with effects
  // (scatter, atomics) are guarded by, so that each element acts once.
  ir::Instr* firstCopy(const LayoutInfo& l, int64_t r);
  // Whether some element of the layout is held by more than one register of the block.
  static bool replicated(const LayoutInfo& l);
  ir::Instr* laneId() const { return lane_; }
  ir::Instr* warpId() const { return warp_; }
  int threads() const { return num_warps * 32; }
  // This thread's index in the block (i32), and whether it is 0 (b1).
  ir::Instr* threadIndex() { return add(mul(warp_, i32(32)), lane_); }
  ir::Instr* isThreadZero() { return emit(ir::Op::Eq, boolTy(), {threadIndex(), i32(0)}); }

  // ---- fragments ------------------------------------------------------------------------
  std::unordered_map<const ir::Instr*, std::vector<ir::Instr*>> frags;
  const std::vector<ir::Instr*>& frag(const ir::Instr* tile) const { return frags.at(tile); }

  // Values held as (register i of layout `src`, linear index Σ pos_d * src_coef_d)
  // moved to the registers of `dst`, where register r needs the value of
  // linear index Σ pos_d(r) * dst_coef_d. In registers when every thread holds
  // what it needs at a register independent of the thread; else through shared
  // memory (`space` elements).
  struct Held {
    const LayoutInfo* layout;
    std::vector<int64_t> regs;          // register of `layout` for each value
    std::vector<ir::Instr*> values;
    std::vector<int64_t> coef;          // per dimension of `layout`
  };
  // `dst_offset` is added to every destination's linear index (a sub-tile).
  std::vector<ir::Instr*> redistribute(const Held& src, Scalar dtype, int64_t space, const LayoutInfo& dst,
                                       const std::vector<int64_t>& dst_coef, int64_t dst_offset = 0);

  std::vector<std::unique_ptr<ir::Instr>> prologue;   // inserted at the top of the entry block

  // Static shared memory the lowering allocated, and the operation that took the most.
  int64_t shared_bytes = 0;
  int64_t largest_shared = 0;
  const ir::Instr* largest_shared_at = nullptr;
  void setCurrent(const ir::Instr* in) { current_ = in; }

  // Dots whose operand loads are copied asynchronously (tile_lower_async.cpp).
  std::map<const ir::Instr*, AsyncDot*> async_dots;
  // Such loads, and the tfloat32 conversions between a float32 load and its
  // dot: no registers, no code of their own.
  std::set<const ir::Instr*> async_loads;

 private:
  // Ends the current block with `term` (the output so far becomes its code).
  void sealBlock(std::unique_ptr<ir::Instr> term);
  void branchTo(ir::Instr* cond, ir::Block* if_true, ir::Block* if_false);
  void jumpTo(ir::Block* target, std::vector<ir::Instr*> args);

  std::vector<std::unique_ptr<ir::Instr>>* out_ = nullptr;
  ir::Block* cur_ = nullptr;
  ir::Loc loc_;
  const ir::Instr* current_ = nullptr;
  ir::Instr* lane_ = nullptr;
  ir::Instr* warp_ = nullptr;
  std::map<const Type*, std::unique_ptr<LayoutInfo>> infos_;
  // base_d of a dimension's lane and warp map (one layout spreads tiles of
  // different shapes differently: the map, not the layout, is the key).
  using BaseKey = std::tuple<int, int, int64_t, int, int, int64_t>;   // lanes, lane_shift, lane_stride, warps, warp_shift, warp_stride
  std::map<BaseKey, ir::Instr*> bases_;
  ir::Instr*& baseSlot(const TileDimMap& m) {
    return bases_[BaseKey{m.lanes, m.lane_shift, m.lane_stride, m.warps, m.warp_shift, m.warp_stride}];
  }
  std::map<std::tuple<int, Scalar, int64_t>, ir::Instr*> scratch_;
  ir::Instr* emitTo(std::vector<std::unique_ptr<ir::Instr>>& out, std::unique_ptr<ir::Instr> in);
  // i32 values computed once at the entry (thread ids, layout bases).
  ir::Instr* entryConst(int64_t v);
  ir::Instr* entryOp(ir::Op op, ir::Instr* a, ir::Instr* b);
};

// The canonical wgmma shared-memory layouts without swizzle (element index,
// i32): 8 rows x 16 bytes make a core matrix (128 contiguous bytes); core
// matrices follow each other along K (128 bytes apart), then the next 8 rows
// (8 rows x K elements apart). K-major keeps K inside a core row (kc elements
// of 16 bytes); N-major keeps the rows' other dimension inside it (16-bit
// elements: wgmma's transposed B).
ir::Instr* kMajorCoreIndex(Lowering& lw, int64_t k, int64_t kc, ir::Instr* row, ir::Instr* kk);
ir::Instr* nMajorCoreIndex(Lowering& lw, int64_t k, ir::Instr* kk, ir::Instr* n);
// The 128-byte swizzled layout of a tile of `rows` rows of elem_bytes-byte
// elements whose columns (a multiple of 128 / elem_bytes) are contiguous in
// global memory: 128 / elem_bytes columns make a 128-byte line, lines of one
// such column block follow each other (rows x 128 bytes a block), and in line
// r the 16-byte chunk j sits at j ^ (r mod 8). It is what TMA writes with
// CU_TENSOR_MAP_SWIZZLE_128B and what wgmma reads with swizzle mode 1
// (K-major: SBO 1024; N-major B: LBO between column blocks, SBO 1024); eight
// threads writing one line hit eight distinct bank groups. Byte offset (i32)
// of element (row, col), col a multiple of 16 / elem_bytes; a block must
// start 1024-byte aligned.
ir::Instr* swizzled128Offset(Lowering& lw, int64_t rows, ir::Instr* row, ir::Instr* col, int elem_bytes = 2);

// ---- asynchronous operand copies (tile_lower_async.cpp) ------------------------------
//
// A dot in a counted loop (`for k in range(...)`) whose operands are loads
// used by nothing else gets its operands by cp.async straight into shared
// memory, S stages deep (2 or 3): the loop's first S-1 tiles are requested
// before it, and each iteration requests the tiles S-1 iterations ahead
// before it computes on its own (docs/tiles.md, "Matmul").
struct AsyncOperand {
  ir::Instr* load = nullptr;         // nullptr: the operand goes through registers
  ir::Instr* convert = nullptr;      // the float32 load's tfloat32 conversion (the dot's operand), or nullptr
  int elem_bytes = 2;
  // float32 y for tfloat32 (wgmma reads tf32 K-major only). Where the tile
  // is whole 128-byte lines both ways, the stage keeps the N-major lines
  // the copy (TMA or cp.async) writes and the threads transpose each stage
  // into `transposed`, K-major, before the tensor cores read it
  // (tile_lower_dot.cpp); else the copy goes element by element into the
  // K-major layout, transposed on the way.
  bool transpose_in_shared = false;
  bool transposed_copy = false;
  ir::Instr* transposed = nullptr;   // shared: K-major swizzled buffers of one stage each
  int transposed_buffers = 2;        // used in turn, one an iteration
  ir::Instr* buffer = nullptr;       // shared array of both stages
  int64_t stage_bytes = 0;
  bool n_major = false;              // y kept N-contiguous (wgmma's transposed B)
  bool swizzled = false;             // swizzled128Offset's layout (else the core-matrix one)
  int64_t rows = 0, cols = 0;        // the tile's shape
  int map = -1;                      // TMA: its tensor map (Function::tensor_maps)
  // The byte offset in one stage of element (row, col) of the tile.
  std::function<ir::Instr*(Lowering&, ir::Instr* row, ir::Instr* col)> offset;
};
struct AsyncDot {
  ir::Instr* dot = nullptr;
  ir::Block *preheader = nullptr, *header = nullptr, *latch = nullptr, *exit = nullptr;
  std::set<const ir::Block*> blocks;  // the loop's
  ir::Instr* induction = nullptr;     // iter_next of the loop's range
  ir::Instr* start = nullptr;         // the range's start and step (its index type)
  ir::Instr* step = nullptr;
  int stages = 2;                     // shared-memory stages per operand
  ir::Instr* stage = nullptr;         // header parameter: the stage this iteration computes on (i32)
  ir::Instr* next_stage = nullptr;    // (stage + 1) mod stages, passed back by the latch
  AsyncOperand x, y;
  // TMA (sm_90, operands that are whole kernel arguments in the swizzled
  // layout): one thread requests a stage with cp.async.bulk.tensor, whose
  // bytes complete the stage's mbarrier; every thread waits on it with the
  // phase parity, a header parameter that flips when the stage wraps. The
  // cp.async route stays beside it for launches whose maps could not be
  // encoded (TensorMapsValid).
  bool tma = false;
  // Chained: the accumulator is read by nothing in the loop but the next
  // dot, so an iteration leaves its tensor-core work in flight (wgmma wait
  // 1) and the loop's exit waits for the last.
  bool chained = false;
  // Chained, x a float32 stage given to wgmma from registers, y transposed
  // in shared memory: the wgmma groups an iteration issues, one per 64-row
  // block of a warpgroup, each waiting only for its predecessor
  // (tile_lower_dot.cpp); else 1.
  int64_t x_groups = 1;
  ir::Instr* barriers = nullptr;      // shared i64[stages]
  ir::Instr* phase = nullptr;         // header parameter (i32 0/1)
  ir::Instr* next_phase = nullptr;
  // y.transpose_in_shared: the transposed buffer this iteration writes
  // (header parameter, i32, the next buffer every iteration: the tensor
  // cores may still read the others).
  ir::Instr* half = nullptr;
  ir::Instr* next_half = nullptr;
};

// Plans every dot that qualifies and adds the stage parameter to its loop
// header (before any block is lowered).
std::vector<std::unique_ptr<AsyncDot>> planAsyncDots(Lowering& lw);
// At the dot: requests the operands S-1 iterations ahead into their stage.
void requestNextOperands(Lowering& lw, AsyncDot& plan);
// At the dot: waits until this iteration's stage has landed and is visible
// to the tensor cores (a barrier where threads copied it).
void waitForStage(Lowering& lw, const AsyncDot& plan);
// The shared byte address (i32) of operand `op` of `plan` at `stage`.
ir::Instr* stageAddress(Lowering& lw, const AsyncOperand& op, ir::Instr* stage);
// After every block is lowered: the first request in the preheader, the
// edges into the header, and a wait for the copies left when the loop exits.
void finishAsyncDots(Lowering& lw, std::vector<std::unique_ptr<AsyncDot>>& plans);

// Copies the tile of `shape` (rank 2) at tile coordinates `index` of `arr`
// into shared memory with cp.async, 16-byte chunks along the last dimension;
// chunk (row, col) goes to shared byte address chunk_address(row, col).
// Consecutive threads take consecutive chunks of a row (by_rows: coalesced
// reads, for layouts where a row's chunks fall in distinct banks) or of a
// column (eight rows of a 16-byte core matrix: the unswizzled layouts). Parts
// outside the array are zero-filled; where the array does not allow 16-byte
// chunks (alignment, strides) the elements move one by one through registers.
using SharedChunkAddress = std::function<ir::Instr*(ir::Instr* row, ir::Instr* col)>;
void copyTileToSharedAsync(Lowering& lw, ir::Instr* arr, const std::vector<ir::Instr*>& index,
                           const std::vector<int64_t>& shape, bool by_rows, const SharedChunkAddress& chunk_address);
// The same one 4-byte element per cp.async, consecutive threads along the
// last dimension (coalesced reads into any shared layout: a transposing
// copy); elements outside the array are zero-filled.
void copyTileElementsToSharedAsync(Lowering& lw, ir::Instr* arr, const std::vector<ir::Instr*>& index,
                                   const std::vector<int64_t>& shape, const SharedChunkAddress& element_address);

// One lowering per tile intrinsic family (tile_lower_memory.cpp,
// tile_lower_reduce.cpp, tile_lower_dot.cpp); each records the fragment of
// `in` in lw.frags (or replaces a scalar result's uses).
void lowerTileLoad(Lowering& lw, ir::Instr* in);
void lowerTileStore(Lowering& lw, ir::Instr* in);
void lowerTileGather(Lowering& lw, ir::Instr* in);    // gather, scatter and atomics
void lowerTileScatter(Lowering& lw, ir::Instr* in);
void lowerTileAtomic(Lowering& lw, ir::Instr* in);
void lowerTileReduce(Lowering& lw, ir::Instr* in);
void lowerTileDot(Lowering& lw, ir::Instr* in);
void lowerTileScan(Lowering& lw, ir::Instr* in);
void lowerTilePrint(Lowering& lw, ir::Instr* in);   // tile_lower_print.cpp
void lowerTileAssert(Lowering& lw, ir::Instr* in);  // tile_lower_print.cpp

}  // namespace cj::passes::tile
