// Helper functions written in NVVM IR for Python semantics that take more
// than one instruction: integer and float divmod (floor toward -inf), integer
// power. Each is defined once per module and type, `internal alwaysinline`,
// so after inlining only the part a use needs survives (floordiv keeps the
// quotient, mod the remainder).
//
// Templates use $T (the LLVM type), $F (the helper's name), $MIN (the
// smallest signed value), $FLOOR and $FMOD (libdevice's for the float type).
#include <stdexcept>
#include <string>

#include "codegen/emitter.h"

namespace cj::codegen {
namespace {

// numba (error_model="numpy"): x // 0 == 0 and x % 0 == 0; MIN // -1 == 0
// and MIN % -1 == 0 (the hardware would overflow).
constexpr const char* kSignedDivMod = R"(define internal {$T, $T} $F($T %a, $T %b) alwaysinline {
entry:
  %bzero = icmp eq $T %b, 0
  %amin = icmp eq $T %a, $MIN
  %bm1 = icmp eq $T %b, -1
  %ovf = and i1 %amin, %bm1
  %bad = or i1 %bzero, %ovf
  %d = select i1 %bad, $T 1, $T %b
  %q0 = sdiv $T %a, %d
  %r0 = srem $T %a, %d
  ; C truncates toward zero; Python floors: adjust when the remainder is
  ; non-zero and its sign differs from the divisor's.
  %rnz = icmp ne $T %r0, 0
  %x = xor $T %r0, %d
  %sdiff = icmp slt $T %x, 0
  %adj = and i1 %rnz, %sdiff
  %q1 = sub $T %q0, 1
  %r1 = add $T %r0, %d
  %q2 = select i1 %adj, $T %q1, $T %q0
  %r2 = select i1 %adj, $T %r1, $T %r0
  %q = select i1 %bad, $T 0, $T %q2
  %r = select i1 %bad, $T 0, $T %r2
  %s0 = insertvalue {$T, $T} undef, $T %q, 0
  %s1 = insertvalue {$T, $T} %s0, $T %r, 1
  ret {$T, $T} %s1
}
)";

constexpr const char* kUnsignedDivMod = R"(define internal {$T, $T} $F($T %a, $T %b) alwaysinline {
entry:
  %bzero = icmp eq $T %b, 0
  %d = select i1 %bzero, $T 1, $T %b
  %q0 = udiv $T %a, %d
  %r0 = urem $T %a, %d
  %q = select i1 %bzero, $T 0, $T %q0
  %r = select i1 %bzero, $T 0, $T %r0
  %s0 = insertvalue {$T, $T} undef, $T %q, 0
  %s1 = insertvalue {$T, $T} %s0, $T %r, 1
  ret {$T, $T} %s1
}
)";

// Unsigned 64-bit {a / b, a % b} for b != 0 without a 64-bit division
// instruction (ModuleEmitter::divisionInline): 32-bit hardware division
// where both fit, else restoring division from a's highest set bit, a
// quotient bit per step (the bit shifted out of %r makes it larger than
// any divisor). The trip count is a's bit length, not a constant: LLVM
// keeps the loop instead of unrolling 64 steps into every division.
constexpr const char* kUDivRem64 = R"(define internal {i64, i64} $F(i64 %a, i64 %b) alwaysinline {
entry:
  %both = or i64 %a, %b
  %narrow = icmp ult i64 %both, 4294967296
  br i1 %narrow, label %fast, label %slow
fast:
  %a32 = trunc i64 %a to i32
  %b32 = trunc i64 %b to i32
  %q32 = udiv i32 %a32, %b32
  %r32 = urem i32 %a32, %b32
  %qf = zext i32 %q32 to i64
  %rf = zext i32 %r32 to i64
  br label %exit
slow:
  %lz = call i64 @llvm.ctlz.i64(i64 %a, i1 false)
  %top = sub i64 63, %lz
  br label %loop
loop:
  %i = phi i64 [ %top, %slow ], [ %inext, %body ]
  %q = phi i64 [ 0, %slow ], [ %qnext, %body ]
  %r = phi i64 [ 0, %slow ], [ %rnext, %body ]
  %more = icmp sge i64 %i, 0
  br i1 %more, label %body, label %exit
