// Tile layouts: how a tile's elements are spread over the threads of a block
// (docs/tiles.md, "Layouts"). A layout is interned like a type, and a tile
// type carries one once the tile pipeline's layout pass has run
// (tileTy(dtype, shape, layout)); before that pass tiles have none.
//
// Two kinds exist: blocked (what loads, elementwise code and reductions use)
// and mma (the accumulator fragments of the tensor-core instructions). Both
// are described to the passes by one geometry (TileGeometry below), so only
// the matmul lowering knows the difference. Slice (a reduced dimension of a
// parent) and Shared (swizzled shared memory) are further kinds to come
// (docs/tiles.md).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cj {

enum class TileLayoutKind : uint8_t { Blocked, Mma };

// Blocked: per dimension d (outermost first, like the tile's shape) a thread
// holds size_per_thread[d] consecutive elements, a warp spans
// threads_per_warp[d] threads (their product is 32) and the block
// warps_per_cta[d] warps (their product is the block's warp count). `order`
// lists the dimensions fastest first: lanes, warps and a thread's registers
// are numbered along it. Every entry is a power of two.
//
// Coverage c[d] = spt[d] * tpw[d] * wpc[d]. A thread's register r along d is
// the logical position x = rep * c[d] + warp_d * spt[d] * tpw[d] + lane_d * spt[d]
// + reg_d, and holds element x mod extent[d]: a tile larger than the coverage
// gives each thread several repetitions, a smaller one is replicated (several
// threads hold the same element; stores keep one copy).
//
// Mma (rank 2, M x N): the accumulator of mma.sync m16n8 (version 2, sm_80)
// or wgmma m64nN (version 3, sm_90). warps_per_cta = {wm, wn}: warp w works
// on rows 16 * (w mod wm) and columns mma_n * (w / wm); within a warp, lane
// l holds rows l/4 and l/4 + 8 and columns 2 (l mod 4) + {0, 1} of every
// 8-column block of its mma_n columns; the pattern repeats every 16 wm rows
// and every mma_n wn columns. A wgmma warpgroup (4 consecutive warps, wm = 4)
// thus holds one m64 x mma_n instruction's accumulator.
struct TileLayout {
  TileLayoutKind kind = TileLayoutKind::Blocked;
  std::vector<int> size_per_thread, threads_per_warp, warps_per_cta, order;
  int mma_version = 0;   // Mma: 2 (mma.sync) or 3 (wgmma)
  int mma_n = 0;         // Mma: columns of one warp's block (a power of two, 8 to 256)

  int rank() const { return static_cast<int>(order.size()); }
  int numWarps() const;
};

// Why these vectors do not make a blocked layout, or "".
std::string blockedLayoutError(const std::vector<int>& spt, const std::vector<int>& tpw,
                               const std::vector<int>& wpc, const std::vector<int>& order);
// The interned blocked layout; nullptr where blockedLayoutError objects.
const TileLayout* blockedLayout(const std::vector<int>& spt, const std::vector<int>& tpw,
                                const std::vector<int>& wpc, const std::vector<int>& order);

// The interned mma layout; nullptr where mmaLayoutError objects.
std::string mmaLayoutError(int version, const std::vector<int>& warps_per_cta, int mma_n);
const TileLayout* mmaLayout(int version, const std::vector<int>& warps_per_cta, int mma_n);

// How one dimension of a tile is spread over a block, whatever the kind. The
// coordinate that register r of thread (warp, lane) holds along d is
//   (lane_d * lane_stride + warp_d * warp_stride + sum of reg_strides[b]
//    over the set bits b of reg_d) mod extent_d
// with lane_d = (lane >> lane_shift) & (lanes - 1), warp_d likewise, and reg_d
// the d-th coordinate of r when r is split along the layout's order (each
// dimension has 2^reg_strides.size() registers). Every stride is a power of
// two and, within a dimension, they are distinct: a layout is a bijection
// between (register, lane, warp) bits and coordinate bits, up to replicas.
struct TileDimMap {
  int lanes = 1, lane_shift = 0;
  int64_t lane_stride = 1;
  int warps = 1, warp_shift = 0;
  int64_t warp_stride = 1;
  std::vector<int64_t> reg_strides;
  int64_t registers() const { return int64_t{1} << reg_strides.size(); }
  // Registers that follow one another with unit stride from register 0 (a
  // vector a thread holds along this dimension).
  int64_t contiguous() const;
};
struct TileGeometry {
  std::vector<TileDimMap> dims;
  std::vector<int> order;   // dimensions, fastest first, for numbering registers
  int64_t registers = 1;
};
TileGeometry tileGeometry(const TileLayout* layout, const std::vector<int64_t>& shape);

// The layout a load gives a tile of `shape` by default: last dimension fastest,
// 16-byte vectors per thread along it, lanes along the fast dimensions and
// warps along the slow ones (what coalesces global accesses). nullptr for a
// 0-d tile (a scalar: every thread holds it) or a bad warp count.
const TileLayout* defaultBlockedLayout(const std::vector<int64_t>& shape, int element_bytes,
                                       int num_warps);
// The block size the compiler picks without num_warps for a kernel with no
// dot: about 8 elements of the largest tile per thread, a power of two from 1
// to 16 warps (docs/tiles.md).
int defaultNumWarps(int64_t largest_tile_elements);

// Registers (elements, replicas included) each thread holds of a tile.
int64_t registersPerThread(const TileLayout* layout, const std::vector<int64_t>& shape);
// The element that thread (warp, lane) holds in its register `reg`.
std::vector<int64_t> elementOf(const TileLayout* layout, const std::vector<int64_t>& shape,
                               int warp, int lane, int64_t reg);
// The first owner of an element: its smallest logical position (replica 0).
struct ElementOwner {
  int warp = 0, lane = 0;
  int64_t reg = 0;
};
ElementOwner ownerOf(const TileLayout* layout, const std::vector<int64_t>& shape,
                     const std::vector<int64_t>& element);

// Text form, inside a tile type's text: blocked<1x4, 8x4, 4x1, 1x0> (size per
// thread, threads per warp, warps per CTA, order; one entry per dimension),
// mma<v3, 4x1, n128> (version, warps per CTA, mma_n).
std::string tileLayoutToString(const TileLayout* layout);
// Parses that text (the whole of `text`); nullptr and why on failure.
const TileLayout* parseTileLayout(std::string_view text, std::string* error = nullptr);

}  // namespace cj
