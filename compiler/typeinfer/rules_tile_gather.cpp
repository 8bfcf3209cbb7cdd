// cudajit.tile's element-indexed memory operations: ct.gather, ct.scatter and
// the atomics (ct.atomic_add ... ct.atomic_cas). Indices are one integer tile
// or scalar per array dimension (a bare tile for a 1-d array), broadcast to
// their common shape, which is the shape of the result; masks, padding values
// and updates broadcast to it too. The rewrite makes every operand an
// explicit tile of that shape (indices as int64), so the lowering sees one
// register per element everywhere (passes/tile_lower_memory.cpp).
#include "typeinfer/rules.h"
#include "typeinfer/tile_rules.h"
#include "types/tile_shapes.h"

namespace cj::typeinfer::rules {
namespace {

using Shape = std::vector<int64_t>;

[[noreturn]] void failAt(const Site& s, const std::string& message) { s.fail(tileOpName(s.name) + ": " + message); }

bool isAtomic(const Site& s) { return s.name.find("atomic_") != std::string_view::npos; }
bool isCas(const Site& s) { return s.arg == "cas"; }

// Parameter names, as cuTile spells them.
const std::vector<std::string_view>& params(const Site& s) {
  static const std::vector<std::string_view> gather = {"array", "indices", "mask", "padding_value", "check_bounds",
                                                       "latency"};
  static const std::vector<std::string_view> scatter = {"array", "indices", "value", "mask", "check_bounds", "latency"};
  static const std::vector<std::string_view> rmw = {"array", "indices", "update", "check_bounds", "memory_order",
                                                    "memory_scope"};
  static const std::vector<std::string_view> cas = {"array", "indices", "expected", "desired", "check_bounds",
                                                    "memory_order", "memory_scope"};
  if (isCas(s)) return cas;
  if (isAtomic(s)) return rmw;
  return s.name.find("scatter") != std::string_view::npos ? scatter : gather;
}
size_t required(const Site& s) { return isCas(s) ? 4 : isAtomic(s) || s.name.find("scatter") != std::string_view::npos ? 3 : 2; }

// The index operands: one per dimension.
std::vector<const Type*> indexTypes(const Site& s, const ir::Instr* indices, int ndim) {
  const Type* t = indices->type;
  std::vector<const Type*> parts = t->is(TypeKind::Tuple) ? t->elems : std::vector<const Type*>{t};
  if (static_cast<int>(parts.size()) != ndim)
    failAt(s, "indices must be " + std::to_string(ndim) + " integer tile(s) or scalar(s) for a " +
                  std::to_string(ndim) + "-d array, got " + typeToString(t));
  for (const Type* p : parts)
    if (!(p->isTile() ? scalarKind(p->scalar) == ScalarKind::Int : p->isInt()))
      failAt(s, "indices must be integer tiles or integers, got " + typeToString(p));
  return parts;
}

struct Operands {
  ir::Instr* array;
  std::vector<ir::Instr*> all;   // bound parameters, in params(s) order
  Shape shape;                   // the indices' common shape
};

// Checks every operand; the common shape of the indices.
Operands bindOperands(const Site& s) {
  Operands o;
  o.all = s.bind(params(s), required(s));
  o.array = o.all[0];
  if (!o.array->type->is(TypeKind::Array)) failAt(s, "expected an array, got " + typeToString(o.array->type));
  std::string why;
  for (const Type* p : indexTypes(s, o.all[1], o.array->type->ndim)) {
    Shape part = p->isTile() ? p->shape : Shape{};
    if (!broadcastTileShapes(o.shape, part, &o.shape, &why)) failAt(s, "indices do not broadcast: " + why);
  }
  // Masks, padding values and updates broadcast to the indices' shape.
  for (size_t i = 2; i < o.all.size(); ++i) {
    const ir::Instr* v = o.all[i];
    if (!v || !v->type->isTile()) continue;
    Shape joined;
    if (!broadcastTileShapes(o.shape, v->type->shape, &joined, &why) || joined != o.shape)
      failAt(s, std::string(params(s)[i]) + " of shape " + tileShapeText(v->type->shape) +
                    " does not broadcast to the indices' shape " + tileShapeText(o.shape));
  }
  return o;
}

// The argument bound to `param` (null when not given).
const ir::Instr* namedArg(const Site& s, const Operands& o, std::string_view param) {
  for (size_t i = 0; i < params(s).size(); ++i)
    if (params(s)[i] == param) return o.all[i];
  return nullptr;
}

bool checkBounds(const Site& s, const Operands& o) {
  const ir::Instr* v = namedArg(s, o, "check_bounds");
  if (!v) return true;
  auto c = constantOf(v);
  if (!c || (c->kind != ir::Const::Kind::Bool && c->kind != ir::Const::Kind::Int))
    failAt(s, "check_bounds must be a compile-time constant bool");
  return c->i != 0;
}

// memory_order / memory_scope of an atomic (cuTile's defaults: ACQ_REL,
// DEVICE): ints of tile.atomic (ir::TileMemoryOrder, ir::TileMemoryScope).
int64_t enumArg(const Site& s, const Operands& o, std::string_view param, std::string_view enum_name,
                const std::vector<std::pair<std::string_view, int64_t>>& values, int64_t fallback) {
  const ir::Instr* v = namedArg(s, o, param);
  if (!v) return fallback;
  std::string sym = v->type->is(TypeKind::Symbol) ? v->type->name : "";
  std::string prefix = "cudajit.tile." + std::string(enum_name) + ".";
  for (const auto& [name, value] : values)
    if (sym == prefix + std::string(name)) return value;
  failAt(s, std::string(param) + " must be a " + std::string(enum_name) + " member");
}
int64_t memoryOrder(const Site& s, const Operands& o) {
  using O = ir::TileMemoryOrder;
  return enumArg(s, o, "memory_order", "MemoryOrder",
                 {{"WEAK", int64_t(O::Relaxed)}, {"RELAXED", int64_t(O::Relaxed)}, {"ACQUIRE", int64_t(O::Acquire)},
                  {"RELEASE", int64_t(O::Release)}, {"ACQ_REL", int64_t(O::AcqRel)}},
                 int64_t(O::AcqRel));
}
int64_t memoryScope(const Site& s, const Operands& o) {
  using S = ir::TileMemoryScope;
  return enumArg(s, o, "memory_scope", "MemoryScope",
                 {{"NONE", int64_t(S::Device)}, {"BLOCK", int64_t(S::Block)}, {"CLUSTER", int64_t(S::Cluster)},
                  {"DEVICE", int64_t(S::Device)}, {"SYS", int64_t(S::System)}},
                 int64_t(S::Device));
}

ir::TileAtomicKind atomicKind(const Site& s) {
  static const std::pair<std::string_view, ir::TileAtomicKind> kKinds[] = {
      {"add", ir::TileAtomicKind::Add}, {"max", ir::TileAtomicKind::Max},   {"min", ir::TileAtomicKind::Min},
      {"and", ir::TileAtomicKind::And}, {"or", ir::TileAtomicKind::Or},     {"xor", ir::TileAtomicKind::Xor},
      {"xchg", ir::TileAtomicKind::Xchg}, {"cas", ir::TileAtomicKind::Cas}};
  for (const auto& [name, kind] : kKinds)
    if (s.arg == name) return kind;
  failAt(s, "unknown atomic operation");
}

// What the GPU's atom instruction takes: 32/64-bit integers for every
// operation, float32/float64 for add, and any 32/64-bit value for xchg/cas.
void checkAtomicDtype(const Site& s, Scalar dtype) {
  int bits = scalarBits(dtype);
  bool wide = bits == 32 || bits == 64;
  bool is_int = scalarKind(dtype) == ScalarKind::Int, is_float = scalarKind(dtype) == ScalarKind::Float;
  ir::TileAtomicKind k = atomicKind(s);
  bool ok = wide && (is_int || (is_float && (k == ir::TileAtomicKind::Add || k == ir::TileAtomicKind::Xchg ||
                                             k == ir::TileAtomicKind::Cas)));
  if (dtype == Scalar::TFloat32) ok = false;
  if (!ok)
    failAt(s, "not supported on " + std::string(scalarNumbaName(dtype)) +
                  " arrays (32- and 64-bit integers; float32/float64 for add, xchg and cas)");
}

const Type* memoryType(const Site& s) {
  Operands o = bindOperands(s);
  Scalar dtype = o.array->type->scalar;
  if (o.array->type->readonly && s.name.find("gather") == std::string_view::npos)
    failAt(s, "the array is read-only");
  if (s.name.find("gather") == std::string_view::npos) {
    const ir::Instr* mask = s.name.find("scatter") != std::string_view::npos ? o.all[3] : nullptr;
    if (mask && !(mask->type->isTile() ? mask->type->scalar == Scalar::Bool : mask->type->isBool()))
      failAt(s, "mask must be a bool tile or bool");
  } else if (const ir::Instr* mask = o.all[2]) {
    if (!(mask->type->isTile() ? mask->type->scalar == Scalar::Bool : mask->type->isBool()))
      failAt(s, "mask must be a bool tile or bool");
  }
  checkBounds(s, o);
  if (isAtomic(s)) checkAtomicDtype(s, dtype);
  if (s.name.find("scatter") != std::string_view::npos) return noneTy();
  return tileTypeOrFail(s.ctx, s.instr, tileOpName(s.name), dtype, o.shape);
}

ir::Instr* memoryLower(const Site& s, Emitter& e) {
  Operands o = bindOperands(s);
  Scalar dtype = o.array->type->scalar;
  std::vector<ir::Instr*> parts = o.all[1]->type->is(TypeKind::Tuple) ? e.elements(o.all[1]) : std::vector<ir::Instr*>{o.all[1]};
  std::vector<ir::Instr*> ops = {o.array};
  for (ir::Instr* p : parts) ops.push_back(toTile(e, p, Scalar::Int64, o.shape));
  auto tileOf = [&](ir::Instr* v, Scalar dt, ir::Const fallback) {
    return toTile(e, v ? v : e.constant(fallback, scalarTy(dt)), dt, o.shape);
  };
  ir::Const yes = ir::Const::boolean(true);
  ir::Const zero = scalarKind(dtype) == ScalarKind::Float ? ir::Const::real(0.0) : ir::Const::integer(0);
  int64_t bounds = checkBounds(s, o) ? 1 : 0;
  if (s.name.find("gather") != std::string_view::npos) {
    ops.push_back(tileOf(o.all[2], Scalar::Bool, yes));
    ops.push_back(tileOf(o.all[3], dtype, zero));
    return e.intrinsic(ir::Intrinsic::TileGather, s.instr->type, ops, {bounds});
  }
  if (s.name.find("scatter") != std::string_view::npos) {
    ops.push_back(tileOf(o.all[2], dtype, zero));
    ops.push_back(tileOf(o.all[3], Scalar::Bool, yes));
    e.intrinsic(ir::Intrinsic::TileScatter, voidTy(), ops, {bounds});
    return nullptr;
  }
  ops.push_back(tileOf(o.all[2], dtype, zero));
  if (isCas(s)) ops.push_back(tileOf(o.all[3], dtype, zero));
  ops.push_back(tileOf(nullptr, Scalar::Bool, yes));
  return e.intrinsic(ir::Intrinsic::TileAtomic, s.instr->type, ops,
                     {static_cast<int64_t>(atomicKind(s)), bounds, memoryOrder(s, o), memoryScope(s, o)});
}

}  // namespace

const Rule tileMemory{memoryType, memoryLower};

}  // namespace cj::typeinfer::rules
