// Complex math (cmath.exp/log/sqrt/sinh/cosh/tanh/rect, complex ** complex)
// and Python's round(): NVVM IR helper functions that follow numba-cuda's
// implementations (numba/cuda/cpython/cmathimpl.py, mathimpl.py's
// cpow_implement, cudaimpl.py's round), special values included.
//
// Each helper is defined once per module and part type, `internal
// alwaysinline`, over {T, T} complex structs. Branches of the Python
// originals become selects: every path is computed (libdevice calls have no
// side effects) and the one Python would take is kept.
//
// Template keys: $F the helper's name, $T the part type (float/double), $C
// the complex type, $S the libdevice suffix ("f" for float), $INF, $NAN,
// $THRES (csqrt's overflow threshold) and $LN10.
#include <cfloat>
#include <cmath>
#include <string>

#include "codegen/emitter.h"
#include "ir/intrinsics.h"

namespace cj::codegen {
namespace {

// numba's cmath.exp: exp_impl(x, y, x_is_finite, y_is_finite).
constexpr const char* kExp = R"(define internal $C $F($C %z) alwaysinline {
entry:
  %x = extractvalue $C %z, 0
  %y = extractvalue $C %z, 1
  %ax = call $T @__nv_fabs$S($T %x)
  %ay = call $T @__nv_fabs$S($T %y)
  %xfin = fcmp olt $T %ax, $INF
  %yfin = fcmp olt $T %ay, $INF
  %c = call $T @__nv_cos$S($T %y)
  %s = call $T @__nv_sin$S($T %y)
  %r = call $T @__nv_exp$S($T %x)
  %rc = fmul $T %r, %c
  %rs = fmul $T %r, %s
  ; x finite: (r cos y, r sin y), or (nan, nan) when y is not finite
  %fre = select i1 %yfin, $T %rc, $T $NAN
  %fim = select i1 %yfin, $T %rs, $T $NAN
  ; x nan: (x, x) when y (is true), else (x, y)
  %ynz = fcmp une $T %y, 0.0
  %nim = select i1 %ynz, $T %x, $T %y
  ; x = +inf: (cos y, sin y), each times x unless 0; (x, nan) for y not finite
  %cx = fmul $T %c, %x
  %cnz = fcmp une $T %c, 0.0
  %pre0 = select i1 %cnz, $T %cx, $T %c
  %sx = fmul $T %s, %x
  %snz = fcmp une $T %s, 0.0
  %pim0 = select i1 %snz, $T %sx, $T %s
  %pre = select i1 %yfin, $T %pre0, $T %x
  %pim = select i1 %yfin, $T %pim0, $T $NAN
  ; x = -inf: (r cos y, r sin y), or (0, 0) when y is not finite
  %mre = select i1 %yfin, $T %rc, $T 0.0
  %mim = select i1 %yfin, $T %rs, $T 0.0
  %xpos = fcmp ogt $T %x, 0.0
  %ire = select i1 %xpos, $T %pre, $T %mre
  %iim = select i1 %xpos, $T %pim, $T %mim
  %xnan = fcmp uno $T %x, 0.0
  %nre = select i1 %xnan, $T %x, $T %ire
  %nim2 = select i1 %xnan, $T %nim, $T %iim
  %re = select i1 %xfin, $T %fre, $T %nre
  %im = select i1 %xfin, $T %fim, $T %nim2
  %o0 = insertvalue $C undef, $T %re, 0
  %o1 = insertvalue $C %o0, $T %im, 1
  ret $C %o1
}
)";

// cmath.log: (log(hypot(x, y)), atan2(y, x)).
constexpr const char* kLog = R"(define internal $C $F($C %z) alwaysinline {
entry:
  %x = extractvalue $C %z, 0
  %y = extractvalue $C %z, 1
  %h = call $T @__nv_hypot$S($T %x, $T %y)
  %re = call $T @__nv_log$S($T %h)
  %im = call $T @__nv_atan2$S($T %y, $T %x)
  %o0 = insertvalue $C undef, $T %re, 0
  %o1 = insertvalue $C %o0, $T %im, 1
  ret $C %o1
}
)";

