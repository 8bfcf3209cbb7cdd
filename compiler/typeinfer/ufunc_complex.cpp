// The complex loops of numpy ufuncs on scalars (np.exp(z), np.sinh(z),
// np.greater(z, w), ...), as numba-cuda lowers them (np/npyfuncs.py and its
// ufunc_db): the cmath algorithms where numba reuses them (exp, log, sqrt,
// sin, cos, tan and the inverse functions), numpy's own formulas for the
// rest (exp2, log2, log10, expm1, log1p, sinh, cosh, tanh, arccosh, rint), and
// numpy's lexicographic order for comparisons. Computed in the part type.
#include "typeinfer/ufunc_complex.h"

#include <cmath>
#include <utility>

#include "typeinfer/cmath_inverse.h"
#include "typeinfer/complex_parts.h"

namespace cj::typeinfer::rules {
namespace {

// Arithmetic in the part type of the complex type `c`.
struct Parts {
  Emitter& e;
  const Type* c;   // complex64 / complex128
  const Type* p = complexPartType(c);

  ir::Instr* re(ir::Instr* z) { return complexReal(e, z); }
  ir::Instr* im(ir::Instr* z) { return complexImag(e, z); }
  ir::Instr* make(ir::Instr* r, ir::Instr* i) { return makeComplex(e, c, r, i); }
  ir::Instr* k(double v) { return e.constant(ir::Const::real(v), p); }
  ir::Instr* bin(ir::Op o, ir::Instr* a, ir::Instr* b) { return e.emit(o, a->type, {a, b}); }
  ir::Instr* fn(ir::Intrinsic id, ir::Instr* a) { return e.intrinsic(id, p, {a}); }
  ir::Instr* fn(ir::Intrinsic id, ir::Instr* a, ir::Instr* b) { return e.intrinsic(id, p, {a, b}); }
  // (a.re * s, a.im * s)
  ir::Instr* scale(ir::Instr* a, double s) {
    return make(bin(ir::Op::Mul, re(a), k(s)), bin(ir::Op::Mul, im(a), k(s)));
  }
  ir::Instr* cmath(ir::Intrinsic id, ir::Instr* z) { return e.intrinsic(id, c, {z}); }
};

constexpr double kLn2 = 0.693147180559945309417232121458176568;
constexpr double kLog2e = 1.442695040888963407359924681001892137;
constexpr double kLog10e = 0.434294481903251827651128937270616680;

}  // namespace

ir::Instr* lowerComplexUfunc(std::string_view name, const std::vector<ir::Instr*>& x, const Type* loop_type,
                             Emitter& e) {
  Parts m{e, loop_type};
  ir::Instr* z = x[0];
  using I = ir::Intrinsic;
  // numba reuses cmath's lowerings for these (numpy's names for the inverse ones)
  for (auto [np_name, cmath_name] : {std::pair<std::string_view, std::string_view>{"exp", "exp"}, {"log", "log"},
                                     {"sqrt", "sqrt"}, {"sin", "sin"}, {"cos", "cos"}, {"tan", "tan"},
                                     {"arcsin", "asin"}, {"arccos", "acos"}, {"arctan", "atan"},
                                     {"arcsinh", "asinh"}, {"arctanh", "atanh"}})
    if (name == np_name) return lowerCmathUnary(cmath_name, z, e);
  if (name == "exp2") return m.cmath(I::CmathExp, m.scale(z, kLn2));
  if (name == "log2") return m.scale(m.cmath(I::CmathLog, z), kLog2e);
  if (name == "log10") return m.scale(m.cmath(I::CmathLog, z), kLog10e);
  if (name == "rint") return m.make(m.fn(I::Rint, m.re(z)), m.fn(I::Rint, m.im(z)));
  if (name == "expm1") {   // (exp(x) cos(y) - 1, exp(x) sin(y))
    ir::Instr* a = m.fn(I::Exp, m.re(z));
    ir::Instr* y = m.im(z);
    return m.make(m.bin(ir::Op::Add, m.bin(ir::Op::Mul, a, m.fn(I::Cos, y)), m.k(-1.0)),
                  m.bin(ir::Op::Mul, a, m.fn(I::Sin, y)));
  }
  if (name == "log1p") {   // (log(hypot(x + 1, y)), atan2(y, x + 1))
    ir::Instr* x1 = m.bin(ir::Op::Add, m.re(z), m.k(1.0));
    ir::Instr* y = m.im(z);
    return m.make(m.fn(I::Log, m.fn(I::Hypot, x1, y)), m.fn(I::Atan2, y, x1));
  }
  if (name == "sinh" || name == "cosh" || name == "tanh") {   // numpy's formulas (funcs.inc.src)
    ir::Instr* xr = m.re(z);
    ir::Instr* xi = m.im(z);
    ir::Instr* si = m.fn(I::Sin, xi);
    ir::Instr* ci = m.fn(I::Cos, xi);
    ir::Instr* sh = m.fn(I::Sinh, xr);
    ir::Instr* ch = m.fn(I::Cosh, xr);
    if (name == "sinh") return m.make(m.bin(ir::Op::Mul, ci, sh), m.bin(ir::Op::Mul, si, ch));
    if (name == "cosh") return m.make(m.bin(ir::Op::Mul, ci, ch), m.bin(ir::Op::Mul, si, sh));
    // tanh = sinh / cosh, written out
    ir::Instr* rs = m.bin(ir::Op::Mul, ci, sh);
    ir::Instr* is = m.bin(ir::Op::Mul, si, ch);
    ir::Instr* rc = m.bin(ir::Op::Mul, ci, ch);
    ir::Instr* ic = m.bin(ir::Op::Mul, si, sh);
    ir::Instr* d = m.bin(ir::Op::Add, m.bin(ir::Op::Mul, rc, rc), m.bin(ir::Op::Mul, ic, ic));
    ir::Instr* inv = m.bin(ir::Op::TrueDiv, m.k(1.0), d);
    ir::Instr* nr = m.bin(ir::Op::Add, m.bin(ir::Op::Mul, rs, rc), m.bin(ir::Op::Mul, is, ic));
    ir::Instr* ni = m.bin(ir::Op::Sub, m.bin(ir::Op::Mul, is, rc), m.bin(ir::Op::Mul, rs, ic));
    return m.make(m.bin(ir::Op::Mul, nr, inv), m.bin(ir::Op::Mul, ni, inv));
  }
  if (name == "arccosh") {   // log(z + sqrt(z + 1) * sqrt(z - 1))
    ir::Instr* one = e.constant(ir::Const::complex(1.0, 0.0), loop_type);
    ir::Instr* a = m.cmath(I::CmathSqrt, m.bin(ir::Op::Add, z, one));
    ir::Instr* b = m.cmath(I::CmathSqrt, m.bin(ir::Op::Sub, z, one));
    return m.cmath(I::CmathLog, m.bin(ir::Op::Add, z, m.bin(ir::Op::Mul, a, b)));
  }
  return nullptr;
}

ir::Instr* lowerComplexCompare(ir::Op op, ir::Instr* a, ir::Instr* b, Emitter& e) {
  // numpy's CGT & co: the real parts decide (when no imaginary part is NaN),
  // equal real parts hand over to the imaginary parts.
  Parts m{e, a->type};
  ir::Instr *xr = m.re(a), *xi = m.im(a), *yr = m.re(b), *yi = m.im(b);
  ir::Op strict = op == ir::Op::Ge ? ir::Op::Gt : op == ir::Op::Le ? ir::Op::Lt : op;
  auto cmp = [&](ir::Op o, ir::Instr* u, ir::Instr* v) { return e.emit(o, boolTy(), {u, v}); };
  ir::Instr* ordered = e.emit(ir::Op::BitAnd, boolTy(), {cmp(ir::Op::Eq, xi, xi), cmp(ir::Op::Eq, yi, yi)});
  ir::Instr* first = e.emit(ir::Op::BitAnd, boolTy(), {cmp(strict, xr, yr), ordered});
  ir::Instr* second = e.emit(ir::Op::BitAnd, boolTy(), {cmp(ir::Op::Eq, xr, yr), cmp(op, xi, yi)});
  return e.emit(ir::Op::BitOr, boolTy(), {first, second});
}

}  // namespace cj::typeinfer::rules
