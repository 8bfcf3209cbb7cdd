// Lowering of the complex-number intrinsics (complex.real / imag / make / abs):
// a complex value is an LLVM {re, im} struct of its part type.
#include "codegen/emitter.h"
#include "ir/intrinsics.h"

namespace cj::codegen {

bool lowerComplexIntrinsic(FunctionEmitter& fe, const ir::Instr& in) {
  auto part = [&](const ir::Instr* c, int k) {
    if (!c->type->isComplex()) fe.fail(in, in.intrinsicName(), "argument of type " + typeToString(c->type));
    return fe.emit("extractvalue " + llvmScalarType(c->type->scalar) + " " + fe.val(c) + ", " +
                   std::to_string(k));
  };
  switch (in.intrinsic) {
    case ir::Intrinsic::ComplexReal:
      fe.bind(in, part(in.operands.at(0), 0));
      return true;
    case ir::Intrinsic::ComplexImag:
      fe.bind(in, part(in.operands.at(0), 1));
      return true;
    case ir::Intrinsic::ComplexMake: {
      Scalar c = in.type->scalar;
      std::string pt = llvmScalarType(complexPart(c));
      fe.bind(in, fe.makeStruct(llvmScalarType(c), {{pt, fe.val(in.operands.at(0))},
                                                      {pt, fe.val(in.operands.at(1))}}));
      return true;
    }
    case ir::Intrinsic::ComplexAbs: {
      const ir::Instr* c = in.operands.at(0);
      Scalar p = complexPart(c->type->scalar);
      std::string re = part(c, 0), im = part(c, 1);
      std::string name = p == Scalar::Float32 ? "__nv_hypotf" : "__nv_hypot";
      fe.bind(in, callLibdevice(fe, name, p, {re, im}));
      return true;
    }
    default:
      return false;
  }
}

}  // namespace cj::codegen