body:
  %ashift = lshr i64 %a, %i
  %abit = and i64 %ashift, 1
  %rtop = icmp slt i64 %r, 0
  %rshift = shl i64 %r, 1
  %rb = or i64 %rshift, %abit
  %fits = icmp uge i64 %rb, %b
  %take = or i1 %rtop, %fits
  %rsub = sub i64 %rb, %b
  %rnext = select i1 %take, i64 %rsub, i64 %rb
  %tbit = zext i1 %take to i64
  %qbit = shl i64 %tbit, %i
  %qnext = or i64 %q, %qbit
  %inext = sub i64 %i, 1
  br label %loop
exit:
  %qq = phi i64 [ %qf, %fast ], [ %q, %loop ]
  %rr = phi i64 [ %rf, %fast ], [ %r, %loop ]
  %s0 = insertvalue {i64, i64} undef, i64 %qq, 0
  %s1 = insertvalue {i64, i64} %s0, i64 %rr, 1
  ret {i64, i64} %s1
}
)";

constexpr const char* kCtlz64 = "declare i64 @llvm.ctlz.i64(i64, i1)";

// The truncating signed quotient and remainder of the divmod helper from
// the unsigned one on magnitudes (a 64-bit MIN is 2^63 unsigned).
constexpr const char* kSignedFromUnsigned = R"(  %an = icmp slt $T %a, 0
  %aneg = sub $T 0, %a
  %aa = select i1 %an, $T %aneg, $T %a
  %dn = icmp slt $T %d, 0
  %dneg = sub $T 0, %d
  %ad = select i1 %dn, $T %dneg, $T %d
  %u = call {$T, $T} $CORE($T %aa, $T %ad)
  %uq = extractvalue {$T, $T} %u, 0
  %ur = extractvalue {$T, $T} %u, 1
  %qneg = xor i1 %an, %dn
  %uqn = sub $T 0, %uq
  %q0 = select i1 %qneg, $T %uqn, $T %uq
  %urn = sub $T 0, %ur
  %r0 = select i1 %an, $T %urn, $T %ur
)";

constexpr const char* kUnsignedFromCore = R"(  %u = call {$T, $T} $CORE($T %a, $T %d)
  %q0 = extractvalue {$T, $T} %u, 0
  %r0 = extractvalue {$T, $T} %u, 1
)";

// CPython's float_divmod (Objects/floatobject.c), with numpy's answers for
// a zero divisor: q = a / b, r = nan. The remainder is libdevice's fmod,
// exact as CPython's: LLVM's frem becomes a - b * trunc(a / b) on NVPTX,
// wrong for large quotients (1e300 % 1000.0).
constexpr const char* kFloatDivMod = R"(define internal {$T, $T} $F($T %a, $T %b) alwaysinline {
entry:
  %mod = call $T $FMOD($T %a, $T %b)
  %amod = fsub $T %a, %mod
  %div = fdiv $T %amod, %b
  %modnz = fcmp une $T %mod, 0.0
  %bneg = fcmp olt $T %b, 0.0
  %mneg = fcmp olt $T %mod, 0.0
  %sdiff = xor i1 %bneg, %mneg
  %adj = and i1 %modnz, %sdiff
  %modadj = fadd $T %mod, %b
  %divadj = fsub $T %div, 1.0
  %mod1 = select i1 %adj, $T %modadj, $T %mod
  %div1 = select i1 %adj, $T %divadj, $T %div
  ; a zero remainder takes the sign of the divisor
  %zmod = select i1 %bneg, $T -0.0, $T 0.0
  %mod2 = select i1 %modnz, $T %mod1, $T %zmod
  ; snap the quotient to the nearest integral value
  %divnz = fcmp une $T %div1, 0.0
  %fl = call $T $FLOOR($T %div1)
  %frac = fsub $T %div1, %fl
  %up = fcmp ogt $T %frac, 0.5
  %fl1 = fadd $T %fl, 1.0
  %fd = select i1 %up, $T %fl1, $T %fl
  ; a zero quotient takes the sign of a / b
  %za = fmul $T 0.0, %a
  %zq = fdiv $T %za, %b
  %fd2 = select i1 %divnz, $T %fd, $T %zq
  %bzero = fcmp oeq $T %b, 0.0
  %ab = fdiv $T %a, %b
  %q = select i1 %bzero, $T %ab, $T %fd2
  %s0 = insertvalue {$T, $T} undef, $T %q, 0
  %s1 = insertvalue {$T, $T} %s0, $T %mod2, 1
  ret {$T, $T} %s1
}
)";

