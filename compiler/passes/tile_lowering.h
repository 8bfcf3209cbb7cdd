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
#include <map>
#include <memory>
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

class Lowering {
 public:
  Lowering(ir::Function& fn, int num_warps);
  ir::Function& fn;
  const int num_warps;

  // ---- emission into the block being rewritten ----------------------------------
  void setOutput(std::vector<std::unique_ptr<ir::Instr>>* out, ir::Loc loc) { out_ = out; loc_ = loc; }
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
  ir::Instr* toI64(ir::Instr* v) { return v->type == i64Ty() ? v : emit(ir::Op::Cast, i64Ty(), {v}); }
  // A shared array of n elements, allocated at the entry.
  ir::Instr* sharedArray(Scalar dtype, int64_t n);
  void barrier() { intrinsic(ir::Intrinsic::SyncThreads, voidTy(), {}); }
  ir::Instr* loadShared(ir::Instr* arr, ir::Instr* index);
  void storeShared(ir::Instr* arr, ir::Instr* index, ir::Instr* value);

  // ---- layouts ------------------------------------------------------------------------
  const LayoutInfo& info(const Type* tile);
  // Coordinate of register r along d, an i32 IR value in [0, extent).
  ir::Instr* position(const LayoutInfo& l, int64_t r, int d);
  // Σ_d position_d * coef_d (i32).
  ir::Instr* linear(const LayoutInfo& l, int64_t r, const std::vector<int64_t>& coef);
  ir::Instr* laneId() const { return lane_; }
  ir::Instr* warpId() const { return warp_; }
  int threads() const { return num_warps * 32; }

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
  std::vector<ir::Instr*> redistribute(const Held& src, Scalar dtype, int64_t space, const LayoutInfo& dst,
                                       const std::vector<int64_t>& dst_coef);

  std::vector<std::unique_ptr<ir::Instr>> prologue;   // inserted at the top of the entry block

  // Static shared memory the lowering allocated, and the operation that took the most.
  int64_t shared_bytes = 0;
  int64_t largest_shared = 0;
  const ir::Instr* largest_shared_at = nullptr;
  void setCurrent(const ir::Instr* in) { current_ = in; }

 private:
  std::vector<std::unique_ptr<ir::Instr>>* out_ = nullptr;
  ir::Loc loc_;
  const ir::Instr* current_ = nullptr;
  ir::Instr* lane_ = nullptr;
  ir::Instr* warp_ = nullptr;
  std::map<const Type*, std::unique_ptr<LayoutInfo>> infos_;
  std::map<std::pair<const TileLayout*, int>, ir::Instr*> bases_;
  ir::Instr* emitTo(std::vector<std::unique_ptr<ir::Instr>>& out, std::unique_ptr<ir::Instr> in);
  // i32 values computed once at the entry (thread ids, layout bases).
  ir::Instr* entryConst(int64_t v);
  ir::Instr* entryOp(ir::Op op, ir::Instr* a, ir::Instr* b);
};

// One lowering per tile intrinsic family (tile_lower_memory.cpp,
// tile_lower_reduce.cpp, tile_lower_dot.cpp); each records the fragment of
// `in` in lw.frags (or replaces a scalar result's uses).
void lowerTileLoad(Lowering& lw, ir::Instr* in);
void lowerTileStore(Lowering& lw, ir::Instr* in);
void lowerTileReduce(Lowering& lw, ir::Instr* in);
void lowerTileDot(Lowering& lw, ir::Instr* in);
void lowerTileScan(Lowering& lw, ir::Instr* in);

}  // namespace cj::passes::tile
