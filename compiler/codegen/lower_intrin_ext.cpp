// Lowering of the issue-5 intrinsics of ir/intrinsics.def (numba.cuda parity):
//
//   syncthreads_count/and/or   llvm.nvvm.barrier0.popc/and/or
//   threadfence_system         llvm.nvvm.membar.sys
//   syncwarp, nanosleep        llvm.nvvm.bar.warp.sync, inline PTX nanosleep.u32
//   activemask, lanemask_lt    inline PTX activemask.b32, sreg lanemask.lt
//   shfl_sync.*                llvm.nvvm.shfl.sync.{idx,up,down,bfly}.i32; floats
//                              bitcast, 64-bit values as two 32-bit shuffles
//   vote.*, match_*            llvm.nvvm.vote.*.sync, llvm.nvvm.match.*.sync
//   popc, brev, clz, ffs       llvm.ctpop, __nv_brev(ll), llvm.ctlz, __nv_ffs(ll)
//   atomic_*                   atomicrmw where PTX has the operation; a
//                              compare-and-swap loop for float sub/min/max/
//                              nanmin/nanmax and inc/dec (numba's semantics,
//                              see cudadrv/nvvm.py's templates); cmpxchg for cas
//   math.isnan/isinf/isfinite  fcmp; math.ldexp/frexp/modf: libdevice
#include "codegen/lower_intrin_ext.h"

#include <cmath>

#include "ir/intrinsics.h"