// cmath.sqrt: numpy's npy_csqrt as numba writes it (Algorithm 312, CACM
// vol 10, scaled by 1/4 near overflow).
constexpr const char* kSqrt = R"(define internal $C $F($C %z) alwaysinline {
entry:
  %a = extractvalue $C %z, 0
  %b = extractvalue $C %z, 1
  %aa = call $T @__nv_fabs$S($T %a)
  %ab = call $T @__nv_fabs$S($T %b)
  ; scale to avoid overflow
  %big_a = fcmp oge $T %aa, $THRES
  %big_b = fcmp oge $T %ab, $THRES
  %scale = or i1 %big_a, %big_b
  %a4 = fmul $T %a, 0.25
  %b4 = fmul $T %b, 0.25
  %sa = select i1 %scale, $T %a4, $T %a
  %sb = select i1 %scale, $T %b4, $T %b
  %h = call $T @__nv_hypot$S($T %sa, $T %sb)
  %apos = fcmp oge $T %sa, 0.0
  %na = fsub $T -0.0, %sa
  %sgn_a = select i1 %apos, $T %sa, $T %na
  %sum = fadd $T %sgn_a, %h
  %half = fmul $T %sum, 0.5
  %t = call $T @__nv_sqrt$S($T %half)
  %t2 = fmul $T 2.0, %t
  %sab = call $T @__nv_fabs$S($T %sb)
  %pim = fdiv $T %sb, %t2
  %nre = fdiv $T %sab, %t2
  %nim = call $T @__nv_copysign$S($T %t, $T %sb)
  %re0 = select i1 %apos, $T %t, $T %nre
  %im0 = select i1 %apos, $T %pim, $T %nim
  %re2 = fmul $T %re0, 2.0
  %re1 = select i1 %scale, $T %re2, $T %re0
  ; special values, the last checked first
  %ainf = fcmp oeq $T %aa, $INF
  %aneg = fcmp olt $T %a, 0.0
  %bb = fsub $T %b, %b
  %abb = call $T @__nv_fabs$S($T %bb)
  %cab = call $T @__nv_copysign$S($T %a, $T %b)
  %cbb = call $T @__nv_copysign$S($T %bb, $T %b)
  %ire = select i1 %aneg, $T %abb, $T %a
  %iim = select i1 %aneg, $T %cab, $T %cbb
  %re3 = select i1 %ainf, $T %ire, $T %re1
  %im3 = select i1 %ainf, $T %iim, $T %im0
  %anan = fcmp uno $T %a, 0.0
  %re4 = select i1 %anan, $T %a, $T %re3
  %im4 = select i1 %anan, $T %a, $T %im3
  %binf = fcmp oeq $T %ab, $INF
  %a0 = fcmp oeq $T %a, 0.0
  %b0 = fcmp oeq $T %b, 0.0
  %zero = and i1 %a0, %b0
  %first = or i1 %zero, %binf
  %re = select i1 %first, $T %ab, $T %re4
  %im = select i1 %first, $T %b, $T %im4
  %o0 = insertvalue $C undef, $T %re, 0
  %o1 = insertvalue $C %o0, $T %im, 1
  ret $C %o1
}
)";

// cmath.sinh (numba's impl_cmath_sinh).
constexpr const char* kSinh = R"(define internal $C $F($C %z) alwaysinline {
entry:
  %x = extractvalue $C %z, 0
  %y = extractvalue $C %z, 1
  %c = call $T @__nv_cos$S($T %y)
  %s = call $T @__nv_sin$S($T %y)
  %sh = call $T @__nv_sinh$S($T %x)
  %ch = call $T @__nv_cosh$S($T %x)
  %fre = fmul $T %c, %sh
  %fim = fmul $T %s, %ch
  ; x infinite: (x, y) for y nan, else (cos y [* x unless 0], sin y [* |x| unless 0])
  %ax = call $T @__nv_fabs$S($T %x)
  %cx = fmul $T %c, %x
  %cnz = fcmp une $T %c, 0.0
  %ire0 = select i1 %cnz, $T %cx, $T %c
  %sx = fmul $T %s, %ax
  %snz = fcmp une $T %s, 0.0
  %iim0 = select i1 %snz, $T %sx, $T %s
  %ynan = fcmp uno $T %y, 0.0
  %ire = select i1 %ynan, $T %x, $T %ire0
  %iim = select i1 %ynan, $T %y, $T %iim0
  %xinf = fcmp oeq $T %ax, $INF
  %re = select i1 %xinf, $T %ire, $T %fre
  %im = select i1 %xinf, $T %iim, $T %fim
  %o0 = insertvalue $C undef, $T %re, 0
  %o1 = insertvalue $C %o0, $T %im, 1
  ret $C %o1
}
)";

