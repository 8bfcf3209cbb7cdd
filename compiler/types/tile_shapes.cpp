#include "types/tile_shapes.h"

#include <algorithm>

#include "types/types.h"

namespace cj {
namespace {

bool fail(std::string* why, std::string text) {
  if (why) *why = std::move(text);
  return false;
}

// The result must itself be a tile shape (powers of two, rank and size limits).
bool finish(TileShape shape, TileShape* out, std::string* why) {
  if (std::string e = tileShapeError(shape); !e.empty()) return fail(why, "the result " + e);
  *out = std::move(shape);
  return true;
}

// `axis` counted from the end when negative; valid in [-rank, rank).
bool normaliseAxis(int64_t axis, size_t rank, int64_t* out, std::string* why) {
  auto r = static_cast<int64_t>(rank);
  if (axis < -r || axis >= r)
    return fail(why, "axis " + std::to_string(axis) + " is out of range for a " + std::to_string(rank) + "-d tile");
  *out = axis < 0 ? axis + r : axis;
  return true;
}

int64_t elements(const TileShape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

}  // namespace

std::string tileShapeText(const TileShape& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

bool broadcastTileShapes(const TileShape& a, const TileShape& b, TileShape* out, std::string* why) {
  size_t rank = std::max(a.size(), b.size());
  TileShape result(rank);
  for (size_t i = 0; i < rank; ++i) {   // i counts from the right
    int64_t da = i < a.size() ? a[a.size() - 1 - i] : 1;
    int64_t db = i < b.size() ? b[b.size() - 1 - i] : 1;
    if (da != db && da != 1 && db != 1)
      return fail(why, "shapes " + tileShapeText(a) + " and " + tileShapeText(b) + " do not broadcast: " +
                           std::to_string(da) + " against " + std::to_string(db) + " at axis -" +
                           std::to_string(i + 1));
    result[rank - 1 - i] = std::max(da, db);
  }
  return finish(std::move(result), out, why);
}

bool broadcastTileShapeTo(const TileShape& from, const TileShape& to, std::string* why) {
  TileShape joint;
  if (from.size() > to.size() || !broadcastTileShapes(from, to, &joint, nullptr) || joint != to)
    return fail(why, "cannot broadcast " + tileShapeText(from) + " to " + tileShapeText(to));
  return true;
}

bool reduceTileShape(const TileShape& shape, const std::optional<std::vector<int64_t>>& axes, bool keepdims,
                     TileShape* out, std::string* why) {
  std::vector<bool> reduced(shape.size(), !axes);
  if (axes) {
    for (int64_t a : *axes) {
      int64_t axis;
      if (!normaliseAxis(a, shape.size(), &axis, why)) return false;
      if (reduced[axis]) return fail(why, "axis " + std::to_string(a) + " is given twice");
      reduced[axis] = true;
    }
  }
  TileShape result;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (!reduced[d]) result.push_back(shape[d]);
    else if (keepdims) result.push_back(1);
  }
  return finish(std::move(result), out, why);
}

bool reshapeTileShape(const TileShape& shape, const TileShape& target, TileShape* out, std::string* why) {
  int64_t n = elements(shape);
  auto mismatch = [&] {
    return fail(why, "cannot reshape " + tileShapeText(shape) + " (" + std::to_string(n) + " elements) into " +
                         tileShapeText(target));
  };
  TileShape result = target;
  int64_t known = 1;   // the product of the given extents; at most n, so it cannot overflow
  int inferred = -1;
  for (size_t i = 0; i < target.size(); ++i) {
    if (target[i] == -1) {
      if (inferred >= 0) return fail(why, "reshape to " + tileShapeText(target) + ": only one extent may be -1");
      inferred = static_cast<int>(i);
    } else if (target[i] <= 0) {
      return fail(why, "reshape to " + tileShapeText(target) + ": extents are positive (or one -1)");
    } else {
      if (target[i] > n || known * target[i] > n) return mismatch();
      known *= target[i];
    }
  }
  if (inferred >= 0) {
    if (n % known != 0) return mismatch();
    result[inferred] = n / known;
  } else if (known != n) {
    return mismatch();
  }
  return finish(std::move(result), out, why);
}

bool permuteTileShape(const TileShape& shape, const std::vector<int64_t>& axes, TileShape* out,
                      std::string* why) {
  if (axes.size() != shape.size())
    return fail(why, "permute of a " + std::to_string(shape.size()) + "-d tile needs " +
                         std::to_string(shape.size()) + " axes, got " + std::to_string(axes.size()));
  std::vector<bool> seen(shape.size(), false);
  TileShape result(shape.size());
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t axis;
    if (!normaliseAxis(axes[i], shape.size(), &axis, why)) return false;
    if (seen[axis]) return fail(why, "permute axes " + tileShapeText(axes) + " are not a permutation");
    seen[axis] = true;
    result[i] = shape[axis];
  }
  return finish(std::move(result), out, why);
}

bool transposeTileShape(const TileShape& shape, std::optional<int64_t> axis0, std::optional<int64_t> axis1,
                        TileShape* out, std::string* why) {
  if (shape.size() < 2)
    return fail(why, "transpose needs a tile of 2 or more dimensions, got " + tileShapeText(shape));
  if (axis0.has_value() != axis1.has_value()) return fail(why, "transpose takes both axis0 and axis1, or neither");
  if (!axis0) {
    if (shape.size() != 2)
      return fail(why, "transpose of a " + std::to_string(shape.size()) + "-d tile needs axis0 and axis1");
    axis0 = 0;
    axis1 = 1;
  }
  int64_t a, b;
  if (!normaliseAxis(*axis0, shape.size(), &a, why) || !normaliseAxis(*axis1, shape.size(), &b, why)) return false;
  TileShape result = shape;
  std::swap(result[a], result[b]);
  return finish(std::move(result), out, why);
}

bool expandDimsTileShape(const TileShape& shape, int64_t axis, TileShape* out, std::string* why) {
  int64_t at;
  if (!normaliseAxis(axis, shape.size() + 1, &at, why)) return false;
  TileShape result = shape;
  result.insert(result.begin() + at, 1);
  return finish(std::move(result), out, why);
}

bool catTileShapes(const TileShape& a, const TileShape& b, int64_t axis, TileShape* out, std::string* why) {
  if (a != b)
    return fail(why, "cat needs two tiles of the same shape (so the result stays a power of two), got " +
                         tileShapeText(a) + " and " + tileShapeText(b));
  int64_t at;
  if (!normaliseAxis(axis, a.size(), &at, why)) return false;
  TileShape result = a;
  result[at] *= 2;
  return finish(std::move(result), out, why);
}

bool matmulTileShape(const TileShape& x, const TileShape& y, TileShape* out, std::string* why) {
  for (const auto* s : {&x, &y})
    if (s->empty() || s->size() > 3)
      return fail(why, "matmul operands are 1-d to 3-d tiles, got " + tileShapeText(*s));
  bool row = x.size() == 1, column = y.size() == 1;   // NumPy's promotion of 1-d operands
  TileShape xs = row ? TileShape{1, x[0]} : x;
  TileShape ys = column ? TileShape{y[0], 1} : y;
  int64_t kx = xs[xs.size() - 1], ky = ys[ys.size() - 2];
  if (kx != ky)
    return fail(why, "matmul of " + tileShapeText(x) + " and " + tileShapeText(y) + ": the inner extents " +
                         std::to_string(kx) + " and " + std::to_string(ky) + " differ");
  TileShape batch;
  if (!broadcastTileShapes(TileShape(xs.begin(), xs.end() - 2), TileShape(ys.begin(), ys.end() - 2), &batch,
                           why))
    return false;
  if (!row) batch.push_back(xs[xs.size() - 2]);
  if (!column) batch.push_back(ys[ys.size() - 1]);
  return finish(std::move(batch), out, why);
}

}  // namespace cj