namespace cj::codegen {
namespace {

using ir::Intrinsic;

std::string declareCall(FunctionEmitter& fe, const std::string& ret, const std::string& fn,
                        const std::vector<std::pair<std::string, std::string>>& args, bool value = true) {
  std::string types, typed;
  for (size_t i = 0; i < args.size(); ++i) {
    types += (i ? ", " : "") + args[i].first;
    typed += (i ? ", " : "") + args[i].first + " " + args[i].second;
  }
  fe.mod().declare("declare " + ret + " @" + fn + "(" + types + ")");
  std::string call = "call " + ret + " @" + fn + "(" + typed + ")";
  if (!value) {
    fe.emitLine(call);
    return "";
  }
  return fe.emit(call);
}

std::string intOfWidth(int bits) { return "i" + std::to_string(bits); }

// ---- warp ------------------------------------------------------------------------

void lowerShfl(FunctionEmitter& fe, const ir::Instr& in) {
  const char* mode = "idx";
  int c = 0x1f;
  switch (ir::findIntrinsic(in.name)->id) {
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

// ---- math --------------------------------------------------------------------------

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

// ---- atomics --------------------------------------------------------------------------

const char* rmwOp(Intrinsic id, Scalar s) {
  bool u = !scalarTy(s)->isSigned();
  switch (id) {
    case Intrinsic::AtomicSub: return "sub";
    case Intrinsic::AtomicMax: case Intrinsic::AtomicNanMax: return u ? "umax" : "max";
    case Intrinsic::AtomicMin: case Intrinsic::AtomicNanMin: return u ? "umin" : "min";
    case Intrinsic::AtomicAnd: return "and";
    case Intrinsic::AtomicOr: return "or";
    case Intrinsic::AtomicXor: return "xor";
    case Intrinsic::AtomicExch: return "xchg";
    default: return nullptr;
  }
}

// A compare-and-swap loop on the integer image `it` of `*ptr`:
//   loop:    old = phi [*ptr, pre], [seen, attempt]; if !proceed(old) -> done
//   attempt: seen = cas(ptr, old, next(old)); success -> done, else loop
// Returns the old value (integer image). `proceed` may return "" for always.
template <class Proceed, class Next>
std::string casLoop(FunctionEmitter& fe, const std::string& it, const std::string& iptr, Proceed proceed, Next next) {
  std::string pre = fe.freshLabel("cas.pre");
  std::string loop = fe.freshLabel("cas.loop");
  std::string attempt = fe.freshLabel("cas.try");
  std::string done = fe.freshLabel("cas.done");
  fe.emitLine("br label %" + pre);
  fe.startBlock(pre);
  std::string init = fe.emit("load volatile " + it + ", " + it + "* " + iptr);
  fe.emitLine("br label %" + loop);
  fe.startBlock(loop);
  // The phi names a value of the attempt block, defined below: name both here.
  std::string old = "%" + loop + ".old";
  std::string seen = "%" + attempt + ".seen";
  fe.emitLine(old + " = phi " + it + " [ " + init + ", %" + pre + " ], [ " + seen + ", %" + attempt + " ]");
  std::string cond = proceed(old);
  if (cond.empty()) {
    fe.emitLine("br label %" + attempt);
  } else {
    fe.emitLine("br i1 " + cond + ", label %" + attempt + ", label %" + done);
  }
  fe.startBlock(attempt);
  std::string nv = next(old);
  std::string pair = fe.emit("cmpxchg volatile " + it + "* " + iptr + ", " + it + " " + old + ", " + it + " " + nv +
                             " monotonic monotonic");
  fe.emitLine(seen + " = extractvalue {" + it + ", i1} " + pair + ", 0");
  std::string ok = fe.emit("extractvalue {" + it + ", i1} " + pair + ", 1");
  fe.emitLine("br i1 " + ok + ", label %" + done + ", label %" + loop);
  fe.startBlock(done);
  return old;
}

void lowerAtomicExt(FunctionEmitter& fe, const ir::Instr& in, Intrinsic id) {
  const ir::Instr* arr = in.operands[0];
  Scalar s = arr->type->scalar;
  bool cas = id == Intrinsic::AtomicCas;
  size_t nvals = cas ? 2 : 1;
  if (in.operands.size() != static_cast<size_t>(arr->type->ndim) + 1 + nvals)
    fe.fail(in, in.name, "expected (array, indices..., value)");
  std::vector<const ir::Instr*> idx(in.operands.begin() + 1, in.operands.end() - nvals);
  std::string ptr = elementPointer(fe, arr, idx, in.facts);
  std::string t = llvmScalarType(s);
  std::string v = fe.val(in.operands.back());
  bool isFloat = scalarKind(s) == ScalarKind::Float;
  if (cas) {
    std::string old = fe.val(in.operands[in.operands.size() - 2]);
    std::string pair = fe.emit("cmpxchg volatile " + t + "* " + ptr + ", " + t + " " + old + ", " + t + " " + v +
                               " monotonic monotonic");
    fe.bind(in, fe.emit("extractvalue {" + t + ", i1} " + pair + ", 0"));
    return;
  }
  if (!isFloat) {
    if (const char* op = rmwOp(id, s)) {
      fe.emitResult(in, std::string("atomicrmw ") + op + " " + t + "* " + ptr + ", " + t + " " + v + " monotonic");
      return;
    }
    // inc / dec (unsigned): numba's wrap rules. 32 bits: PTX atom.inc/dec
    // are exactly those rules (numba calls the same NVVM intrinsics); 64
    // bits have no such instruction: a CAS loop, as numba's.
    if (scalarBits(s) == 32) {
      std::string fn = std::string("llvm.nvvm.atomic.load.") + (id == Intrinsic::AtomicInc ? "inc" : "dec") +
                       ".32.p0i32";
      fe.bind(in, declareCall(fe, "i32", fn, {{"i32*", ptr}, {"i32", v}}));
      return;
    }
    std::string r = casLoop(
        fe, t, ptr, [](const std::string&) { return std::string(); },
        [&](const std::string& old) {
          if (id == Intrinsic::AtomicInc) {
            std::string lt = fe.emit("icmp ult " + t + " " + old + ", " + v);
            std::string inc = fe.emit("add " + t + " " + old + ", 1");
            return fe.emit("select i1 " + lt + ", " + t + " " + inc + ", " + t + " 0");
          }
          std::string dec = fe.emit("add " + t + " " + old + ", -1");
          std::string lt = fe.emit("icmp ult " + t + " " + dec + ", " + v);
          return fe.emit("select i1 " + lt + ", " + t + " " + dec + ", " + t + " " + v);
        });
    fe.bind(in, r);
    return;
  }
  std::string it = intOfWidth(scalarBits(s));
  std::string iptr = fe.emit("bitcast " + t + "* " + ptr + " to " + it + "*");
  auto asFloat = [&](const std::string& i) { return fe.emit("bitcast " + it + " " + i + " to " + t); };
  std::string r;
  if (id == Intrinsic::AtomicSub) {
    r = casLoop(
        fe, it, iptr, [](const std::string&) { return std::string(); },
        [&](const std::string& old) {
          std::string d = fe.emit("fsub " + t + " " + asFloat(old) + ", " + v);
          return fe.emit("bitcast " + t + " " + d + " to " + it);
        });
  } else {
    // max/min: swap while the stored value is (ordered) below/above val, so a
    // NaN on either side leaves memory alone. nanmax/nanmin: a NaN val
    // leaves memory alone; a NaN in memory is replaced.
    bool isMax = id == Intrinsic::AtomicMax || id == Intrinsic::AtomicNanMax;
    bool nan = id == Intrinsic::AtomicNanMax || id == Intrinsic::AtomicNanMin;
    r = casLoop(
        fe, it, iptr,
        [&](const std::string& old) {
          std::string f = asFloat(old);
          if (!nan) return fe.emit(std::string("fcmp ") + (isMax ? "olt " : "ogt ") + t + " " + f + ", " + v);
          std::string cmp = fe.emit(std::string("fcmp ") + (isMax ? "ult " : "ugt ") + t + " " + f + ", " + v);
          std::string ord = fe.emit("fcmp ord " + t + " " + v + ", " + v);
          return fe.emit("and i1 " + cmp + ", " + ord);
        },
        [&](const std::string&) { return fe.emit("bitcast " + t + " " + v + " to " + it); });
  }
  fe.bind(in, asFloat(r));
}

}  // namespace

bool lowerIntrinsicExt(FunctionEmitter& fe, const ir::Instr& in) {
  const ir::IntrinsicInfo* info = ir::findIntrinsic(in.name);
  if (!info) return false;
  Intrinsic id = info->id;
  switch (id) {
    case Intrinsic::SyncThreadsCount:
    case Intrinsic::SyncThreadsAnd:
    case Intrinsic::SyncThreadsOr: {
      const char* m = id == Intrinsic::SyncThreadsCount ? "popc" : id == Intrinsic::SyncThreadsAnd ? "and" : "or";
      fe.bind(in, declareCall(fe, "i32", std::string("llvm.nvvm.barrier0.") + m, {{"i32", fe.val(in.operands[0])}}));
      return true;
    }
    case Intrinsic::ThreadFenceSystem:
      declareCall(fe, "void", "llvm.nvvm.membar.sys", {}, false);
      return true;
    case Intrinsic::SyncWarp:
      declareCall(fe, "void", "llvm.nvvm.bar.warp.sync", {{"i32", fe.val(in.operands[0])}}, false);
      return true;
    case Intrinsic::NanoSleep:
      fe.emitLine("call void asm sideeffect \"nanosleep.u32 $0;\", \"r\"(i32 " + fe.val(in.operands[0]) + ")");
      return true;
    case Intrinsic::ActiveMask:
      fe.bind(in, fe.emit("call i32 asm sideeffect \"activemask.b32 $0;\", \"=r\"()"));
      return true;
    case Intrinsic::LaneMaskLt:
      fe.bind(in, declareCall(fe, "i32", "llvm.nvvm.read.ptx.sreg.lanemask.lt", {}));
      return true;
    case Intrinsic::ShflIdx: case Intrinsic::ShflUp: case Intrinsic::ShflDown: case Intrinsic::ShflBfly:
      lowerShfl(fe, in);
      return true;
    case Intrinsic::VoteAll: case Intrinsic::VoteAny: case Intrinsic::VoteUni: case Intrinsic::VoteBallot:
      lowerVote(fe, in, id);
      return true;
    case Intrinsic::MatchAny: case Intrinsic::MatchAllMask: case Intrinsic::MatchAllPred:
      lowerMatch(fe, in, id);
      return true;
    case Intrinsic::Popc: case Intrinsic::Brev: case Intrinsic::Clz: case Intrinsic::Ffs:
      lowerBits(fe, in, id);
      return true;
    case Intrinsic::IsNan: case Intrinsic::IsInf: case Intrinsic::IsFinite:
      lowerFloatTest(fe, in, id);
      return true;
    case Intrinsic::Ldexp: case Intrinsic::FrexpMant: case Intrinsic::FrexpExp: case Intrinsic::ModfFrac:
      lowerFloatParts(fe, in, id);
      return true;
    case Intrinsic::AtomicSub: case Intrinsic::AtomicMax: case Intrinsic::AtomicMin:
    case Intrinsic::AtomicNanMax: case Intrinsic::AtomicNanMin: case Intrinsic::AtomicAnd:
    case Intrinsic::AtomicOr: case Intrinsic::AtomicXor: case Intrinsic::AtomicExch:
    case Intrinsic::AtomicInc: case Intrinsic::AtomicDec: case Intrinsic::AtomicCas:
      lowerAtomicExt(fe, in, id);
      return true;
    default:
      return false;
  }
}

}  // namespace cj::codegen
