// cudajit._core entry points of compiler/types (the type table and its text
// form), for tests and inspect tools:
//   record_type(numpy.dtype([("x", "f4")])) -> "record{x: f32 @0; size 4, align 1}"
//   type_text("tile(f32, 16x64)")    -> "tile(f32, 16x64)" (parsed and printed again)
//   type_identity("tile(f32, 16x64)") -> an int, equal for equal types (interning)
//   type_numba_string("tile(f32, 16x64)") -> "Tile[float32,(16,64)]"
//   tile_type("float32", (16, 64))   -> "tile(f32, 16x64)"; ValueError says why a shape is bad
//   parse_tile_type("tile(f32, 16x64)") -> ("f32", (16, 64)); ValueError with the reason
//   tile_promote("int64", "float16") -> "f16" (cuTile's rules); ValueError when refused
// and of tile layouts (types/tile_layout.h):
//   tile_layout([1, 4], [8, 4], [4, 1], [1, 0]) -> "blocked<1x4, 8x4, 4x1, 1x0>"
//   default_tile_layout((1, 1024), 4, 4)        -> "blocked<1x4, 1x32, 1x4, 1x0>" (or None)
//   default_num_warps(elements)                 -> 1..16
//   tile_layout_map(layout, shape)  -> [warp][lane][reg] -> the element tuple that register holds
//   tile_layout_owner(layout, shape, element) -> (warp, lane, reg)
// and of the tile shape algebra (types/tile_shapes.h), each a result tuple or ValueError(why):
//   tile_broadcast_shapes(a, b), tile_broadcast_to(a, to), tile_reduce_shape(s, axes, keepdims),
//   tile_reshape(s, target), tile_permute(s, axes), tile_transpose(s, axis0, axis1),
//   tile_expand_dims(s, axis), tile_cat(a, b, axis), tile_matmul_shape(x, y)
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bytecode/record_dtype.h"
#include "types/tile_layout.h"
#include "types/tile_promotion.h"
#include "types/tile_shapes.h"
#include "types/types.h"

namespace py = pybind11;

