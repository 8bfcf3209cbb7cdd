// Lowering of the atomic intrinsics (family Atomic of ir/intrinsics.def):
//
//   atomic_add                 atomicrmw add (integers of 32/64 bits), NVVM's
//                              atomic.load.add.f32/f64 for floats (libNVVM 13 does
//                              not parse `atomicrmw fadd`)
//   atomic_*                   atomicrmw where PTX has the operation; a
//                              compare-and-swap loop for float sub/min/max/
//                              nanmin/nanmax and inc/dec (numba's semantics,
//                              see cudadrv/nvvm.py's templates); cmpxchg for cas
#include "codegen/lower_intrinsic.h"
#include "ir/intrinsics.h"

namespace cj::codegen {
namespace {

using ir::Intrinsic;

void lowerAtomicAdd(FunctionEmitter& fe, const ir::Instr& in) {
  if (in.operands.size() < 2) fe.fail(in, "atomic.add", "expected (array, indices..., value)");
  const ir::Instr* arr = in.operands[0];
  if (!arr->type->is(TypeKind::Array)) fe.fail(in, "atomic.add", "first argument must be an array");
  Scalar s = arr->type->scalar;
  const ir::Instr* value = in.operands.back();
  if (value->type != scalarTy(s)) {
    fe.fail(in, "atomic.add", "adding a " + typeToString(value->type) + " to an array of " +
                                  typeToString(scalarTy(s)) + " (type inference must insert a cast)");
  }
  std::vector<const ir::Instr*> idx(in.operands.begin() + 1, in.operands.end() - 1);
  std::string ptr = elementPointer(fe, arr, idx, in.facts);
  std::string t = llvmScalarType(s);
  std::string v = fe.val(value);
  if (scalarKind(s) == ScalarKind::Int && scalarBits(s) >= 32) {
    fe.emitResult(in, "atomicrmw add " + t + "* " + ptr + ", " + t + " " + v + " monotonic");
    return;
  }
  if (s == Scalar::Float32 || s == Scalar::Float64) {
    std::string sfx = s == Scalar::Float32 ? "f32.p0f32" : "f64.p0f64";
    std::string fn = "@llvm.nvvm.atomic.load.add." + sfx;
    fe.mod().declare("declare " + t + " " + fn + "(" + t + "*, " + t + ")");
    fe.emitResult(in, "call " + t + " " + fn + "(" + t + "* " + ptr + ", " + t + " " + v + ")");
    return;
  }
  fe.fail(in, "atomic.add", "atomic add on " + typeToString(scalarTy(s)) +
                                " is not supported (int32/int64/uint32/uint64/float32/float64)");
}

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
    fe.fail(in, in.intrinsicName(), "expected (array, indices..., value)");
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

void lowerAtomicIntrinsic(FunctionEmitter& fe, const ir::Instr& in) {
  if (in.intrinsic == Intrinsic::AtomicAdd) return lowerAtomicAdd(fe, in);
  lowerAtomicExt(fe, in, in.intrinsic);
}

}  // namespace cj::codegen
