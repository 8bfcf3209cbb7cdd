// Lowering of the bit intrinsics (family Bits of ir/intrinsics.def):
//
//   popc, brev, clz, ffs       llvm.ctpop, __nv_brev(ll), llvm.ctlz, __nv_ffs(ll)
//   bitcast                    LLVM's bitcast (same width)
#include "codegen/lower_intrinsic.h"
#include "ir/intrinsics.h"

namespace cj::codegen {
namespace {

using ir::Intrinsic;

void lowerBits(FunctionEmitter& fe, const ir::Instr& in, Intrinsic id) {
  Scalar s = in.operands[0]->type->scalar;
  std::string t = llvmScalarType(s);
  std::string v = fe.val(in.operands[0]);
  switch (id) {
    case Intrinsic::Popc: fe.bind(in, declareCall(fe, t, "llvm.ctpop." + t, {{t, v}})); return;
    case Intrinsic::Brev:   // libdevice, as numba (llvm.bitreverse is not supported everywhere)
      fe.bind(in, declareCall(fe, t, t == "i64" ? "__nv_brevll" : "__nv_brev", {{t, v}}));
      return;
    case Intrinsic::Clz: fe.bind(in, declareCall(fe, t, "llvm.ctlz." + t, {{t, v}, {"i1", "false"}})); return;
    case Intrinsic::Bitcast:   // bfloat16 and the 16-bit integers share LLVM's i16: no instruction
      if (t == llvmScalarType(in.type->scalar)) return fe.bind(in, v);
      fe.emitResult(in, "bitcast " + t + " " + v + " to " + llvmScalarType(in.type->scalar));
      return;
    default: break;
  }
  // ffs: 1-based position of the least significant set bit, 0 for 0.
  std::string r;
  if (scalarBits(s) == 64) {
    r = declareCall(fe, "i32", "__nv_ffsll", {{"i64", v}});
  } else {
    r = declareCall(fe, "i32", "__nv_ffs", {{"i32", convertScalar(fe, v, s, Scalar::Int32)}});
  }
  fe.bind(in, r);
}


}  // namespace

void lowerBitIntrinsic(FunctionEmitter& fe, const ir::Instr& in) { lowerBits(fe, in, in.intrinsic); }

}  // namespace cj::codegen
