// cudajit.tile: cuTile's functions typed and rewritten into tile IR
// (docs/tiles.md). Every rule checks its shapes and dtypes with the shape
// algebra and promotion of types/tile_shapes.h and types/tile_promotion.h, and
// the rewrite makes every operation see equal shapes and dtypes: scalars
// become `tile.full`, lower ranks `tile.reshape`, extents of 1
// `tile.broadcast`, other dtypes `cast`. Elementwise operations on tiles are
// tile_elementwise.cpp; this file holds the other functions.
#include <algorithm>
#include <optional>

#include "typeinfer/infer.h"
#include "typeinfer/rules.h"
#include "typeinfer/slicing.h"
#include "typeinfer/specializer.h"
#include "typeinfer/tile_rules.h"
#include "types/tile_promotion.h"
#include "types/tile_shapes.h"

namespace cj::typeinfer {

// ---- shared helpers (tile_rules.h) ---------------------------------------------

std::string tileOpName(std::string_view qualified) {
  // Methods of arrays and tiled views keep their class in errors.
  for (auto [prefix, cls] : {std::pair<std::string_view, std::string_view>{"method:array.", "Array."},
                             {"method:tiledview.", "TiledView."}})
    if (qualified.substr(0, prefix.size()) == prefix) return std::string(cls) + std::string(qualified.substr(prefix.size()));
  size_t dot = qualified.rfind('.');
  return "ct." + std::string(dot == std::string_view::npos ? qualified : qualified.substr(dot + 1));
}

const Type* tileTypeOrFail(const FunctionContext& ctx, const ir::Instr* at, const std::string& op, Scalar dtype,
                           const std::vector<int64_t>& shape) {
  if (const Type* t = tileTy(dtype, shape)) return t;
  std::string why = tileDtypeError(dtype);
  if (why.empty()) why = "tile shape " + tileShapeText(shape) + ": " + tileShapeError(shape);
  ctx.fail(at, op, op + ": " + why);
}

TileOperand tileOperand(const ir::Instr* v) {
  TileOperand o;
  const Type* t = v->type;
  if (t->isTile()) {
    o.tile = true;
    o.dtype = t->scalar;
    o.shape = t->shape;
  } else if (t->isScalar()) {
    o.dtype = t->scalar;
    o.weak = true;   // beside tiles, as cuTile types Python ints as int32 and floats as float32
  } else {
    o.valid = false;
  }
  return o;
}

namespace {
int category(Scalar s) {
  switch (scalarKind(s)) {
    case ScalarKind::Bool: return 0;
    case ScalarKind::Int: return 1;
    default: return 2;
  }
}
}  // namespace

bool tileResultDtype(const std::vector<TileOperand>& ops, Scalar* out, std::string* why) {
  // Tiles decide; weak operands join only where their category is higher
  // than every tile's (then as int32 / float32), cuTile's rule.
  std::optional<Scalar> typed;
  for (const TileOperand& o : ops) {
    if (o.weak) continue;
    if (!typed) {
      typed = o.dtype;
    } else if (!promoteTileDtypes(*typed, o.dtype, &*typed, why)) {
      return false;
    }
  }
  for (const TileOperand& o : ops) {
    if (!o.weak) continue;
    Scalar lit = category(o.dtype) == 2 ? Scalar::Float32 : category(o.dtype) == 1 ? Scalar::Int32 : Scalar::Bool;
    if (!typed) {
      typed = lit;
    } else if (category(o.dtype) > category(*typed)) {
      typed = lit;
    }
  }
  *out = typed.value_or(Scalar::Float32);
  return true;
}

ir::Instr* toTile(Emitter& e, ir::Instr* v, Scalar dtype, const std::vector<int64_t>& shape) {
  const Type* want = tileTy(dtype, shape);
  if (!v->type->isTile()) {
    ir::Instr* scalar = e.convert(v, scalarTy(dtype));
    return e.intrinsic(ir::Intrinsic::TileFull, want, {scalar});
  }
  if (v->type->scalar != dtype) v = e.emit(ir::Op::Cast, tileTy(dtype, v->type->shape), {v});
  if (v->type->shape.size() < shape.size()) {
    std::vector<int64_t> padded(shape.size() - v->type->shape.size(), 1);
    padded.insert(padded.end(), v->type->shape.begin(), v->type->shape.end());
    v = e.intrinsic(ir::Intrinsic::TileReshape, tileTy(dtype, padded), {v});
  }
  if (v->type->shape != shape) v = e.intrinsic(ir::Intrinsic::TileBroadcast, want, {v});
  return v;
}

namespace rules {
namespace {

using TileShapeV = std::vector<int64_t>;

std::string op(const Site& s) { return tileOpName(s.name); }

[[noreturn]] void failOp(const Site& s, const std::string& message, const std::string& hint = {}) {
  s.fail(op(s) + ": " + message, hint);
}

const Type* makeTile(const Site& s, Scalar dtype, const TileShapeV& shape) {
  return tileTypeOrFail(s.ctx, s.instr, op(s), dtype, shape);
}

// A compile-time int or tuple of ints (a shape, axes, a permutation).
std::vector<int64_t> constInts(const Site& s, const ir::Instr* v, const char* what) {
  auto c = constantOf(v);
  TileShapeV shape;
  if (c && (c->kind == ir::Const::Kind::Int)) return {c->i};
  if (c && c->kind == ir::Const::Kind::Tuple) {
    for (const ir::Const& d : c->elems) {
      if (d.kind != ir::Const::Kind::Int) c.reset();
      if (!c) break;
      shape.push_back(d.i);
    }
    if (c) return shape;
  }
  failOp(s, std::string(what) + " must be a compile-time constant (use a Constant[int] parameter)",
         "declare the parameter as NAME: ct.Constant[int] and build shapes from it");
}

int64_t constIntArg(const Site& s, const ir::Instr* v, const char* what) {
  auto c = constantInt(v);
  if (!c) failOp(s, std::string(what) + " must be a compile-time constant integer");
  return *c;
}

bool constBoolArg(const Site& s, const ir::Instr* v, const char* what, bool fallback) {
  if (!v) return fallback;
  auto c = constantOf(v);
  if (c && (c->kind == ir::Const::Kind::Bool || c->kind == ir::Const::Kind::Int)) return c->i != 0;
  failOp(s, std::string(what) + " must be a compile-time constant bool");
}

Scalar dtypeArg(const Site& s, const ir::Instr* v) {
  if (auto d = dtypeOf(v)) return *d;
  auto c = constantOf(v);
  if (c && c->kind == ir::Const::Kind::Symbol && c->s.rfind("cudajit.tile.", 0) == 0)
    failOp(s, "dtype " + c->s.substr(13) + " is not supported by cudajit.tile yet (docs/tiles.md)");
  failOp(s, "expected a dtype (ct.float32, ...), got " + typeToString(v->type));
}

// A tile or a scalar (a 0-d tile) operand's dtype and shape.
TileOperand valueArg(const Site& s, const ir::Instr* v, const char* what) {
  TileOperand o = tileOperand(v);
  if (!o.valid) failOp(s, std::string(what) + " must be a tile or a number, got " + typeToString(v->type));
  return o;
}

bool isIdentity(const std::vector<int64_t>& perm) {
  for (size_t d = 0; d < perm.size(); ++d)
    if (perm[d] != static_cast<int64_t>(d)) return false;
  return true;
}

int64_t normaliseAxis(const Site& s, int64_t axis, size_t rank) {
  int64_t r = static_cast<int64_t>(rank);
  if (axis < -r || axis >= r)
    failOp(s, "axis " + std::to_string(axis) + " is out of range for a " + std::to_string(rank) + "-d tile");
  return axis < 0 ? axis + r : axis;
}

const Type* arrayArg(const Site& s, const ir::Instr* v) {
  if (!v->type->is(TypeKind::Array)) failOp(s, "expected an array, got " + typeToString(v->type));
  return v->type;
}

// An index: an integer, or a 0-d integer tile (cuTile's scalars: a loaded
// element, a sum); as i64.
bool isIndex(const Type* x) {
  if (x->isTile()) return x->shape.empty() && scalarKind(x->scalar) == ScalarKind::Int;
  return x->isInt() || x->isBool();
}
ir::Instr* indexI64(Emitter& e, ir::Instr* v) {
  if (v->type->isTile()) v = e.intrinsic(ir::Intrinsic::TileItem, scalarTy(v->type->scalar), {v});
  return e.convert(v, i64Ty());
}

// The tile coordinates of load/store: an int or a tuple of ints, one per dimension.
std::vector<ir::Instr*> coordinates(const Site& s, Emitter* e, ir::Instr* index, int ndim) {
  std::vector<ir::Instr*> out;
  const Type* t = index->type;
  size_t n = t->is(TypeKind::Tuple) ? t->elems.size() : 1;
  bool ints = t->is(TypeKind::Tuple) ? std::all_of(t->elems.begin(), t->elems.end(), isIndex) : isIndex(t);
  if (!ints || static_cast<int>(n) != ndim)
    failOp(s, "index must be " + std::to_string(ndim) + " integer(s) for a " + std::to_string(ndim) +
                  "-d array, got " + typeToString(t));
  if (!e) return out;
  std::vector<ir::Instr*> parts = t->is(TypeKind::Tuple) ? e->elements(index) : std::vector<ir::Instr*>{index};
  for (ir::Instr* p : parts) out.push_back(indexI64(*e, p));
  return out;
}

// The tuple (sym <name>, value): a bound method (x.f: its call row
// "method:<kind>.f" reads the receiver from it) or a tiled view.
const Type* taggedType(std::string name, const Type* value) { return tupleTy({symbolTy(name), value}); }
ir::Instr* emitTagged(Emitter& e, const Type* tagged, ir::Instr* value) {
  const Type* tag = tagged->elems[0];
  return e.emit(ir::Op::TupleMake, tagged, {e.constant(ir::Const::symbol(tag->name), tag), value});
}
// x.f as the bound method "method:<kind>.f" (kind: tile, array, tiledview).
const Type* boundMethodType(const Site& s, std::string_view kind) {
  return taggedType("method:" + std::string(kind) + "." + std::string(s.name), s.receiver->type);
}
ir::Instr* boundMethodLower(const Site& s, Emitter& e) { return emitTagged(e, s.instr->type, s.receiver); }

// The dtype symbol an array's or a tile's `.dtype` gives.
std::string dtypeSymbolOf(Scalar s) { return "numpy." + std::string(scalarNumbaName(s)); }

// ---- bid / num_blocks / cdiv / num_tiles ---------------------------------------

int gridAxis(const Site& s) {
  std::vector<ir::Instr*> a = s.bind({"axis"}, 1);
  int64_t axis = constIntArg(s, a[0], "axis");
  if (axis < 0 || axis > 2) failOp(s, "axis must be 0, 1 or 2, got " + std::to_string(axis));
  return static_cast<int>(axis);
}
const Type* gridRegType(const Site& s) {
  gridAxis(s);
  return i32Ty();
}
ir::Instr* bidLower(const Site& s, Emitter& e) { return e.intrinsic(kCtaid[gridAxis(s)], i32Ty(), {}); }
ir::Instr* numBlocksLower(const Site& s, Emitter& e) { return e.intrinsic(kNctaid[gridAxis(s)], i32Ty(), {}); }

// (x - 1) // y + 1 on two integers of one type, as cuTile computes it.
ir::Instr* emitCdiv(Emitter& e, ir::Instr* x, ir::Instr* y) {
  const Type* t = x->type;
  ir::Instr* one = e.constant(ir::Const::integer(1), t);
  ir::Instr* q = e.emit(ir::Op::FloorDiv, t, {e.emit(ir::Op::Sub, t, {x, one}), y});
  return e.emit(ir::Op::Add, t, {q, one});
}

// cdiv of tiles: elementwise -((-x) // y), rounding toward +inf as cuTile.
const Type* tileCdivType(const Site& s, const std::vector<ir::Instr*>& a) {
  std::vector<TileOperand> ops = {tileOperand(a[0]), tileOperand(a[1])};
  Scalar dt;
  std::string why;
  TileShapeV shape;
  if (!ops[0].valid || !ops[1].valid || !tileResultDtype(ops, &dt, &why)) failOp(s, "takes integers or integer tiles " + why);
  if (scalarKind(dt) != ScalarKind::Int) failOp(s, "takes integers or integer tiles");
  if (!broadcastTileShapes(ops[0].shape, ops[1].shape, &shape, &why)) failOp(s, why);
  return makeTile(s, dt, shape);
}
const Type* cdivType(const Site& s) {
  std::vector<ir::Instr*> a = s.bind({"x", "y"}, 2);
  if (a[0]->type->isTile() || a[1]->type->isTile()) return tileCdivType(s, a);
  if (!a[0]->type->isInt() || !a[1]->type->isInt()) failOp(s, "takes two integers");
  return binaryResultType(ir::Op::FloorDiv, a[0]->type, a[1]->type);
}
ir::Instr* cdivLower(const Site& s, Emitter& e) {
  std::vector<ir::Instr*> a = s.bind({"x", "y"}, 2);
  const Type* t = s.instr->type;
  if (t->isTile()) {
    ir::Instr* x = toTile(e, a[0], t->scalar, t->shape);
    ir::Instr* y = toTile(e, a[1], t->scalar, t->shape);
    ir::Instr* q = e.emit(ir::Op::FloorDiv, t, {e.emit(ir::Op::Neg, t, {x}), y});
    return e.emit(ir::Op::Neg, t, {q});
  }
  return emitCdiv(e, e.convert(a[0], t), e.convert(a[1], t));
}

// cdiv(arr.shape[axis], extent) as int32: the tiles of that extent along axis.
ir::Instr* emitNumTiles(Emitter& e, ir::Instr* arr, int64_t axis, int64_t extent) {
  return e.convert(emitCdiv(e, e.arrayDim(arr, static_cast<int>(axis)), e.constInt(extent)), i32Ty());
}

const Type* numTilesType(const Site& s) {
  std::vector<ir::Instr*> a = s.bind({"array", "axis", "shape", "order"}, 3);
  const Type* arr = arrayArg(s, a[0]);
  normaliseAxis(s, constIntArg(s, a[1], "axis"), arr->ndim);
  constInts(s, a[2], "shape");
  return i32Ty();
}
ir::Instr* numTilesLower(const Site& s, Emitter& e) {
  std::vector<ir::Instr*> a = s.bind({"array", "axis", "shape", "order"}, 3);
  const Type* arr = a[0]->type;
  int64_t axis = normaliseAxis(s, constIntArg(s, a[1], "axis"), arr->ndim);
  TileShapeV shape = constInts(s, a[2], "shape");
  if (static_cast<int>(shape.size()) != arr->ndim) failOp(s, "shape must have one extent per array dimension");
  return emitNumTiles(e, a[0], axis, shape[axis]);
}

// ---- load / store -----------------------------------------------------------------

const std::vector<std::string_view> kLoadParams = {"array", "index", "shape", "order", "padding_mode",
                                                    "check_bounds", "latency", "allow_tma",
                                                    "memory_order", "memory_scope"};
const std::vector<std::string_view> kStoreParams = {"array", "index", "tile", "order", "check_bounds",
                                                     "latency", "allow_tma", "memory_order", "memory_scope"};

// load/store's `order`: tile dimension i is array axis order[i] ('C': the
// identity, 'F': reversed, or a permutation).
std::vector<int64_t> axisOrder(const Site& s, const ir::Instr* order, int ndim) {
  std::vector<int64_t> perm(ndim);
  for (int d = 0; d < ndim; ++d) perm[d] = d;
  if (!order) return perm;
  auto c = constantOf(order);
  if (c && (c->kind == ir::Const::Kind::None || (c->kind == ir::Const::Kind::Str && c->s == "C"))) return perm;
  if (c && c->kind == ir::Const::Kind::Str && c->s == "F") {
    std::reverse(perm.begin(), perm.end());
    return perm;
  }
  if (c && c->kind == ir::Const::Kind::Tuple && static_cast<int>(c->elems.size()) == ndim) {
    std::vector<int64_t> p;
    for (const ir::Const& e : c->elems)
      if (e.kind == ir::Const::Kind::Int) p.push_back(e.i < 0 ? e.i + ndim : e.i);
    std::vector<int64_t> sorted = p;
    std::sort(sorted.begin(), sorted.end());
    if (sorted == perm) return p;
  }
  failOp(s, "order must be 'C', 'F' or a constant permutation of the array's axes");
}

ir::TilePadding paddingArg(const Site& s, const ir::Instr* v) {
  if (!v) return ir::TilePadding::Undetermined;
  auto c = constantOf(v);
  static const std::pair<const char*, ir::TilePadding> kModes[] = {
      {"UNDETERMINED", ir::TilePadding::Undetermined}, {"ZERO", ir::TilePadding::Zero},
      {"NEG_ZERO", ir::TilePadding::NegZero},          {"NAN", ir::TilePadding::Nan},
      {"POS_INF", ir::TilePadding::PosInf},            {"NEG_INF", ir::TilePadding::NegInf}};
  // A symbol's name is in its type (the value may still be a getattr while typing).
  std::string sym = v->type->is(TypeKind::Symbol) ? v->type->name : c && c->kind == ir::Const::Kind::Symbol ? c->s : "";
  for (const auto& [name, mode] : kModes)
    if (sym == std::string("cudajit.tile.PaddingMode.") + name) return mode;
  failOp(s, "padding_mode must be a ct.PaddingMode member");
}

// load's and tiled_view's checks: a tile shape with one extent per
// dimension of `arr`, and a padding its dtype allows (integers and bools pad
// with zeros only).
void checkExtents(const Site& s, const Type* arr, const TileShapeV& shape, const char* what) {
  if (static_cast<int>(shape.size()) != arr->ndim)
    failOp(s, std::string(what) + " " + tileShapeText(shape) + " must have one extent per dimension of the " +
                  std::to_string(arr->ndim) + "-d array");
}
void checkPadding(const Site& s, const Type* arr, ir::TilePadding pad) {
  bool is_float = scalarKind(arr->scalar) == ScalarKind::Float;
  if (!is_float && pad != ir::TilePadding::Undetermined && pad != ir::TilePadding::Zero)
    failOp(s, "this padding_mode needs a float array, not " + std::string(scalarNumbaName(arr->scalar)));
}

const Type* loadType(const Site& s) {
  std::vector<ir::Instr*> a = s.bind(kLoadParams, 3);
  const Type* arr = arrayArg(s, a[0]);
  coordinates(s, nullptr, a[1], arr->ndim);
  TileShapeV shape = constInts(s, a[2], "shape");
  if (shape.empty()) return makeTile(s, arr->scalar, {});   // shape=(): the element at index
  checkExtents(s, arr, shape, "shape");
  axisOrder(s, a[3], arr->ndim);
  checkPadding(s, arr, paddingArg(s, a[4]));
  return makeTile(s, arr->scalar, shape);
}

ir::Instr* loadLower(const Site& s, Emitter& e) {
  std::vector<ir::Instr*> a = s.bind(kLoadParams, 3);
  int nd = a[0]->type->ndim;
  std::vector<int64_t> order = axisOrder(s, a[3], nd);
  std::vector<ir::Instr*> coords = coordinates(s, &e, a[1], nd);
  if (s.instr->type->shape.empty() && nd > 0) {   // shape=(): a tile of ones at the element, as 0-d
    std::vector<ir::Instr*> operands = {a[0]};
    operands.insert(operands.end(), coords.begin(), coords.end());
    ir::Instr* one = e.intrinsic(ir::Intrinsic::TileLoad, tileTy(s.instr->type->scalar, TileShapeV(nd, 1)), operands,
                                 {static_cast<int64_t>(paddingArg(s, a[4]))});
    return e.intrinsic(ir::Intrinsic::TileReshape, s.instr->type, {one});
  }
  // Loaded in the array's axis order, then permuted into the tile's.
  TileShapeV shape(nd);
  std::vector<ir::Instr*> operands(1 + nd);
  operands[0] = a[0];
  for (int i = 0; i < nd; ++i) {
    shape[order[i]] = s.instr->type->shape[i];
    operands[1 + order[i]] = coords[i];
  }
  const Type* loaded = tileTy(s.instr->type->scalar, shape);
  ir::Instr* t = e.intrinsic(ir::Intrinsic::TileLoad, loaded, operands, {static_cast<int64_t>(paddingArg(s, a[4]))});
  if (isIdentity(order)) return t;
  return e.intrinsic(ir::Intrinsic::TilePermute, s.instr->type, {t}, order);
}

const Type* storeType(const Site& s) {
  std::vector<ir::Instr*> a = s.bind(kStoreParams, 3);
  const Type* arr = arrayArg(s, a[0]);
  if (arr->readonly) failOp(s, "the array is read-only");
  coordinates(s, nullptr, a[1], arr->ndim);
  TileOperand t = valueArg(s, a[2], "tile");
  if (static_cast<int>(t.shape.size()) > arr->ndim)
    failOp(s, "a " + std::to_string(t.shape.size()) + "-d tile does not fit a " + std::to_string(arr->ndim) + "-d array");
  axisOrder(s, a[3], arr->ndim);
  return noneTy();
}

ir::Instr* storeLower(const Site& s, Emitter& e) {
  std::vector<ir::Instr*> a = s.bind(kStoreParams, 3);
  const Type* arr = a[0]->type;
  TileOperand t = tileOperand(a[2]);
  TileShapeV shape(arr->ndim - t.shape.size(), 1);
  shape.insert(shape.end(), t.shape.begin(), t.shape.end());
  std::vector<int64_t> order = axisOrder(s, a[3], arr->ndim);
  std::vector<ir::Instr*> coords = coordinates(s, &e, a[1], arr->ndim);
  ir::Instr* tile = toTile(e, a[2], arr->scalar, shape);
  std::vector<ir::Instr*> operands(1 + arr->ndim);
  operands[0] = a[0];
  if (!isIdentity(order)) {
    // Tile dimension i goes to array axis order[i]: permute by the inverse first.
    std::vector<int64_t> inverse(arr->ndim);
    TileShapeV stored(arr->ndim);
    for (int i = 0; i < arr->ndim; ++i) {
      inverse[order[i]] = i;
      stored[order[i]] = shape[i];
    }
    tile = e.intrinsic(ir::Intrinsic::TilePermute, tileTy(arr->scalar, stored), {tile}, inverse);
  }
  for (int i = 0; i < arr->ndim; ++i) operands[1 + order[i]] = coords[i];
  operands.push_back(tile);
  e.intrinsic(ir::Intrinsic::TileStore, voidTy(), operands);
  return nullptr;
}

// ---- tiled views --------------------------------------------------------------------
// x.tiled_view(tile_shape, padding_mode=...): the array fixed to one tile shape
// and padding, a compile-time wrapper with no code of its own: the tuple
// (sym TiledView:<shape>:<padding>, array), whose load/store/num_tiles are
// ct.load/ct.store/ct.num_tiles with those constants.

constexpr std::string_view kTiledViewPrefix = "cudajit.tile.TiledView:";

struct TiledView {
  TileShapeV shape;
  ir::TilePadding padding = ir::TilePadding::Undetermined;
};

bool isTiledView(const Type* t) {
  return t->is(TypeKind::Tuple) && t->elems.size() == 2 && t->elems[0]->is(TypeKind::Symbol) &&
         t->elems[0]->name.rfind(kTiledViewPrefix, 0) == 0 && t->elems[1]->is(TypeKind::Array);
}

const Type* tiledViewType(const TiledView& v, const Type* array) {
  std::string name(kTiledViewPrefix);
  for (size_t d = 0; d < v.shape.size(); ++d) name += (d ? "x" : "") + std::to_string(v.shape[d]);
  name += ":" + std::to_string(static_cast<int>(v.padding));
  return taggedType(name, array);
}

TiledView tiledViewOf(const Type* t) {
  TiledView v;
  std::string_view rest = std::string_view(t->elems[0]->name).substr(kTiledViewPrefix.size());
  size_t colon = rest.find(':');
  std::string_view dims = rest.substr(0, colon);
  while (!dims.empty()) {
    size_t x = dims.find('x');
    v.shape.push_back(std::stoll(std::string(dims.substr(0, x))));
    dims = x == std::string_view::npos ? std::string_view() : dims.substr(x + 1);
  }
  v.padding = static_cast<ir::TilePadding>(std::stoi(std::string(rest.substr(colon + 1))));
  return v;
}

// The view a TiledView method is called on (receiver: tuple(sym method:..., view)).
const Type* viewOfMethod(const Site& s) { return s.receiver->type->elems[1]; }
ir::Instr* viewArray(const Site& s, Emitter& e) { return e.element(e.element(s.receiver, 1), 1); }

const Type* arrayMethodType(const Site& s) { return boundMethodType(s, "array"); }

TiledView tiledViewArgs(const Site& s) {
  std::vector<ir::Instr*> a = s.bind({"tile_shape", "padding_mode", "traversal_steps"}, 1);
  const Type* arr = s.receiver->type->elems[1];
  TiledView v;
  v.shape = constInts(s, a[0], "tile_shape");
  checkExtents(s, arr, v.shape, "tile_shape");
  makeTile(s, arr->scalar, v.shape);   // a tile shape: powers of two
  v.padding = paddingArg(s, a[1]);
  checkPadding(s, arr, v.padding);
  if (a[2] && !a[2]->type->is(TypeKind::None) &&
      constInts(s, a[2], "traversal_steps") != v.shape)
    failOp(s, "traversal_steps other than the tile shape (overlapping or gapped windows) are not supported by "
              "cudajit.tile (docs/tiles.md)");
  return v;
}
const Type* tiledViewMakeType(const Site& s) { return tiledViewType(tiledViewArgs(s), s.receiver->type->elems[1]); }
ir::Instr* tiledViewMakeLower(const Site& s, Emitter& e) { return emitTagged(e, s.instr->type, e.element(s.receiver, 1)); }

// x.slice(axis, start, stop): a view of rows start..stop-1 along a constant
// axis, no copy (cuTile's Array.slice). start and stop are integers or 0-d
// integer tiles; cuTile requires 0 <= start <= stop <= N and so do we (an
// inverted pair gives an empty view). A C array sliced along its first axis
// stays C (its rows are still contiguous), along another it is A; an F array
// mirrored.
std::vector<ir::Instr*> arraySliceArgs(const Site& s) { return s.bind({"axis", "start", "stop"}, 3); }
int64_t arraySliceAxis(const Site& s, const std::vector<ir::Instr*>& a) {
  return normaliseAxis(s, constIntArg(s, a[0], "axis"), s.receiver->type->elems[1]->ndim);
}
const Type* arraySliceType(const Site& s) {
  std::vector<ir::Instr*> a = arraySliceArgs(s);
  const Type* arr = s.receiver->type->elems[1];
  int64_t axis = arraySliceAxis(s, a);
  for (int k = 1; k < 3; ++k)
    if (!isIndex(a[k]->type))
      failOp(s, std::string(k == 1 ? "start" : "stop") + " must be an integer, got " + typeToString(a[k]->type));
  Layout layout = arr->layout;
  if (layout == Layout::C && axis != 0) layout = Layout::A;
  if (layout == Layout::F && axis != arr->ndim - 1) layout = Layout::A;
  return arrayTy(arr->scalar, arr->ndim, layout, arr->space, arr->readonly);
}
ir::Instr* arraySliceLower(const Site& s, Emitter& e) {
  std::vector<ir::Instr*> a = arraySliceArgs(s);
  ir::Instr* arr = e.element(s.receiver, 1);
  int64_t axis = arraySliceAxis(s, a);
  ir::Instr* start = indexI64(e, a[1]);
  ir::Instr* stop = indexI64(e, a[2]);
  std::vector<ir::Instr*> shape, strides;
  ir::Instr* offset = e.constInt(0);
  for (int d = 0; d < arr->type->ndim; ++d) {
    ir::Instr* n = e.arrayDim(arr, d);
    ir::Instr* stride = e.arrayStride(arr, d);
    if (d == axis) {
      ir::Instr* len = e.emit(ir::Op::Sub, i64Ty(), {stop, start});
      ir::Instr* empty = e.emit(ir::Op::Lt, boolTy(), {len, e.constInt(0)});
      n = e.emit(ir::Op::Select, i64Ty(), {empty, e.constInt(0), len});
      offset = e.emit(ir::Op::Mul, i64Ty(), {start, stride});
    }
    shape.push_back(n);
    strides.push_back(stride);
  }
  std::vector<ir::Instr*> ops = {arr, offset};
  ops.insert(ops.end(), shape.begin(), shape.end());
  ops.insert(ops.end(), strides.begin(), strides.end());
  return e.emit(ir::Op::ArrayView, s.instr->type, ops);
}

// view.load / view.store / view.num_tiles / view.tile_shape / view.dtype:
// attributes of a tuple, which only a tiled view has.
void expectTiledView(const Site& s) {
  if (!isTiledView(s.receiver->type))
    s.ctx.fail(s.instr, "getattr ." + std::string(s.name),
               typeToString(s.receiver->type) + " has no attribute '" + std::string(s.name) + "'");
}
const Type* viewMethodType(const Site& s) {
  expectTiledView(s);
  return boundMethodType(s, "tiledview");
}
const Type* viewShapeType(const Site& s) {
  expectTiledView(s);
  return tupleTy(std::vector<const Type*>(tiledViewOf(s.receiver->type).shape.size(), i64Ty()));
}
ir::Instr* viewShapeLower(const Site& s, Emitter& e) {
  std::vector<ir::Instr*> dims;
  for (int64_t d : tiledViewOf(s.receiver->type).shape) dims.push_back(e.constInt(d));
  return e.emit(ir::Op::TupleMake, s.instr->type, dims);
}
std::string viewDtypeSymbol(const Site& s) { return dtypeSymbolOf(s.receiver->type->elems[1]->scalar); }
const Type* viewDtypeType(const Site& s) {
  expectTiledView(s);
  return symbolTy(viewDtypeSymbol(s));
}
ir::Instr* viewDtypeLower(const Site& s, Emitter& e) { return e.constant(ir::Const::symbol(viewDtypeSymbol(s)), s.instr->type); }

const Type* viewLoadType(const Site& s) {
  std::vector<ir::Instr*> a = s.bind({"index", "latency", "allow_tma"}, 1);
  const Type* arr = viewOfMethod(s)->elems[1];
  coordinates(s, nullptr, a[0], arr->ndim);
  return makeTile(s, arr->scalar, tiledViewOf(viewOfMethod(s)).shape);
}
ir::Instr* viewLoadLower(const Site& s, Emitter& e) {
  std::vector<ir::Instr*> a = s.bind({"index", "latency", "allow_tma"}, 1);
  TiledView v = tiledViewOf(viewOfMethod(s));
  std::vector<ir::Instr*> operands = {viewArray(s, e)};
  for (ir::Instr* c : coordinates(s, &e, a[0], static_cast<int>(v.shape.size()))) operands.push_back(c);
  return e.intrinsic(ir::Intrinsic::TileLoad, s.instr->type, operands, {static_cast<int64_t>(v.padding)});
}

const Type* viewStoreType(const Site& s) {
  std::vector<ir::Instr*> a = s.bind({"index", "tile", "latency", "allow_tma"}, 2);
  const Type* arr = viewOfMethod(s)->elems[1];
  if (arr->readonly) failOp(s, "the array is read-only");
  coordinates(s, nullptr, a[0], arr->ndim);
  TileOperand t = valueArg(s, a[1], "tile");
  TileShapeV shape = tiledViewOf(viewOfMethod(s)).shape, joined;
  std::string why;
  if (!broadcastTileShapes(t.shape, shape, &joined, &why) || joined != shape)
    failOp(s, "a tile of shape " + tileShapeText(t.shape) + " does not fit the view's tiles of " + tileShapeText(shape));
  return noneTy();
}
ir::Instr* viewStoreLower(const Site& s, Emitter& e) {
  std::vector<ir::Instr*> a = s.bind({"index", "tile", "latency", "allow_tma"}, 2);
  ir::Instr* arr = viewArray(s, e);
  TiledView v = tiledViewOf(viewOfMethod(s));
  std::vector<ir::Instr*> operands = {arr};
  for (ir::Instr* c : coordinates(s, &e, a[0], static_cast<int>(v.shape.size()))) operands.push_back(c);
  operands.push_back(toTile(e, a[1], arr->type->scalar, v.shape));
  e.intrinsic(ir::Intrinsic::TileStore, voidTy(), operands);
  return nullptr;
}

const Type* viewNumTilesType(const Site& s) {
  std::vector<ir::Instr*> a = s.bind({"axis"}, 1);
  normaliseAxis(s, constIntArg(s, a[0], "axis"), tiledViewOf(viewOfMethod(s)).shape.size());
  return i32Ty();
}
ir::Instr* viewNumTilesLower(const Site& s, Emitter& e) {
  std::vector<ir::Instr*> a = s.bind({"axis"}, 1);
  TiledView v = tiledViewOf(viewOfMethod(s));
  int64_t axis = normaliseAxis(s, constIntArg(s, a[0], "axis"), v.shape.size());
  return emitNumTiles(e, viewArray(s, e), axis, v.shape[axis]);
}

// ---- factories ------------------------------------------------------------------------

struct FullArgs {
  TileShapeV shape;
  ir::Instr* value = nullptr;   // null: zeros / ones
  Scalar dtype = Scalar::Float32;
};

FullArgs fullArgs(const Site& s) {
  FullArgs f;
  std::string_view fn = s.arg;
  if (fn == "full") {
    std::vector<ir::Instr*> a = s.bind({"shape", "fill_value", "dtype"}, 2);
    f.shape = constInts(s, a[0], "shape");
    f.value = a[1];
    TileOperand v = valueArg(s, a[1], "fill_value");
    if (v.tile) failOp(s, "fill_value must be a number");
    if (a[2]) f.dtype = dtypeArg(s, a[2]);
    else tileResultDtype({v}, &f.dtype, nullptr);   // a lone scalar: int32, float32 or bool
  } else {
    std::vector<ir::Instr*> a = s.bind({"shape", "dtype"}, 1);
    f.shape = constInts(s, a[0], "shape");
    if (a[1]) f.dtype = dtypeArg(s, a[1]);
  }
  return f;
}
const Type* fullType(const Site& s) {
  FullArgs f = fullArgs(s);
  return makeTile(s, f.dtype, f.shape);
}
ir::Instr* fullLower(const Site& s, Emitter& e) {
  FullArgs f = fullArgs(s);
  ir::Instr* v = f.value ? f.value : e.constant(ir::Const::integer(s.arg == "ones" ? 1 : 0), i64Ty());
  return e.intrinsic(ir::Intrinsic::TileFull, s.instr->type, {e.convert(v, scalarTy(f.dtype))});
}

const std::vector<std::string_view> kArangeParams = {"size", "dtype", "start", "step"};
const Type* arangeType(const Site& s) {
  std::vector<ir::Instr*> a = s.bind(kArangeParams, 1);
  for (int k = 2; k < 4; ++k)
    if (a[k] && !a[k]->type->isScalar()) failOp(s, "start and step must be numbers");
  int64_t n = constIntArg(s, a[0], "size");
  Scalar dt = a[1] ? dtypeArg(s, a[1]) : Scalar::Int32;
  if (scalarKind(dt) != ScalarKind::Int && scalarKind(dt) != ScalarKind::Float)
    failOp(s, "dtype must be an integer or float type");
  return makeTile(s, dt, {n});
}
ir::Instr* arangeLower(const Site& s, Emitter& e) {
  std::vector<ir::Instr*> a = s.bind(kArangeParams, 1);
  const Type* t = s.instr->type;
  ir::Instr* r = e.intrinsic(ir::Intrinsic::TileArange, t, {});
  if (a[3]) r = e.emit(ir::Op::Mul, t, {r, toTile(e, a[3], t->scalar, t->shape)});
  if (a[2]) r = e.emit(ir::Op::Add, t, {r, toTile(e, a[2], t->scalar, t->shape)});
  return r;
}

// ---- functions of one tile and methods ------------------------------------------------
// A rule's subject: the first argument of ct.f(x, ...), or the receiver of
// x.f(...) (a bound method: tuple(sym method:tile.f, x)).

// The subject as passed: positional or x=...; null for a method (the receiver holds it).
ir::Instr* subjectArgument(const Site& s) {
  if (s.receiver) return nullptr;
  if (!s.args.empty()) return s.args[0];
  for (size_t k = 0; k < s.kw_names.size(); ++k)
    if (s.kw_names[k] == "x") return s.kw_args[k];
  failOp(s, "missing required argument 'x'");
}
const Type* subjectType(const Site& s) {
  ir::Instr* x = subjectArgument(s);
  return x ? x->type : s.receiver->type->elems[1];
}
ir::Instr* subject(const Site& s, Emitter& e) {
  ir::Instr* x = subjectArgument(s);
  return x ? x : e.element(s.receiver, 1);
}
// The remaining arguments bound to `params` (the subject excluded).
std::vector<ir::Instr*> rest(const Site& s, const std::vector<std::string_view>& params, size_t required) {
  std::vector<std::string_view> all = params;
  if (!s.receiver) all.insert(all.begin(), "x");
  std::vector<ir::Instr*> a = s.bind(all, required + (s.receiver ? 0 : 1));
  if (!s.receiver) a.erase(a.begin());
  return a;
}
const Type* subjectTile(const Site& s) {
  const Type* t = subjectType(s);
  if (t->isTile()) return t;
  if (t->isScalar()) return tileTy(t->scalar, {});
  failOp(s, "x must be a tile, got " + typeToString(t));
}
// The subject as a tile (a scalar becomes a 0-d tile).
ir::Instr* subjectAsTile(const Site& s, Emitter& e) {
  ir::Instr* x = subject(s, e);
  if (x->type->isTile()) return x;
  return e.intrinsic(ir::Intrinsic::TileFull, tileTy(x->type->scalar, {}), {x});
}

const Type* astypeType(const Site& s) {
  std::vector<ir::Instr*> a = rest(s, {"dtype", "rounding_mode"}, 1);
  Scalar dt = dtypeArg(s, a[0]);
  const Type* x = subjectType(s);
  if (x->isScalar()) return scalarTy(dt);
  if (!x->isTile()) failOp(s, "x must be a tile, got " + typeToString(x));
  return makeTile(s, dt, x->shape);
}
ir::Instr* astypeLower(const Site& s, Emitter& e) {
  ir::Instr* x = subject(s, e);
  if (x->type == s.instr->type) return x;
  if (!x->type->isTile()) return e.convert(x, s.instr->type);
  return e.emit(ir::Op::Cast, s.instr->type, {x});
}

// bitcast(x, dtype): each element's bits read as dtype (one width).
const Type* bitcastType(const Site& s) {
  std::vector<ir::Instr*> a = rest(s, {"dtype"}, 1);
  Scalar dt = dtypeArg(s, a[0]);
  const Type* x = subjectTile(s);
  ScalarKind from = scalarKind(x->scalar), to = scalarKind(dt);
  if ((from != ScalarKind::Int && from != ScalarKind::Float) || (to != ScalarKind::Int && to != ScalarKind::Float) ||
      scalarBits(x->scalar) != scalarBits(dt))
    failOp(s, "bitcast needs integer or float dtypes of one width, not " + std::string(scalarNumbaName(x->scalar)) +
                  " to " + std::string(scalarNumbaName(dt)));
  return subjectType(s)->isScalar() ? scalarTy(dt) : makeTile(s, dt, x->shape);
}
ir::Instr* bitcastLower(const Site& s, Emitter& e) {
  return e.intrinsic(ir::Intrinsic::Bitcast, s.instr->type, {subject(s, e)});
}

const Type* reshapeType(const Site& s) {
  std::vector<ir::Instr*> a = rest(s, {"shape"}, 1);
  const Type* x = subjectTile(s);
  TileShapeV out;
  std::string why;
  if (!reshapeTileShape(x->shape, constInts(s, a[0], "shape"), &out, &why)) failOp(s, why);
  return makeTile(s, x->scalar, out);
}
ir::Instr* reshapeLower(const Site& s, Emitter& e) {
  ir::Instr* x = subjectAsTile(s, e);
  if (x->type == s.instr->type) return x;
  return e.intrinsic(ir::Intrinsic::TileReshape, s.instr->type, {x});
}

// cat((x, y), axis): cuTile's extents are powers of two, so x and y have
// the same shape. Lowered with what exists: both get a new dimension of 2
// before `axis` (broadcast), a select by arange along it stacks them, and a
// C-order reshape merges (2, n) into 2n.
const Type* catType(const Site& s) {
  std::vector<ir::Instr*> a = s.bind({"tiles", "axis"}, 2);
  const Type* tiles = a[0]->type;
  if (!tiles->is(TypeKind::Tuple) || tiles->elems.size() != 2 || !tiles->elems[0]->isTile() ||
      !tiles->elems[1]->isTile())
    failOp(s, "tiles must be a tuple of two tiles, got " + typeToNumbaString(tiles));
  const Type *x = tiles->elems[0], *y = tiles->elems[1];
  if (x->scalar != y->scalar)
    failOp(s, "the tiles have different dtypes (" + typeToNumbaString(x) + ", " + typeToNumbaString(y) +
                  "): astype one of them");
  if (x->shape != y->shape)
    failOp(s, "the tiles' shapes differ (" + typeToNumbaString(x) + ", " + typeToNumbaString(y) +
                  "): tile extents are powers of two, so cat takes two tiles of one shape");
  int64_t axis = normaliseAxis(s, constIntArg(s, a[1], "axis"), x->shape.size());
  TileShapeV out = x->shape;
  out[axis] *= 2;
  return makeTile(s, x->scalar, out);
}
// x and y (one shape) joined along `axis`: both stacked along a new axis by a
// select, merged by one reshape.
ir::Instr* emitCat(Emitter& e, ir::Instr* x, ir::Instr* y, int64_t axis) {
  auto withAt = [&](std::vector<int64_t> shape, int64_t extent) {
    shape.insert(shape.begin() + axis, extent);
    return shape;
  };
  const Scalar dtype = x->type->scalar;
  const std::vector<int64_t> stacked = withAt(x->type->shape, 2);
  ir::Instr* x1 = e.intrinsic(ir::Intrinsic::TileReshape, tileTy(dtype, withAt(x->type->shape, 1)), {x});
  ir::Instr* y1 = e.intrinsic(ir::Intrinsic::TileReshape, tileTy(dtype, withAt(y->type->shape, 1)), {y});
  std::vector<int64_t> along(stacked.size(), 1);
  along[axis] = 2;
  ir::Instr* which = e.intrinsic(ir::Intrinsic::TileReshape, tileTy(Scalar::Int32, along),
                                 {e.intrinsic(ir::Intrinsic::TileArange, tileTy(Scalar::Int32, {2}), {})});
  ir::Instr* zero = toTile(e, e.constant(ir::Const::integer(0), i32Ty()), Scalar::Int32, along);
  ir::Instr* first = e.emit(ir::Op::Eq, tileTy(Scalar::Bool, along), {which, zero});
  ir::Instr* both = e.emit(ir::Op::Select, tileTy(dtype, stacked),
                           {toTile(e, first, Scalar::Bool, stacked), toTile(e, x1, dtype, stacked), toTile(e, y1, dtype, stacked)});
  std::vector<int64_t> out = x->type->shape;
  out[axis] *= 2;
  return e.intrinsic(ir::Intrinsic::TileReshape, tileTy(dtype, out), {both});
}

ir::Instr* catLower(const Site& s, Emitter& e) {
  std::vector<ir::Instr*> a = s.bind({"tiles", "axis"}, 2);
  ir::Instr *x = e.element(a[0], 0), *y = e.element(a[0], 1);
  int64_t axis = normaliseAxis(s, constIntArg(s, a[1], "axis"), x->type->shape.size());
  return emitCat(e, x, y, axis);
}

const Type* expandDimsType(const Site& s) {
  std::vector<ir::Instr*> a = rest(s, {"axis"}, 1);
  const Type* x = subjectTile(s);
  TileShapeV out;
  std::string why;
  if (!expandDimsTileShape(x->shape, constIntArg(s, a[0], "axis"), &out, &why)) failOp(s, why);
  return makeTile(s, x->scalar, out);
}

const Type* broadcastToType(const Site& s) {
  std::vector<ir::Instr*> a = rest(s, {"shape"}, 1);
  const Type* x = subjectTile(s);
  TileShapeV to = constInts(s, a[0], "shape");
  std::string why;
  if (!broadcastTileShapeTo(x->shape, to, &why)) failOp(s, why);
  return makeTile(s, x->scalar, to);
}
ir::Instr* broadcastToLower(const Site& s, Emitter& e) {
  ir::Instr* x = subject(s, e);
  return toTile(e, x, s.instr->type->scalar, s.instr->type->shape);
}

// permute(x, axes) / transpose(x, axis0=None, axis1=None): the permutation.
std::vector<int64_t> permutation(const Site& s, const Type* x) {
  std::vector<int64_t> perm;
  TileShapeV out;
  std::string why;
  if (s.arg == "permute") {
    std::vector<ir::Instr*> a = rest(s, {"axes"}, 1);
    perm = constInts(s, a[0], "axes");
    if (!permuteTileShape(x->shape, perm, &out, &why)) failOp(s, why);
    for (int64_t& p : perm)
      if (p < 0) p += static_cast<int64_t>(x->shape.size());
    return perm;
  }
  std::vector<ir::Instr*> a = rest(s, {"axis0", "axis1"}, 0);
  std::optional<int64_t> a0, a1;
  if (a[0] && !a[0]->type->is(TypeKind::None)) a0 = constIntArg(s, a[0], "axis0");
  if (a[1] && !a[1]->type->is(TypeKind::None)) a1 = constIntArg(s, a[1], "axis1");
  if (!transposeTileShape(x->shape, a0, a1, &out, &why)) failOp(s, why);
  int64_t r = static_cast<int64_t>(x->shape.size());
  for (int64_t d = 0; d < r; ++d) perm.push_back(d);
  if (!a0 && !a1) {
    std::reverse(perm.begin(), perm.end());
  } else {
    int64_t i = a0.value_or(0), j = a1.value_or(0);
    if (i < 0) i += r;
    if (j < 0) j += r;
    std::swap(perm[i], perm[j]);
  }
  return perm;
}
const Type* permuteType(const Site& s) {
  const Type* x = subjectTile(s);
  std::vector<int64_t> perm = permutation(s, x);
  TileShapeV out;
  for (int64_t p : perm) out.push_back(x->shape[p]);
  return makeTile(s, x->scalar, out);
}
ir::Instr* permuteLower(const Site& s, Emitter& e) {
  ir::Instr* x = subjectAsTile(s, e);
  std::vector<int64_t> perm = permutation(s, x->type);
  if (isIdentity(perm)) return x;
  return e.intrinsic(ir::Intrinsic::TilePermute, s.instr->type, {x}, perm);
}

const Type* itemType(const Site& s) {
  rest(s, {}, 0);
  const Type* x = subjectTile(s);
  if (tileElements(x) != 1) failOp(s, "item() of a tile of shape " + tileShapeText(x->shape) + " (one element needed)");
  return scalarTy(x->scalar);
}
ir::Instr* itemLower(const Site& s, Emitter& e) {
  ir::Instr* x = subject(s, e);
  if (!x->type->isTile()) return x;
  return e.intrinsic(ir::Intrinsic::TileItem, s.instr->type, {x});
}

// ---- reductions and scans --------------------------------------------------------------

struct ReduceSpec {
  ir::TileReduceKind kind;
  bool arg;        // argmax / argmin
};
ReduceSpec reduceSpec(std::string_view fn) {
  if (fn == "sum") return {ir::TileReduceKind::Sum, false};
  if (fn == "prod") return {ir::TileReduceKind::Prod, false};
  if (fn == "max") return {ir::TileReduceKind::Max, false};
  if (fn == "min") return {ir::TileReduceKind::Min, false};
  if (fn == "argmax") return {ir::TileReduceKind::Max, true};
  return {ir::TileReduceKind::Min, true};   // argmin
}

// The axes reduced (sorted, non-negative) and keepdims.
std::vector<int64_t> reduceAxes(const Site& s, const Type* x, bool* keepdims) {
  std::vector<ir::Instr*> a = rest(s, {"axis", "keepdims"}, 0);
  *keepdims = constBoolArg(s, a[1], "keepdims", false);
  std::vector<int64_t> axes;
  size_t r = x->shape.size();
  if (!a[0] || a[0]->type->is(TypeKind::None)) {
    for (size_t d = 0; d < r; ++d) axes.push_back(static_cast<int64_t>(d));
  } else {
    for (int64_t ax : constInts(s, a[0], "axis")) axes.push_back(normaliseAxis(s, ax, r));
  }
  std::sort(axes.begin(), axes.end());
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end()) failOp(s, "an axis is repeated");
  return axes;
}

const Type* reduceType(const Site& s) {
  const Type* x = subjectTile(s);
  bool keepdims = false;
  std::vector<int64_t> axes = reduceAxes(s, x, &keepdims);
  ReduceSpec spec = reduceSpec(s.arg);
  if (spec.arg && axes.size() != 1 && axes.size() != x->shape.size())
    failOp(s, "reduces over one axis or all of them");
  if (x->scalar == Scalar::Bool && !spec.arg) failOp(s, "is not defined on bool tiles; astype first");
  TileShapeV out;
  std::string why;
  if (!reduceTileShape(x->shape, axes, keepdims, &out, &why)) failOp(s, why);
  return makeTile(s, spec.arg ? Scalar::Int32 : x->scalar, out);
}

ir::Instr* reduceLower(const Site& s, Emitter& e) {
  ir::Instr* x = subjectAsTile(s, e);
  bool keepdims = false;
  std::vector<int64_t> axes = reduceAxes(s, x->type, &keepdims);
  ReduceSpec spec = reduceSpec(s.arg);
  if (spec.arg) {
    if (axes.size() > 1) {
      // argmax over every axis (reduceType allows no other set): of the C-order flattening.
      x = e.intrinsic(ir::Intrinsic::TileReshape, tileTy(x->type->scalar, {tileElements(x->type)}), {x});
      axes = {0};
    }
    if (x->type->shape.empty()) return e.intrinsic(ir::Intrinsic::TileFull, s.instr->type, {e.constant(ir::Const::integer(0), i32Ty())});
    TileShapeV kept = x->type->shape;
    kept[axes[0]] = 1;
    ir::Instr* r = e.intrinsic(ir::Intrinsic::TileArgReduce, tileTy(Scalar::Int32, kept), {x},
                               {static_cast<int64_t>(spec.kind), axes[0]});
    return r->type == s.instr->type ? r : e.intrinsic(ir::Intrinsic::TileReshape, s.instr->type, {r});
  }
  for (int64_t ax : axes) {
    TileShapeV kept = x->type->shape;
    kept[ax] = 1;
    x = e.intrinsic(ir::Intrinsic::TileReduce, tileTy(x->type->scalar, kept), {x}, {static_cast<int64_t>(spec.kind), ax});
  }
  return x->type == s.instr->type ? x : e.intrinsic(ir::Intrinsic::TileReshape, s.instr->type, {x});
}

const Type* scanType(const Site& s) {
  std::vector<ir::Instr*> a = rest(s, {"axis", "reverse"}, 0);
  const Type* x = subjectTile(s);
  if (x->shape.empty()) failOp(s, "needs a tile of at least one dimension");
  normaliseAxis(s, a[0] ? constIntArg(s, a[0], "axis") : 0, x->shape.size());
  constBoolArg(s, a[1], "reverse", false);
  if (x->scalar == Scalar::Bool) failOp(s, "is not defined on bool tiles; astype first");
  return x;
}
ir::Instr* scanLower(const Site& s, Emitter& e) {
  std::vector<ir::Instr*> a = rest(s, {"axis", "reverse"}, 0);
  ir::Instr* x = subject(s, e);
  int64_t axis = normaliseAxis(s, a[0] ? constIntArg(s, a[0], "axis") : 0, x->type->shape.size());
  bool reverse = constBoolArg(s, a[1], "reverse", false);
  auto kind = s.arg == "cumsum" ? ir::TileReduceKind::Sum : ir::TileReduceKind::Prod;
  return e.intrinsic(ir::Intrinsic::TileScan, x->type, {x}, {static_cast<int64_t>(kind), axis, reverse ? 1 : 0});
}

// reduce(x, axis, func, identity, keepdims) and scan(x, axis, func, identity,
// reverse): the combine function is read from its untyped body. One that
// returns op(a, b) of its two parameters, op one of + * & | ^ or
// maximum/minimum (ct., builtins, numpy), is the built-in reduction of that
// kind; the identity is folded in once (kind(identity, result)). Other
// functions are a CompileError naming what is supported.
std::optional<ir::TileReduceKind> combineKind(const ir::Function& fn) {
  if (fn.blocks.size() != 1 || fn.entry()->params.size() != 2) return std::nullopt;
  const ir::Instr* ret = fn.entry()->terminator();
  if (!ret || ret->op != ir::Op::Ret || ret->operands.size() != 1) return std::nullopt;
  const ir::Instr* p0 = fn.entry()->params[0].get();
  const ir::Instr* p1 = fn.entry()->params[1].get();
  auto ofParams = [&](const ir::Instr* a, const ir::Instr* b) { return (a == p0 && b == p1) || (a == p1 && b == p0); };
  const ir::Instr* v = ret->operands[0];
  if (v->operands.size() == 2 && ofParams(v->operands[0], v->operands[1])) {
    switch (v->op) {
      case ir::Op::Add: return ir::TileReduceKind::Sum;
      case ir::Op::Mul: return ir::TileReduceKind::Prod;
      case ir::Op::BitAnd: return ir::TileReduceKind::And;
      case ir::Op::BitOr: return ir::TileReduceKind::Or;
      case ir::Op::BitXor: return ir::TileReduceKind::Xor;
      default: break;
    }
  }
  if (v->op == ir::Op::Call && v->operands.size() == 3 && v->names.empty() && ofParams(v->operands[1], v->operands[2]) &&
      v->operands[0]->op == ir::Op::Const && v->operands[0]->cval.kind == ir::Const::Kind::Symbol) {
    const std::string& f = v->operands[0]->cval.s;
    for (const char* name : {"cudajit.tile.maximum", "builtins.max", "numpy.maximum", "numpy.fmax"})
      if (f == name) return ir::TileReduceKind::Max;
    for (const char* name : {"cudajit.tile.minimum", "builtins.min", "numpy.minimum", "numpy.fmin"})
      if (f == name) return ir::TileReduceKind::Min;
    if (f == "cudajit.tile.add" || f == "numpy.add") return ir::TileReduceKind::Sum;
    if (f == "cudajit.tile.mul" || f == "numpy.multiply") return ir::TileReduceKind::Prod;
  }
  return std::nullopt;
}

ir::TileReduceKind combineOf(const Site& s, const ir::Instr* func) {
  const Type* t = func->type;
  if (!t->is(TypeKind::Function))
    failOp(s, "func must be a Python function of two arguments, got " + typeToNumbaString(t));
  const ir::Function& fn = s.ctx.specializer().untypedFunction(s.ctx, s.instr, t->name);
  if (auto kind = combineKind(fn)) return *kind;
  failOp(s, "the combine function '" + fn.py_name + "' is not supported: cudajit.tile reduces and scans with a "
            "function that returns a + b, a * b, a & b, a | b, a ^ b, ct.maximum(a, b) or ct.minimum(a, b) of "
            "its two arguments");
}

bool combineAppliesTo(ir::TileReduceKind kind, Scalar dtype) {
  bool bits = kind == ir::TileReduceKind::And || kind == ir::TileReduceKind::Or || kind == ir::TileReduceKind::Xor;
  return !bits || scalarKind(dtype) == ScalarKind::Int;
}

// kind(identity, r): the identity folded in once.
ir::Instr* foldIdentity(Emitter& e, ir::TileReduceKind kind, ir::Instr* identity, ir::Instr* r) {
  const Type* t = r->type;
  ir::Instr* id = toTile(e, identity, t->scalar, t->shape);
  switch (kind) {
    case ir::TileReduceKind::Sum: return e.emit(ir::Op::Add, t, {id, r});
    case ir::TileReduceKind::Prod: return e.emit(ir::Op::Mul, t, {id, r});
    case ir::TileReduceKind::And: return e.emit(ir::Op::BitAnd, t, {id, r});
    case ir::TileReduceKind::Or: return e.emit(ir::Op::BitOr, t, {id, r});
    case ir::TileReduceKind::Xor: return e.emit(ir::Op::BitXor, t, {id, r});
    case ir::TileReduceKind::Max: case ir::TileReduceKind::Min: {
      ir::Instr* keep = e.emit(kind == ir::TileReduceKind::Max ? ir::Op::Gt : ir::Op::Lt, tileTy(Scalar::Bool, t->shape), {r, id});
      return e.emit(ir::Op::Select, t, {keep, r, id});
    }
  }
  return r;
}

const Type* reduceFuncType(const Site& s) {
  std::vector<ir::Instr*> a = s.bind({"x", "axis", "func", "identity", "keepdims"}, 4);
  const Type* x = a[0]->type;
  if (!x->isTile()) failOp(s, "x must be a tile, got " + typeToNumbaString(x));
  ir::TileReduceKind kind = combineOf(s, a[2]);
  if (!combineAppliesTo(kind, x->scalar) || x->scalar == Scalar::Bool)
    failOp(s, "the combine function does not apply to " + std::string(scalarNumbaName(x->scalar)) + " tiles");
  int64_t axis = normaliseAxis(s, constIntArg(s, a[1], "axis"), x->shape.size());
  TileShapeV out;
  std::string why;
  if (!reduceTileShape(x->shape, std::vector<int64_t>{axis}, constBoolArg(s, a[4], "keepdims", false), &out, &why)) failOp(s, why);
  return makeTile(s, x->scalar, out);
}
ir::Instr* reduceFuncLower(const Site& s, Emitter& e) {
  std::vector<ir::Instr*> a = s.bind({"x", "axis", "func", "identity", "keepdims"}, 4);
  ir::Instr* x = a[0];
  ir::TileReduceKind kind = combineOf(s, a[2]);
  int64_t axis = normaliseAxis(s, constIntArg(s, a[1], "axis"), x->type->shape.size());
  TileShapeV kept = x->type->shape;
  kept[axis] = 1;
  ir::Instr* r = e.intrinsic(ir::Intrinsic::TileReduce, tileTy(x->type->scalar, kept), {x}, {static_cast<int64_t>(kind), axis});
  r = foldIdentity(e, kind, a[3], r);
  return r->type == s.instr->type ? r : e.intrinsic(ir::Intrinsic::TileReshape, s.instr->type, {r});
}

const Type* scanFuncType(const Site& s) {
  std::vector<ir::Instr*> a = s.bind({"x", "axis", "func", "identity", "reverse"}, 4);
  const Type* x = a[0]->type;
  if (!x->isTile() || x->shape.empty()) failOp(s, "x must be a tile of at least one dimension, got " + typeToNumbaString(x));
  ir::TileReduceKind kind = combineOf(s, a[2]);
  if (kind != ir::TileReduceKind::Sum && kind != ir::TileReduceKind::Prod)
    failOp(s, "scans with a combine function that adds or multiplies (a + b, a * b); others are not built yet");
  if (x->scalar == Scalar::Bool) failOp(s, "is not defined on bool tiles; astype first");
  normaliseAxis(s, constIntArg(s, a[1], "axis"), x->shape.size());
  constBoolArg(s, a[4], "reverse", false);
  return x;
}
ir::Instr* scanFuncLower(const Site& s, Emitter& e) {
  std::vector<ir::Instr*> a = s.bind({"x", "axis", "func", "identity", "reverse"}, 4);
  ir::Instr* x = a[0];
  ir::TileReduceKind kind = combineOf(s, a[2]);
  int64_t axis = normaliseAxis(s, constIntArg(s, a[1], "axis"), x->type->shape.size());
  bool reverse = constBoolArg(s, a[4], "reverse", false);
  ir::Instr* r = e.intrinsic(ir::Intrinsic::TileScan, x->type, {x}, {static_cast<int64_t>(kind), axis, reverse ? 1 : 0});
  return foldIdentity(e, kind, a[3], r);
}

// ---- matmul / mma -------------------------------------------------------------------------

// Whether x @ y of `operand` tiles may accumulate in `acc` (cuTile's table).
bool mmaAccumulates(Scalar operand, Scalar acc) {
  switch (operand) {
    case Scalar::Float16: return acc == Scalar::Float16 || acc == Scalar::Float32;
    case Scalar::BFloat16: case Scalar::TFloat32: case Scalar::Float32: return acc == Scalar::Float32;
    case Scalar::Float64: return acc == Scalar::Float64;
    case Scalar::Int8: case Scalar::UInt8: return acc == Scalar::Int32;
    default: return false;
  }
}
// The accumulator matmul uses for `operand` tiles.
Scalar matmulAccumulator(Scalar operand) {
  switch (operand) {
    case Scalar::Float16: case Scalar::BFloat16: case Scalar::TFloat32: return Scalar::Float32;
    case Scalar::Int8: case Scalar::UInt8: return Scalar::Int32;
    default: return operand;
  }
}

struct MatmulTypes {
  Scalar dtype;     // both operands promoted to it
  TileShapeV out;
};
MatmulTypes matmulTypes(const Site& s, const Type* x, const Type* y) {
  if (!x->isTile() || !y->isTile()) failOp(s, "operands must be tiles, got " + typeToString(x) + " and " + typeToString(y));
  MatmulTypes m{x->scalar, {}};
  std::string why;
  if (!matmulTileShape(x->shape, y->shape, &m.out, &why)) failOp(s, why);
  // 2-d products, and batches (3-d: either operand may be one 2-d tile or a
  // batch of 1 broadcast over the other's): emitDot.
  if (x->shape.size() < 2 || y->shape.size() < 2)
    failOp(s, "cudajit.tile multiplies 2-d and 3-d (batched) tiles, not " + tileShapeText(x->shape) + " @ " +
                  tileShapeText(y->shape), "reshape a 1-d operand to (1, K) or (K, 1)");
  if (!promoteTileDtypes(x->scalar, y->scalar, &m.dtype, &why)) failOp(s, why);
  if (!mmaAccumulates(m.dtype, matmulAccumulator(m.dtype)))
    failOp(s, "matmul of " + std::string(scalarNumbaName(m.dtype)) + " tiles is not supported");
  return m;
}

const Type* matmulType(const Site& s) {
  std::vector<ir::Instr*> a = s.bind({"x", "y"}, 2);
  MatmulTypes m = matmulTypes(s, a[0]->type, a[1]->type);
  return makeTile(s, m.dtype, m.out);
}
// Batch b of a (B, R, C) tile (one of (1, R, C): the only one) as a 2-d tile.
ir::Instr* batchItem(Emitter& e, ir::Instr* t, int64_t b) {
  const TileShapeV& sh = t->type->shape;
  if (sh.size() == 2) return t;
  const Type* item = tileTy(t->type->scalar, {sh[1], sh[2]});
  if (sh[0] == 1) return e.intrinsic(ir::Intrinsic::TileReshape, item, {t});
  ir::Instr* one = e.intrinsic(ir::Intrinsic::TileExtract, tileTy(t->type->scalar, {1, sh[1], sh[2]}), {t}, {b, 0, 0});
  return e.intrinsic(ir::Intrinsic::TileReshape, item, {one});
}

ir::Instr* emitDot(Emitter& e, ir::Instr* x, ir::Instr* y, ir::Instr* acc, Scalar operand) {
  x = toTile(e, x, operand, x->type->shape);
  y = toTile(e, y, operand, y->type->shape);
  if (y->type->shape.size() == 3 && y->type->shape[0] == 1 && x->type->shape.size() == 3)
    y = batchItem(e, y, 0);   // one y for the whole batch
  if (y->type->shape.size() == 3) {   // a batch of y tiles: one product per item, joined along the batch
    const Type* out = acc->type;
    int64_t batch = out->shape[0], m = out->shape[1], n = out->shape[2];
    std::vector<ir::Instr*> items;
    for (int64_t b = 0; b < batch; ++b) {
      ir::Instr* r = e.intrinsic(ir::Intrinsic::TileDot, tileTy(out->scalar, {m, n}),
                                 {batchItem(e, x, b), batchItem(e, y, b), batchItem(e, acc, b)});
      items.push_back(e.intrinsic(ir::Intrinsic::TileReshape, tileTy(out->scalar, {1, m, n}), {r}));
    }
    while (items.size() > 1) {   // batch extents are powers of two
      std::vector<ir::Instr*> joined;
      for (size_t i = 0; i + 1 < items.size(); i += 2) joined.push_back(emitCat(e, items[i], items[i + 1], 0));
      items = std::move(joined);
    }
    return items[0];
  }
  if (x->type->shape.size() == 3) {   // (B, M, K) x (K, N): rows of all the batch at once
    const TileShapeV& xs = x->type->shape;
    const Type* out = acc->type;
    x = e.intrinsic(ir::Intrinsic::TileReshape, tileTy(operand, {xs[0] * xs[1], xs[2]}), {x});
    acc = e.intrinsic(ir::Intrinsic::TileReshape, tileTy(out->scalar, {xs[0] * xs[1], out->shape[2]}), {acc});
    ir::Instr* r = e.intrinsic(ir::Intrinsic::TileDot, acc->type, {x, y, acc});
    return e.intrinsic(ir::Intrinsic::TileReshape, out, {r});
  }
  return e.intrinsic(ir::Intrinsic::TileDot, acc->type, {x, y, acc});
}
ir::Instr* matmulLower(const Site& s, Emitter& e) {
  std::vector<ir::Instr*> a = s.bind({"x", "y"}, 2);
  MatmulTypes m = matmulTypes(s, a[0]->type, a[1]->type);
  Scalar acc_dtype = matmulAccumulator(m.dtype);
  ir::Instr* zero = e.constant(ir::Const::integer(0), i64Ty());
  ir::Instr* acc = e.intrinsic(ir::Intrinsic::TileFull, tileTy(acc_dtype, m.out), {e.convert(zero, scalarTy(acc_dtype))});
  ir::Instr* r = emitDot(e, a[0], a[1], acc, m.dtype);
  return toTile(e, r, m.dtype, m.out);
}

const Type* mmaType(const Site& s) {
  std::vector<ir::Instr*> a = s.bind({"x", "y", "acc"}, 3);
  MatmulTypes m = matmulTypes(s, a[0]->type, a[1]->type);
  const Type* acc = a[2]->type;
  if (!acc->isTile() || acc->shape != m.out)
    failOp(s, "acc must be a tile of shape " + tileShapeText(m.out) + ", got " + typeToString(acc));
  if (!mmaAccumulates(m.dtype, acc->scalar))
    failOp(s, std::string(scalarNumbaName(m.dtype)) + " x " + std::string(scalarNumbaName(m.dtype)) +
                  " does not accumulate in " + std::string(scalarNumbaName(acc->scalar)));
  return acc;
}
ir::Instr* mmaLower(const Site& s, Emitter& e) {
  std::vector<ir::Instr*> a = s.bind({"x", "y", "acc"}, 3);
  MatmulTypes m = matmulTypes(s, a[0]->type, a[1]->type);
  return emitDot(e, a[0], a[1], a[2], m.dtype);
}

// ---- extract ---------------------------------------------------------------------------
// ct.extract(x, index, shape): the sub-tile of `shape` at `index` (in units of
// that shape) of x; the index is a compile-time constant here.

struct ExtractArgs {
  TileShapeV shape, origin;   // origin: element offsets per dimension
};

ExtractArgs extractArgs(const Site& s) {
  std::vector<ir::Instr*> a = rest(s, {"index", "shape"}, 2);
  const Type* x = subjectTile(s);
  ExtractArgs out;
  out.shape = constInts(s, a[1], "shape");
  auto c = constantOf(a[0]);
  bool constant = c && (c->kind == ir::Const::Kind::Int || c->kind == ir::Const::Kind::Tuple);
  if (!constant)
    failOp(s, "index must be compile-time constant integers in cudajit.tile", "use ct.gather for an index known at run time");
  TileShapeV index = constInts(s, a[0], "index");
  if (index.size() != x->shape.size() || out.shape.size() != x->shape.size())
    failOp(s, "index and shape need one entry per dimension of the " + std::to_string(x->shape.size()) + "-d tile");
  for (size_t d = 0; d < index.size(); ++d) {
    if (out.shape[d] <= 0 || x->shape[d] % out.shape[d] != 0)
      failOp(s, "shape " + tileShapeText(out.shape) + " does not divide the tile's " + tileShapeText(x->shape));
    if (index[d] < 0 || index[d] >= x->shape[d] / out.shape[d])
      failOp(s, "index " + tileShapeText(index) + " is outside the " + tileShapeText(x->shape) + " tile's grid of " +
                    tileShapeText(out.shape) + " sub-tiles");
    out.origin.push_back(index[d] * out.shape[d]);
  }
  return out;
}
const Type* extractType(const Site& s) { return makeTile(s, subjectTile(s)->scalar, extractArgs(s).shape); }
ir::Instr* extractLower(const Site& s, Emitter& e) {
  ExtractArgs a = extractArgs(s);
  return e.intrinsic(ir::Intrinsic::TileExtract, s.instr->type, {subjectAsTile(s, e)}, a.origin);
}

// ---- insert ----------------------------------------------------------------------------
// ct.insert(x, index, value): x with its sub-tile at `index` (in units of
// value's shape) replaced by value: extract's inverse; a new tile. Built
// from what the lowering has: value tiled over x's shape (reshaped to
// [1, V0, 1, V1, ...], broadcast to [S0/V0, V0, S1/V1, V1, ...], reshaped
// to S) and the sub-tile's elements (per dimension arange(S_d) >> log2(V_d)
// == index_d, broadcast and and-ed), joined by one select. A scalar or 0-d
// value is a unit sub-tile.

// log2 of a tile extent (a power of two).
int64_t log2Exact(int64_t v) {
  int64_t k = 0;
  while ((int64_t{1} << k) < v) ++k;
  return k;
}

struct InsertArgs {
  TileShapeV index, value_shape;
};

InsertArgs insertArgs(const Site& s) {
  std::vector<ir::Instr*> a = s.bind({"x", "index", "value"}, 3);
  const Type* x = a[0]->type;
  const Type* v = a[2]->type;
  if (!x->isTile() || x->shape.empty()) failOp(s, "x must be a tile of at least one dimension, got " + typeToString(x));
  InsertArgs out;
  if (v->isScalar() || (v->isTile() && v->shape.empty())) {
    out.value_shape.assign(x->shape.size(), 1);
  } else if (v->isTile()) {
    out.value_shape = v->shape;
  } else {
    failOp(s, "value must be a tile or a number, got " + typeToString(v));
  }
  if (v->isTile() && v->scalar != x->scalar)
    failOp(s, "value's dtype " + std::string(scalarNumbaName(v->scalar)) + " is not x's " +
                  std::string(scalarNumbaName(x->scalar)), "convert it with .astype(x.dtype)");
  auto c = constantOf(a[1]);
  if (!c || (c->kind != ir::Const::Kind::Int && c->kind != ir::Const::Kind::Tuple))
    failOp(s, "index must be compile-time constant integers in cudajit.tile");
  out.index = constInts(s, a[1], "index");
  if (out.index.size() != x->shape.size() || out.value_shape.size() != x->shape.size())
    failOp(s, "index and value need one entry / dimension per dimension of the " + std::to_string(x->shape.size()) +
                  "-d tile (value " + tileShapeText(out.value_shape) + ")");
  for (size_t d = 0; d < out.index.size(); ++d) {
    if (x->shape[d] % out.value_shape[d] != 0)
      failOp(s, "value's shape " + tileShapeText(out.value_shape) + " does not divide the tile's " + tileShapeText(x->shape));
    if (out.index[d] < 0 || out.index[d] >= x->shape[d] / out.value_shape[d])
      failOp(s, "index " + tileShapeText(out.index) + " is outside the " + tileShapeText(x->shape) + " tile's grid of " +
                    tileShapeText(out.value_shape) + " sub-tiles");
  }
  return out;
}
const Type* insertType(const Site& s) {
  insertArgs(s);
  return s.bind({"x", "index", "value"}, 3)[0]->type;
}
ir::Instr* insertLower(const Site& s, Emitter& e) {
  InsertArgs a = insertArgs(s);
  std::vector<ir::Instr*> args = s.bind({"x", "index", "value"}, 3);
  ir::Instr* x = args[0];
  const Scalar dtype = x->type->scalar;
  const TileShapeV& shape = x->type->shape;
  const size_t n = shape.size();
  ir::Instr* value = args[2]->type->isTile() && !args[2]->type->shape.empty()
                         ? args[2]
                         : toTile(e, args[2], dtype, a.value_shape);
  TileShapeV spread, tiled;   // [1, V0, 1, V1, ...] and [S0/V0, V0, ...]
  for (size_t d = 0; d < n; ++d) {
    spread.insert(spread.end(), {1, a.value_shape[d]});
    tiled.insert(tiled.end(), {shape[d] / a.value_shape[d], a.value_shape[d]});
  }
  ir::Instr* v = e.intrinsic(ir::Intrinsic::TileReshape, tileTy(dtype, spread), {value});
  v = e.intrinsic(ir::Intrinsic::TileBroadcast, tileTy(dtype, tiled), {v});
  v = e.intrinsic(ir::Intrinsic::TileReshape, tileTy(dtype, shape), {v});
  ir::Instr* inside = nullptr;
  for (size_t d = 0; d < n; ++d) {
    TileShapeV along(n, 1);
    along[d] = shape[d];
    ir::Instr* pos = e.intrinsic(ir::Intrinsic::TileArange, tileTy(Scalar::Int32, {shape[d]}), {});
    ir::Instr* block = e.emit(ir::Op::RShift, pos->type,
                              {pos, toTile(e, e.constInt(log2Exact(a.value_shape[d])), Scalar::Int32, {shape[d]})});
    ir::Instr* hit = e.emit(ir::Op::Eq, tileTy(Scalar::Bool, {shape[d]}),
                            {block, toTile(e, e.constInt(a.index[d]), Scalar::Int32, {shape[d]})});
    hit = toTile(e, e.intrinsic(ir::Intrinsic::TileReshape, tileTy(Scalar::Bool, along), {hit}), Scalar::Bool, shape);
    inside = inside ? e.emit(ir::Op::BitAnd, tileTy(Scalar::Bool, shape), {inside, hit}) : hit;
  }
  return e.emit(ir::Op::Select, x->type, {inside, v, x});
}

// ---- load/store_advanced_indexing ------------------------------------------------------
// ct.Slice(start, length): a dense dimension's range [start, start + length),
// length a compile-time power of two: the tuple (sym Slice:<length>, start).
// load_advanced_indexing(array, indices) / store_advanced_indexing(array,
// indices, tile): one index per dimension, exactly one a 1-d integer tile
// (the sparse dimension), the others Slices; the tile's shape is their
// lengths. A gather / scatter with each dimension's element indices
// broadcast over that shape (bounds checked: padded loads, masked stores).

constexpr std::string_view kSlicePrefix = "cudajit.tile.Slice:";

const Type* sliceType(const Site& s) {
  std::vector<ir::Instr*> a = s.bind({"start", "length"}, 2);
  if (!isIndex(a[0]->type)) failOp(s, "start must be an integer, got " + typeToString(a[0]->type));
  int64_t length = constIntArg(s, a[1], "length");
  if (length <= 0 || (length & (length - 1)))
    failOp(s, "length must be a power of two (a tile extent), got " + std::to_string(length));
  return taggedType(std::string(kSlicePrefix) + std::to_string(length), i64Ty());
}
ir::Instr* sliceLower(const Site& s, Emitter& e) {
  return emitTagged(e, s.instr->type, indexI64(e, s.bind({"start", "length"}, 2)[0]));
}

// The length of a Slice-typed value (0: not a Slice).
int64_t sliceLength(const Type* t) {
  if (!t->is(TypeKind::Tuple) || t->elems.size() != 2 || !t->elems[0]->is(TypeKind::Symbol)) return 0;
  const std::string& name = t->elems[0]->name;
  if (name.rfind(kSlicePrefix, 0) != 0) return 0;
  return std::stoll(name.substr(kSlicePrefix.size()));
}

// The shape the indices give (and which dimension is the sparse one).
TileShapeV advancedShape(const Site& s, const Type* arr, const Type* indices) {
  std::vector<const Type*> parts = indices->is(TypeKind::Tuple) && !sliceLength(indices) ? indices->elems
                                                                                          : std::vector<const Type*>{indices};
  if (static_cast<int>(parts.size()) != arr->ndim)
    failOp(s, "indices need one entry per dimension of the " + std::to_string(arr->ndim) + "-d array, got " +
                  std::to_string(parts.size()));
  TileShapeV shape;
  int sparse = 0;
  for (const Type* p : parts) {
    if (int64_t len = sliceLength(p)) {
      shape.push_back(len);
    } else if (p->isTile() && p->shape.size() == 1 && scalarKind(p->scalar) == ScalarKind::Int) {
      shape.push_back(p->shape[0]);
      ++sparse;
    } else {
      failOp(s, "each index must be a ct.Slice or a 1-d integer tile, got " + typeToString(p));
    }
  }
  if (sparse != 1) failOp(s, "exactly one index must be a 1-d integer tile (the sparse dimension), got " + std::to_string(sparse));
  return shape;
}

// Each dimension's element index, broadcast to `shape` (int64 tiles).
std::vector<ir::Instr*> advancedIndices(Emitter& e, ir::Instr* indices, const TileShapeV& shape) {
  std::vector<ir::Instr*> parts =
      indices->type->is(TypeKind::Tuple) && !sliceLength(indices->type) ? e.elements(indices) : std::vector<ir::Instr*>{indices};
  std::vector<ir::Instr*> out;
  for (size_t d = 0; d < parts.size(); ++d) {
    TileShapeV along(shape.size(), 1);
    along[d] = shape[d];
    ir::Instr* idx;
    if (int64_t len = sliceLength(parts[d]->type)) {
      ir::Instr* pos = e.emit(ir::Op::Cast, tileTy(Scalar::Int64, {len}),
                              {e.intrinsic(ir::Intrinsic::TileArange, tileTy(Scalar::Int32, {len}), {})});
      idx = e.emit(ir::Op::Add, pos->type, {pos, toTile(e, e.element(parts[d], 1), Scalar::Int64, {len})});
    } else {
      idx = toTile(e, parts[d], Scalar::Int64, parts[d]->type->shape);
    }
    idx = e.intrinsic(ir::Intrinsic::TileReshape, tileTy(Scalar::Int64, along), {idx});
    out.push_back(toTile(e, idx, Scalar::Int64, shape));
  }
  return out;
}

const std::vector<std::string_view> kAdvancedLoadParams = {"array", "indices", "padding_mode", "latency", "allow_tma"};
const std::vector<std::string_view> kAdvancedStoreParams = {"array", "indices", "tile", "latency", "allow_tma"};

const Type* loadAdvancedType(const Site& s) {
  std::vector<ir::Instr*> a = s.bind(kAdvancedLoadParams, 2);
  const Type* arr = arrayArg(s, a[0]);
  checkPadding(s, arr, paddingArg(s, a[2]));
  return makeTile(s, arr->scalar, advancedShape(s, arr, a[1]->type));
}
ir::Instr* loadAdvancedLower(const Site& s, Emitter& e) {
  std::vector<ir::Instr*> a = s.bind(kAdvancedLoadParams, 2);
  const Type* arr = a[0]->type;
  const TileShapeV shape = s.instr->type->shape;
  ir::Const padding = ir::tilePaddingConst(paddingArg(s, a[2]), arr->scalar);
  std::vector<ir::Instr*> ops = {a[0]};
  for (ir::Instr* idx : advancedIndices(e, a[1], shape)) ops.push_back(idx);
  ops.push_back(toTile(e, e.constant(ir::Const::boolean(true), boolTy()), Scalar::Bool, shape));
  ops.push_back(toTile(e, e.constant(padding, scalarTy(arr->scalar)), arr->scalar, shape));
  return e.intrinsic(ir::Intrinsic::TileGather, s.instr->type, ops, {1});
}

const Type* storeAdvancedType(const Site& s) {
  std::vector<ir::Instr*> a = s.bind(kAdvancedStoreParams, 3);
  const Type* arr = arrayArg(s, a[0]);
  if (arr->readonly) failOp(s, "the array is read-only");
  TileShapeV shape = advancedShape(s, arr, a[1]->type);
  const Type* t = a[2]->type;
  if (t->isTile() && t->shape != shape)
    failOp(s, "the tile's shape " + tileShapeText(t->shape) + " is not the indices' " + tileShapeText(shape));
  if (!t->isTile() && !t->isScalar()) failOp(s, "tile must be a tile or a number, got " + typeToString(t));
  return noneTy();
}
ir::Instr* storeAdvancedLower(const Site& s, Emitter& e) {
  std::vector<ir::Instr*> a = s.bind(kAdvancedStoreParams, 3);
  const Type* arr = a[0]->type;
  const TileShapeV shape = advancedShape(s, arr, a[1]->type);
  std::vector<ir::Instr*> ops = {a[0]};
  for (ir::Instr* idx : advancedIndices(e, a[1], shape)) ops.push_back(idx);
  ops.push_back(toTile(e, a[2], arr->scalar, shape));
  ops.push_back(toTile(e, e.constant(ir::Const::boolean(true), boolTy()), Scalar::Bool, shape));
  e.intrinsic(ir::Intrinsic::TileScatter, voidTy(), ops, {1});
  return nullptr;
}

// ---- pack_to_bytes / unpack_from_bytes ------------------------------------------------
// A tile's raw bytes as a 1-d uint8 tile, little-endian per element, and
// back; built from bitcasts, shifts and an or-reduction over each element's
// bytes. Integer and float dtypes of 8 to 64 bits.

Scalar unsignedOfWidth(int bits) {
  switch (bits) {
    case 8: return Scalar::UInt8;
    case 16: return Scalar::UInt16;
    case 32: return Scalar::UInt32;
    default: return Scalar::UInt64;
  }
}

bool byteWise(Scalar s) {
  ScalarKind k = scalarKind(s);
  return (k == ScalarKind::Int || k == ScalarKind::Float) && scalarBits(s) >= 8 && scalarBits(s) % 8 == 0 &&
         s != Scalar::TFloat32;
}

// (k) -> (1, k) of `dtype`: 0, 8, 16, ... (each byte's shift), broadcast to (n, k).
ir::Instr* byteShifts(Emitter& e, Scalar dtype, int64_t n, int64_t k) {
  ir::Instr* j = e.intrinsic(ir::Intrinsic::TileArange, tileTy(Scalar::Int32, {k}), {});
  ir::Instr* bits = e.emit(ir::Op::Mul, j->type, {j, toTile(e, e.constInt(8), Scalar::Int32, {k})});
  bits = e.intrinsic(ir::Intrinsic::TileReshape, tileTy(Scalar::Int32, {1, k}), {bits});
  return toTile(e, bits, dtype, {n, k});
}

const Type* packType(const Site& s) {
  std::vector<ir::Instr*> a = s.bind({"x"}, 1);
  const Type* x = a[0]->type;
  Scalar dt = x->isTile() || x->isScalar() ? x->scalar : Scalar::Bool;
  if ((!x->isTile() && !x->isScalar()) || !byteWise(dt))
    failOp(s, "x must be a tile of integers or floats of 8 to 64 bits, got " + typeToString(x));
  int64_t n = x->isTile() ? tileElements(x) : 1;
  return makeTile(s, Scalar::UInt8, {n * (scalarBits(dt) / 8)});
}
ir::Instr* packLower(const Site& s, Emitter& e) {
  ir::Instr* x = s.bind({"x"}, 1)[0];
  const Scalar dt = x->type->scalar;
  const int64_t n = x->type->isTile() ? tileElements(x->type) : 1, k = scalarBits(dt) / 8;
  const Scalar u = unsignedOfWidth(scalarBits(dt));
  ir::Instr* flat = x->type->isTile() ? e.intrinsic(ir::Intrinsic::TileReshape, tileTy(dt, {n}), {x})
                                      : toTile(e, x, dt, {1});
  ir::Instr* bits = dt == u ? flat : e.intrinsic(ir::Intrinsic::Bitcast, tileTy(u, {n}), {flat});
  if (k == 1) return bits;
  ir::Instr* wide = toTile(e, e.intrinsic(ir::Intrinsic::TileReshape, tileTy(u, {n, 1}), {bits}), u, {n, k});
  ir::Instr* shifted = e.emit(ir::Op::RShift, wide->type, {wide, byteShifts(e, u, n, k)});
  ir::Instr* bytes = e.emit(ir::Op::Cast, tileTy(Scalar::UInt8, {n, k}), {shifted});   // the low byte
  return e.intrinsic(ir::Intrinsic::TileReshape, s.instr->type, {bytes});
}

const Type* unpackType(const Site& s) {
  std::vector<ir::Instr*> a = s.bind({"x", "dtype"}, 2);
  const Type* x = a[0]->type;
  if (!x->isTile() || x->scalar != Scalar::UInt8 || x->shape.size() != 1)
    failOp(s, "x must be a 1-d tile of uint8, got " + typeToString(x));
  Scalar dt = dtypeArg(s, a[1]);
  if (!byteWise(dt)) failOp(s, "dtype must be an integer or float type of 8 to 64 bits, got " + std::string(scalarNumbaName(dt)));
  int64_t k = scalarBits(dt) / 8;
  if (x->shape[0] % k != 0)
    failOp(s, std::to_string(x->shape[0]) + " bytes are not a whole number of " + std::string(scalarNumbaName(dt)) + " values");
  return makeTile(s, dt, {x->shape[0] / k});
}
ir::Instr* unpackLower(const Site& s, Emitter& e) {
  std::vector<ir::Instr*> a = s.bind({"x", "dtype"}, 2);
  const Scalar dt = s.instr->type->scalar;
  const int64_t k = scalarBits(dt) / 8, n = a[0]->type->shape[0] / k;
  const Scalar u = unsignedOfWidth(scalarBits(dt));
  ir::Instr* bits;
  if (k == 1) {
    bits = a[0];
  } else {
    ir::Instr* bytes = e.intrinsic(ir::Intrinsic::TileReshape, tileTy(Scalar::UInt8, {n, k}), {a[0]});
    ir::Instr* wide = e.emit(ir::Op::Cast, tileTy(u, {n, k}), {bytes});
    ir::Instr* placed = e.emit(ir::Op::LShift, wide->type, {wide, byteShifts(e, u, n, k)});
    ir::Instr* joined = e.intrinsic(ir::Intrinsic::TileReduce, tileTy(u, {n, 1}), {placed},
                                    {static_cast<int64_t>(ir::TileReduceKind::Or), 1});
    bits = e.intrinsic(ir::Intrinsic::TileReshape, tileTy(u, {n}), {joined});
  }
  return dt == u ? bits : e.intrinsic(ir::Intrinsic::Bitcast, s.instr->type, {bits});
}

// ---- attributes of tiles ----------------------------------------------------------------
// x.astype, x.reshape, ...: bound methods, tuple(sym method:tile.<name>, x),
// that the call rows "method:tile.<name>" of tile_symbols.def take apart.

const Type* methodAttrType(const Site& s) { return boundMethodType(s, "tile"); }

const Type* shapeAttrType(const Site& s) {
  return tupleTy(std::vector<const Type*>(s.receiver->type->shape.size(), i64Ty()));
}
ir::Instr* shapeAttrLower(const Site& s, Emitter& e) {
  std::vector<ir::Instr*> dims;
  for (int64_t d : s.receiver->type->shape) dims.push_back(e.constInt(d));
  return e.emit(ir::Op::TupleMake, s.instr->type, dims);
}
const Type* ndimAttrType(const Site&) { return i64Ty(); }
ir::Instr* ndimAttrLower(const Site& s, Emitter& e) {
  return e.constInt(static_cast<int64_t>(s.receiver->type->shape.size()));
}
// a.dtype: numpy's scalar type, or for an array of records its structured
// dtype's symbol (cuda.local.array(n, a.dtype) makes records of it).
std::string dtypeSymbol(const Site& s) {
  const Type* t = s.receiver->type;
  if (isRecordArray(t)) return std::string(kRecordDtypeSymbol) + typeToString(t->record);
  return dtypeSymbolOf(t->scalar);
}
const Type* dtypeAttrType(const Site& s) { return symbolTy(dtypeSymbol(s)); }
ir::Instr* dtypeAttrLower(const Site& s, Emitter& e) {
  return e.constant(ir::Const::symbol(dtypeSymbol(s)), s.instr->type);
}

}  // namespace

const Rule tileMethod{methodAttrType, boundMethodLower};
const Rule tileShapeAttr{shapeAttrType, shapeAttrLower};
const Rule dtypeAttr{dtypeAttrType, dtypeAttrLower};
const Rule tileNdimAttr{ndimAttrType, ndimAttrLower};
const Rule tileBid{gridRegType, bidLower};
const Rule tileNumBlocks{gridRegType, numBlocksLower};
const Rule tileCdiv{cdivType, cdivLower};
const Rule tileNumTiles{numTilesType, numTilesLower};
const Rule tileLoad{loadType, loadLower};
const Rule tileStore{storeType, storeLower};
const Rule arrayMethod{arrayMethodType, boundMethodLower};
const Rule tiledViewMake{tiledViewMakeType, tiledViewMakeLower};
const Rule arraySlice{arraySliceType, arraySliceLower};
const Rule tiledViewMethod{viewMethodType, boundMethodLower};
const Rule tiledViewShape{viewShapeType, viewShapeLower};
const Rule tiledViewDtype{viewDtypeType, viewDtypeLower};
const Rule tiledViewLoad{viewLoadType, viewLoadLower};
const Rule tiledViewStore{viewStoreType, viewStoreLower};
const Rule tiledViewNumTiles{viewNumTilesType, viewNumTilesLower};
const Rule tileFull{fullType, fullLower};
const Rule tileArange{arangeType, arangeLower};
const Rule tileAstype{astypeType, astypeLower};
const Rule tileReshape{reshapeType, reshapeLower};
const Rule tileExpandDims{expandDimsType, reshapeLower};
const Rule tileBroadcastTo{broadcastToType, broadcastToLower};
const Rule tileCat{catType, catLower};
const Rule tilePermute{permuteType, permuteLower};
const Rule tileItem{itemType, itemLower};
const Rule tileExtract{extractType, extractLower};
const Rule tileInsert{insertType, insertLower};
const Rule tilePackToBytes{packType, packLower};
const Rule tileSlice{sliceType, sliceLower};
const Rule tileLoadAdvanced{loadAdvancedType, loadAdvancedLower};
const Rule tileStoreAdvanced{storeAdvancedType, storeAdvancedLower};
const Rule tileUnpackFromBytes{unpackType, unpackLower};
const Rule tileBitcast{bitcastType, bitcastLower};
const Rule tileReduce{reduceType, reduceLower};
const Rule tileScan{scanType, scanLower};
const Rule tileReduceFunc{reduceFuncType, reduceFuncLower};
const Rule tileScanFunc{scanFuncType, scanFuncLower};
const Rule tileMatmul{matmulType, matmulLower};
const Rule tileMma{mmaType, mmaLower};

}  // namespace rules

