// cudajit.fp16.* (numba.cuda's cuda.fp16): half-precision functions on
// float16 scalars, with numba's types: every argument must be float16 (as
// numba's typing requires), arithmetic and math return float16, comparisons
// a bool. Arithmetic, negation and comparisons are float16 operations of the
// typed IR; hfma is one fused rounding (intrinsic fp16.hfma); the math
// functions are computed in float32 and rounded to float16 once (exact for
// habs, hmax, hmin, hceil, hfloor, hrint, htrunc; within CUDA's own
// half-precision error for the transcendental ones, which also go through
// float32 in cuda_fp16.h).
#include <string_view>

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
    {"hadd", Kind::Arith, ir::Op::Add},       {"hsub", Kind::Arith, ir::Op::Sub},
    {"hmul", Kind::Arith, ir::Op::Mul},       {"hdiv", Kind::Arith, ir::Op::TrueDiv},
    {"hneg", Kind::Neg},                      {"hfma", Kind::Fma},
    {"heq", Kind::Compare, ir::Op::Eq},       {"hne", Kind::Compare, ir::Op::Ne},
    {"hge", Kind::Compare, ir::Op::Ge},       {"hgt", Kind::Compare, ir::Op::Gt},
    {"hle", Kind::Compare, ir::Op::Le},       {"hlt", Kind::Compare, ir::Op::Lt},
    {"hmax", Kind::MinMax, ir::Op::Gt},       {"hmin", Kind::MinMax, ir::Op::Lt},
    {"habs", Kind::Widened, ir::Op::Add, ir::Intrinsic::Fabs},
    {"hsin", Kind::Widened, ir::Op::Add, ir::Intrinsic::Sin},
    {"hcos", Kind::Widened, ir::Op::Add, ir::Intrinsic::Cos},
    {"hlog", Kind::Widened, ir::Op::Add, ir::Intrinsic::Log},
    {"hlog10", Kind::Widened, ir::Op::Add, ir::Intrinsic::Log10},
    {"hlog2", Kind::Widened, ir::Op::Add, ir::Intrinsic::Log2},
    {"hexp", Kind::Widened, ir::Op::Add, ir::Intrinsic::Exp},
    {"hexp2", Kind::Widened, ir::Op::Add, ir::Intrinsic::Exp2},
    {"hexp10", Kind::Exp10},
    {"hsqrt", Kind::Widened, ir::Op::Add, ir::Intrinsic::Sqrt},
    {"hrsqrt", Kind::Rsqrt},
    {"hrcp", Kind::Recip},
    {"hceil", Kind::Widened, ir::Op::Add, ir::Intrinsic::Ceil},
    {"hfloor", Kind::Widened, ir::Op::Add, ir::Intrinsic::Floor},
    {"hrint", Kind::Widened, ir::Op::Add, ir::Intrinsic::Rint},
    {"htrunc", Kind::Widened, ir::Op::Add, ir::Intrinsic::Trunc},
};

int arity(Kind k) {
  switch (k) {
    case Kind::Arith: case Kind::Compare: case Kind::MinMax: return 2;
    case Kind::Fma: return 3;
    default: return 1;
  }
}

constexpr std::string_view kPrefix = "cudajit.fp16.";

const Fp16Function& functionOf(const Site& s) {
  for (const Fp16Function& f : kFunctions)
    if (s.name.substr(kPrefix.size()) == f.name) return f;
  s.fail("unsupported function " + std::string(s.name));
}

std::string pyName(const Site& s) { return "cuda.fp16." + std::string(s.name.substr(kPrefix.size())); }

const Fp16Function& checked(const Site& s) {
  const Fp16Function& f = functionOf(s);
  const size_t n = static_cast<size_t>(arity(f.kind));
  if (s.args.size() != n || !s.kw_args.empty())
    s.fail(pyName(s) + "() takes " + std::to_string(n) + " float16 argument" + (n == 1 ? "" : "s") + ", got " +
           std::to_string(s.argCount()));
  for (size_t i = 0; i < n; ++i)
    if (s.argType(i) != scalarTy(Scalar::Float16))
      s.fail(pyName(s) + "() takes float16 arguments (as numba's does), got " + typeToString(s.argType(i)),
             "convert with numpy.float16(x)");
  return f;
}

const Type* fp16Type(const Site& s) {
  return checked(s).kind == Kind::Compare ? boolTy() : scalarTy(Scalar::Float16);
}

ir::Instr* fp16Lower(const Site& s, Emitter& e) {
  const Fp16Function& f = checked(s);
  const Type* h = scalarTy(Scalar::Float16);
  const Type* f32 = scalarTy(Scalar::Float32);
  auto wide = [&](ir::Instr* v) { return e.convert(v, f32); };
  auto narrow = [&](ir::Instr* v) { return e.convert(v, h); };
  const auto& a = s.args;
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
      return e.emit(ir::Op::Select, h, {take_a, a[0], a[1]});
    }
  }
  s.fail("internal error: unhandled cuda.fp16 function");
}

}  // namespace

namespace rules {
const Rule fp16Call{fp16Type, fp16Lower};
}

}  // namespace cj::typeinfer
