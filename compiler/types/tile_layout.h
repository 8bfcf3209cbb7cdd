// Tile layouts: how a tile's elements are spread over the threads of a block
// (docs/tiles.md, "Layouts"). A layout is interned like a type, and a tile
// type carries one once the tile pipeline's layout pass has run
// (tileTy(dtype, shape, layout)); before that pass tiles have none.
//
// Only the blocked layout exists so far. Slice (a reduced dimension of a
// parent), Mma / DotOperand (tensor-core fragments) and Shared (swizzled
// shared memory) are further kinds of the same struct (docs/tiles.md).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cj {

enum class TileLayoutKind : uint8_t { Blocked };

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
struct TileLayout {
  TileLayoutKind kind = TileLayoutKind::Blocked;
  std::vector<int> size_per_thread, threads_per_warp, warps_per_cta, order;

  int rank() const { return static_cast<int>(order.size()); }
  int numWarps() const;
};

// Why these vectors do not make a blocked layout, or "".
std::string blockedLayoutError(const std::vector<int>& spt, const std::vector<int>& tpw,
                               const std::vector<int>& wpc, const std::vector<int>& order);
// The interned blocked layout; nullptr where blockedLayoutError objects.
const TileLayout* blockedLayout(const std::vector<int>& spt, const std::vector<int>& tpw,
                                const std::vector<int>& wpc, const std::vector<int>& order);

// The layout a load gives a tile of `shape` by default: last dimension fastest,
// 16-byte vectors per thread along it, lanes along the fast dimensions and
// warps along the slow ones (what coalesces global accesses). nullptr for a
// 0-d tile (a scalar: every thread holds it) or a bad warp count.
const TileLayout* defaultBlockedLayout(const std::vector<int64_t>& shape, int element_bytes,
                                       int num_warps);
// The block size the compiler picks without num_warps: about 8 elements of the
// largest tile per thread, a power of two from 1 to 8 warps (docs/tiles.md).
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
// thread, threads per warp, warps per CTA, order; one entry per dimension).
std::string tileLayoutToString(const TileLayout* layout);
// Parses that text (the whole of `text`); nullptr and why on failure.
const TileLayout* parseTileLayout(std::string_view text, std::string* error = nullptr);

}  // namespace cj