namespace {

// The shape of `tile[idx]`, or a CompileError naming what is not `:` or None.
std::vector<int64_t> newAxisShape(const FunctionContext& ctx, ir::Instr* in) {
  const Type* tile = in->operands[0]->type;
  const Type* idx = in->operands[1]->type;
  std::vector<const Type*> parts =
      idx->is(TypeKind::Tuple) && !isFullSlice(idx) ? idx->elems : std::vector<const Type*>{idx};
  std::vector<int64_t> out;
  size_t dim = 0;
  for (const Type* p : parts) {
    if (p == noneTy()) {
      out.push_back(1);
    } else if (isFullSlice(p)) {
      if (dim >= tile->shape.size())
        ctx.fail(in, "getitem", "too many indices for " + typeToNumbaString(tile));
      out.push_back(tile->shape[dim++]);
    } else {
      ctx.fail(in, "getitem",
               "a tile is indexed with `:` and None only (new axes: t[:, None]), not " + typeToString(p),
               "for elements use ct.extract, ct.gather or a reshape");
    }
  }
  for (; dim < tile->shape.size(); ++dim) out.push_back(tile->shape[dim]);
  return out;
}

}  // namespace

const Type* tileGetItemType(const FunctionContext& ctx, ir::Instr* in) {
  const Type* tile = in->operands[0]->type;
  return tileTypeOrFail(ctx, in, "getitem", tile->scalar, newAxisShape(ctx, in));
}

ir::Instr* lowerTileGetItem(const FunctionContext& ctx, ir::Instr* in, Emitter& e) {
  ir::Instr* tile = in->operands[0];
  if (tile->type == in->type) return tile;
  return e.intrinsic(ir::Intrinsic::TileReshape, in->type, {tile});
}

}  // namespace cj::typeinfer