namespace {

const cj::Type* parseOrThrow(const std::string& text) {
  const cj::Type* t = cj::parseType(text);
  if (!t) {
    // parseType says nothing about why; the tile grammar does.
    std::string why;
    if (text.rfind("tile", 0) == 0 && !cj::parseTileType(text, &why)) throw py::value_error(why);
    throw py::value_error("not a type: '" + text + "'");
  }
  return t;
}

py::tuple shapeTuple(const std::vector<int64_t>& shape) {
  py::tuple out(shape.size());
  for (size_t i = 0; i < shape.size(); ++i) out[i] = py::int_(shape[i]);
  return out;
}

// Shape-algebra arguments must be tile shapes; results come back as tuples.
const cj::TileShape& tileShape(const cj::TileShape& shape) {
  if (std::string why = cj::tileShapeError(shape); !why.empty()) throw py::value_error(why);
  return shape;
}
py::tuple shapeResult(bool ok, const cj::TileShape& out, const std::string& why) {
  if (!ok) throw py::value_error(why);
  return shapeTuple(out);
}

void bindTileShapes(py::module_& m) {
  using S = cj::TileShape;
  m.def("tile_broadcast_shapes", [](const S& a, const S& b) {
    S out;
    std::string why;
    bool ok = cj::broadcastTileShapes(tileShape(a), tileShape(b), &out, &why);
    return shapeResult(ok, out, why);
  });
  m.def("tile_broadcast_to", [](const S& from, const S& to) {
    std::string why;
    bool ok = cj::broadcastTileShapeTo(tileShape(from), tileShape(to), &why);
    return shapeResult(ok, to, why);
  });
  m.def(
      "tile_reduce_shape",
      [](const S& s, const std::optional<std::vector<int64_t>>& axes, bool keepdims) {
        S out;
        std::string why;
        bool ok = cj::reduceTileShape(tileShape(s), axes, keepdims, &out, &why);
        return shapeResult(ok, out, why);
      },
      py::arg("shape"), py::arg("axes") = py::none(), py::arg("keepdims") = false);
  m.def("tile_reshape", [](const S& s, const S& target) {
    S out;
    std::string why;
    bool ok = cj::reshapeTileShape(tileShape(s), target, &out, &why);
    return shapeResult(ok, out, why);
  });
  m.def("tile_permute", [](const S& s, const std::vector<int64_t>& axes) {
    S out;
    std::string why;
    bool ok = cj::permuteTileShape(tileShape(s), axes, &out, &why);
    return shapeResult(ok, out, why);
  });
  m.def(
      "tile_transpose",
      [](const S& s, std::optional<int64_t> axis0, std::optional<int64_t> axis1) {
        S out;
        std::string why;
        bool ok = cj::transposeTileShape(tileShape(s), axis0, axis1, &out, &why);
        return shapeResult(ok, out, why);
      },
      py::arg("shape"), py::arg("axis0") = py::none(), py::arg("axis1") = py::none());
  m.def("tile_expand_dims", [](const S& s, int64_t axis) {
    S out;
    std::string why;
    bool ok = cj::expandDimsTileShape(tileShape(s), axis, &out, &why);
    return shapeResult(ok, out, why);
  });
  m.def("tile_cat", [](const S& a, const S& b, int64_t axis) {
    S out;
    std::string why;
    bool ok = cj::catTileShapes(tileShape(a), tileShape(b), axis, &out, &why);
    return shapeResult(ok, out, why);
  });
  m.def("tile_matmul_shape", [](const S& x, const S& y) {
    S out;
    std::string why;
    bool ok = cj::matmulTileShape(tileShape(x), tileShape(y), &out, &why);
    return shapeResult(ok, out, why);
  });
}

const cj::TileLayout* layoutOrThrow(const std::string& text) {
  std::string why;
  const cj::TileLayout* l = cj::parseTileLayout(text, &why);
  if (!l) throw py::value_error(why);
  return l;
}

// A layout and a shape it can spread (the layout map and owner bindings).
const cj::TileLayout* layoutForShape(const std::string& text, const std::vector<int64_t>& shape) {
  const cj::TileLayout* l = layoutOrThrow(text);
  if (std::string why = cj::tileShapeError(shape); !why.empty()) throw py::value_error(why);
  if (std::string why = cj::tileLayoutError(shape, l); !why.empty()) throw py::value_error(why);
  return l;
}

}  // namespace