// cmath.cosh (numba's impl_cmath_cosh).
constexpr const char* kCosh = R"(define internal $C $F($C %z) alwaysinline {
entry:
  %x = extractvalue $C %z, 0
  %y = extractvalue $C %z, 1
  %c = call $T @__nv_cos$S($T %y)
  %s = call $T @__nv_sin$S($T %y)
  %sh = call $T @__nv_sinh$S($T %x)
  %ch = call $T @__nv_cosh$S($T %x)
  %fre = fmul $T %c, %ch
  %fim = fmul $T %s, %sh
  ; x infinite: (|x|, y) for y nan or 0, else (copysign(x, cos y), copysign(x, sin y));
  ; the imaginary part negated for x = -inf
  %ax = call $T @__nv_fabs$S($T %x)
  %cre = call $T @__nv_copysign$S($T %x, $T %c)
  %cim = call $T @__nv_copysign$S($T %x, $T %s)
  %ynan = fcmp uno $T %y, 0.0
  %y0 = fcmp oeq $T %y, 0.0
  %keep = or i1 %ynan, %y0
  %ire = select i1 %keep, $T %ax, $T %cre
  %iim0 = select i1 %keep, $T %y, $T %cim
  %xneg = fcmp olt $T %x, 0.0
  %niim = fsub $T -0.0, %iim0
  %iim = select i1 %xneg, $T %niim, $T %iim0
  %xinf = fcmp oeq $T %ax, $INF
  %re = select i1 %xinf, $T %ire, $T %fre
  %im = select i1 %xinf, $T %iim, $T %fim
  %o0 = insertvalue $C undef, $T %re, 0
  %o1 = insertvalue $C %o0, $T %im, 1
  ret $C %o1
}
)";

// cmath.tanh (numba's impl_cmath_tanh: CPython's c_tanh).
constexpr const char* kTanh = R"(define internal $C $F($C %z) alwaysinline {
entry:
  %x = extractvalue $C %z, 0
  %y = extractvalue $C %z, 1
  %tx = call $T @__nv_tanh$S($T %x)
  %ty = call $T @__nv_tan$S($T %y)
  %chx = call $T @__nv_cosh$S($T %x)
  %cx = fdiv $T 1.0, %chx
  %txty = fmul $T %tx, %ty
  %tt = fmul $T %txty, %txty
  %denom = fadd $T 1.0, %tt
  %tyy = fmul $T %ty, %ty
  %tyy1 = fadd $T 1.0, %tyy
  %num = fmul $T %tx, %tyy1
  %fre = fdiv $T %num, %denom
  %q = fdiv $T %ty, %denom
  %qc = fmul $T %q, %cx
  %fim = fmul $T %qc, %cx
  ; x infinite: (copysign(1, x), 0 if y is infinite else copysign(0, sin 2y))
  %ire = call $T @__nv_copysign$S($T 1.0, $T %x)
  %y2 = fmul $T 2.0, %y
  %s2 = call $T @__nv_sin$S($T %y2)
  %z2 = call $T @__nv_copysign$S($T 0.0, $T %s2)
  %ay = call $T @__nv_fabs$S($T %y)
  %yinf = fcmp oeq $T %ay, $INF
  %iim = select i1 %yinf, $T 0.0, $T %z2
  %ax = call $T @__nv_fabs$S($T %x)
  %xinf = fcmp oeq $T %ax, $INF
  %re = select i1 %xinf, $T %ire, $T %fre
  %im = select i1 %xinf, $T %iim, $T %fim
  %o0 = insertvalue $C undef, $T %re, 0
  %o1 = insertvalue $C %o0, $T %im, 1
  ret $C %o1
}
)";

