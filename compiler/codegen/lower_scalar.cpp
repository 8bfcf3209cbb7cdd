// Scalar operations with Python/numba semantics on the operand type:
// arithmetic, comparisons, unary ops, casts, truth, select.
//
// Integers: add/sub/mul/shifts wrap (two's complement), floordiv/mod floor
// toward -inf (helpers.cpp), rshift is arithmetic for signed types.
// Floats: IEEE; comparisons are ordered except != (une), so NaN != NaN as in
// Python. float16 ops that need libdevice (pow, floordiv, mod) run in f32.
// Complex: {re, im} structs; + - * / == != and negation.
#include "codegen/emitter.h"

namespace cj::codegen {
namespace {

using ir::Op;

// LLVM opcode of each elementwise binary op, per operand family.
struct BinaryRow {
  Op op;
  const char* sint;   // signed integers (and bool)
  const char* uint;   // unsigned integers
  const char* flt;    // floats
};
constexpr BinaryRow kBinary[] = {
    {Op::Add, "add", "add", "fadd"},
    {Op::Sub, "sub", "sub", "fsub"},
    {Op::Mul, "mul", "mul", "fmul"},
    {Op::TrueDiv, nullptr, nullptr, "fdiv"},
    {Op::LShift, "shl", "shl", nullptr},
    {Op::RShift, "ashr", "lshr", nullptr},
    {Op::BitAnd, "and", "and", nullptr},
    {Op::BitOr, "or", "or", nullptr},
    {Op::BitXor, "xor", "xor", nullptr},
};

// Comparison predicates: icmp signed / unsigned, fcmp.
struct CompareRow {
  Op op;
  const char* sint;
  const char* uint;
  const char* flt;
};
constexpr CompareRow kCompare[] = {
    {Op::Lt, "slt", "ult", "olt"}, {Op::Le, "sle", "ule", "ole"},
    {Op::Eq, "eq", "eq", "oeq"},   {Op::Ne, "ne", "ne", "une"},
    {Op::Gt, "sgt", "ugt", "ogt"}, {Op::Ge, "sge", "uge", "oge"},
};

const BinaryRow* binaryRow(Op op) {
  for (const auto& r : kBinary) {
    if (r.op == op) return &r;
  }
  return nullptr;
}

const CompareRow* compareRow(Op op) {
  for (const auto& r : kCompare) {
    if (r.op == op) return &r;
  }
  return nullptr;
}

std::string opText(const ir::Instr& in) { return std::string(ir::opName(in.op)); }

void requireScalar(FunctionEmitter& fe, const ir::Instr& in, const Type* t) {
  if (!t->isScalar()) {
    fe.fail(in, opText(in), "expected a scalar operand, found " + typeToString(t));
  }
}

// ---- complex numbers ----------------------------------------------------------

std::string complexMake(FunctionEmitter& fe, Scalar c, const std::string& re, const std::string& im) {
  std::string pt = llvmScalarType(complexPart(c));
  return fe.makeStruct(llvmScalarType(c), {{pt, re}, {pt, im}});
}

std::pair<std::string, std::string> complexParts(FunctionEmitter& fe, Scalar c, const std::string& v) {
  std::string t = llvmScalarType(c);
  return {fe.emit("extractvalue " + t + " " + v + ", 0"), fe.emit("extractvalue " + t + " " + v + ", 1")};
}

void lowerComplexBinary(FunctionEmitter& fe, const ir::Instr& in, Scalar c) {
  std::string pt = llvmScalarType(complexPart(c));
  auto [a, b] = complexParts(fe, c, fe.val(in.operands[0]));
  auto [x, y] = complexParts(fe, c, fe.val(in.operands[1]));
  std::string f = fe.options().fastmath ? "fast " : "";
  auto op = [&](const char* o, const std::string& l, const std::string& r) {
    return fe.emit(std::string(o) + " " + f + pt + " " + l + ", " + r);
  };
  std::string re, im;
  switch (in.op) {
    case Op::Add: re = op("fadd", a, x); im = op("fadd", b, y); break;
    case Op::Sub: re = op("fsub", a, x); im = op("fsub", b, y); break;
    case Op::Mul:   // (a+bi)(x+yi) = (ax - by) + (ay + bx)i
      re = op("fsub", op("fmul", a, x), op("fmul", b, y));
      im = op("fadd", op("fmul", a, y), op("fmul", b, x));
      break;
    case Op::TrueDiv: {   // ((ax + by) + (bx - ay)i) / (x^2 + y^2)
      std::string den = op("fadd", op("fmul", x, x), op("fmul", y, y));
      re = op("fdiv", op("fadd", op("fmul", a, x), op("fmul", b, y)), den);
      im = op("fdiv", op("fsub", op("fmul", b, x), op("fmul", a, y)), den);
      break;
    }
    default:
      fe.fail(in, opText(in), "operation not supported on complex numbers");
  }
  fe.bind(in, complexMake(fe, c, re, im));
}

// LLVM's no-wrap flags for what the range pass proved (Instr::facts).
std::string intFlags(const ir::Instr& in) {
  std::string f;
  if (in.facts & ir::kFactNuw) f += "nuw ";
  if (in.facts & ir::kFactNsw) f += "nsw ";
  return f;
}

// ---- Python division and power --------------------------------------------------

// Runs `body` in f32 for an f16 or bf16 value type: widen operands, narrow the result.
template <typename Body>
std::string inFloat32IfHalf(FunctionEmitter& fe, Scalar s, std::vector<std::string> args, Body body) {
  if (s != Scalar::Float16 && s != Scalar::BFloat16) return body(s, args);
  for (auto& a : args) a = convertScalar(fe, a, s, Scalar::Float32);
  return convertScalar(fe, body(Scalar::Float32, args), Scalar::Float32, s);
}

// bfloat16 is the top half of a float32's bits: widening is exact, narrowing
// rounds to nearest even (NaN stays a quiet NaN).
std::string bfloat16ToFloat(FunctionEmitter& fe, const std::string& v) {
  std::string wide = fe.emit("zext i16 " + v + " to i32");
  return fe.emit("bitcast i32 " + fe.emit("shl i32 " + wide + ", 16") + " to float");
}
std::string floatToBfloat16(FunctionEmitter& fe, const std::string& v) {
  // sm_80 has the instruction (a tile kernel's target is known here): one
  // where the portable form takes nine, 128 a thread in a 128x256 matmul's
  // epilogue.
  if (fe.function().target_sm >= 80)
    return fe.emit("call i16 asm \"cvt.rn.bf16.f32 $0, $1;\", \"=h,f\"(float " + v + ")");
  std::string x = fe.emit("bitcast float " + v + " to i32");
  std::string high = fe.emit("lshr i32 " + x + ", 16");
  std::string odd = fe.emit("and i32 " + high + ", 1");
  std::string bias = fe.emit("add i32 " + odd + ", 32767");
  std::string rounded = fe.emit("lshr i32 " + fe.emit("add i32 " + x + ", " + bias) + ", 16");
  std::string quiet = fe.emit("or i32 " + high + ", 64");
  std::string nan = fe.emit("fcmp uno float " + v + ", 0.0");
  return fe.emit("trunc i32 " + fe.emit("select i1 " + nan + ", i32 " + quiet + ", i32 " + rounded) + " to i16");
}
// tfloat32: a float32 rounded to 10 mantissa bits, to nearest with ties to
// even, as cuBLAS and cuTile round for the tensor cores (on an H100 their
// results match such a rounded reference; ties away, cvt.rna, differ in
// about one product in 8000). In integer arithmetic: cvt.rn.tf32 is sm_90's
// only. A NaN stays a (quiet) NaN.
std::string floatToTfloat32(FunctionEmitter& fe, const std::string& v) {
  std::string x = fe.emit("bitcast float " + v + " to i32");
  std::string odd = fe.emit("and i32 " + fe.emit("lshr i32 " + x + ", 13") + ", 1");
  std::string up = fe.emit("add i32 " + fe.emit("add i32 " + x + ", 4095") + ", " + odd);
  std::string rounded = fe.emit("and i32 " + up + ", -8192");
  std::string quiet = fe.emit("and i32 " + fe.emit("or i32 " + x + ", 4194304") + ", -8192");
  std::string nan = fe.emit("fcmp uno float " + v + ", 0.0");
  return fe.emit("bitcast i32 " + fe.emit("select i1 " + nan + ", i32 " + quiet + ", i32 " + rounded) + " to float");
}

std::string divmodPart(FunctionEmitter& fe, Helper h, Scalar s, const std::vector<std::string>& args,
                       int part) {
  std::string t = llvmScalarType(s);
  std::string fn = fe.mod().helper(h, s);
  std::string pair = fe.emit("call {" + t + ", " + t + "} " + fn + "(" + t + " " + args[0] + ", " + t + " " +
                             args[1] + ")");
  return fe.emit("extractvalue {" + t + ", " + t + "} " + pair + ", " + std::to_string(part));
}

void lowerFloorDivMod(FunctionEmitter& fe, const ir::Instr& in, Scalar s) {
  int part = in.op == Op::FloorDiv ? 0 : 1;
  std::vector<std::string> args = {fe.val(in.operands[0]), fe.val(in.operands[1])};
  if ((in.facts & ir::kFactNonNeg) && scalarKind(s) == ScalarKind::Int) {
    // The range pass proved dividend >= 0 and divisor > 0: floor and
    // truncation agree and there is no zero divisor to guard.
    fe.bind(in, unsignedDivide(fe, llvmScalarType(s), args[0], args[1], part));
    return;
  }
  if (scalarKind(s) == ScalarKind::Float) {
    fe.bind(in, inFloat32IfHalf(fe, s, args, [&](Scalar w, const std::vector<std::string>& a) {
              return divmodPart(fe, Helper::FloatDivMod, w, a, part);
            }));
  } else {
    bool inline_division = fe.mod().divisionInline() && scalarBits(s) == 64;
    fe.bind(in, divmodPart(fe, inline_division ? Helper::DivModInline : Helper::DivMod, s, args, part));
  }
}

// float ** int (numba types it so: the exponent stays an integer).
void lowerFloatIntPow(FunctionEmitter& fe, const ir::Instr& in, Scalar s) {
  const ir::Instr* e = in.operands[1];
  Scalar es = e->type->scalar;
  std::string b = convertScalar(fe, fe.val(e), es, Scalar::Int64);
  if (!scalarSigned(es) && scalarBits(es) == 64) {
    // A u64 exponent beyond the squaring cutoff must not turn negative as i64.
    std::string big = fe.emit("icmp ugt i64 " + b + ", 65536");
    b = fe.emit("select i1 " + big + ", i64 65537, i64 " + b);
  }
  std::vector<std::string> args = {fe.val(in.operands[0])};
  fe.bind(in, inFloat32IfHalf(fe, s, args, [&](Scalar w, const std::vector<std::string>& a) {
            std::string t = llvmScalarType(w);
            std::string bf = convertScalar(fe, fe.val(e), es, w);
            std::string fn = fe.mod().helper(Helper::FloatIntPow, w);
            return fe.emit("call " + t + " " + fn + "(" + t + " " + a[0] + ", i64 " + b + ", " + t + " " + bf + ")");
          }));
}

void lowerPow(FunctionEmitter& fe, const ir::Instr& in, Scalar s) {
  std::vector<std::string> args = {fe.val(in.operands[0]), fe.val(in.operands[1])};
  if (scalarKind(s) == ScalarKind::Float) {
    fe.bind(in, inFloat32IfHalf(fe, s, args, [&](Scalar w, const std::vector<std::string>& a) {
              std::string fn = w == Scalar::Float64 ? "__nv_pow"
                               : fe.options().fastmath ? "__nv_fast_powf"
                                                       : "__nv_powf";
              return callLibdevice(fe, fn, w, a);
            }));
    return;
  }
  std::string t = llvmScalarType(s);
  std::string fn = fe.mod().helper(Helper::IntPow, s);
  fe.bind(in, fe.emit("call " + t + " " + fn + "(" + t + " " + args[0] + ", " + t + " " + args[1] + ")"));
}

}  // namespace

std::string unsignedDivide(FunctionEmitter& fe, const std::string& t, const std::string& a, const std::string& b,
                           int part) {
  if (!fe.mod().divisionInline() || t != "i64") return fe.emit(std::string(part == 0 ? "udiv " : "urem ") + t + " " + a + ", " + b);
  return divmodPart(fe, Helper::UDivRemInline, Scalar::UInt64, {a, b}, part);
}

std::string fmf(FunctionEmitter& fe) { return fe.options().fastmath ? "fast " : ""; }

std::string callLibdevice(FunctionEmitter& fe, const std::string& name, Scalar s,
                          const std::vector<std::string>& args) {
  std::string t = llvmScalarType(s);
  std::string types, typed;
  for (size_t i = 0; i < args.size(); ++i) {
    types += (i ? ", " : "") + t;
    typed += (i ? ", " : "") + t + " " + args[i];
  }
  fe.mod().declare("declare " + t + " @" + name + "(" + types + ")");
  return fe.emit("call " + t + " @" + name + "(" + typed + ")");
}

std::string convertScalar(FunctionEmitter& fe, const std::string& v, Scalar from, Scalar to) {
  if (from == to) return v;
  if (from == Scalar::BFloat16) return convertScalar(fe, bfloat16ToFloat(fe, v), Scalar::Float32, to);
  if (to == Scalar::BFloat16) return floatToBfloat16(fe, convertScalar(fe, v, from, Scalar::Float32));
  if (from == Scalar::TFloat32) return convertScalar(fe, v, Scalar::Float32, to);
  if (to == Scalar::TFloat32) return floatToTfloat32(fe, convertScalar(fe, v, from, Scalar::Float32));
  ScalarKind fk = scalarKind(from), tk = scalarKind(to);
  std::string ft = llvmScalarType(from), tt = llvmScalarType(to);
  auto conv = [&](const char* op) { return fe.emit(std::string(op) + " " + ft + " " + v + " to " + tt); };

  if (tk == ScalarKind::Complex) {
    Scalar part = complexPart(to);
    if (fk == ScalarKind::Complex) {
      auto [re, im] = complexParts(fe, from, v);
      Scalar fpart = complexPart(from);
      return complexMake(fe, to, convertScalar(fe, re, fpart, part), convertScalar(fe, im, fpart, part));
    }
    return complexMake(fe, to, convertScalar(fe, v, from, part), llvmFloatConst(0.0, part));
  }
  if (fk == ScalarKind::Complex) {   // numpy: the real part
    auto [re, im] = complexParts(fe, from, v);
    if (tk == ScalarKind::Bool) {
      std::string pt = llvmScalarType(complexPart(from));
      std::string a = fe.emit("fcmp une " + pt + " " + re + ", 0.0");
      std::string b = fe.emit("fcmp une " + pt + " " + im + ", 0.0");
      return fe.emit("or i1 " + a + ", " + b);
    }
    return convertScalar(fe, re, complexPart(from), to);
  }
  if (tk == ScalarKind::Bool) {   // Python truth: x != 0 (NaN is true)
    if (fk == ScalarKind::Float) return fe.emit("fcmp une " + ft + " " + v + ", 0.0");
    return fe.emit("icmp ne " + ft + " " + v + ", 0");
  }
  bool from_signed = fk != ScalarKind::Bool && scalarSigned(from);
  if (to == Scalar::Float16 && fk == ScalarKind::Float) {
    // PTX's cvt.rn.f16.f32 / .f64 as inline assembly, as numba-cuda does,
    // not fptrunc: libNVVM (CUDA 13.0) deletes the stores of two fptrunc'd
    // halves to neighbouring shared-memory elements (it merges them into a
    // truncating <2 x half> store and loses it), so that a shared float16
    // array written in pairs, or a float16x2 item, read back after a
    // barrier held garbage (tests/test_vector_arrays.py).
    // The half's bits leave the asm in a 32-bit integer register: ptxas
    // (CUDA 13.0) turns a later st.u8 of a register cvt wrote as f16 into
    // a float-to-int conversion (F2I.U8.F16), which broke float16 fields of
    // packed records (stored byte by byte); an integer register keeps them bits.
    const char* src = from == Scalar::Float64 ? "f64" : "f32";
    const char* con = from == Scalar::Float64 ? "d" : "f";
    std::string bits = fe.emit("call i32 asm \"{ .reg .b16 h; cvt.rn.f16." + std::string(src) +
                               " h, $1; cvt.u32.u16 $0, h; }\", \"=r," + con + "\"(" + ft + " " + v + ")");
    return fe.emit("bitcast i16 " + fe.emit("trunc i32 " + bits + " to i16") + " to half");
  }
  if (fk == ScalarKind::Float && tk == ScalarKind::Float) {
    return conv(scalarBits(to) > scalarBits(from) ? "fpext" : "fptrunc");
  }
  if (fk == ScalarKind::Float) return conv(scalarSigned(to) ? "fptosi" : "fptoui");
  // an integer to float16: exactly to float32 first (every integer float16
  // reaches below 2^24 is exact there), then rounded once, as above
  if (to == Scalar::Float16) return convertScalar(fe, convertScalar(fe, v, from, Scalar::Float32), Scalar::Float32, to);
  if (tk == ScalarKind::Float) return conv(from_signed ? "sitofp" : "uitofp");
  // integer (or bool) -> integer
  int fb = scalarBits(from), tb = scalarBits(to);
  if (fb == tb) return v;
  if (tb < fb) return conv("trunc");
  return conv(from_signed ? "sext" : "zext");
}

void lowerBinary(FunctionEmitter& fe, const ir::Instr& in) {
  requireScalar(fe, in, in.type);
  if (in.op == Op::Pow && in.type->isFloat() && in.operands[0]->type == in.type &&
      in.operands[1]->type->isInt()) {
    return lowerFloatIntPow(fe, in, in.type->scalar);
  }
  for (const ir::Instr* o : in.operands) {
    if (o->type != in.type) {
      fe.fail(in, opText(in), "operand of type " + typeToString(o->type) + " in an operation of type " +
                                  typeToString(in.type) + " (type inference must insert casts)");
    }
  }
  Scalar s = in.type->scalar;
  ScalarKind kind = scalarKind(s);
  if (kind == ScalarKind::Complex && in.op == Op::Pow) return lowerComplexPow(fe, in);
  if (kind == ScalarKind::Complex) return lowerComplexBinary(fe, in, s);
  if (in.op == Op::FloorDiv || in.op == Op::Mod) return lowerFloorDivMod(fe, in, s);
  if (in.op == Op::Pow) return lowerPow(fe, in, s);

  const BinaryRow* row = binaryRow(in.op);
  bool is_float = kind == ScalarKind::Float;
  const char* opcode = !row ? nullptr : is_float ? row->flt : scalarSigned(s) && kind != ScalarKind::Bool ? row->sint : row->uint;
  if (!opcode) {
    fe.fail(in, opText(in), "operation not supported on " + typeToString(in.type));
  }
  std::string t = llvmScalarType(s);
  std::string a = fe.val(in.operands[0]), b = fe.val(in.operands[1]);
  if (in.op == Op::TrueDiv && s == Scalar::Float32 && fe.options().fastmath) {
    fe.bind(in, callLibdevice(fe, "__nv_fast_fdividef", s, {a, b}));   // as numba does
    return;
  }
  std::string flags = is_float ? fmf(fe) : intFlags(in);
  if (s == Scalar::BFloat16) {
    fe.bind(in, inFloat32IfHalf(fe, s, {a, b}, [&](Scalar, const std::vector<std::string>& w) {
              return fe.emit(std::string(opcode) + " " + flags + "float " + w[0] + ", " + w[1]);
            }));
    return;
  }
  fe.emitResult(in, std::string(opcode) + " " + flags + t + " " + a + ", " + b);
}

void lowerCompare(FunctionEmitter& fe, const ir::Instr& in) {
  const ir::Instr* a = in.operands[0];
  const ir::Instr* b = in.operands[1];
  if (in.op == Op::Is || in.op == Op::IsNot) {
    // Only `x is None` survives to here: decided by the types.
    if (hasValue(a->type) && hasValue(b->type)) {
      fe.fail(in, opText(in), "'is' is supported only to compare with None");
    }
    bool same = a->type == b->type;
    fe.bind(in, (in.op == Op::Is) == same ? "true" : "false");
    return;
  }
  requireScalar(fe, in, a->type);
  if (a->type != b->type) {
    fe.fail(in, opText(in), "comparison of " + typeToString(a->type) + " with " + typeToString(b->type) +
                                " (type inference must insert casts)");
  }
  Scalar s = a->type->scalar;
  ScalarKind kind = scalarKind(s);
  std::string t = llvmScalarType(s);
  const CompareRow* row = compareRow(in.op);
  if (kind == ScalarKind::Complex) {
    if (in.op != Op::Eq && in.op != Op::Ne) fe.fail(in, opText(in), "complex numbers are not ordered");
    auto [ar, ai] = complexParts(fe, s, fe.val(a));
    auto [br, bi] = complexParts(fe, s, fe.val(b));
    std::string pt = llvmScalarType(complexPart(s));
    std::string re = fe.emit(std::string("fcmp ") + row->flt + " " + pt + " " + ar + ", " + br);
    std::string im = fe.emit(std::string("fcmp ") + row->flt + " " + pt + " " + ai + ", " + bi);
    fe.emitResult(in, std::string(in.op == Op::Eq ? "and" : "or") + " i1 " + re + ", " + im);
    return;
  }
  if (s == Scalar::BFloat16) {
    std::string x = convertScalar(fe, fe.val(a), s, Scalar::Float32), y = convertScalar(fe, fe.val(b), s, Scalar::Float32);
    fe.emitResult(in, "fcmp " + fmf(fe) + row->flt + " float " + x + ", " + y);
    return;
  }
  if (kind == ScalarKind::Float) {
    fe.emitResult(in, "fcmp " + fmf(fe) + row->flt + " " + t + " " + fe.val(a) + ", " + fe.val(b));
    return;
  }
  const char* pred = kind != ScalarKind::Bool && scalarSigned(s) ? row->sint : row->uint;
  fe.emitResult(in, std::string("icmp ") + pred + " " + t + " " + fe.val(a) + ", " + fe.val(b));
}

void lowerUnary(FunctionEmitter& fe, const ir::Instr& in) {
  const ir::Instr* x = in.operands[0];
  requireScalar(fe, in, x->type);
  Scalar s = x->type->scalar;
  ScalarKind kind = scalarKind(s);
  std::string t = llvmScalarType(s);
  std::string v = fe.val(x);
  switch (in.op) {
    case Op::Pos:
      fe.bind(in, v);
      return;
    case Op::Neg:
      if (kind == ScalarKind::Complex) {
        std::string pt = llvmScalarType(complexPart(s));
        auto [re, im] = complexParts(fe, s, v);
        fe.bind(in, complexMake(fe, s, fe.emit("fsub " + fmf(fe) + pt + " -0.0, " + re),
                                fe.emit("fsub " + fmf(fe) + pt + " -0.0, " + im)));
      } else if (s == Scalar::BFloat16) {
        fe.emitResult(in, "xor i16 " + v + ", -32768");   // the sign bit
      } else if (kind == ScalarKind::Float) {
        fe.emitResult(in, "fsub " + fmf(fe) + t + " -0.0, " + v);   // LLVM 7 has no fneg
      } else {
        fe.emitResult(in, "sub " + t + " 0, " + v);
      }
      return;
    case Op::Invert:
      if (kind != ScalarKind::Int && kind != ScalarKind::Bool) fe.fail(in, "~", "'~' needs an integer");
      fe.emitResult(in, "xor " + t + " " + v + ", -1");
      return;
    case Op::Not: {
      std::string b = convertScalar(fe, v, s, Scalar::Bool);
      fe.emitResult(in, "xor i1 " + b + ", true");
      return;
    }
    default:
      fe.fail(in, opText(in), "not a unary operation");
  }
}

void lowerCast(FunctionEmitter& fe, const ir::Instr& in) {
  const ir::Instr* x = in.operands[0];
  requireScalar(fe, in, x->type);
  const Type* to = in.op == Op::Truth ? boolTy() : in.type;
  requireScalar(fe, in, to);
  if ((in.facts & ir::kFactNonNeg) && x->type->isInt() && to->isInt() && to->bits() > x->type->bits()) {
    // A non-negative value widens the same either way; zext keeps it visibly
    // non-negative for LLVM.
    fe.emitResult(in, "zext " + llvmScalarType(x->type->scalar) + " " + fe.val(x) + " to " +
                          llvmScalarType(to->scalar));
    return;
  }
  fe.bind(in, convertScalar(fe, fe.val(x), x->type->scalar, to->scalar));
}

void lowerSelect(FunctionEmitter& fe, const ir::Instr& in) {
  if (!hasValue(in.type)) return;
  fe.emitResult(in, "select i1 " + fe.val(in.operands[0]) + ", " + fe.tval(in.operands[1]) + ", " +
                        fe.tval(in.operands[2]));
}

}  // namespace cj::codegen
