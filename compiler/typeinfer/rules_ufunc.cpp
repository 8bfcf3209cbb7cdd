// numpy ufuncs on scalars in kernels: np.sqrt(x), np.maximum(a, b), ...
//
// Typing is numba-cuda's (typing/npydecl.py Numpy_rules_ufunc): the loop of
// ufunc_loops.def that numba's ufunc_find_matching_loop picks for the
// argument types gives the result type (np.sqrt(int32) -> float64,
// np.sqrt(float32) -> float32, np.add(int32, int32) -> int32). Lowering
// converts the arguments to the loop's input types and computes the loop in
// that type with numpy's semantics, on the existing IR operations and math
// intrinsics. numba-cuda 0.30 types every ufunc here but lowers only part of
// them on scalars (np.sqrt raises a KeyError there); cudajit lowers them all
// except gcd/lcm and complex maximum/minimum/fmax/fmin, which are errors;
// the complex loops are ufunc_complex.cpp's.
#include <cmath>
#include <stdexcept>
#include <string>
#include <unordered_map>

#include "typeinfer/complex_parts.h"
#include "typeinfer/rules.h"
#include "typeinfer/specializer.h"
#include "typeinfer/ufunc_complex.h"
#include "typeinfer/ufuncs.h"

namespace cj::typeinfer {
namespace {

struct Row {
  std::string_view name;
  int nin, nout;
  std::string_view loops;
};

const Row kRows[] = {
#define UFUNC(name, nin, nout, loops) {#name, nin, nout, loops},
#include "typeinfer/ufunc_loops.def"
#undef UFUNC
};

Scalar fromNumpyChar(char c) {
  switch (c) {
    case '?': return Scalar::Bool;
    case 'b': return Scalar::Int8;
    case 'B': return Scalar::UInt8;
    case 'h': return Scalar::Int16;
    case 'H': return Scalar::UInt16;
    case 'i': return Scalar::Int32;
    case 'I': return Scalar::UInt32;
    case 'l': case 'q': return Scalar::Int64;
    case 'L': case 'Q': return Scalar::UInt64;
    case 'f': return Scalar::Float32;
    case 'd': return Scalar::Float64;
    case 'F': return Scalar::Complex64;
    case 'D': return Scalar::Complex128;
  }
  throw std::logic_error(std::string("ufunc_loops.def: unknown type character ") + c);
}

Ufunc parseRow(const Row& r) {
  Ufunc u{r.name, r.nin, r.nout, {}};
  size_t pos = 0;
  while (pos < r.loops.size()) {
    size_t end = r.loops.find(' ', pos);
    if (end == std::string_view::npos) end = r.loops.size();
    std::string_view text = r.loops.substr(pos, end - pos);
    pos = end + 1;
    UfuncLoop loop;
    if (!text.empty() && text[0] == '!') {
      loop.supported = false;
      text.remove_prefix(1);
    }
    loop.text = std::string(text);
    size_t arrow = text.find(':');
    for (size_t i = 0; i < arrow; ++i) loop.ins.push_back(fromNumpyChar(text[i]));
    for (size_t i = arrow + 1; i < text.size(); ++i) loop.outs.push_back(fromNumpyChar(text[i]));
    u.loops.push_back(std::move(loop));
  }
  return u;
}

bool isIntKind(Scalar s) { return scalarKind(s) == ScalarKind::Int; }
bool isInexactKind(Scalar s) { return scalarKind(s) == ScalarKind::Float || scalarKind(s) == ScalarKind::Complex; }

}  // namespace

const Ufunc* findUfunc(std::string_view name) {
  static const auto table = [] {
    std::unordered_map<std::string_view, Ufunc> m;
    for (const Row& r : kRows) m.emplace(r.name, parseRow(r));
    return m;
  }();
  auto it = table.find(name);
  return it == table.end() ? nullptr : &it->second;
}

bool safeCast(Scalar from, Scalar to) {
  if (from == to) return true;
  ScalarKind fk = scalarKind(from), tk = scalarKind(to);
  int fb = scalarBits(from), tb = scalarBits(to);
  switch (fk) {
    case ScalarKind::Bool: return true;
    case ScalarKind::Int:
      if (tk == ScalarKind::Int)
        return scalarSigned(from) ? scalarSigned(to) && tb >= fb : (scalarSigned(to) ? tb > fb : tb >= fb);
      if (tk == ScalarKind::Float) return tb == 16 ? fb <= 8 : tb == 32 ? fb <= 16 : true;
      if (tk == ScalarKind::Complex) return tb == 64 ? fb <= 16 : true;
      return false;
    case ScalarKind::Float:
      if (tk == ScalarKind::Float) return tb >= fb;
      if (tk == ScalarKind::Complex) return tb / 2 >= fb;
      return false;
    case ScalarKind::Complex: return tk == ScalarKind::Complex && tb >= fb;
  }
  return false;
}

const UfuncLoop* chooseLoop(const Ufunc& u, const std::vector<Scalar>& args) {
  bool any_int = false, any_inexact = false;
  for (Scalar a : args) {
    any_int = any_int || isIntKind(a);
    any_inexact = any_inexact || isInexactKind(a);
  }
  bool mixed = any_int && any_inexact;
  for (const UfuncLoop& loop : u.loops) {
    bool ok = loop.ins.size() == args.size();
    for (size_t i = 0; ok && i < args.size(); ++i)
      ok = (mixed && isIntKind(args[i]) && isInexactKind(loop.ins[i])) || safeCast(args[i], loop.ins[i]);
    if (ok) return &loop;
  }
  return nullptr;
}

namespace rules {
namespace {

using ir::Op;

// ---- typing ---------------------------------------------------------------------

std::string spell(const Site& s) {
  std::string_view n = s.name;
  if (n.substr(0, 6) == "numpy.") n.remove_prefix(6);
  return "np." + std::string(n);
}

struct Chosen {
  const Ufunc* ufunc;
  const UfuncLoop* loop;
};

Chosen choose(const Site& s) {
  const Ufunc* u = findUfunc(s.arg);
  if (!u) s.fail("unknown numpy ufunc " + std::string(s.arg));
  if (!s.kw_names.empty())
    s.fail(spell(s) + "() keyword arguments (where=, dtype=, ...) are not supported in kernels",
           "out= is, with an output array");
  if (s.args.size() != static_cast<size_t>(u->nin)) {   // more: the array form (isArrayForm)
    s.fail(spell(s) + "() takes " + std::to_string(u->nin) + " argument" + (u->nin == 1 ? "" : "s") +
           ", got " + std::to_string(s.args.size()));
  }
  std::vector<Scalar> scalars;
  std::string got;
  for (size_t i = 0; i < s.args.size(); ++i) {
    const Type* t = s.argType(i);
    got += (i ? ", " : "") + typeToString(t);
    if (!t->isScalar()) s.fail(spell(s) + "() argument must be a number, got " + typeToString(t));
    scalars.push_back(t->scalar);
  }
  const UfuncLoop* loop = chooseLoop(*u, scalars);
  if (!loop) s.fail("can't resolve ufunc " + std::string(u->name) + " for types (" + got + ")");
  if (!loop->supported)
    s.fail("ufunc '" + std::string(u->name) + "' using the loop '" + loop->text + "' is not supported");
  return {u, loop};
}

const Type* resultType(const UfuncLoop& loop) {
  if (loop.outs.size() == 1) return scalarTy(loop.outs[0]);
  std::vector<const Type*> elems;
  for (Scalar o : loop.outs) elems.push_back(scalarTy(o));
  return tupleTy(elems);
}

// np.sin(x, out), np.add(a, b, out=out): the ufunc over arrays (below).
bool isArrayForm(const Site& s);
const Type* arrayFormType(const Site& s);
ir::Instr* arrayFormLower(const Site& s, Emitter& e);

const Type* ufuncType(const Site& s) {
  if (isArrayForm(s)) return arrayFormType(s);
  return resultType(*choose(s).loop);
}

// ---- lowering -------------------------------------------------------------------

// One call being lowered: the arguments converted to the loop's input types.
struct Call {
  const Site& s;
  Emitter& e;
  const UfuncLoop& loop;
  ir::Intrinsic intrinsic;      // the table row's intrinsic, if any
  Op op;                        // the table row's IR operation, if any
  std::vector<ir::Instr*> x;
  const Type* T;                // the first input's type (most loops are homogeneous)
  const Type* R;                // the (first) output's type

