// Lowering of the warp intrinsics (family Warp of ir/intrinsics.def):
//
//   activemask, lanemask_lt    inline PTX activemask.b32, sreg lanemask.lt
//   shfl_sync.*                llvm.nvvm.shfl.sync.{idx,up,down,bfly}.i32; floats
//                              bitcast, 64-bit values as two 32-bit shuffles
//   vote.*, match_*            llvm.nvvm.vote.*.sync, llvm.nvvm.match.*.sync
#include "codegen/lower_intrinsic.h"
#include "ir/intrinsics.h"

namespace cj::codegen {
namespace {

using ir::Intrinsic;

void lowerShfl(FunctionEmitter& fe, const ir::Instr& in) {
  const char* mode = "idx";
  int c = 0x1f;
  switch (in.intrinsic) {
    case Intrinsic::ShflUp: mode = "up"; c = 0; break;
    case Intrinsic::ShflDown: mode = "down"; break;
    case Intrinsic::ShflBfly: mode = "bfly"; break;
    default: break;
  }
  std::string fn = std::string("llvm.nvvm.shfl.sync.") + mode + ".i32";
  Scalar s = in.type->scalar;
  int bits = scalarBits(s);
  std::string t = llvmScalarType(s);
  std::string mask = fe.val(in.operands[0]);
  std::string lane = fe.val(in.operands[2]);
  std::string v = fe.val(in.operands[1]);
  std::string iv = scalarKind(s) == ScalarKind::Float ? fe.emit("bitcast " + t + " " + v + " to " + intOfWidth(bits)) : v;
  auto shfl = [&](const std::string& x) {
    return declareCall(fe, "i32", fn, {{"i32", mask}, {"i32", x}, {"i32", lane}, {"i32", std::to_string(c)}});
  };
  std::string r;
  if (bits == 32) {
    r = shfl(iv);
  } else {
    std::string lo = fe.emit("trunc i64 " + iv + " to i32");
    std::string hi = fe.emit("trunc i64 " + fe.emit("lshr i64 " + iv + ", 32") + " to i32");
    std::string rlo = fe.emit("zext i32 " + shfl(lo) + " to i64");
    std::string rhi = fe.emit("zext i32 " + shfl(hi) + " to i64");
    r = fe.emit("or i64 " + fe.emit("shl i64 " + rhi + ", 32") + ", " + rlo);
  }
  if (scalarKind(s) == ScalarKind::Float) r = fe.emit("bitcast " + intOfWidth(bits) + " " + r + " to " + t);
  fe.bind(in, r);
}

void lowerVote(FunctionEmitter& fe, const ir::Instr& in, Intrinsic id) {
  std::string mask = fe.val(in.operands[0]);
  std::string pred = fe.val(in.operands[1]);
  if (id == Intrinsic::VoteBallot) {
    fe.bind(in, declareCall(fe, "i32", "llvm.nvvm.vote.ballot.sync", {{"i32", mask}, {"i1", pred}}));
    return;
  }
  const char* m = id == Intrinsic::VoteAll ? "all" : id == Intrinsic::VoteAny ? "any" : "uni";
  fe.bind(in, declareCall(fe, "i1", std::string("llvm.nvvm.vote.") + m + ".sync", {{"i32", mask}, {"i1", pred}}));
}

void lowerMatch(FunctionEmitter& fe, const ir::Instr& in, Intrinsic id) {
  std::string mask = fe.val(in.operands[0]);
  Scalar s = in.operands[1]->type->scalar;
  int bits = scalarBits(s);
  std::string it = intOfWidth(bits);
  std::string v = fe.val(in.operands[1]);
  if (scalarKind(s) == ScalarKind::Float) v = fe.emit("bitcast " + llvmScalarType(s) + " " + v + " to " + it);
  if (id == Intrinsic::MatchAny) {
    fe.bind(in, declareCall(fe, "i32", "llvm.nvvm.match.any.sync." + it, {{"i32", mask}, {it, v}}));
    return;
  }
  std::string pair = declareCall(fe, "{i32, i1}", "llvm.nvvm.match.all.sync." + it + "p", {{"i32", mask}, {it, v}});
  fe.bind(in, fe.emit("extractvalue {i32, i1} " + pair + (id == Intrinsic::MatchAllMask ? ", 0" : ", 1")));
}


}  // namespace

void lowerWarpIntrinsic(FunctionEmitter& fe, const ir::Instr& in) {
  Intrinsic id = in.intrinsic;
  switch (id) {
    case Intrinsic::ActiveMask:
      fe.bind(in, fe.emit("call i32 asm sideeffect \"activemask.b32 $0;\", \"=r\"()"));
      return;
    case Intrinsic::LaneMaskLt:
      fe.bind(in, declareCall(fe, "i32", "llvm.nvvm.read.ptx.sreg.lanemask.lt", {}));
      return;
    case Intrinsic::ShflIdx: case Intrinsic::ShflUp: case Intrinsic::ShflDown: case Intrinsic::ShflBfly:
      lowerShfl(fe, in);
      return;
    case Intrinsic::VoteAll: case Intrinsic::VoteAny: case Intrinsic::VoteUni: case Intrinsic::VoteBallot:
      lowerVote(fe, in, id);
      return;
    case Intrinsic::MatchAny: case Intrinsic::MatchAllMask: case Intrinsic::MatchAllPred:
      lowerMatch(fe, in, id);
      return;
    default:
      fe.fail(in, in.intrinsicName(), "codegen has no lowering for intrinsic '" + in.intrinsicName() + "'");
  }
}

}  // namespace cj::codegen