// cmath.rect(r, phi) (numba's impl_cmath_rect).
constexpr const char* kRect = R"(define internal $C $F($T %r, $T %phi) alwaysinline {
entry:
  %c = call $T @__nv_cos$S($T %phi)
  %s = call $T @__nv_sin$S($T %phi)
  %ar = call $T @__nv_fabs$S($T %r)
  %rinf = fcmp oeq $T %ar, $INF
  ; a zero part times an infinite r keeps 0 (with the sign of the division)
  %c0 = fcmp oeq $T %c, 0.0
  %cdiv = and i1 %c0, %rinf
  %cd = fdiv $T %c, %r
  %cm = fmul $T %c, %r
  %re0 = select i1 %cdiv, $T %cd, $T %cm
  %s0 = fcmp oeq $T %s, 0.0
  %sdiv = and i1 %s0, %rinf
  %sd = fdiv $T %s, %r
  %sm = fmul $T %s, %r
  %im0 = select i1 %sdiv, $T %sd, $T %sm
  ; phi not finite: rect(0, phi) = |r| + 0j, rect(inf, phi) = r + phi j
  %aphi = call $T @__nv_fabs$S($T %phi)
  %phifin = fcmp olt $T %aphi, $INF
  %rz = fcmp oeq $T %r, 0.0
  %re1 = select i1 %rinf, $T %r, $T %re0
  %im1 = select i1 %rinf, $T %phi, $T %im0
  %re2 = select i1 %rz, $T %ar, $T %re1
  %im2 = select i1 %rz, $T 0.0, $T %im1
  %re = select i1 %phifin, $T %re0, $T %re2
  %im = select i1 %phifin, $T %im0, $T %im2
  %o0 = insertvalue $C undef, $T %re, 0
  %o1 = insertvalue $C %o0, $T %im, 1
  ret $C %o1
}
)";

// a ** b on complex numbers (numba-cuda's cpow_implement, a translation of
// CPython's _Py_c_pow: polar form, no special case for small integer powers).
constexpr const char* kPow = R"(define internal $C $F($C %a, $C %b) alwaysinline {
entry:
  %ar = extractvalue $C %a, 0
  %ai = extractvalue $C %a, 1
  %br = extractvalue $C %b, 0
  %bi = extractvalue $C %b, 1
  %vabs = call $T @__nv_hypot$S($T %ar, $T %ai)
  %len0 = call $T @__nv_pow$S($T %vabs, $T %br)
  %at = call $T @__nv_atan2$S($T %ai, $T %ar)
  %ph0 = fmul $T %at, %br
  %atbi = fmul $T %at, %bi
  %e = call $T @__nv_exp$S($T %atbi)
  %len1 = fdiv $T %len0, %e
  %lv = call $T @__nv_log$S($T %vabs)
  %bilv = fmul $T %bi, %lv
  %ph1 = fadd $T %ph0, %bilv
  %binz = fcmp une $T %bi, 0.0
  %len = select i1 %binz, $T %len1, $T %len0
  %ph = select i1 %binz, $T %ph1, $T %ph0
  %c = call $T @__nv_cos$S($T %ph)
  %s = call $T @__nv_sin$S($T %ph)
  %gre = fmul $T %len, %c
  %gim = fmul $T %len, %s
  ; b == 0: 1 + 0j; a.real == 0 and b.real == 0: 0 + 0j (as numba checks)
  %br0 = fcmp oeq $T %br, 0.0
  %bi0 = fcmp oeq $T %bi, 0.0
  %ar0 = fcmp oeq $T %ar, 0.0
  %bzero = and i1 %br0, %bi0
  %azero = and i1 %ar0, %br0
  %re1 = select i1 %azero, $T 0.0, $T %gre
  %im1 = select i1 %azero, $T 0.0, $T %gim
  %re = select i1 %bzero, $T 1.0, $T %re1
  %im = select i1 %bzero, $T 0.0, $T %im1
  %o0 = insertvalue $C undef, $T %re, 0
  %o1 = insertvalue $C %o0, $T %im, 1
  ret $C %o1
}
)";

// round(x, ndigits) on a double (numba-cuda's round_to_impl: CPython's
// fallback double_round). 10.0 ** n is numba's float ** int (repeated
// squaring, $POWI); round(y) is rint (half to even), which is numba's llrint
// wherever that does not overflow (|y| < 2**63) and y itself beyond.
constexpr const char* kRoundNdigits = R"(define internal double $F(double %x, i64 %nd) alwaysinline {
entry:
  %pos = icmp sge i64 %nd, 0
  %big = icmp sgt i64 %nd, 22
  %ndm22 = sub i64 %nd, 22
  %nneg = sub i64 0, %nd
  %e0 = select i1 %big, i64 %ndm22, i64 %nd
  %e = select i1 %pos, i64 %e0, i64 %nneg
  %ef = sitofp i64 %e to double
  %pow1 = call double $POWI(double 10.0, i64 %e, double %ef)
  %pow2p = select i1 %big, double 0x4480F0CF064DD592, double 1.0
  %pow2 = select i1 %pos, double %pow2p, double 1.0
  %xp = fmul double %x, %pow1
  %yp = fmul double %xp, %pow2
  %yn = fdiv double %x, %pow1
  %y = select i1 %pos, double %yp, double %yn
  %z0 = call double @__nv_rint(double %y)
  %d = fsub double %y, %z0
  %ad = call double @__nv_fabs(double %d)
  %halfway = fcmp oeq double %ad, 0.5
  %y2 = fdiv double %y, 2.0
  %hf = call double @__nv_rint(double %y2)
  %h2 = fmul double 2.0, %hf
  %z = select i1 %halfway, double %h2, double %z0
  %zp0 = fdiv double %z, %pow2
  %zp = fdiv double %zp0, %pow1
  %zn = fmul double %z, %pow1
  %r0 = select i1 %pos, double %zp, double %zn
  ; y overflowed (ndigits >= 0): x unchanged; x inf or nan: x unchanged
  %ay = call double @__nv_fabs(double %y)
  %yinf = fcmp oeq double %ay, 0x7FF0000000000000
  %yover = and i1 %pos, %yinf
  %r1 = select i1 %yover, double %x, double %r0
  %ax = call double @__nv_fabs(double %x)
  %xfin = fcmp olt double %ax, 0x7FF0000000000000
  %r = select i1 %xfin, double %r1, double %x
  ret double %r
}
)";

