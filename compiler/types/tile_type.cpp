// Tile types: the shape rules, the text form and its parser (docs/tiles.md).
//
// The interning constructor tileTy() lives in types.cpp beside the other
// constructors (it needs the interning table); everything that knows the tile
// grammar or cuTile's shape rules is here, so that the IR parser, the type
// inference rules and error messages share one definition.
#include <cctype>

#include "types/text_cursor.h"
#include "types/tile_layout.h"
#include "types/tile_shapes.h"
#include "types/types.h"

namespace cj {
namespace {

bool isPowerOfTwo(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

std::string joinShape(const std::vector<int64_t>& shape, std::string_view sep) {
  std::string s;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += sep;
    s += std::to_string(shape[i]);
  }
  return s;
}

// A cursor over the tile text "tile(<dtype>[, <d0>x<d1>x...[, <layout>]])".
struct TileTextParser : TextCursor {
  std::string error;

  const Type* fail(std::string why) {
    error = "bad tile type '" + std::string(s) + "': " + why;
    return nullptr;
  }
  const Type* parse() {
    if (!eatWord("tile") || !eat('(')) return fail("expected 'tile('");
    std::string_view name = ident();
    Scalar dtype;
    if (name.empty() || !parseScalar(name, &dtype)) return fail("unknown dtype '" + std::string(name) + "'");
    std::vector<int64_t> shape;
    // At most 18 digits an extent, so that it fits in int64.
    if (eat(',') && !xList(&shape, 18))
      return fail("expected the shape as extents joined by 'x', e.g. 16x64");
    const TileLayout* layout = nullptr;
    if (!shape.empty() && eat(',')) {   // the layout runs to its closing '>'
      size_t close = s.find('>', pos);
      if (close == std::string_view::npos) return fail("expected a layout such as blocked<1x4, 8x4, 4x1, 1x0>");
      std::string why;
      layout = parseTileLayout(s.substr(pos, close + 1 - pos), &why);
      if (!layout) return fail(why);
      pos = close + 1;
    }
    if (!eat(')')) return fail("expected ')'");
    if (!atEnd()) return fail("unexpected text after ')'");
    if (std::string why = tileDtypeError(dtype); !why.empty()) return fail(why);
    if (std::string why = tileShapeError(shape); !why.empty()) return fail(why);
    if (std::string why = tileLayoutError(shape, layout); !why.empty()) return fail(why);
    return tileTy(dtype, shape, layout);
  }
};

}  // namespace

std::string tileShapeError(const std::vector<int64_t>& shape) {
  if (shape.size() > static_cast<size_t>(kMaxTileRank))
    return "a tile has at most " + std::to_string(kMaxTileRank) + " dimensions, this shape has " +
           std::to_string(shape.size());
  int64_t elements = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    int64_t d = shape[i];
    if (!isPowerOfTwo(d))
      return "dimension " + std::to_string(i) + " of " + tileShapeText(shape) + " is " +
             std::to_string(d) + ", not a power of two (cuTile requires every tile dimension to be one)";
    // Both factors are at most kMaxTileElements here, so the product cannot overflow.
    if (d > kMaxTileElements || elements * d > kMaxTileElements)
      return "the tile " + tileShapeText(shape) + " has more than " + std::to_string(kMaxTileElements) +
             " elements";
    elements *= d;
  }
  return "";
}

std::string tileDtypeError(Scalar dtype) {
  if (scalarKind(dtype) == ScalarKind::Complex)
    return std::string(scalarNumbaName(dtype)) + " is not a tile dtype (tiles hold bool, integers and floats)";
  return "";
}

std::string tileLayoutError(const std::vector<int64_t>& shape, const TileLayout* layout) {
  if (!layout) return "";
  if (layout->rank() != static_cast<int>(shape.size()))
    return "the layout " + tileLayoutToString(layout) + " has " + std::to_string(layout->rank()) +
           " dimension(s), the tile " + tileShapeText(shape) + " " + std::to_string(shape.size());
  if (layout->kind == TileLayoutKind::Mma) {
    // The fragments of whole instructions: no register holds a replica.
    int64_t rows = int64_t{16} * layout->warps_per_cta[0], cols = int64_t{layout->mma_n} * layout->warps_per_cta[1];
    if (shape[0] < rows || shape[1] < cols)
      return "the layout " + tileLayoutToString(layout) + " covers at least " + std::to_string(rows) + "x" +
             std::to_string(cols) + ", more than the tile " + tileShapeText(shape);
  }
  return "";
}

int64_t tileElements(const Type* tile) {
  int64_t n = 1;
  for (int64_t d : tile->shape) n *= d;
  return n;
}

std::string tileTypeToString(const Type* tile) {
  std::string s = "tile(" + std::string(scalarShortName(tile->scalar));
  if (!tile->shape.empty()) s += ", " + joinShape(tile->shape, "x");
  if (tile->tile_layout) s += ", " + tileLayoutToString(tile->tile_layout);
  return s + ")";
}

std::string tileTypeToNumbaString(const Type* tile) {
  return "Tile[" + std::string(scalarNumbaName(tile->scalar)) + ",(" + joinShape(tile->shape, ",") + ")]";
}

const Type* parseTileType(std::string_view text, std::string* error) {
  TileTextParser p;
  p.s = text;
  const Type* t = p.parse();
  if (!t && error) *error = p.error;
  return t;
}

}  // namespace cj
