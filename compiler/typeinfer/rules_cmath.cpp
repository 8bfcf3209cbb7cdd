// cmath.* on complex numbers and the builtin round(), typed as numba-cuda
// 0.30 types them (typing/cmathdecl.py, the @overload functions of
// cpython/cmathimpl.py, typing/builtins.py's Round) and lowered to the
// intrinsics of codegen/lower_cmath.cpp or to compositions of them.
//
//   cmath.exp/sqrt/sin/cos/tan/log(z[, base]), isnan/isinf/isfinite:
//       ConcreteTemplates on complex64/complex128 (numbers convert)
//   cmath.sinh/cosh/tanh/log10/phase/polar: overloads for complex only
//   cmath.rect(r, phi): floats only, complex128
//   round(x) -> int64, round(x, ndigits) -> the float type (float32/float64)
//   pow(a, b): the ** operator (numba's PowerBuiltin is BinOpPower)
#include <string>

#include "typeinfer/cmath_inverse.h"
#include "typeinfer/complex_parts.h"
#include "typeinfer/rules.h"
#include "typeinfer/templates.h"

namespace cj::typeinfer::rules {
namespace {

using S = Scalar;

std::string argList(const Site& s) {
  std::string got;
  for (size_t i = 0; i < s.args.size(); ++i) got += (i ? ", " : "") + typeToString(s.argType(i));
  return got;
}

Signature resolveCases(const Site& s, const std::vector<Signature>& cases) {
  if (!s.kw_names.empty()) s.fail(std::string(s.name) + "() takes no keyword arguments");
  std::vector<Scalar> scalars;
  for (size_t i = 0; i < s.args.size(); ++i) {
    if (!s.argType(i)->isScalar())
      s.fail(std::string(s.name) + "() argument must be a number, got " + typeToString(s.argType(i)));
    scalars.push_back(s.argType(i)->scalar);
  }
  TemplateList t{Template{cases, true, false}};
  auto sig = resolveOverload(t, scalars);
  if (!sig) s.fail(std::string(s.name) + "() does not support arguments (" + argList(s) + ")");
  return *sig;
}

// ---- cmath ------------------------------------------------------------------

const std::vector<Signature>& unaryCases() {   // CMath_unary, unary Cmath_log
  static const std::vector<Signature> c = {{S::Complex64, {S::Complex64}}, {S::Complex128, {S::Complex128}}};
  return c;
}
const std::vector<Signature>& binaryCases() {   // cmath.log(z, base)
  static const std::vector<Signature> c = {{S::Complex64, {S::Complex64, S::Complex64}},
                                           {S::Complex128, {S::Complex128, S::Complex128}}};
  return c;
}
const std::vector<Signature>& predicateCases() {   // CMath_predicate
  static const std::vector<Signature> c = {{S::Bool, {S::Complex64}}, {S::Bool, {S::Complex128}}};
  return c;
}

// What each cmath function accepts (the table's arg column names the function).
enum class Form { Unary, Log, ComplexOnly, Predicate, Rect };

Form formOf(std::string_view f) {
  if (f == "log") return Form::Log;
  if (f == "isnan" || f == "isinf" || f == "isfinite") return Form::Predicate;
  if (f == "rect") return Form::Rect;
  if (f == "exp" || f == "sqrt" || f == "sin" || f == "cos" || f == "tan") return Form::Unary;
  if (isInverseCmath(f) && f != "acosh") return Form::Unary;
  return Form::ComplexOnly;   // log10, sinh, cosh, tanh, phase, polar, acosh (numba's @overloads)
}

// rect(r, phi): the float type both are computed in.
Scalar rectWork(const Site& s) {
  s.expectArgs(2);
  for (size_t i = 0; i < 2; ++i) {
    const Type* t = s.argType(i);
    if (!t->isFloat() || t->scalar == S::Float16)
      s.fail("cmath.rect() arguments must be float32 or float64, got (" + argList(s) + ")");
  }
  return s.argType(0)->scalar == S::Float64 || s.argType(1)->scalar == S::Float64 ? S::Float64 : S::Float32;
}

const Type* cmathType(const Site& s) {
  std::string_view f = s.arg;
  switch (formOf(f)) {
    case Form::Unary:
      s.expectArgs(1);
      return scalarTy(resolveCases(s, unaryCases()).ret);
    case Form::Log:
      s.expectArgs(1, 2);
      return scalarTy(resolveCases(s, s.args.size() == 1 ? unaryCases() : binaryCases()).ret);
    case Form::Predicate:
      s.expectArgs(1);
      return scalarTy(resolveCases(s, predicateCases()).ret);
    case Form::Rect:
      rectWork(s);
      return scalarTy(S::Complex128);
    case Form::ComplexOnly: {
      s.expectArgs(1);
      const Type* t = s.argType(0);
      if (!t->isComplex())
        s.fail(std::string(s.name) + "() argument must be complex, got " + typeToString(t),
               "numba-cuda implements it for complex64 and complex128 only");
      const Type* part = scalarTy(complexPart(t->scalar));
      if (f == "phase") return part;
      if (f == "polar") return tupleTy({part, part});
      return t;
    }
  }
  return nullptr;
}

// z * j: complex(-z.imag, z.real)
ir::Instr* timesJ(Emitter& e, ir::Instr* z) {
  ir::Instr* i = complexImag(e, z);
  return makeComplex(e, z->type, e.emit(ir::Op::Neg, i->type, {i}), complexReal(e, z));
}

// The typed-IR intrinsic of a cmath function that has one of its own, or of
// the float predicate math.isnan & co applied to each part.
ir::Intrinsic cmathIntrinsic(std::string_view f) {
  using I = ir::Intrinsic;
  static constexpr std::pair<std::string_view, I> kRows[] = {
      {"exp", I::CmathExp},     {"sqrt", I::CmathSqrt}, {"sinh", I::CmathSinh}, {"cosh", I::CmathCosh},
      {"tanh", I::CmathTanh},   {"isnan", I::IsNan},    {"isinf", I::IsInf},    {"isfinite", I::IsFinite},
  };
  for (const auto& [name, id] : kRows)
    if (name == f) return id;
  return I::Count;
}

ir::Instr* cmathLower(const Site& s, Emitter& e) {
  std::string_view f = s.arg;
  const Type* result = s.instr->type;
  switch (formOf(f)) {
    case Form::Unary:
      return lowerCmathUnary(f, e.convert(s.args[0], result), e);
    case Form::Log: {
      ir::Instr* l = e.intrinsic(ir::Intrinsic::CmathLog, result, {e.convert(s.args[0], result)});
      if (s.args.size() == 1) return l;
      ir::Instr* lb = e.intrinsic(ir::Intrinsic::CmathLog, result, {e.convert(s.args[1], result)});
      return e.emit(ir::Op::TrueDiv, result, {l, lb});
    }
    case Form::Predicate: {
      Signature sig = resolveCases(s, predicateCases());
      ir::Instr* z = e.convert(s.args[0], scalarTy(sig.params[0]));
      ir::Intrinsic part_fn = cmathIntrinsic(f);
      ir::Instr* a = e.intrinsic(part_fn, boolTy(), {complexReal(e, z)});
      ir::Instr* b = e.intrinsic(part_fn, boolTy(), {complexImag(e, z)});
      // nan / inf: either part; finite: both parts
      return e.emit(f == "isfinite" ? ir::Op::BitAnd : ir::Op::BitOr, boolTy(), {a, b});
    }
    case Form::Rect: {
      const Type* work = scalarTy(rectWork(s));
      const Type* c = scalarTy(work->scalar == S::Float32 ? S::Complex64 : S::Complex128);
      ir::Instr* r = e.intrinsic(ir::Intrinsic::CmathRect, c, {e.convert(s.args[0], work), e.convert(s.args[1], work)});
      return e.convert(r, result);
    }
    case Form::ComplexOnly: {
      ir::Instr* z = s.args[0];
      const Type* part = scalarTy(complexPart(z->type->scalar));
      if (f == "sinh" || f == "cosh" || f == "tanh") return e.intrinsic(cmathIntrinsic(f), result, {z});
      if (f == "acosh") return lowerInverseCmath(f, z, result, e);
      if (f == "log10") {   // complex(z.real / LN_10, z.imag / LN_10) of cmath.log(z), in float64
        constexpr double kLn10 = 2.302585092994045684;
        ir::Instr* l = e.intrinsic(ir::Intrinsic::CmathLog, z->type, {z});
        ir::Instr* ln10 = e.constant(ir::Const::real(kLn10), f64Ty());
        ir::Instr* r = e.emit(ir::Op::TrueDiv, f64Ty(), {e.convert(complexReal(e, l), f64Ty()), ln10});
        ir::Instr* i = e.emit(ir::Op::TrueDiv, f64Ty(), {e.convert(complexImag(e, l), f64Ty()), ln10});
        return e.convert(makeComplex(e, scalarTy(S::Complex128), r, i), result);
      }
      ir::Instr* phase = e.intrinsic(ir::Intrinsic::Atan2, part, {complexImag(e, z), complexReal(e, z)});
      if (f == "phase") return phase;
      ir::Instr* mag = e.intrinsic(ir::Intrinsic::ComplexAbs, part, {z});   // polar: (abs(z), phase(z))
      return e.emit(ir::Op::TupleMake, result, {mag, phase});
    }
  }
  return nullptr;
}

// ---- round ------------------------------------------------------------------

const std::vector<Signature>& roundCases() {
  static const std::vector<Signature> c = {{S::Int64, {S::Float32}}, {S::Int64, {S::Float64}}};
  return c;
}
const std::vector<Signature>& roundNdigitsCases() {
  static const std::vector<Signature> c = {{S::Float32, {S::Float32, S::Int64}},
                                           {S::Float64, {S::Float64, S::Int64}}};
  return c;
}

Signature roundSignature(const Site& s) {
  s.expectArgs(1, 2);
  return resolveCases(s, s.args.size() == 1 ? roundCases() : roundNdigitsCases());
}

const Type* roundType(const Site& s) { return scalarTy(roundSignature(s).ret); }

ir::Instr* roundLower(const Site& s, Emitter& e) {
  Signature sig = roundSignature(s);
  // numba computes both forms in double (float32 arguments widen exactly).
  ir::Instr* x = e.convert(e.convert(s.args[0], scalarTy(sig.params[0])), f64Ty());
  if (s.args.size() == 1) return e.intrinsic(ir::Intrinsic::RoundHalfEven, i64Ty(), {x});
  ir::Instr* nd = e.convert(s.args[1], i64Ty());
  return e.convert(e.intrinsic(ir::Intrinsic::RoundNdigits, f64Ty(), {x, nd}), scalarTy(sig.ret));
}

// ---- pow(a, b) ----------------------------------------------------------------

Signature powSignature(const Site& s) {
  s.expectArgs(2);
  std::vector<Scalar> scalars;
  for (size_t i = 0; i < 2; ++i) {
    if (!s.argType(i)->isScalar())
      s.fail("pow() argument must be a number, got " + typeToString(s.argType(i)));
    scalars.push_back(s.argType(i)->scalar);
  }
  auto sig = resolveOverload(*operatorTemplates(ir::Op::Pow), scalars);
  if (!sig) s.fail("pow() does not support arguments (" + argList(s) + ")");
  return *sig;
}

const Type* powType(const Site& s) { return scalarTy(powSignature(s).ret); }

ir::Instr* powLower(const Site& s, Emitter& e) {
  Signature sig = powSignature(s);
  const Type* result = scalarTy(sig.ret);
  // float ** int keeps an integer exponent (typed-IR contract, as operators.cpp).
  const Type* exponent = result->isFloat() && scalarKind(sig.params[1]) == ScalarKind::Int
                             ? scalarTy(sig.params[1]) : result;
  return e.emit(ir::Op::Pow, result, {e.convert(s.args[0], result), e.convert(s.args[1], exponent)});
}

}  // namespace

ir::Instr* lowerCmathUnary(std::string_view f, ir::Instr* z, Emitter& e) {
  const Type* c = z->type;
  if (isInverseCmath(f)) return lowerInverseCmath(f, z, c, e);
  if (f == "log") return e.intrinsic(ir::Intrinsic::CmathLog, c, {z});
  if (f == "exp" || f == "sqrt") return e.intrinsic(cmathIntrinsic(f), c, {z});
  if (f == "cos") return e.intrinsic(ir::Intrinsic::CmathCosh, c, {timesJ(e, z)});   // cos z = cosh(z j)
  // sin z = -j sinh(z j), tan z = -j tanh(z j)
  ir::Instr* r = e.intrinsic(f == "sin" ? ir::Intrinsic::CmathSinh : ir::Intrinsic::CmathTanh, c, {timesJ(e, z)});
  ir::Instr* rr = complexReal(e, r);
  return makeComplex(e, c, complexImag(e, r), e.emit(ir::Op::Neg, rr->type, {rr}));
}

const Rule builtinPow{powType, powLower};
const Rule cmathCall{cmathType, cmathLower};
const Rule round{roundType, roundLower};

}  // namespace cj::typeinfer::rules
