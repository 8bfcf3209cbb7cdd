// Python builtins (range, len, min, max, abs, int, float, bool) and numpy
// scalar constructors, typed as numba-cuda types them.
#include <algorithm>

#include "typeinfer/conversion.h"
#include "typeinfer/rules.h"
#include "typeinfer/templates.h"

namespace cj::typeinfer::rules {
namespace {

const Type* scalarArg(const Site& s, size_t i, const char* what = "a number") {
  const Type* t = s.argType(i);
  if (!t->isScalar())
    s.fail(std::string(s.name) + "() argument must be " + what + ", got " + typeToString(t));
  return t;
}

// ---- range(stop) / range(start, stop[, step]) ----------------------------------

Scalar rangeIndex(const Site& s) {
  s.expectArgs(1, 3);
  std::vector<Scalar> scalars;
  for (size_t i = 0; i < s.args.size(); ++i) {
    const Type* t = s.argType(i);
    if (!t->isInt() && !t->isBool())
      s.fail("range() arguments must be integers, got " + typeToString(t));
    scalars.push_back(t->scalar);
  }
  auto sig = resolveOverload(families::range(), scalars);
  if (!sig) s.fail("range() does not support these argument types");
  if (s.args.size() == 3) {
    auto step = constantInt(s.args[2]);
    if (step && *step == 0) s.fail("range() arg 3 must not be zero");
  }
  return sig->ret;
}

const Type* rangeType(const Site& s) { return rangeTy(rangeIndex(s)); }

ir::Instr* rangeLower(const Site& s, Emitter& e) {
  const Type* index = scalarTy(rangeIndex(s));
  size_t n = s.args.size();
  ir::Instr* start = n >= 2 ? s.args[0] : e.constant(ir::Const::integer(0), index);
  ir::Instr* stop = n >= 2 ? s.args[1] : s.args[0];
  ir::Instr* step = n == 3 ? s.args[2] : e.constant(ir::Const::integer(1), index);
  return e.emit(ir::Op::RangeMake, rangeTy(index->scalar),
                {e.convert(start, index), e.convert(stop, index), e.convert(step, index)});
}

// ---- len(x) ----------------------------------------------------------------------

const Type* lenType(const Site& s) {
  s.expectArgs(1);
  const Type* t = s.argType(0);
  if (t->is(TypeKind::Array) || (t->is(TypeKind::Tuple) && !isOptional(t))) return i64Ty();
  s.fail("len() of " + typeToString(t) + " is not supported");
}

ir::Instr* lenLower(const Site& s, Emitter& e) {
  const Type* t = s.argType(0);
  if (t->is(TypeKind::Tuple)) return e.constInt(static_cast<int64_t>(t->elems.size()));
  return e.arrayDim(s.args[0], 0);
}

// ---- min / max ----------------------------------------------------------------------

// The values compared: the arguments, or the elements of a single tuple argument.
std::vector<const Type*> minMaxTypes(const Site& s) {
  if (!s.kw_names.empty()) s.fail(std::string(s.name) + "() takes no keyword arguments");
  std::vector<const Type*> types;
  if (s.args.size() == 1 && s.argType(0)->is(TypeKind::Tuple)) types = s.argType(0)->elems;
  else if (s.args.size() >= 2) for (ir::Instr* a : s.args) types.push_back(a->type);
  else s.fail(std::string(s.name) + "() expects a tuple or at least two arguments");
  if (types.empty()) s.fail(std::string(s.name) + "() argument is an empty tuple");
  for (const Type* t : types)
    if (!t->isScalar() || t->isComplex())
      s.fail(std::string(s.name) + "() arguments must be real numbers, got " + typeToString(t));
  return types;
}

// max(a, b) / min(a, b) with a tile: cuTile's elementwise maximum / minimum.
bool onTiles(const Site& s) {
  return std::any_of(s.args.begin(), s.args.end(), [](const ir::Instr* a) { return a->type->isTile(); });
}
Site asTileMinMax(const Site& s) {
  if (s.args.size() != 2 || !s.kw_names.empty())
    s.fail(std::string(s.name) + "() of tiles takes two arguments (elementwise, as ct." +
           (s.arg == "min" ? "minimum" : "maximum") + ")");
  Site t{s.ctx, s.instr, s.arg == "min" ? "cudajit.tile.minimum" : "cudajit.tile.maximum",
         s.arg == "min" ? "minimum" : "maximum"};
  t.args = s.args;
  return t;
}

// numba's unify_types: sort by bit width (bool first), then unify pairwise.
const Type* minMaxType(const Site& s) {
  if (onTiles(s)) return tileMinMax.type(asTileMinMax(s));
  std::vector<const Type*> types = minMaxTypes(s);
  auto width = [](const Type* t) { return t->isBool() ? 0 : t->bits(); };
  std::stable_sort(types.begin(), types.end(),
                   [&](const Type* a, const Type* b) { return width(a) < width(b); });
  Scalar acc = types[0]->scalar;
  for (size_t i = 1; i < types.size(); ++i) acc = unifyScalars(acc, types[i]->scalar);
  return scalarTy(acc);
}

// As numba's do_minmax: acc = v if v < acc (min) / v > acc (max) else acc.
ir::Instr* minMaxLower(const Site& s, Emitter& e) {
  if (onTiles(s)) return tileMinMax.lower(asTileMinMax(s), e);
  const Type* t = s.instr->type;
  std::vector<ir::Instr*> values =
      s.args.size() == 1 ? e.elements(s.args[0]) : s.args;
  ir::Op cmp = s.arg == "min" ? ir::Op::Lt : ir::Op::Gt;
  ir::Instr* acc = e.convert(values[0], t);
  for (size_t i = 1; i < values.size(); ++i) {
    ir::Instr* v = e.convert(values[i], t);
    ir::Instr* pred = e.emit(cmp, boolTy(), {v, acc});
    acc = e.emit(ir::Op::Select, t, {pred, v, acc});
  }
  return acc;
}

// ---- abs ---------------------------------------------------------------------------

Signature absSignature(const Site& s) {
  s.expectArgs(1);
  const Type* t = scalarArg(s, 0);
  auto sig = resolveOverload(families::absolute(), {t->scalar});
  if (t->isComplex()) return Signature{complexPart(t->scalar), {t->scalar}};
  if (!sig) s.fail("abs() of " + typeToString(t) + " is not supported");
  return *sig;
}

const Type* absType(const Site& s) { return scalarTy(absSignature(s).ret); }

ir::Instr* absLower(const Site& s, Emitter& e) {
  const Type* t = scalarTy(absSignature(s).ret);
  // numba: abs(complex) is hypot(re, im) in the part type.
  if (s.argType(0)->isComplex()) return e.intrinsic(ir::Intrinsic::ComplexAbs, t, {s.args[0]});
  ir::Instr* v = e.convert(s.args[0], t);
  if (t->isFloat()) {
    const Type* compute = t->scalar == Scalar::Float16 ? f32Ty() : t;
    return e.convert(e.intrinsic(ir::Intrinsic::Fabs, compute, {e.convert(v, compute)}), t);
  }
  if (!t->isSigned()) return v;
  ir::Instr* zero = e.constant(ir::Const::integer(0), t);
  ir::Instr* negative = e.emit(ir::Op::Lt, boolTy(), {v, zero});
  ir::Instr* negated = e.emit(ir::Op::Neg, t, {v});
  return e.emit(ir::Op::Select, t, {negative, negated, v});
}

// ---- int(x), float(x), bool(x), numpy.float32(x) ------------------------------------

const Type* intType(const Site& s) {
  s.expectArgs(1);
  const Type* t = scalarArg(s, 0);
  if (t->isInt()) return t;   // numba: int(int32) stays int32
  if (t->isFloat() || t->isBool()) return i64Ty();
  s.fail("int() of " + typeToString(t) + " is not supported");
}

const Type* floatType(const Site& s) {
  s.expectArgs(1);
  const Type* t = scalarArg(s, 0);
  if (t->isFloat()) return t;   // numba: float(float32) stays float32
  if (t->isInt()) return f64Ty();   // numba rejects float(bool) too
  s.fail("float() of " + typeToString(t) + " is not supported");
}

const Type* boolType(const Site& s) {
  s.expectArgs(1);
  scalarArg(s, 0);
  return boolTy();
}

ir::Instr* convertLower(const Site& s, Emitter& e) { return e.convert(s.args[0], s.instr->type); }
ir::Instr* truthLower(const Site& s, Emitter& e) { return e.truth(s.args[0]); }

const Type* scalarCastType(const Site& s) {
  s.expectArgs(1);
  scalarArg(s, 0);
  Scalar target;
  parseScalar(s.arg, &target);
  return scalarTy(target);
}

// numba.literal_unroll(t): numba compiles the loop body once per element
// type; here a loop over a tuple already visits every element, with the
// elements' common type (numbers of several types unify), so the call is
// the tuple itself. Elements that do not unify (an array beside a number)
// fail where the loop takes them.
const Type* literalUnrollType(const Site& s) {
  s.expectArgs(1);
  if (!s.argType(0)->is(TypeKind::Tuple))
    s.fail("takes a tuple, not " + typeToString(s.argType(0)));
  return s.argType(0);
}
ir::Instr* literalUnrollLower(const Site& s, Emitter&) { return s.args[0]; }

}  // namespace

const Rule literalUnroll{literalUnrollType, literalUnrollLower};
const Rule range{rangeType, rangeLower};
const Rule len{lenType, lenLower};
const Rule minMax{minMaxType, minMaxLower};
const Rule absolute{absType, absLower};
const Rule toInt{intType, convertLower};
const Rule toFloat{floatType, convertLower};
const Rule toBool{boolType, truthLower};
const Rule scalarCast{scalarCastType, convertLower};

}  // namespace cj::typeinfer::rules