struct CmathHelperRow {
  Helper helper;
  const char* base;
  const char* text;
  const char* unary;    // libdevice functions of one argument it calls (space-separated)
  const char* binary;   // ... of two arguments
};

constexpr CmathHelperRow kHelpers[] = {
    {Helper::ComplexExp, "__cj_cexp", kExp, "fabs cos sin exp", ""},
    {Helper::ComplexLog, "__cj_clog", kLog, "log", "hypot atan2"},
    {Helper::ComplexSqrt, "__cj_csqrt", kSqrt, "fabs sqrt", "hypot copysign"},
    {Helper::ComplexSinh, "__cj_csinh", kSinh, "fabs cos sin sinh cosh", ""},
    {Helper::ComplexCosh, "__cj_ccosh", kCosh, "fabs cos sin sinh cosh", "copysign"},
    {Helper::ComplexTanh, "__cj_ctanh", kTanh, "fabs tanh tan cosh sin", "copysign"},
    {Helper::ComplexRect, "__cj_crect", kRect, "fabs cos sin", ""},
    {Helper::ComplexPow, "__cj_cpow", kPow, "cos sin exp log", "hypot pow atan2"},
    {Helper::RoundNdigits, "__cj_round_ndigits", kRoundNdigits, "fabs rint", ""},
};

const CmathHelperRow* rowOf(Helper h) {
  for (const auto& r : kHelpers)
    if (r.helper == h) return &r;
  return nullptr;
}

std::string replaceAll(std::string text, const std::string& key, const std::string& value) {
  for (size_t at = text.find(key); at != std::string::npos; at = text.find(key, at + value.size()))
    text.replace(at, key.size(), value);
  return text;
}

void declareLibdevice(const char* names, int arity, Scalar s, std::vector<std::string>* out) {
  std::string t = llvmScalarType(s);
  std::string suffix = s == Scalar::Float32 ? "f" : "";
  std::string list = names;
  size_t at = 0;
  while (at < list.size()) {
    size_t end = list.find(' ', at);
    if (end == std::string::npos) end = list.size();
    std::string name = list.substr(at, end - at);
    at = end + 1;
    if (name.empty()) continue;
    std::string params = t;
    for (int k = 1; k < arity; ++k) params += ", " + t;
    out->push_back("declare " + t + " @__nv_" + name + suffix + "(" + params + ")");
  }
}

// The part type of a complex intrinsic's operand or result.
Scalar partOfComplex(FunctionEmitter& fe, const ir::Instr& in, const Type* t) {
  if (!t->isComplex()) fe.fail(in, in.intrinsicName(), "operand of type " + typeToString(t) + " (expected complex)");
  return complexPart(t->scalar);
}

std::string callHelper(FunctionEmitter& fe, Helper h, Scalar part, const std::string& ret,
                       const std::vector<std::pair<std::string, std::string>>& args) {
  std::string fn = fe.mod().helper(h, part);
  std::string typed;
  for (size_t i = 0; i < args.size(); ++i) typed += (i ? ", " : "") + args[i].first + " " + args[i].second;
  return fe.emit("call " + ret + " " + fn + "(" + typed + ")");
}

}  // namespace

bool isCmathHelper(Helper h) { return rowOf(h) != nullptr; }

std::string cmathHelperBaseName(Helper h) { return rowOf(h)->base; }