// numba's int_power: repeated squaring (wraps on overflow like the
// multiplications it is made of). Negative exponents: 1 ** -n == 1,
// (-1) ** -n == +-1, 0 ** -n == MIN (numpy's answer), anything else 0.
constexpr const char* kSignedPow = R"(define internal $T $F($T %a, $T %b) alwaysinline {
entry:
  %negexp = icmp slt $T %b, 0
  br i1 %negexp, label %negative, label %loop
negative:
  %a0 = icmp eq $T %a, 0
  %a1 = icmp eq $T %a, 1
  %am1 = icmp eq $T %a, -1
  %bodd = and $T %b, 1
  %odd = icmp ne $T %bodd, 0
  %m1 = select i1 %odd, $T -1, $T 1
  %n1 = select i1 %am1, $T %m1, $T 0
  %n2 = select i1 %a1, $T 1, $T %n1
  %n3 = select i1 %a0, $T $MIN, $T %n2
  ret $T %n3
loop:
  %r = phi $T [ 1, %entry ], [ %rnext, %body ]
  %base = phi $T [ %a, %entry ], [ %basenext, %body ]
  %e = phi $T [ %b, %entry ], [ %enext, %body ]
  %done = icmp eq $T %e, 0
  br i1 %done, label %exit, label %body
body:
  %ebit = and $T %e, 1
  %eodd = icmp ne $T %ebit, 0
  %rm = mul $T %r, %base
  %rnext = select i1 %eodd, $T %rm, $T %r
  %enext = lshr $T %e, 1
  %basenext = mul $T %base, %base
  br label %loop
exit:
  ret $T %r
}
)";

constexpr const char* kUnsignedPow = R"(define internal $T $F($T %a, $T %b) alwaysinline {
entry:
  br label %loop
loop:
  %r = phi $T [ 1, %entry ], [ %rnext, %body ]
  %base = phi $T [ %a, %entry ], [ %basenext, %body ]
  %e = phi $T [ %b, %entry ], [ %enext, %body ]
  %done = icmp eq $T %e, 0
  br i1 %done, label %exit, label %body
body:
  %ebit = and $T %e, 1
  %eodd = icmp ne $T %ebit, 0
  %rm = mul $T %r, %base
  %rnext = select i1 %eodd, $T %rm, $T %r
  %enext = lshr $T %e, 1
  %basenext = mul $T %base, %base
  br label %loop
exit:
  ret $T %r
}
)";

// numba's int_power for a float base and an integer exponent: repeated
// squaring, 1 / r for a negative exponent, math.pow beyond |b| > 0x10000.
// %bf is the exponent as a float (for that fallback).
constexpr const char* kFloatIntPow = R"(define internal $T $F($T %a, i64 %b, $T %bf) alwaysinline {
entry:
  %neg = icmp slt i64 %b, 0
  %nb = sub i64 0, %b
  %e0 = select i1 %neg, i64 %nb, i64 %b
  %big = icmp ugt i64 %e0, 65536
  br i1 %big, label %generic, label %loop
generic:
  %p = call $T $POW($T %a, $T %bf)
  ret $T %p
loop:
  %r = phi $T [ 1.0, %entry ], [ %rnext, %body ]
  %base = phi $T [ %a, %entry ], [ %basenext, %body ]
  %e = phi i64 [ %e0, %entry ], [ %enext, %body ]
  %done = icmp eq i64 %e, 0
  br i1 %done, label %exit, label %body
body:
  %ebit = and i64 %e, 1
  %eodd = icmp ne i64 %ebit, 0
  %rm = fmul $T %r, %base
  %rnext = select i1 %eodd, $T %rm, $T %r
  %enext = lshr i64 %e, 1
  %basenext = fmul $T %base, %base
  br label %loop
