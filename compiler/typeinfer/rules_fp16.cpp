// cudajit.fp16.* (numba.cuda's cuda.fp16) and cudajit.bf16.* (cuda.bf16):
// the functions of half_functions.def on float16 / bfloat16 scalars, with
// numba's types: every argument must be of the namespace's type (as numba's
// typing requires), arithmetic and math return it, comparisons a bool.
// bfloat16 has no arithmetic of its own in the typed IR: its operations are
// computed in float32 (exact for sums and products of two bfloat16 values
// whose exponents are close, which covers most) and rounded to bfloat16
// once; its fma in float64 (the product is exact there). Arithmetic, negation and comparisons are float16 operations of the
// typed IR; hfma is one fused rounding (intrinsic fp16.hfma); the math
// functions are computed in float32 and rounded to float16 once (exact for
// habs, hmax, hmin, hceil, hfloor, hrint, htrunc; within CUDA's own
// half-precision error for the transcendental ones, which also go through
// float32 in cuda_fp16.h).
#include <string>
#include <string_view>
#include <vector>

#include "typeinfer/rules.h"

namespace cj::typeinfer {
namespace {

enum class Kind : uint8_t {
  Arith,     // (a, b) -> op  in float16
  Compare,   // (a, b) -> b1
  Neg,       // (a) -> -a
  Fma,       // (a, b, c) -> a * b + c, rounded once
  Widened,   // (a) -> f16(intrinsic(f32(a)))
  Recip,     // (a) -> f16(1 / f32(a))
  Rsqrt,     // (a) -> f16(1 / sqrt(f32(a)))
  Exp10,     // (a) -> f16(pow(10, f32(a)))
  MinMax,    // (a, b): NaN on one side gives the other (__hmax / __hmin)
};

struct Fp16Function {
  std::string_view name;   // after "cudajit.fp16."
  Kind kind;
  ir::Op op = ir::Op::Add;                          // Arith, Compare; MinMax: Gt (max) or Lt (min)
  ir::Intrinsic intrinsic = ir::Intrinsic::Count;   // Widened
};

constexpr Fp16Function kFunctions[] = {
#define HALF_FUNCTION(name, kind, op, intrinsic) {#name, Kind::kind, ir::Op::op, ir::Intrinsic::intrinsic},
#include "typeinfer/half_functions.def"
#undef HALF_FUNCTION
};

int arity(Kind k) {
  switch (k) {
    case Kind::Arith: case Kind::Compare: case Kind::MinMax: return 2;
    case Kind::Fma: return 3;
    default: return 1;
  }
}

// "cudajit.fp16." or "cudajit.bf16.": both prefixes have this length.
constexpr size_t kPrefix = std::string_view("cudajit.fp16.").size();

Scalar dtypeOf(const Site& s) { return s.name.substr(0, kPrefix) == "cudajit.bf16." ? Scalar::BFloat16 : Scalar::Float16; }

const Fp16Function& functionOf(const Site& s) {
  for (const Fp16Function& f : kFunctions)
    if (s.name.substr(kPrefix) == f.name) return f;
  s.fail("unsupported function " + std::string(s.name));
}

std::string pyName(const Site& s) { return "cuda." + std::string(s.name.substr(8)); }

const Fp16Function& checked(const Site& s) {
  const Fp16Function& f = functionOf(s);
  const size_t n = static_cast<size_t>(arity(f.kind));
  const Type* h = scalarTy(dtypeOf(s));
  const std::string name = h->scalar == Scalar::BFloat16 ? "bfloat16" : "float16";
  if (s.args.size() != n || !s.kw_args.empty())
    s.fail(pyName(s) + "() takes " + std::to_string(n) + " " + name + " argument" + (n == 1 ? "" : "s") + ", got " +
           std::to_string(s.argCount()));
  for (size_t i = 0; i < n; ++i)
    if (s.argType(i) != h)
      s.fail(pyName(s) + "() takes " + name + " arguments (as numba's does), got " + typeToString(s.argType(i)),
             name == "float16" ? "convert with numpy.float16(x)" : "the values of a bfloat16 array (a PyTorch tensor)");
  return f;
}

const Type* fp16Type(const Site& s) {
  return checked(s).kind == Kind::Compare ? boolTy() : scalarTy(dtypeOf(s));
}

ir::Instr* fp16Lower(const Site& s, Emitter& e) {
  const Fp16Function& f = checked(s);
  const Type* h = scalarTy(dtypeOf(s));
  const Type* f32 = scalarTy(Scalar::Float32);
  auto wide = [&](ir::Instr* v) { return e.convert(v, f32); };
  auto narrow = [&](ir::Instr* v) { return e.convert(v, h); };
  std::vector<ir::Instr*> a = s.args;
  if (h->scalar == Scalar::BFloat16) {   // float32 work, one rounding (see the top)
    switch (f.kind) {
      case Kind::Arith: return narrow(e.emit(f.op, f32, {wide(a[0]), wide(a[1])}));
      case Kind::Neg: return narrow(e.emit(ir::Op::Neg, f32, {wide(a[0])}));
      case Kind::Fma: {
        const Type* f64 = scalarTy(Scalar::Float64);
        ir::Instr* p = e.emit(ir::Op::Mul, f64, {e.convert(a[0], f64), e.convert(a[1], f64)});
        return narrow(e.emit(ir::Op::Add, f64, {p, e.convert(a[2], f64)}));
      }
      case Kind::Compare: case Kind::MinMax:
        for (ir::Instr*& v : a) v = wide(v);   // exact; MinMax narrows its pick below
        break;
      default:
        break;
    }
  }
  switch (f.kind) {
    case Kind::Arith: return e.emit(f.op, h, {a[0], a[1]});
    case Kind::Compare: return e.emit(f.op, boolTy(), {a[0], a[1]});
    case Kind::Neg: return e.emit(ir::Op::Neg, h, {a[0]});
    case Kind::Fma: return e.intrinsic(ir::Intrinsic::HalfFma, h, {a[0], a[1], a[2]});
    case Kind::Widened: return narrow(e.intrinsic(f.intrinsic, f32, {wide(a[0])}));
    case Kind::Recip: return narrow(e.emit(ir::Op::TrueDiv, f32, {e.constant(ir::Const::real(1.0), f32), wide(a[0])}));
    case Kind::Rsqrt: {
      ir::Instr* root = e.intrinsic(ir::Intrinsic::Sqrt, f32, {wide(a[0])});
      return narrow(e.emit(ir::Op::TrueDiv, f32, {e.constant(ir::Const::real(1.0), f32), root}));
    }
    case Kind::Exp10:
      return narrow(e.intrinsic(ir::Intrinsic::Pow, f32, {e.constant(ir::Const::real(10.0), f32), wide(a[0])}));
    case Kind::MinMax: {
      // a if a wins or b is NaN, else b (a NaN a never wins a comparison).
      ir::Instr* wins = e.emit(f.op, boolTy(), {a[0], a[1]});
      ir::Instr* b_nan = e.emit(ir::Op::Ne, boolTy(), {a[1], a[1]});
      ir::Instr* take_a = e.emit(ir::Op::BitOr, boolTy(), {wins, b_nan});
      return e.emit(ir::Op::Select, h, {take_a, s.args[0], s.args[1]});
    }
  }
  s.fail("internal error: unhandled " + pyName(s) + " function");
}

// numba's cuda.bf16 conversions that are exact: bfloat16_to_float32 and
// the bit reinterpretations bfloat16_as_int16 / bfloat16_as_uint16.
const Type* bf16ConversionTarget(const Site& s) {
  std::string_view name = s.name.substr(kPrefix);
  if (name == "bfloat16_to_float32") return scalarTy(Scalar::Float32);
  if (name == "bfloat16_as_int16") return scalarTy(Scalar::Int16);
  return scalarTy(Scalar::UInt16);
}

const Type* bf16ConversionType(const Site& s) {
  if (s.args.size() != 1 || !s.kw_args.empty() || s.argType(0) != scalarTy(Scalar::BFloat16))
    s.fail(pyName(s) + "() takes one bfloat16 argument");
  return bf16ConversionTarget(s);
}

ir::Instr* bf16ConversionLower(const Site& s, Emitter& e) {
  const Type* to = bf16ConversionType(s);
  if (to->isFloat()) return e.convert(s.args[0], to);
  return e.intrinsic(ir::Intrinsic::Bitcast, to, {s.args[0]});
}

}  // namespace

namespace rules {
const Rule fp16Call{fp16Type, fp16Lower};
const Rule bf16Conversion{bf16ConversionType, bf16ConversionLower};
}

std::vector<std::string> halfFunctionNames() {
  std::vector<std::string> out;
  for (const Fp16Function& f : kFunctions) out.emplace_back(f.name);
  return out;
}

}  // namespace cj::typeinfer
