// Elementwise operations on tiles: Python's operators (a + b, a < b, -a,
// a @ b), cuTile's function forms (ct.add, ct.minimum, ct.where, ...) and its
// math (ct.exp, ...). Shapes broadcast as NumPy's, dtypes promote as cuTile's
// (tile_rules.h); the rewrite leaves every operation with operands of one
// shape and dtype, as the verifier wants.
#include <algorithm>

#include "typeinfer/operators.h"
#include "typeinfer/rules.h"
#include "typeinfer/templates.h"
#include "typeinfer/tile_rules.h"
#include "types/tile_shapes.h"

namespace cj::typeinfer {
namespace {

// The operator as Python spells it, for messages.
std::string spelling(ir::Op op) {
  return op == ir::Op::MatMul ? "@" : std::string(operatorSpelling(op));
}

// What an elementwise operation computes in and returns.
struct Elementwise {
  Scalar compute;                 // operands converted to it
  Scalar result;                  // result dtype (b1 for comparisons)
  std::vector<int64_t> shape;     // broadcast shape
};

// Broadcast shape and promoted dtype of operands (tiles or scalars).
Elementwise promote(const FunctionContext& ctx, const ir::Instr* at, const std::string& what,
                    const std::vector<ir::Instr*>& operands, std::string* types) {
  std::vector<TileOperand> ops;
  for (const ir::Instr* v : operands) {
    ops.push_back(tileOperand(v));
    *types += (types->empty() ? "" : " and ") + typeToNumbaString(v->type);
    if (!ops.back().valid) ctx.fail(at, what, what + ": unsupported operand " + typeToNumbaString(v->type));
  }
  Elementwise r;
  std::string why;
  for (const TileOperand& o : ops) {
    std::vector<int64_t> out;
    if (!broadcastTileShapes(r.shape, o.shape, &out, &why))
      ctx.fail(at, what, what + ": shapes do not broadcast: " + *types + ": " + why);
    r.shape = out;
  }
  if (!tileResultDtype(ops, &r.compute, &why)) ctx.fail(at, what, what + ": " + *types + ": " + why);
  r.result = r.compute;
  return r;
}
Elementwise promote(const FunctionContext& ctx, const ir::Instr* at, const std::string& what,
                    const std::vector<ir::Instr*>& operands) {
  std::string types;
  return promote(ctx, at, what, operands, &types);
}

// An operator (+, <, ~, ...): promotion, then the operator's own dtype rule.
Elementwise elementwise(const FunctionContext& ctx, const ir::Instr* at, const std::string& what, ir::Op op,
                        const std::vector<ir::Instr*>& operands) {
  std::string types;
  Elementwise r = promote(ctx, at, what, operands, &types);
  ScalarKind k = scalarKind(r.compute);
  switch (op) {
    case ir::Op::TrueDiv:
      if (k != ScalarKind::Float) r.compute = Scalar::Float32;
      break;
    case ir::Op::LShift: case ir::Op::RShift: case ir::Op::Invert:
      if (k != ScalarKind::Int) ctx.fail(at, what, what + " needs integer tiles, got " + types);
      break;
    case ir::Op::BitAnd: case ir::Op::BitOr: case ir::Op::BitXor:
      if (k != ScalarKind::Int && k != ScalarKind::Bool) ctx.fail(at, what, what + " needs integer or bool tiles, got " + types);
      break;
    case ir::Op::Add: case ir::Op::Sub: case ir::Op::Mul: case ir::Op::FloorDiv: case ir::Op::Mod: case ir::Op::Pow:
    case ir::Op::Neg:
      if (k == ScalarKind::Bool) ctx.fail(at, what, what + " is not defined on bool tiles; astype first");
      break;
    default:
      break;
  }
  r.result = isComparison(op) ? Scalar::Bool : r.compute;
  return r;
}

ir::Instr* emitElementwise(Emitter& e, ir::Op op, const Elementwise& r, const std::vector<ir::Instr*>& operands) {
  std::vector<ir::Instr*> ops;
  for (ir::Instr* v : operands) ops.push_back(toTile(e, v, r.compute, r.shape));
  return e.emit(op, tileTy(r.result, r.shape), ops);
}

ir::Instr* emitDotOperator(const FunctionContext& ctx, ir::Instr* in, Emitter& e);
const Type* dotOperatorType(const FunctionContext& ctx, ir::Instr* in);

}  // namespace

bool isTileOperation(const ir::Instr* in) {
  return std::any_of(in->operands.begin(), in->operands.end(), [](const ir::Instr* o) { return o->type->isTile(); });
}

const Type* tileOperatorType(const FunctionContext& ctx, ir::Instr* in) {
  std::string what = spelling(in->op);
  if (in->op == ir::Op::MatMul) return dotOperatorType(ctx, in);
  if (in->op == ir::Op::Not || in->op == ir::Op::Is || in->op == ir::Op::IsNot)
    ctx.fail(in, what, "'" + what + "' has no meaning for a tile (the truth value of a tile is ambiguous)");
  Elementwise r = elementwise(ctx, in, what, in->op, in->operands.vec());
  return tileTypeOrFail(ctx, in, what, r.result, r.shape);
}

ir::Instr* lowerTileOperator(const FunctionContext& ctx, ir::Instr* in, Emitter& e) {
  if (in->op == ir::Op::MatMul) return emitDotOperator(ctx, in, e);
  Elementwise r = elementwise(ctx, in, spelling(in->op), in->op, in->operands.vec());
  if (in->op == ir::Op::Pos) return toTile(e, in->operands[0], r.compute, r.shape);
  return emitElementwise(e, in->op, r, in->operands.vec());
}

namespace {

// x @ y is ct.matmul(x, y): the matmul rule types and lowers it.
Site dotSite(const FunctionContext& ctx, ir::Instr* in) {
  Site s{ctx, in, "cudajit.tile.matmul", "matmul"};
  s.args = {in->operands[0], in->operands[1]};
  return s;
}
const Type* dotOperatorType(const FunctionContext& ctx, ir::Instr* in) {
  return rules::tileMatmul.type(dotSite(ctx, in));
}
ir::Instr* emitDotOperator(const FunctionContext& ctx, ir::Instr* in, Emitter& e) {
  return rules::tileMatmul.lower(dotSite(ctx, in), e);
}

// ---- function forms -------------------------------------------------------------

struct NamedOp {
  std::string_view name;
  ir::Op op;
};
constexpr NamedOp kBinary[] = {
    {"add", ir::Op::Add},          {"sub", ir::Op::Sub},           {"mul", ir::Op::Mul},
    {"truediv", ir::Op::TrueDiv},  {"floordiv", ir::Op::FloorDiv}, {"mod", ir::Op::Mod},
    {"pow", ir::Op::Pow},          {"bitwise_and", ir::Op::BitAnd}, {"bitwise_or", ir::Op::BitOr},
    {"bitwise_xor", ir::Op::BitXor}, {"bitwise_lshift", ir::Op::LShift}, {"bitwise_rshift", ir::Op::RShift},
    {"greater", ir::Op::Gt},       {"greater_equal", ir::Op::Ge},  {"less", ir::Op::Lt},
    {"less_equal", ir::Op::Le},    {"equal", ir::Op::Eq},          {"not_equal", ir::Op::Ne},
    {"negative", ir::Op::Neg},     {"bitwise_not", ir::Op::Invert},
};
ir::Op namedOp(std::string_view name) {
  for (const NamedOp& n : kBinary)
    if (n.name == name) return n.op;
  return ir::Op::Add;
}
bool unaryNamed(std::string_view name) { return name == "negative" || name == "bitwise_not"; }

// cuTile's rounding_mode and flush_to_zero options of arithmetic are
// accepted; the result is IEEE round-to-nearest, which every mode allows
// for APPROX and FULL (and the default), denormals kept.
std::vector<ir::Instr*> namedOperands(const Site& s) {
  if (unaryNamed(s.arg)) return {s.bind({"x", "rounding_mode", "flush_to_zero"}, 1)[0]};
  std::vector<ir::Instr*> a = s.bind({"x", "y", "rounding_mode", "flush_to_zero"}, 2);
  return {a[0], a[1]};
}

const Type* namedType(const Site& s) {
  std::vector<ir::Instr*> a = namedOperands(s);
  std::string what = tileOpName(s.name);
  Elementwise r = elementwise(s.ctx, s.instr, what, namedOp(s.arg), a);
  return tileTypeOrFail(s.ctx, s.instr, what, r.result, r.shape);
}
ir::Instr* namedLower(const Site& s, Emitter& e) {
  std::vector<ir::Instr*> a = namedOperands(s);
  Elementwise r = elementwise(s.ctx, s.instr, tileOpName(s.name), namedOp(s.arg), a);
  return emitElementwise(e, namedOp(s.arg), r, a);
}

// minimum / maximum: compare and select (y where the comparison fails, NaN included).
const Type* minMaxType(const Site& s) {
  std::vector<ir::Instr*> a = s.bind({"x", "y"}, 2);
  std::string what = tileOpName(s.name);
  Elementwise r = promote(s.ctx, s.instr, what, a);
  return tileTypeOrFail(s.ctx, s.instr, what, r.compute, r.shape);
}
ir::Instr* minMaxLower(const Site& s, Emitter& e) {
  std::vector<ir::Instr*> a = s.bind({"x", "y"}, 2);
  Elementwise r = promote(s.ctx, s.instr, tileOpName(s.name), a);
  ir::Instr* x = toTile(e, a[0], r.compute, r.shape);
  ir::Instr* y = toTile(e, a[1], r.compute, r.shape);
  ir::Instr* pick_x = e.emit(s.arg == "minimum" ? ir::Op::Lt : ir::Op::Gt, tileTy(Scalar::Bool, r.shape), {x, y});
  return e.emit(ir::Op::Select, x->type, {pick_x, x, y});
}

const Type* whereType(const Site& s) {
  std::vector<ir::Instr*> a = s.bind({"cond", "x", "y"}, 3);
  std::string what = tileOpName(s.name);
  TileOperand c = tileOperand(a[0]);
  if (!c.valid || c.dtype != Scalar::Bool) s.ctx.fail(s.instr, what, what + ": cond must be a bool tile, got " + typeToNumbaString(a[0]->type));
  Elementwise v = promote(s.ctx, s.instr, what, {a[1], a[2]});
  std::vector<int64_t> shape;
  std::string why;
  if (!broadcastTileShapes(c.shape, v.shape, &shape, &why)) s.ctx.fail(s.instr, what, what + ": " + why);
  return tileTypeOrFail(s.ctx, s.instr, what, v.compute, shape);
}
ir::Instr* whereLower(const Site& s, Emitter& e) {
  std::vector<ir::Instr*> a = s.bind({"cond", "x", "y"}, 3);
  const Type* t = s.instr->type;
  ir::Instr* c = toTile(e, a[0], Scalar::Bool, t->shape);
  return e.emit(ir::Op::Select, t, {c, toTile(e, a[1], t->scalar, t->shape), toTile(e, a[2], t->scalar, t->shape)});
}

// Math: floats compute in f32 or f64 (f16 in f32, cast back; integers as f32).
Scalar mathCompute(Scalar d) {
  if (d == Scalar::Float64) return Scalar::Float64;
  return Scalar::Float32;
}
Scalar mathResult(Scalar d) { return scalarKind(d) == ScalarKind::Float ? d : Scalar::Float32; }

std::vector<ir::Instr*> mathOperands(const Site& s) {
  if (s.intrinsic == ir::Intrinsic::Atan2) return s.bind({"x1", "x2"}, 2);
  std::vector<ir::Instr*> a = s.bind({"x", "rounding_mode", "flush_to_zero"}, 1);
  return {a[0]};
}

Elementwise mathShape(const Site& s) { return promote(s.ctx, s.instr, tileOpName(s.name), mathOperands(s)); }

const Type* mathType(const Site& s) {
  Elementwise r = mathShape(s);
  std::string what = tileOpName(s.name);
  bool predicate = s.intrinsic == ir::Intrinsic::IsNan;
  if (s.arg == "abs") return tileTypeOrFail(s.ctx, s.instr, what, r.compute, r.shape);
  return tileTypeOrFail(s.ctx, s.instr, what, predicate ? Scalar::Bool : mathResult(r.compute), r.shape);
}

ir::Instr* mathLower(const Site& s, Emitter& e) {
  Elementwise r = mathShape(s);
  std::vector<ir::Instr*> a = mathOperands(s);
  const Type* out = s.instr->type;
  if (s.arg == "abs" && scalarKind(r.compute) == ScalarKind::Int) {
    ir::Instr* x = toTile(e, a[0], r.compute, r.shape);
    ir::Instr* zero = toTile(e, e.constant(ir::Const::integer(0), i64Ty()), r.compute, r.shape);
    ir::Instr* neg = e.emit(ir::Op::Lt, tileTy(Scalar::Bool, r.shape), {x, zero});
    return e.emit(ir::Op::Select, out, {neg, e.emit(ir::Op::Neg, x->type, {x}), x});
  }
  Scalar c = mathCompute(r.compute);
  const Type* ct = tileTy(c, r.shape);
  std::vector<ir::Instr*> ops;
  for (ir::Instr* v : a) ops.push_back(toTile(e, v, c, r.shape));
  ir::Instr* v;
  if (s.arg == "rsqrt") {
    ir::Instr* root = e.intrinsic(ir::Intrinsic::Sqrt, ct, ops);
    ir::Instr* one = toTile(e, e.constant(ir::Const::real(1.0), f64Ty()), c, r.shape);
    v = e.emit(ir::Op::TrueDiv, ct, {one, root});
  } else if (s.intrinsic == ir::Intrinsic::IsNan) {
    return e.intrinsic(ir::Intrinsic::IsNan, out, ops);
  } else {
    v = e.intrinsic(s.arg == "abs" ? ir::Intrinsic::Fabs : s.intrinsic, ct, ops);
  }
  return v->type == out ? v : e.emit(ir::Op::Cast, out, {v});
}

}  // namespace

namespace rules {
const Rule tileNamedOp{namedType, namedLower};
const Rule tileMinMax{minMaxType, minMaxLower};
const Rule tileWhere{whereType, whereLower};
const Rule tileMath{mathType, mathLower};
}  // namespace rules

}  // namespace cj::typeinfer
