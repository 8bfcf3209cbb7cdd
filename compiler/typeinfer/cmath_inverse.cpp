// cmath's inverse functions (acos, asin, atan, acosh, asinh, atanh), built
// from typed-IR operations with numba-cuda's algorithms (cmathimpl.py, which
// follows CPython's c_acos & co): a large-argument branch that avoids
// overflow, the square-root forms otherwise, atanh's special cases. Both
// branches are computed and a select keeps the one Python would take (every
// operation is free of side effects). numba runs these Python functions with
// float64 constants, so nearly every step of a complex64 call is float64
// arithmetic; here all of it is, and the result is rounded once.
#include "typeinfer/cmath_inverse.h"

#include <cfloat>
#include <cmath>

#include "typeinfer/complex_parts.h"

namespace cj::typeinfer::rules {
namespace {

// float64 arithmetic on IR values.
struct F64 {
  Emitter& e;

  const Type* t() const { return f64Ty(); }
  ir::Instr* c(double v) { return e.constant(ir::Const::real(v), t()); }
  ir::Instr* op(ir::Op o, ir::Instr* a, ir::Instr* b) { return e.emit(o, t(), {a, b}); }
  ir::Instr* add(ir::Instr* a, ir::Instr* b) { return op(ir::Op::Add, a, b); }
  ir::Instr* sub(ir::Instr* a, ir::Instr* b) { return op(ir::Op::Sub, a, b); }
  ir::Instr* mul(ir::Instr* a, ir::Instr* b) { return op(ir::Op::Mul, a, b); }
  ir::Instr* div(ir::Instr* a, ir::Instr* b) { return op(ir::Op::TrueDiv, a, b); }
  ir::Instr* neg(ir::Instr* a) { return e.emit(ir::Op::Neg, t(), {a}); }
  ir::Instr* fn(ir::Intrinsic id, ir::Instr* a) { return e.intrinsic(id, t(), {a}); }
  ir::Instr* fn(ir::Intrinsic id, ir::Instr* a, ir::Instr* b) { return e.intrinsic(id, t(), {a, b}); }
  ir::Instr* abs(ir::Instr* a) { return fn(ir::Intrinsic::Fabs, a); }
  ir::Instr* cmp(ir::Op o, ir::Instr* a, ir::Instr* b) { return e.emit(o, boolTy(), {a, b}); }
  ir::Instr* any(ir::Instr* a, ir::Instr* b) { return e.emit(ir::Op::BitOr, boolTy(), {a, b}); }
  ir::Instr* all(ir::Instr* a, ir::Instr* b) { return e.emit(ir::Op::BitAnd, boolTy(), {a, b}); }
  ir::Instr* isnan(ir::Instr* a) { return e.intrinsic(ir::Intrinsic::IsNan, boolTy(), {a}); }
  ir::Instr* isinf(ir::Instr* a) { return e.intrinsic(ir::Intrinsic::IsInf, boolTy(), {a}); }
  ir::Instr* pick(ir::Instr* cond, ir::Instr* a, ir::Instr* b) { return e.emit(ir::Op::Select, t(), {cond, a, b}); }
};

struct C {
  ir::Instr* re;
  ir::Instr* im;
};

const Type* c128() { return scalarTy(Scalar::Complex128); }

// z as complex128 parts and back.
C parts(Emitter& e, ir::Instr* z) { return {complexReal(e, z), complexImag(e, z)}; }
ir::Instr* make(Emitter& e, C z) { return makeComplex(e, c128(), z.re, z.im); }
C csqrt(Emitter& e, ir::Instr* re, ir::Instr* im) {
  return parts(e, e.intrinsic(ir::Intrinsic::CmathSqrt, c128(), {make(e, {re, im})}));
}
C pick(F64& f, ir::Instr* cond, C a, C b) { return {f.pick(cond, a.re, b.re), f.pick(cond, a.im, b.im)}; }

// numba's thresholds are float32's limits as Python floats, whatever the type.
const double kFltMax = static_cast<double>(FLT_MAX);
const double kLn4 = std::log(4.0);
const double kLarge = kFltMax / 4;

ir::Instr* big(F64& f, C z) {
  return f.any(f.cmp(ir::Op::Gt, f.abs(z.re), f.c(kLarge)), f.cmp(ir::Op::Gt, f.abs(z.im), f.c(kLarge)));
}
// log(hypot(x / 2, y / 2)) + log 4: log |z| without overflow.
ir::Instr* logAbs(F64& f, C z) {
  ir::Instr* h = f.fn(ir::Intrinsic::Hypot, f.mul(z.re, f.c(0.5)), f.mul(z.im, f.c(0.5)));
  return f.add(f.fn(ir::Intrinsic::Log, h), f.c(kLn4));
}

C asinh(F64& f, C z) {
  C large{f.fn(ir::Intrinsic::Copysign, logAbs(f, z), z.re), f.fn(ir::Intrinsic::Atan2, z.im, f.abs(z.re))};
  C s1 = csqrt(f.e, f.add(f.c(1.0), z.im), f.neg(z.re));
  C s2 = csqrt(f.e, f.sub(f.c(1.0), z.im), z.re);
  C small{f.fn(ir::Intrinsic::Asinh, f.sub(f.mul(s1.re, s2.im), f.mul(s2.re, s1.im))),
          f.fn(ir::Intrinsic::Atan2, z.im, f.sub(f.mul(s1.re, s2.re), f.mul(s1.im, s2.im)))};
  return pick(f, big(f, z), large, small);
}

C acos(F64& f, C z) {
  C large{f.fn(ir::Intrinsic::Atan2, f.abs(z.im), z.re), f.fn(ir::Intrinsic::Copysign, logAbs(f, z), f.neg(z.im))};
  C s1 = csqrt(f.e, f.sub(f.c(1.0), z.re), f.neg(z.im));
  C s2 = csqrt(f.e, f.add(f.c(1.0), z.re), z.im);
  C small{f.mul(f.c(2.0), f.fn(ir::Intrinsic::Atan2, s1.re, s2.re)),
          f.fn(ir::Intrinsic::Asinh, f.sub(f.mul(s2.re, s1.im), f.mul(s2.im, s1.re)))};
  return pick(f, big(f, z), large, small);
}

C acosh(F64& f, C z) {
  C large{logAbs(f, z), f.fn(ir::Intrinsic::Atan2, z.im, z.re)};
  C s1 = csqrt(f.e, f.sub(z.re, f.c(1.0)), z.im);
  C s2 = csqrt(f.e, f.add(z.re, f.c(1.0)), z.im);
  C small{f.fn(ir::Intrinsic::Asinh, f.add(f.mul(s1.re, s2.re), f.mul(s1.im, s2.im))),
          f.mul(f.c(2.0), f.fn(ir::Intrinsic::Atan2, s1.im, s2.re))};
  return pick(f, big(f, z), large, small);
}

C atanh(F64& f, C z0) {
  const double large = std::sqrt(kFltMax / 4), tiny = std::sqrt(static_cast<double>(FLT_MIN));
  // atanh(z) = -atanh(-z): work with a non-negative real part
  ir::Instr* negate = f.cmp(ir::Op::Lt, z0.re, f.c(0.0));
  C z{f.pick(negate, f.neg(z0.re), z0.re), f.pick(negate, f.neg(z0.im), z0.im)};
  ir::Instr* ay = f.abs(z.im);
  // huge or NaN real part, or huge imaginary part
  ir::Instr* huge = f.any(f.isnan(z.re), f.any(f.cmp(ir::Op::Gt, z.re, f.c(large)), f.cmp(ir::Op::Gt, ay, f.c(large))));
  ir::Instr* h = f.fn(ir::Intrinsic::Hypot, f.mul(z.re, f.c(0.5)), f.mul(z.im, f.c(0.5)));
  ir::Instr* finite_re = f.div(f.div(f.div(z.re, f.c(4.0)), h), h);
  C c1{f.pick(f.isinf(z.im), f.fn(ir::Intrinsic::Copysign, f.c(0.0), z.re), f.pick(f.isinf(z.re), f.c(0.0), finite_re)),
       f.neg(f.fn(ir::Intrinsic::Copysign, f.c(M_PI / 2), f.neg(z.im)))};
  // z = 1 + tiny j: atanh(1 +/- 0j) is inf +/- 0j (C99)
  ir::Instr* near_one = f.all(f.cmp(ir::Op::Eq, z.re, f.c(1.0)), f.cmp(ir::Op::Lt, ay, f.c(tiny)));
  ir::Instr* ay_zero = f.cmp(ir::Op::Eq, ay, f.c(0.0));
  ir::Instr* r2 = f.neg(f.fn(ir::Intrinsic::Log, f.div(f.fn(ir::Intrinsic::Sqrt, ay),
                                                        f.fn(ir::Intrinsic::Sqrt, f.fn(ir::Intrinsic::Hypot, ay, f.c(2.0))))));
  ir::Instr* i2 = f.fn(ir::Intrinsic::Copysign, f.div(f.fn(ir::Intrinsic::Atan2, f.c(2.0), f.neg(ay)), f.c(2.0)), z.im);
  C c2{f.pick(ay_zero, f.c(INFINITY), r2), f.pick(ay_zero, z.im, i2)};
  // otherwise
  ir::Instr* sqay = f.mul(ay, ay);
  ir::Instr* zr1 = f.sub(f.c(1.0), z.re);
  C c3{f.mul(f.fn(ir::Intrinsic::Log1p, f.div(f.mul(f.c(4.0), z.re), f.add(f.mul(zr1, zr1), sqay))), f.c(0.25)),
       f.neg(f.mul(f.fn(ir::Intrinsic::Atan2, f.mul(f.c(-2.0), z.im),
                        f.sub(f.mul(zr1, f.add(f.c(1.0), z.re)), sqay)), f.c(0.5)))};
  C r = pick(f, huge, c1, pick(f, near_one, c2, c3));
  r.im = f.pick(f.isnan(z.im), f.c(NAN), r.im);
  return {f.pick(negate, f.neg(r.re), r.re), f.pick(negate, f.neg(r.im), r.im)};
}

}  // namespace

bool isInverseCmath(std::string_view f) {
  return f == "acos" || f == "asin" || f == "atan" || f == "acosh" || f == "asinh" || f == "atanh";
}

ir::Instr* lowerInverseCmath(std::string_view f, ir::Instr* z, const Type* result, Emitter& e) {
  F64 m{e};
  C w = parts(e, e.convert(z, c128()));
  C r;
  if (f == "asinh") {
    r = asinh(m, w);
  } else if (f == "asin") {   // -j asinh(z j)
    C a = asinh(m, {m.neg(w.im), w.re});
    r = {a.im, m.neg(a.re)};
  } else if (f == "acos") {
    r = acos(m, w);
  } else if (f == "acosh") {
    r = acosh(m, w);
  } else if (f == "atanh") {
    r = atanh(m, w);
  } else {   // atan: -j atanh(z j); numba keeps the real part's sign for inf + nan j
    C a = atanh(m, {m.neg(w.im), w.re});
    ir::Instr* odd = m.all(m.isinf(w.re), m.isnan(w.im));
    r = {a.im, m.pick(odd, a.re, m.neg(a.re))};
  }
  return e.convert(make(e, r), result);
}

}  // namespace cj::typeinfer::rules