void bindTypes(py::module_& m) {
  m.def(
      "record_type",
      [](const py::handle& dtype) {
        std::string why;
        const cj::Type* rec = cj::bytecode::isStructuredDtype(dtype.ptr()) ? cj::bytecode::recordFromDtype(dtype.ptr(), &why)
                                                                          : nullptr;
        if (!rec) throw py::type_error(why.empty() ? "not a structured dtype" : why);
        return cj::typeToString(rec);
      },
      "The IR text of a structured numpy dtype's record type (kernels see arrays of it as array(record{...}, ...)); "
      "TypeError naming the field that cannot be a record field.");

  m.def(
      "type_text", [](const std::string& text) { return cj::typeToString(parseOrThrow(text)); },
      "Parses IR type text and prints the type again (round trip through the type table).");

  m.def(
      "type_identity",
      [](const std::string& text) { return reinterpret_cast<std::uintptr_t>(parseOrThrow(text)); },
      "The interned type's identity: equal for equal types, different otherwise.");

  m.def(
      "type_numba_string", [](const std::string& text) { return cj::typeToNumbaString(parseOrThrow(text)); },
      "The numba / cuTile spelling of a type given as IR type text.");

  m.def(
      "tile_type",
      [](const std::string& dtype, const std::vector<int64_t>& shape, const std::optional<std::string>& layout) {
        cj::Scalar s;
        if (!cj::parseScalar(dtype, &s)) throw py::value_error("unknown dtype '" + dtype + "'");
        if (std::string why = cj::tileDtypeError(s); !why.empty()) throw py::value_error(why);
        if (std::string why = cj::tileShapeError(shape); !why.empty()) throw py::value_error(why);
        const cj::TileLayout* l = layout ? layoutOrThrow(*layout) : nullptr;
        if (std::string why = cj::tileLayoutError(shape, l); !why.empty()) throw py::value_error(why);
        return cj::typeToString(cj::tileTy(s, shape, l));
      },
      py::arg("dtype"), py::arg("shape"), py::arg("layout") = py::none(),
      "The IR text of the tile type of a dtype and a shape; ValueError says why a shape is bad.");

  m.def(
      "parse_tile_type",
      [](const std::string& text) {
        std::string why;
        const cj::Type* t = cj::parseTileType(text, &why);
        if (!t) throw py::value_error(why);
        return py::make_tuple(std::string(cj::scalarShortName(t->scalar)), shapeTuple(t->shape));
      },
      "Parses tile type text: (dtype short name, shape tuple); ValueError with the reason.");

  m.def(
      "tile_promote",
      [](const std::string& a, const std::string& b) {
        cj::Scalar sa, sb, out;
        if (!cj::parseScalar(a, &sa)) throw py::value_error("unknown dtype '" + a + "'");
        if (!cj::parseScalar(b, &sb)) throw py::value_error("unknown dtype '" + b + "'");
        std::string why;
        if (!cj::promoteTileDtypes(sa, sb, &out, &why)) throw py::value_error(why);
        return std::string(cj::scalarShortName(out));
      },
      "cuTile's promotion of two tile dtypes (short name); ValueError when cuTile refuses it.");

  m.def(
      "tile_layout",
      [](const std::vector<int>& spt, const std::vector<int>& tpw, const std::vector<int>& wpc,
         const std::vector<int>& order) {
        if (std::string why = cj::blockedLayoutError(spt, tpw, wpc, order); !why.empty())
          throw py::value_error(why);
        return cj::tileLayoutToString(cj::blockedLayout(spt, tpw, wpc, order));
      },
      "The text of a blocked layout (size per thread, threads per warp, warps per CTA, order).");

  m.def(
      "default_tile_layout",
      [](const std::vector<int64_t>& shape, int element_bytes, int num_warps) -> std::optional<std::string> {
        const cj::TileLayout* l = cj::defaultBlockedLayout(shape, element_bytes, num_warps);
        if (!l) return std::nullopt;
        return cj::tileLayoutToString(l);
      },
      "The blocked layout a load gives a tile by default, or None (0-d tile, bad warp count).");

  m.def("default_num_warps", &cj::defaultNumWarps,
        "The block size in warps the compiler picks for a kernel whose largest tile has this many elements.");

  m.def(
      "tile_layout_map",
      [](const std::string& layout, const std::vector<int64_t>& shape) {
        const cj::TileLayout* l = layoutForShape(layout, shape);
        int64_t regs = cj::registersPerThread(l, shape);
        py::list warps;
        for (int w = 0; w < l->numWarps(); ++w) {
          py::list lanes;
          for (int lane = 0; lane < 32; ++lane) {
            py::list held;
            for (int64_t r = 0; r < regs; ++r) held.append(shapeTuple(cj::elementOf(l, shape, w, lane, r)));
            lanes.append(std::move(held));
          }
          warps.append(std::move(lanes));
        }
        return warps;
      },
      "[warp][lane][register] -> the element (a tuple) that register holds, for a layout and a tile shape.");

  m.def(
      "tile_layout_owner",
      [](const std::string& layout, const std::vector<int64_t>& shape, const std::vector<int64_t>& element) {
        const cj::TileLayout* l = layoutForShape(layout, shape);
        if (element.size() != shape.size()) throw py::value_error("the element needs one index per dimension");
        for (size_t d = 0; d < shape.size(); ++d)
          if (element[d] < 0 || element[d] >= shape[d]) throw py::value_error("element outside the tile");
        cj::ElementOwner o = cj::ownerOf(l, shape, element);
        return py::make_tuple(o.warp, o.lane, o.reg);
      },
      "(warp, lane, register) of an element's first owner.");

  bindTileShapes(m);

  m.attr("MAX_TILE_RANK") = cj::kMaxTileRank;
  m.attr("MAX_TILE_ELEMENTS") = cj::kMaxTileElements;
}
