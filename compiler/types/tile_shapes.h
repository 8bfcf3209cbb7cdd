// The shape algebra of tile operations (docs/tiles.md): the result shape of
// broadcasting, reductions, reshape, permute, transpose, expand_dims, cat and
// matmul, with cuTile's rules. Type inference's tile rules call these and
// turn a refusal into a CompileError at the call, so every function returns
// false and says why (in Python's tuple spelling, which is what users wrote).
//
// Axes may be negative (counted from the end), as in NumPy and cuTile. Input
// shapes are tile shapes (tileShapeError has nothing to say about them), so
// products of extents stay far from overflow; results are checked the same way.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cj {

using TileShape = std::vector<int64_t>;

// (16, 64), (32,), (): the shape as Python prints the tuple.
std::string tileShapeText(const TileShape& shape);

// NumPy broadcasting: align at the right; an extent of 1 or a missing one stretches.
bool broadcastTileShapes(const TileShape& a, const TileShape& b, TileShape* out, std::string* why);
// `from` broadcast to exactly `to` (broadcast_to).
bool broadcastTileShapeTo(const TileShape& from, const TileShape& to, std::string* why);
// A reduction over `axes` (nullopt: every axis), keeping them as 1 with keepdims.
bool reduceTileShape(const TileShape& shape, const std::optional<std::vector<int64_t>>& axes, bool keepdims,
                     TileShape* out, std::string* why);
// The same elements in a new shape; one extent may be -1 (inferred).
bool reshapeTileShape(const TileShape& shape, const TileShape& target, TileShape* out, std::string* why);
// Result axis i is input axis axes[i].
bool permuteTileShape(const TileShape& shape, const std::vector<int64_t>& axes, TileShape* out,
                      std::string* why);
// Two axes swapped; both may be omitted only for a 2-d tile.
bool transposeTileShape(const TileShape& shape, std::optional<int64_t> axis0, std::optional<int64_t> axis1,
                        TileShape* out, std::string* why);
// A new axis of extent 1 at `axis` (in -(rank + 1) .. rank).
bool expandDimsTileShape(const TileShape& shape, int64_t axis, TileShape* out, std::string* why);
// Two tiles of the same shape joined along `axis` (extents stay powers of two).
bool catTileShapes(const TileShape& a, const TileShape& b, int64_t axis, TileShape* out, std::string* why);
// x @ y with NumPy's matmul rules for 1-d to 3-d operands: a 1-d x is a row,
// a 1-d y a column (their axis dropped from the result); leading axes broadcast.
bool matmulTileShape(const TileShape& x, const TileShape& y, TileShape* out, std::string* why);

}  // namespace cj
