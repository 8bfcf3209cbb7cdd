// cudajit._core entry points of compiler/types (the type table and its text
// form), for tests and inspect tools:
//   type_text("tile(f32, 16x64)")    -> "tile(f32, 16x64)" (parsed and printed again)
//   type_identity("tile(f32, 16x64)") -> an int, equal for equal types (interning)
//   type_numba_string("tile(f32, 16x64)") -> "Tile[float32,(16,64)]"
//   tile_type("float32", (16, 64))   -> "tile(f32, 16x64)"; ValueError says why a shape is bad
//   parse_tile_type("tile(f32, 16x64)") -> ("f32", (16, 64)); ValueError with the reason
//   tile_promote("int64", "float16") -> "f16" (cuTile's rules); ValueError when refused
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <string>
#include <vector>

#include "types/tile_promotion.h"
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

}  // namespace

void bindTypes(py::module_& m) {
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
      [](const std::string& dtype, const std::vector<int64_t>& shape) {
        cj::Scalar s;
        if (!cj::parseScalar(dtype, &s)) throw py::value_error("unknown dtype '" + dtype + "'");
        if (std::string why = cj::tileDtypeError(s); !why.empty()) throw py::value_error(why);
        if (std::string why = cj::tileShapeError(shape); !why.empty()) throw py::value_error(why);
        return cj::typeToString(cj::tileTy(s, shape));
      },
      py::arg("dtype"), py::arg("shape"),
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

  m.attr("MAX_TILE_RANK") = cj::kMaxTileRank;
  m.attr("MAX_TILE_ELEMENTS") = cj::kMaxTileElements;
}