std::string cmathHelperDefinition(Helper h, Scalar s, const std::string& name,
                                  std::vector<std::string>* declarations) {
  const CmathHelperRow* row = rowOf(h);
  std::string t = llvmScalarType(s);
  declareLibdevice(row->unary, 1, s, declarations);
  declareLibdevice(row->binary, 2, s, declarations);
  std::string out = row->text;
  if (h == Helper::RoundNdigits) {
    out = replaceAll(out, "$POWI", "@" + helperBaseName(Helper::FloatIntPow) + "_f64");
  }
  const double max = s == Scalar::Float32 ? static_cast<double>(FLT_MAX) : DBL_MAX;
  out = replaceAll(out, "$THRES", llvmFloatConst(max / (1.0 + std::sqrt(2.0)), s));
  out = replaceAll(out, "$INF", "0x7FF0000000000000");
  out = replaceAll(out, "$NAN", "0x7FF8000000000000");
  out = replaceAll(out, "$C", "{" + t + ", " + t + "}");
  out = replaceAll(out, "$T", t);
  out = replaceAll(out, "$S", s == Scalar::Float32 ? "f" : "");
  return replaceAll(out, "$F", name);
}

void lowerComplexPow(FunctionEmitter& fe, const ir::Instr& in) {
  Scalar c = in.type->scalar;
  Scalar part = complexPart(c);
  std::string ct = llvmScalarType(c);
  fe.bind(in, callHelper(fe, Helper::ComplexPow, part, ct,
                         {{ct, fe.val(in.operands[0])}, {ct, fe.val(in.operands[1])}}));
}

bool lowerCmathIntrinsic(FunctionEmitter& fe, const ir::Instr& in) {
  auto unary = [&](Helper h) {
    const ir::Instr* z = in.operands.at(0);
    Scalar part = partOfComplex(fe, in, z->type);
    if (in.type != z->type) fe.fail(in, in.intrinsicName(), "result type differs from the operand's");
    std::string ct = llvmScalarType(z->type->scalar);
    fe.bind(in, callHelper(fe, h, part, ct, {{ct, fe.val(z)}}));
    return true;
  };
  switch (in.intrinsic) {
    case ir::Intrinsic::CmathExp: return unary(Helper::ComplexExp);
    case ir::Intrinsic::CmathLog: return unary(Helper::ComplexLog);
    case ir::Intrinsic::CmathSqrt: return unary(Helper::ComplexSqrt);
    case ir::Intrinsic::CmathSinh: return unary(Helper::ComplexSinh);
    case ir::Intrinsic::CmathCosh: return unary(Helper::ComplexCosh);
    case ir::Intrinsic::CmathTanh: return unary(Helper::ComplexTanh);
    case ir::Intrinsic::CmathRect: {
      Scalar part = partOfComplex(fe, in, in.type);
      std::string t = llvmScalarType(part);
      for (const ir::Instr* o : in.operands)
        if (o->type != scalarTy(part)) fe.fail(in, in.intrinsicName(), "operand of type " + typeToString(o->type));
      fe.bind(in, callHelper(fe, Helper::ComplexRect, part, llvmScalarType(in.type->scalar),
                             {{t, fe.val(in.operands[0])}, {t, fe.val(in.operands[1])}}));
      return true;
    }
    case ir::Intrinsic::RoundHalfEven: {   // f64 -> i64 (numba: __nv_llrint)
      const ir::Instr* x = in.operands.at(0);
      if (x->type != f64Ty() || in.type != i64Ty()) fe.fail(in, in.intrinsicName(), "expects f64 -> i64");
      fe.mod().declare("declare i64 @__nv_llrint(double)");
      fe.bind(in, fe.emit("call i64 @__nv_llrint(double " + fe.val(x) + ")"));
      return true;
    }
    case ir::Intrinsic::RoundNdigits: {   // (f64, i64) -> f64
      if (in.operands.at(0)->type != f64Ty() || in.operands.at(1)->type != i64Ty() || in.type != f64Ty())
        fe.fail(in, in.intrinsicName(), "expects (f64, i64) -> f64");
      fe.mod().helper(Helper::FloatIntPow, Scalar::Float64);   // 10.0 ** n, called by the helper
      fe.bind(in, callHelper(fe, Helper::RoundNdigits, Scalar::Float64, "double",
                             {{"double", fe.val(in.operands[0])}, {"i64", fe.val(in.operands[1])}}));
      return true;
    }
    default:
      return false;
  }
}

}  // namespace cj::codegen