exit:
  %inv = fdiv $T 1.0, %r
  %res = select i1 %neg, $T %inv, $T %r
  ret $T %res
}
)";

std::string substitute(std::string text, const std::string& key, const std::string& value) {
  for (size_t at = text.find(key); at != std::string::npos; at = text.find(key, at + value.size())) {
    text.replace(at, key.size(), value);
  }
  return text;
}

}  // namespace

std::string helperBaseName(Helper h) {
  if (isCmathHelper(h)) return cmathHelperBaseName(h);
  switch (h) {
    case Helper::DivMod: return "__cj_divmod";
    case Helper::DivModInline: return "__cj_divmod_inline";
    case Helper::UDivRemInline: return "__cj_udivrem_inline";
    case Helper::FloatDivMod: return "__cj_fdivmod";
    case Helper::IntPow: return "__cj_ipow";
    case Helper::FloatIntPow: return "__cj_fipow";
    default: break;
  }
  return "__cj_helper";
}

std::string helperDefinition(Helper h, Scalar s, const std::string& name,
                             std::vector<std::string>* declarations) {
  if (isCmathHelper(h)) return cmathHelperDefinition(h, s, name, declarations);
  std::string t = llvmScalarType(s);
  const char* text = nullptr;
  switch (h) {
    case Helper::DivMod: text = scalarSigned(s) ? kSignedDivMod : kUnsignedDivMod; break;
    case Helper::UDivRemInline:
      declarations->push_back(kCtlz64);
      return substitute(kUDivRem64, "$F", name);
    case Helper::DivModInline: {
      // The divmod helper with its hardware division replaced by a call of
      // its own copy of the unsigned core (both alwaysinline).
      declarations->push_back(kCtlz64);
      std::string core = name + "_core";
      std::string body = scalarSigned(s) ? kSignedDivMod : kUnsignedDivMod;
      std::string division = scalarSigned(s) ? "  %q0 = sdiv $T %a, %d\n  %r0 = srem $T %a, %d\n"
                                             : "  %q0 = udiv $T %a, %d\n  %r0 = urem $T %a, %d\n";
      body = substitute(body, division, scalarSigned(s) ? kSignedFromUnsigned : kUnsignedFromCore);
      if (body.find("div $T") != std::string::npos) throw std::logic_error("divmod helper: the division was not replaced");
      std::string out = substitute(kUDivRem64, "$F", core) + "\n" + substitute(body, "$CORE", core);
      out = substitute(out, "$T", t);
      out = substitute(out, "$F", name);
      return substitute(out, "$MIN", "-9223372036854775808");
    }
    case Helper::IntPow: text = scalarSigned(s) ? kSignedPow : kUnsignedPow; break;
    case Helper::FloatIntPow: {
      std::string pow = s == Scalar::Float32 ? "@__nv_powf" : "@__nv_pow";
      declarations->push_back("declare " + t + " " + pow + "(" + t + ", " + t + ")");
      std::string out = substitute(kFloatIntPow, "$POW", pow);
      out = substitute(out, "$T", t);
      return substitute(out, "$F", name);
    }
    case Helper::FloatDivMod: {
      text = kFloatDivMod;
      std::string floor = s == Scalar::Float32 ? "@__nv_floorf" : "@__nv_floor";
      std::string fmod = s == Scalar::Float32 ? "@__nv_fmodf" : "@__nv_fmod";
      declarations->push_back("declare " + t + " " + floor + "(" + t + ")");
      declarations->push_back("declare " + t + " " + fmod + "(" + t + ", " + t + ")");
      std::string out = substitute(text, "$FLOOR", floor);
      out = substitute(out, "$FMOD", fmod);
      out = substitute(out, "$T", t);
      return substitute(out, "$F", name);
    }
    default:
      break;
  }
  std::string out = substitute(text, "$T", t);
  out = substitute(out, "$F", name);
  int bits = scalarBits(s);
  std::string min = bits == 64 ? "-9223372036854775808" : "-" + std::to_string(uint64_t{1} << (bits - 1));
  return substitute(out, "$MIN", min);
}

}  // namespace cj::codegen
