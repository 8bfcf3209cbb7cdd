// Lowering of the math intrinsics that are not a uniform libdevice call
// (family Math of ir/intrinsics.def with empty libdevice columns; the
// libdevice ones are lowered by lower_intrinsic.cpp from the table):
//
//   math.isnan/isinf/isfinite          fcmp
//   math.ldexp/frexp.*/modf.frac       libdevice
#include <cmath>

#include "codegen/lower_intrinsic.h"
#include "ir/intrinsics.h"

namespace cj::codegen {
namespace {

using ir::Intrinsic;

void lowerFloatTest(FunctionEmitter& fe, const ir::Instr& in, Intrinsic id) {
  Scalar s = in.operands[0]->type->scalar;
  std::string t = llvmScalarType(s);
  std::string v = fe.val(in.operands[0]);
  std::string inf = llvmFloatConst(HUGE_VAL, s);
  if (id == Intrinsic::IsNan) {
    fe.bind(in, fe.emit("fcmp uno " + t + " " + v + ", " + v));
    return;
  }
  std::string a = declareCall(fe, t, "llvm.fabs." + std::string(s == Scalar::Float32 ? "f32" : "f64"), {{t, v}});
  fe.bind(in, fe.emit(std::string("fcmp ") + (id == Intrinsic::IsInf ? "oeq " : "olt ") + t + " " + a + ", " + inf));
}

void lowerFloatParts(FunctionEmitter& fe, const ir::Instr& in, Intrinsic id) {
  Scalar s = in.operands[0]->type->scalar;
  bool f32 = s == Scalar::Float32;
  std::string t = llvmScalarType(s);
  std::string v = fe.val(in.operands[0]);
  switch (id) {
    case Intrinsic::Ldexp:
      fe.bind(in, declareCall(fe, t, f32 ? "__nv_ldexpf" : "__nv_ldexp", {{t, v}, {"i32", fe.val(in.operands[1])}}));
      return;
    case Intrinsic::FrexpMant:
    case Intrinsic::FrexpExp: {
      std::string slot = fe.entryAlloca("i32", 4);
      std::string m = declareCall(fe, t, f32 ? "__nv_frexpf" : "__nv_frexp", {{t, v}, {"i32*", slot}});
      fe.bind(in, id == Intrinsic::FrexpMant ? m : fe.emit("load i32, i32* " + slot));
      return;
    }
    case Intrinsic::ModfFrac: {
      std::string slot = fe.entryAlloca(t, f32 ? 4 : 8);
      fe.bind(in, declareCall(fe, t, f32 ? "__nv_modff" : "__nv_modf", {{t, v}, {t + "*", slot}}));
      return;
    }
    default: break;
  }
}

// cuda.fp16.hfma: rounded once, as CUDA's __hfma (widening to float32 and
// narrowing the result would round twice).
void lowerHalfFma(FunctionEmitter& fe, const ir::Instr& in) {
  std::string args;
  for (const ir::Instr* o : in.operands) args += (args.empty() ? "half " : ", half ") + fe.val(o);
  fe.bind(in, fe.emit("call half asm \"fma.rn.f16 $0, $1, $2, $3;\", \"=h,h,h,h\"(" + args + ")"));
}

}  // namespace

void lowerFloatMathIntrinsic(FunctionEmitter& fe, const ir::Instr& in) {
  Intrinsic id = in.intrinsic;
  switch (id) {
    case Intrinsic::HalfFma:
      return lowerHalfFma(fe, in);
    case Intrinsic::IsNan: case Intrinsic::IsInf: case Intrinsic::IsFinite:
      return lowerFloatTest(fe, in, id);
    case Intrinsic::Ldexp: case Intrinsic::FrexpMant: case Intrinsic::FrexpExp: case Intrinsic::ModfFrac:
      return lowerFloatParts(fe, in, id);
    default:
      fe.fail(in, in.intrinsicName(), "codegen has no lowering for intrinsic '" + in.intrinsicName() + "'");
  }
}

}  // namespace cj::codegen