  Scalar kind() const { return T->scalar; }
  bool isBool() const { return T->isBool(); }
  bool isInt() const { return T->isInt(); }
  bool isFloat() const { return T->isFloat(); }
  bool isComplex() const { return T->isComplex(); }

  ir::Instr* num(double v, const Type* t) const {
    if (t->isComplex()) return e.constant(ir::Const::complex(v, 0.0), t);
    if (t->isFloat()) return e.constant(ir::Const::real(v), t);
    if (t->isBool()) return e.constant(ir::Const::boolean(v != 0), t);
    return e.constant(ir::Const::integer(static_cast<int64_t>(v)), t);
  }
  ir::Instr* num(double v) const { return num(v, T); }
  ir::Instr* op2(Op o, ir::Instr* a, ir::Instr* b, const Type* t = nullptr) const {
    return e.emit(o, t ? t : a->type, {a, b});
  }
  ir::Instr* cmp(Op o, ir::Instr* a, ir::Instr* b) const { return e.emit(o, boolTy(), {a, b}); }
  ir::Instr* select(ir::Instr* c, ir::Instr* a, ir::Instr* b) const {
    return e.emit(Op::Select, a->type, {c, a, b});
  }
  ir::Instr* isNan(ir::Instr* v) const { return cmp(Op::Ne, v, v); }
  ir::Instr* call(ir::Intrinsic id, std::vector<ir::Instr*> ops) const {
    return e.intrinsic(id, ops[0]->type, ops);
  }
  [[noreturn]] void unsupported() const {
    s.fail(spell(s) + "() on " + typeToString(T) + " (numpy loop '" + loop.text +
           "') is not supported by cudajit");
  }
};

using Lowering = ir::Instr* (*)(const Call&);

// f(x) in the loop's float type with a libdevice intrinsic; integer loops
// (np.floor/ceil/trunc of ints) are the identity.
ir::Instr* unaryMath(const Call& c) {
  if (c.isComplex()) {
    if (ir::Instr* r = rules::lowerComplexUfunc(c.s.arg, c.x, c.T, c.e)) return r;
    c.unsupported();
  }
  if (!c.isFloat()) return c.x[0];
  return c.call(c.intrinsic, {c.x[0]});
}

ir::Instr* binaryMath(const Call& c) {
  if (!c.isFloat()) c.unsupported();
  return c.call(c.intrinsic, {c.x[0], c.x[1]});
}

// add/subtract/multiply/true_divide/floor_divide/remainder/power and the
// bitwise operations on the loop type; numpy's boolean add is `or` and its
// boolean multiply `and`.
ir::Instr* binaryOp(const Call& c) {
  Op op = c.op;
  if (c.isBool() && op == Op::Add) op = Op::BitOr;
  if (c.isBool() && op == Op::Mul) op = Op::BitAnd;
  return c.op2(op, c.x[0], c.x[1]);
}

ir::Instr* compareOp(const Call& c) {
  Scalar a = c.loop.ins[0], b = c.loop.ins[1];
  if (a == b) {
    if (c.isComplex() && c.op != Op::Eq && c.op != Op::Ne) return rules::lowerComplexCompare(c.op, c.x[0], c.x[1], c.e);
    return c.cmp(c.op, c.x[0], c.x[1]);
  }
  // The mixed int64/uint64 loops (qQ, Qq): compare the mathematical values.
  bool lhs_signed = scalarSigned(a);
  ir::Instr* sv = lhs_signed ? c.x[0] : c.x[1];
  ir::Instr* uv = lhs_signed ? c.x[1] : c.x[0];
  ir::Instr* neg = c.cmp(Op::Lt, sv, c.num(0, sv->type));
  ir::Instr* su = c.e.convert(sv, uv->type);
  ir::Instr* l = lhs_signed ? su : uv;
  ir::Instr* r = lhs_signed ? uv : su;
  ir::Instr* unsigned_result = c.cmp(c.op, l, r);
  // A negative signed value is below every unsigned one.
  bool neg_result = false;
  switch (c.op) {
    case Op::Lt: case Op::Le: neg_result = lhs_signed; break;
    case Op::Gt: case Op::Ge: neg_result = !lhs_signed; break;
    case Op::Ne: neg_result = true; break;
    default: neg_result = false; break;
  }
  return c.select(neg, c.e.constant(ir::Const::boolean(neg_result), boolTy()), unsigned_result);
}

ir::Instr* trueDivide(const Call& c) { return c.op2(Op::TrueDiv, c.x[0], c.x[1]); }

ir::Instr* divmod(const Call& c) {
  ir::Instr* q = c.op2(Op::FloorDiv, c.x[0], c.x[1]);
  ir::Instr* r = c.op2(Op::Mod, c.x[0], c.x[1]);
  return c.e.emit(Op::TupleMake, tupleTy({c.T, c.T}), {q, r});
}

// C's fmod: the remainder takes the dividend's sign (0 for a zero divisor).
ir::Instr* fmod(const Call& c) {
  if (c.isFloat()) return c.call(ir::Intrinsic::Fmod, {c.x[0], c.x[1]});
  ir::Instr* r = c.op2(Op::Mod, c.x[0], c.x[1]);   // floored; 0 for a zero divisor
  if (!scalarSigned(c.kind())) return r;
  ir::Instr* nonzero = c.cmp(Op::Ne, r, c.num(0));
  ir::Instr* signs_differ = c.cmp(Op::Lt, c.op2(Op::BitXor, r, c.x[0]), c.num(0));
  ir::Instr* adjust = c.op2(Op::BitAnd, nonzero, signs_differ);
  return c.select(adjust, c.op2(Op::Sub, r, c.x[1]), r);
}

ir::Instr* negative(const Call& c) { return c.e.emit(Op::Neg, c.T, {c.x[0]}); }
ir::Instr* identity(const Call& c) { return c.x[0]; }

ir::Instr* absolute(const Call& c) {
  ir::Instr* x = c.x[0];
  if (c.isComplex()) return c.e.intrinsic(ir::Intrinsic::ComplexAbs, c.R, {x});
  if (c.isFloat()) return c.call(ir::Intrinsic::Fabs, {x});
  if (c.isBool() || !scalarSigned(c.kind())) return x;
  return c.select(c.cmp(Op::Lt, x, c.num(0)), c.e.emit(Op::Neg, c.T, {x}), x);
}

// 1, -1 or 0 (NaN stays NaN); complex: z / |z| (0 for 0), as numpy 2.
ir::Instr* sign(const Call& c) {
  ir::Instr* x = c.x[0];
  if (c.isComplex()) {
    ir::Instr* mag = c.e.intrinsic(ir::Intrinsic::ComplexAbs, complexPartType(c.T), {x});
    ir::Instr* magz = makeComplex(c.e, c.T, mag, c.num(0, mag->type));
    return c.select(c.cmp(Op::Eq, mag, c.num(0, mag->type)), c.num(0), c.op2(Op::TrueDiv, x, magz));
  }
  ir::Instr* zero = c.num(0);
  ir::Instr* pos = c.select(c.cmp(Op::Gt, x, zero), c.num(1), zero);
  if (c.isInt() && !scalarSigned(c.kind())) return pos;
  ir::Instr* r = c.select(c.cmp(Op::Lt, x, zero), c.num(-1), pos);
  if (c.isFloat()) r = c.select(c.isNan(x), x, r);
  return r;
}

ir::Instr* conjugate(const Call& c) {
  ir::Instr* z = c.x[0];
  if (!c.isComplex()) return z;
  return complexConjugate(c.e, z);
}

ir::Instr* square(const Call& c) {
  if (c.isBool()) return c.op2(Op::BitAnd, c.x[0], c.x[0]);
  return c.op2(Op::Mul, c.x[0], c.x[0]);
}

// 1 / x; integers divide in float64 and convert back, as numpy's loops.
ir::Instr* reciprocal(const Call& c) {
  if (c.isFloat() || c.isComplex()) return c.op2(Op::TrueDiv, c.num(1), c.x[0]);
  ir::Instr* xf = c.e.convert(c.x[0], f64Ty());
  return c.e.convert(c.op2(Op::TrueDiv, c.num(1, f64Ty()), xf), c.T);
}

// numpy's npy_logaddexp / npy_logaddexp2.
ir::Instr* logaddexp(const Call& c) {
  if (!c.isFloat()) c.unsupported();
  bool base2 = c.s.arg == "logaddexp2";
  ir::Instr *x = c.x[0], *y = c.x[1];
  ir::Intrinsic expf = base2 ? ir::Intrinsic::Exp2 : ir::Intrinsic::Exp;
  auto log1pOf = [&](ir::Instr* v) {
    ir::Instr* l = c.call(ir::Intrinsic::Log1p, {v});
    return base2 ? c.op2(Op::Mul, l, c.num(1.0 / std::log(2.0))) : l;
  };
  ir::Instr* same = c.op2(Op::Add, x, c.num(base2 ? 1.0 : std::log(2.0)));
  ir::Instr* d = c.op2(Op::Sub, x, y);
  ir::Instr* pos = c.op2(Op::Add, x, log1pOf(c.call(expf, {c.e.emit(Op::Neg, c.T, {d})})));
  ir::Instr* neg = c.op2(Op::Add, y, log1pOf(c.call(expf, {d})));
  ir::Instr* r = c.select(c.cmp(Op::Gt, d, c.num(0)), pos, c.select(c.cmp(Op::Le, d, c.num(0)), neg, d));
  return c.select(c.cmp(Op::Eq, x, y), same, r);
}

// maximum/minimum propagate NaN; fmax/fmin ignore it (numba's npyfuncs).
ir::Instr* minMax(const Call& c) {
  bool is_max = c.s.arg == "maximum" || c.s.arg == "fmax";
  bool nan_ignoring = c.s.arg == "fmax" || c.s.arg == "fmin";
  ir::Instr *a = c.x[0], *b = c.x[1];
  if (c.isBool()) return c.op2(is_max ? Op::BitOr : Op::BitAnd, a, b);
  if (c.isComplex()) c.unsupported();
  ir::Instr* pick = c.select(c.cmp(is_max ? Op::Ge : Op::Le, a, b), a, b);
  if (!c.isFloat()) return pick;
  ir::Instr* any_nan = c.op2(Op::BitOr, c.isNan(a), c.isNan(b));
  ir::Instr* nan_result = nan_ignoring ? c.select(c.isNan(a), b, a) : c.select(c.isNan(a), a, b);
  return c.select(any_nan, nan_result, pick);
}

ir::Instr* invert(const Call& c) {
  if (c.isBool()) return c.e.emit(Op::Not, boolTy(), {c.x[0]});
  return c.e.emit(Op::Invert, c.T, {c.x[0]});
}

ir::Instr* logical(const Call& c) {
  if (c.s.arg == "logical_not") return c.e.emit(Op::Not, boolTy(), {c.e.truth(c.x[0])});
  ir::Instr* a = c.e.truth(c.x[0]);
  ir::Instr* b = c.e.truth(c.x[1]);
  Op op = c.s.arg == "logical_and" ? Op::BitAnd : c.s.arg == "logical_or" ? Op::BitOr : Op::BitXor;
  return c.op2(op, a, b, boolTy());
}

// isnan/isinf/isfinite: integers are finite; complex numbers by their parts.
ir::Instr* classify(const Call& c) {
  bool finite = c.s.arg == "isfinite";
  ir::Intrinsic name = c.s.arg == "isfinite" ? ir::Intrinsic::IsFinite
                       : c.s.arg == "isinf"  ? ir::Intrinsic::IsInf
                                             : ir::Intrinsic::IsNan;
  if (c.isBool() || c.isInt()) return c.e.constant(ir::Const::boolean(finite), boolTy());
  if (c.isFloat()) return c.e.intrinsic(name, boolTy(), {c.x[0]});
  ir::Instr* re = c.e.intrinsic(name, boolTy(), {complexReal(c.e, c.x[0])});
  ir::Instr* im = c.e.intrinsic(name, boolTy(), {complexImag(c.e, c.x[0])});
  return c.op2(finite ? Op::BitAnd : Op::BitOr, re, im);
}

ir::Instr* signbit(const Call& c) {
  ir::Instr* s = c.call(ir::Intrinsic::Copysign, {c.num(1), c.x[0]});
  return c.cmp(Op::Lt, s, c.num(0));
}

// nextafter(x, copysign(inf, x)) - x, as numba computes it (NaN for inf).
ir::Instr* spacing(const Call& c) {
  ir::Instr* x = c.x[0];
  ir::Instr* toward = c.call(ir::Intrinsic::Copysign, {c.num(INFINITY), x});
  return c.op2(Op::Sub, c.call(ir::Intrinsic::Nextafter, {x, toward}), x);
}

ir::Instr* ldexp(const Call& c) {
  return c.e.intrinsic(ir::Intrinsic::Ldexp, c.T, {c.x[0], c.e.convert(c.x[1], i32Ty())});
}

// deg2rad/radians and rad2deg/degrees: one multiplication in the loop type.
ir::Instr* angle(const Call& c) {
  bool to_rad = c.s.arg == "deg2rad" || c.s.arg == "radians";
  return c.op2(Op::Mul, c.x[0], c.num(to_rad ? M_PI / 180.0 : 180.0 / M_PI));
}

ir::Instr* floatPower(const Call& c) { return c.op2(Op::Pow, c.x[0], c.x[1]); }

ir::Instr* notSupported(const Call& c) {
  c.s.fail(spell(c.s) + "() is not supported by cudajit");
}

struct LowerRow {
  std::string_view name;
  Lowering lower;
  ir::Intrinsic intrinsic = ir::Intrinsic::Count;
  Op op = Op::Add;
};

const LowerRow kLowering[] = {
    {"add", binaryOp, ir::Intrinsic::Count, Op::Add},
    {"subtract", binaryOp, ir::Intrinsic::Count, Op::Sub},
    {"multiply", binaryOp, ir::Intrinsic::Count, Op::Mul},
    {"divide", trueDivide},
    {"floor_divide", binaryOp, ir::Intrinsic::Count, Op::FloorDiv},
    {"remainder", binaryOp, ir::Intrinsic::Count, Op::Mod},
    {"power", binaryOp, ir::Intrinsic::Count, Op::Pow},
    {"float_power", floatPower},
    {"fmod", fmod},
    {"divmod", divmod},
    {"logaddexp", logaddexp},
    {"logaddexp2", logaddexp},
    {"negative", negative},
    {"positive", identity},
    {"absolute", absolute},
    {"fabs", unaryMath, ir::Intrinsic::Fabs},
    {"sign", sign},
    {"conjugate", conjugate},
    {"square", square},
    {"reciprocal", reciprocal},
    {"rint", unaryMath, ir::Intrinsic::Rint},
    {"exp", unaryMath, ir::Intrinsic::Exp},
    {"exp2", unaryMath, ir::Intrinsic::Exp2},
    {"expm1", unaryMath, ir::Intrinsic::Expm1},
    {"log", unaryMath, ir::Intrinsic::Log},
    {"log2", unaryMath, ir::Intrinsic::Log2},
    {"log10", unaryMath, ir::Intrinsic::Log10},
    {"log1p", unaryMath, ir::Intrinsic::Log1p},
    {"sqrt", unaryMath, ir::Intrinsic::Sqrt},
    {"cbrt", unaryMath, ir::Intrinsic::Cbrt},
    {"sin", unaryMath, ir::Intrinsic::Sin},
    {"cos", unaryMath, ir::Intrinsic::Cos},
    {"tan", unaryMath, ir::Intrinsic::Tan},
    {"arcsin", unaryMath, ir::Intrinsic::Asin},
    {"arccos", unaryMath, ir::Intrinsic::Acos},
    {"arctan", unaryMath, ir::Intrinsic::Atan},
    {"sinh", unaryMath, ir::Intrinsic::Sinh},
    {"cosh", unaryMath, ir::Intrinsic::Cosh},
    {"tanh", unaryMath, ir::Intrinsic::Tanh},
    {"arcsinh", unaryMath, ir::Intrinsic::Asinh},
    {"arccosh", unaryMath, ir::Intrinsic::Acosh},
    {"arctanh", unaryMath, ir::Intrinsic::Atanh},
    {"floor", unaryMath, ir::Intrinsic::Floor},
    {"ceil", unaryMath, ir::Intrinsic::Ceil},
    {"trunc", unaryMath, ir::Intrinsic::Trunc},
    {"arctan2", binaryMath, ir::Intrinsic::Atan2},
    {"hypot", binaryMath, ir::Intrinsic::Hypot},
    {"copysign", binaryMath, ir::Intrinsic::Copysign},
    {"nextafter", binaryMath, ir::Intrinsic::Nextafter},
    {"deg2rad", angle},
    {"radians", angle},
    {"rad2deg", angle},
    {"degrees", angle},
    {"bitwise_and", binaryOp, ir::Intrinsic::Count, Op::BitAnd},
    {"bitwise_or", binaryOp, ir::Intrinsic::Count, Op::BitOr},
    {"bitwise_xor", binaryOp, ir::Intrinsic::Count, Op::BitXor},
    {"invert", invert},
    {"left_shift", binaryOp, ir::Intrinsic::Count, Op::LShift},
    {"right_shift", binaryOp, ir::Intrinsic::Count, Op::RShift},
    {"greater", compareOp, ir::Intrinsic::Count, Op::Gt},
    {"greater_equal", compareOp, ir::Intrinsic::Count, Op::Ge},
    {"less", compareOp, ir::Intrinsic::Count, Op::Lt},
    {"less_equal", compareOp, ir::Intrinsic::Count, Op::Le},
    {"equal", compareOp, ir::Intrinsic::Count, Op::Eq},
    {"not_equal", compareOp, ir::Intrinsic::Count, Op::Ne},
    {"logical_and", logical},
    {"logical_or", logical},
    {"logical_xor", logical},
    {"logical_not", logical},
    {"maximum", minMax},
    {"minimum", minMax},
    {"fmax", minMax},
    {"fmin", minMax},
    {"isnan", classify},
    {"isinf", classify},
    {"isfinite", classify},
    {"signbit", signbit},
    {"ldexp", ldexp},
    {"spacing", spacing},
    {"gcd", notSupported},
    {"lcm", notSupported},
};

const LowerRow* findLowering(std::string_view name) {
  for (const LowerRow& r : kLowering)
    if (r.name == name) return &r;
  return nullptr;
}

ir::Instr* ufuncLower(const Site& s, Emitter& e) {
  if (isArrayForm(s)) return arrayFormLower(s, e);
  Chosen ch = choose(s);
  const LowerRow* row = findLowering(s.arg);
  if (!row) s.fail(spell(s) + "() is not supported by cudajit");
  std::vector<ir::Instr*> x;
  for (size_t i = 0; i < s.args.size(); ++i) x.push_back(e.convert(s.args[i], scalarTy(ch.loop->ins[i])));
  Call c{s, e, *ch.loop, row->intrinsic, row->op, x, scalarTy(ch.loop->ins[0]), scalarTy(ch.loop->outs[0])};
  ir::Instr* r = row->lower(c);
  const Type* want = resultType(*ch.loop);
  return r->type == want ? r : e.convert(r, want);
}

// ---- ufuncs over arrays with explicit outputs -------------------------------------
//
// numba-cuda runs `np.sin(x, out)` in a kernel as a loop over out's elements
// in the calling thread (each thread does the whole operation), with numpy's
// broadcasting of the inputs against out; it cannot allocate a result, so an
// output array is required. cudajit does the same for every ufunc it lowers
// on scalars (numba-cuda 0.30 only for those with a CUDA scalar lowering:
// np.sqrt(x, out) is a KeyError there): a support function, one per ufunc
// and argument types, whose loop body is the scalar lowering above.

struct ArrayForm {
  const Ufunc* u = nullptr;
  const UfuncLoop* loop = nullptr;
  std::vector<ir::Instr*> ins;          // arrays or scalars
  std::vector<ir::Instr*> outs;         // positional outputs, or out= (an array)
  ir::Instr* out_tuple = nullptr;       // out=(a, b): a tuple of output arrays
  std::vector<const Type*> out_types;
  int ndim = 0;                         // the outputs'
};

bool isArrayForm(const Site& s) {
  const Ufunc* u = findUfunc(s.arg);
  if (!u) return false;
  if (s.args.size() > static_cast<size_t>(u->nin)) return true;
  for (const std::string& k : s.kw_names)
    if (k == "out") return true;
  for (ir::Instr* a : s.args)
    if (a->type->is(TypeKind::Array)) return true;
  return false;
}

// numpy's casting='same_kind' (the default for ufunc outputs): safe casts, and
// casts within one kind (float64 -> float32, int64 -> int8).
bool sameKindCast(Scalar from, Scalar to) {
  if (safeCast(from, to)) return true;
  ScalarKind fk = scalarKind(from), tk = scalarKind(to);
  if (fk != tk) return false;
  return fk != ScalarKind::Int || scalarSigned(from) == scalarSigned(to) || !scalarSigned(from);
}

ArrayForm chooseArrayForm(const Site& s) {
  ArrayForm f;
  f.u = findUfunc(s.arg);
  const size_t nin = static_cast<size_t>(f.u->nin), nout = static_cast<size_t>(f.u->nout);
  if (s.args.size() < nin)
    s.fail(spell(s) + "() takes " + std::to_string(nin) + " input" + (nin == 1 ? "" : "s") + ", got " +
           std::to_string(s.args.size()));
  if (s.args.size() > nin + nout)
    s.fail(spell(s) + "() takes " + std::to_string(nin) + " input" + (nin == 1 ? "" : "s") + " and " +
           std::to_string(nout) + " output" + (nout == 1 ? "" : "s") + ", got " + std::to_string(s.args.size()) +
           " arguments");
  f.ins.assign(s.args.begin(), s.args.begin() + static_cast<std::ptrdiff_t>(nin));
  f.outs.assign(s.args.begin() + static_cast<std::ptrdiff_t>(nin), s.args.end());
  for (ir::Instr* o : f.outs) f.out_types.push_back(o->type);
  for (size_t k = 0; k < s.kw_names.size(); ++k) {
    if (s.kw_names[k] != "out")
      s.fail(spell(s) + "() keyword argument '" + s.kw_names[k] + "' is not supported in kernels",
             "out= (or the outputs after the inputs) is");
    if (!f.outs.empty()) s.fail(spell(s) + "() got its output both by position and as out=");
    ir::Instr* o = s.kw_args[k];
    if (o->type->is(TypeKind::Tuple)) {
      f.out_tuple = o;
      f.out_types = o->type->elems;
    } else {
      f.outs.push_back(o);
      f.out_types.push_back(o->type);
    }
  }
  if (f.out_types.empty())
    s.fail(spell(s) + "() on an array without an output array is not supported in kernels (it would allocate "
                      "the result)",
           "give the output, as numba-cuda needs too: " + spell(s) + "(a, out), or out[i] = " + spell(s) + "(a[i])");
  if (f.out_types.size() != nout)
    s.fail(spell(s) + "() has " + std::to_string(nout) + " output" + (nout == 1 ? "" : "s") + ", got " +
           std::to_string(f.out_types.size()));
  for (size_t k = 0; k < f.out_types.size(); ++k) {
    const Type* t = f.out_types[k];
    if (!t->is(TypeKind::Array) || t->record)
      s.fail(spell(s) + "() output must be an array of numbers, got " + typeToString(t));
    if (t->readonly) s.fail(spell(s) + "() cannot write to the readonly array " + typeToString(t));
    if (k == 0) f.ndim = t->ndim;
    if (t->ndim != f.ndim)
      s.fail(spell(s) + "() outputs of different dimensions: " + typeToString(f.out_types[0]) + " and " +
             typeToString(t));
  }
  std::vector<Scalar> scalars;
  std::string got;
  for (size_t i = 0; i < f.ins.size(); ++i) {
    const Type* t = f.ins[i]->type;
    got += (i ? ", " : "") + typeToString(t);
    if (t->is(TypeKind::Array)) {
      if (t->record) s.fail(spell(s) + "() does not take arrays of records, got " + typeToString(t));
      if (t->ndim > f.ndim)
        s.fail(spell(s) + "(): input " + std::to_string(i) + " " + typeToString(t) +
                   " has more dimensions than the output " + typeToString(f.out_types[0]),
               "numpy cannot broadcast it into the output either");
      scalars.push_back(t->scalar);
    } else if (t->isScalar()) {
      scalars.push_back(t->scalar);
    } else {
      s.fail(spell(s) + "() argument must be an array or a number, got " + typeToString(t));
    }
  }
  f.loop = chooseLoop(*f.u, scalars);
  if (!f.loop) s.fail("can't resolve ufunc " + std::string(f.u->name) + " for types (" + got + ")");
  if (!f.loop->supported)
    s.fail("ufunc '" + std::string(f.u->name) + "' using the loop '" + f.loop->text + "' is not supported");
  for (size_t k = 0; k < f.out_types.size(); ++k)
    if (!sameKindCast(f.loop->outs[k], f.out_types[k]->scalar))
      s.fail("cannot cast " + spell(s) + "()'s output from " + std::string(scalarNumbaName(f.loop->outs[k])) +
                 " to " + std::string(scalarNumbaName(f.out_types[k]->scalar)) + " with casting rule 'same_kind'",
             "as numpy: give an output array of " + std::string(scalarNumbaName(f.loop->outs[k])) +
                 " (or a wider type of its kind)");
  return f;
}

const Type* arrayFormType(const Site& s) {
  ArrayForm f = chooseArrayForm(s);
  return f.out_types.size() == 1 ? f.out_types[0] : tupleTy(f.out_types);
}

// The loop function's IR name: the ufunc and a hash of the argument types.
std::string arrayFormName(const ArrayForm& f) {
  std::string types;
  for (ir::Instr* a : f.ins) types += typeToString(a->type) + ";";
  for (const Type* t : f.out_types) types += typeToString(t) + ";";
  return "cj_ufunc_" + std::string(f.u->name) + "_" + std::to_string(std::hash<std::string>()(types) % 1000000007);
}

// for k in range(out.size): out[unravel(k)] = ufunc(x[broadcast(unravel(k))], ...)
void buildArrayFormLoop(const Site& s, const ArrayForm& f, const LowerRow& row, const std::string& name) {
  auto fn = std::make_unique<ir::Function>();
  fn->name = name;
  fn->py_name = spell(s);
  fn->filename = s.ctx.fn().filename;
  fn->first_line = s.instr->loc.line;
  fn->return_type = voidTy();
  ir::Block* entry = fn->addBlock();
  std::vector<ir::Instr*> ins, outs;
  for (size_t i = 0; i < f.ins.size(); ++i) {
    fn->arg_names.push_back("x" + std::to_string(i));
    ins.push_back(entry->addParam(f.ins[i]->type, fn->arg_names.back()));
  }
  for (size_t k = 0; k < f.out_types.size(); ++k) {
    fn->arg_names.push_back("out" + std::to_string(k));
    outs.push_back(entry->addParam(f.out_types[k], fn->arg_names.back()));
  }
  ir::Block* header = fn->addBlock();
  ir::Block* body = fn->addBlock();
  ir::Block* exit = fn->addBlock();
  ir::Instr* k = header->addParam(i64Ty(), "k");
  ir::Builder b(fn.get(), entry);
  b.setLoc(s.instr->loc);
  ir::Instr* n = b.emit(Op::ArraySize, i64Ty(), {outs[0]});
  b.br(header, {b.constant(ir::Const::integer(0), i64Ty())});
  b.setBlock(header);
  b.condBr(b.emit(Op::Lt, boolTy(), {k, n}), body, {}, exit, {});

  b.setBlock(body);
  // out's index of element k (C order); numpy's broadcasting lines the
  // inputs' dimensions up with out's last ones, a dimension of 1 repeating.
  std::vector<ir::Instr*> idx(static_cast<size_t>(f.ndim));
  ir::Instr* rest = k;
  for (int d = f.ndim - 1; d >= 0; --d) {
    if (d == 0) {
      idx[0] = rest;
      break;
    }
    ir::Instr* dim = b.emit(Op::ArrayDim, i64Ty(), {outs[0]});
    dim->index = d;
    idx[static_cast<size_t>(d)] = b.emit(Op::Mod, i64Ty(), {rest, dim});
    rest = b.emit(Op::FloorDiv, i64Ty(), {rest, dim});
  }
  ir::Instr* zero = b.constant(ir::Const::integer(0), i64Ty());
  ir::Instr* one = b.constant(ir::Const::integer(1), i64Ty());
  std::vector<ir::Instr*> values;
  for (ir::Instr* x : ins) {
    if (!x->type->is(TypeKind::Array)) {
      values.push_back(x);
      continue;
    }
    std::vector<ir::Instr*> ops = {x};
    const int lead = f.ndim - x->type->ndim;
    for (int d = 0; d < x->type->ndim; ++d) {
      ir::Instr* dim = b.emit(Op::ArrayDim, i64Ty(), {x});
      dim->index = d;
      ir::Instr* repeats = b.emit(Op::Eq, boolTy(), {dim, one});
      ops.push_back(b.emit(Op::Select, i64Ty(), {repeats, zero, idx[static_cast<size_t>(d + lead)]}));
    }
    values.push_back(b.emit(Op::ArrayLoad, scalarTy(x->type->scalar), ops));
  }

  std::vector<std::unique_ptr<ir::Instr>> emitted;
  Emitter e(*fn, body, emitted, s.instr->loc);
  std::vector<ir::Instr*> x;
  for (size_t i = 0; i < values.size(); ++i) x.push_back(e.convert(values[i], scalarTy(f.loop->ins[i])));
  Call c{s, e, *f.loop, row.intrinsic, row.op, x, scalarTy(f.loop->ins[0]), scalarTy(f.loop->outs[0])};
  ir::Instr* r = row.lower(c);
  const Type* want = resultType(*f.loop);
  if (r->type != want) r = e.convert(r, want);
  for (size_t o = 0; o < outs.size(); ++o) {
    ir::Instr* v = outs.size() == 1 ? r : e.element(r, static_cast<int64_t>(o));
    std::vector<ir::Instr*> ops = {outs[o]};
    ops.insert(ops.end(), idx.begin(), idx.end());
    ops.push_back(e.convert(v, scalarTy(f.out_types[o]->scalar)));
    e.emit(Op::ArrayStore, voidTy(), ops);
  }
  for (auto& in : emitted) body->instrs.push_back(std::move(in));
  b.br(header, {b.emit(Op::Add, i64Ty(), {k, one})});
  b.setBlock(exit);
  b.ret(nullptr);
  fn->computePreds();
  fn->renumber();
  s.ctx.specializer().addSupportFunction(std::move(fn));
}

ir::Instr* arrayFormLower(const Site& s, Emitter& e) {
  ArrayForm f = chooseArrayForm(s);
  const LowerRow* row = findLowering(s.arg);
  if (!row) s.fail(spell(s) + "() is not supported by cudajit");
  const std::string name = arrayFormName(f);
  if (!s.ctx.specializer().supportFunction(name)) buildArrayFormLoop(s, f, *row, name);
  std::vector<ir::Instr*> outs = f.out_tuple ? e.elements(f.out_tuple) : f.outs;
  std::vector<ir::Instr*> args = f.ins;
  args.insert(args.end(), outs.begin(), outs.end());
  ir::Instr* call = e.emit(Op::CallFunc, voidTy(), args);
  call->name = name;
  if (outs.size() == 1) return outs[0];
  return f.out_tuple ? f.out_tuple : e.emit(Op::TupleMake, tupleTy(f.out_types), outs);
}

// ---- numpy functions numba implements on scalars in Python (np/arraymath.py) ------

const Type* numberArg(const Site& s, size_t max_args = 1) {
  s.expectArgs(1, max_args);
  const Type* t = s.argType(0);
  if (!t->isScalar() || t->isBool())
    s.fail(spell(s) + "() argument must be a number, got " + typeToString(t));
  return t;
}

const Type* partTypeOf(const Type* t) { return t->isComplex() ? complexPartType(t) : t; }

// np.real(x) / np.imag(x): x.real / x.imag (the part type; a real number and 0 of its type).
const Type* realImagType(const Site& s) { return partTypeOf(numberArg(s)); }
ir::Instr* realImagLower(const Site& s, Emitter& e) {
  const Type* t = s.argType(0);
  bool real = s.arg == "real";
  if (t->isComplex()) return real ? complexReal(e, s.args[0]) : complexImag(e, s.args[0]);
  if (real) return s.args[0];
  return e.constant(t->isFloat() ? ir::Const::real(0.0) : ir::Const::integer(0), t);
}

// np.angle(z, deg=False): arctan2(z.imag, z.real) in the part's float type
// (float64 for integers), times 180/pi when deg: numba's two branches unify
// to float64.
const Type* angleFnType(const Site& s) {
  std::vector<ir::Instr*> a = s.bind({"z", "deg"}, 1);
  const Type* t = a[0]->type;
  if (!t->isScalar() || t->isBool()) s.fail("np.angle() argument must be a number, got " + typeToString(t));
  if (a[1] && !a[1]->type->isScalar()) s.fail("np.angle() deg must be a bool");
  return f64Ty();
}
ir::Instr* angleFnLower(const Site& s, Emitter& e) {
  std::vector<ir::Instr*> a = s.bind({"z", "deg"}, 1);
  ir::Instr* z = a[0];
  const Type* part = partTypeOf(z->type);
  const Type* ft = part->isFloat() && part->scalar != Scalar::Float16 ? part : f64Ty();
  ir::Instr *re, *im;
  if (z->type->isComplex()) {
    re = complexReal(e, z);
    im = complexImag(e, z);
  } else {
    re = e.convert(z, ft);
    im = e.constant(ir::Const::real(0.0), ft);
  }
  ir::Instr* r = e.convert(e.intrinsic(ir::Intrinsic::Atan2, ft, {e.convert(im, ft), e.convert(re, ft)}), f64Ty());
  if (!a[1]) return r;
  if (auto c = constantInt(a[1])) {
    if (!*c) return r;
    return e.emit(Op::Mul, f64Ty(), {r, e.constant(ir::Const::real(180.0 / M_PI), f64Ty())});
  }
  ir::Instr* degrees = e.emit(Op::Mul, f64Ty(), {r, e.constant(ir::Const::real(180.0 / M_PI), f64Ty())});
  return e.emit(Op::Select, f64Ty(), {e.truth(a[1]), degrees, r});
}

// np.sinc(x) = sin(pi x) / (pi x), x = 1e-20 for 0 (numba's: in float64 for
// real numbers; complex numbers would need a complex sin).
const Type* sincType(const Site& s) {
  const Type* t = numberArg(s);
  if (t->isComplex()) s.fail("np.sinc() of " + typeToString(t) + " is not supported by cudajit");
  return f64Ty();
}
ir::Instr* sincLower(const Site& s, Emitter& e) {
  sincType(s);
  ir::Instr* x = e.convert(s.args[0], f64Ty());
  ir::Instr* zero = e.emit(Op::Eq, boolTy(), {x, e.constant(ir::Const::real(0.0), f64Ty())});
  x = e.emit(Op::Select, f64Ty(), {zero, e.constant(ir::Const::real(1e-20), f64Ty()), x});
  x = e.emit(Op::Mul, f64Ty(), {x, e.constant(ir::Const::real(M_PI), f64Ty())});
  return e.emit(Op::TrueDiv, f64Ty(), {e.intrinsic(ir::Intrinsic::Sin, f64Ty(), {x}), x});
}

}  // namespace

const Rule ufunc{ufuncType, ufuncLower};
const Rule numpyRealImag{realImagType, realImagLower};
const Rule numpyAngle{angleFnType, angleFnLower};
const Rule numpySinc{sincType, sincLower};

}  // namespace rules
}  // namespace cj::typeinfer
