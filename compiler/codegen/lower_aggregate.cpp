// Tuples (literal structs of their elements that have a value), range
// objects and their iterators, and calls of the module's device functions.
//
// A range iterator's state { cur, count, step } lives in an alloca in the
// entry block; the iterator value is its address. mem2reg/SROA turn the
// loads and stores into phis, leaving the usual counted loop.
//
// `count` (the number of items left, unsigned) is computed once by getiter,
// as numba does, and the loop runs while it is non-zero. Comparing `cur`
// with `stop` instead is what we did first: besides overflowing near the
// ends of the type, its negative-step form (`for k in range(x, -y, -3)`,
// i.e. `k > -y; k -= 3`) is miscompiled by ptxas 13.0 for sm_90 (its
// unrolled loop tests `k > y + 9` instead of `k > -y + 9`), which a
// counted loop does not trigger.
#include <optional>

#include "codegen/emitter.h"

namespace cj::codegen {
namespace {

using ir::Op;

std::string opText(const ir::Instr& in) { return std::string(ir::opName(in.op)); }

// Pointer to field k of the iterator state.
// The state of a range iterator: the current value, the laps left, the
// step, and the stop. iter_valid tests `cur < stop` where the range pass
// proved the step positive, else `count != 0`; iter_next keeps both up to
// date and LLVM deletes the one no test reads.
enum IterField { kIterCur = 0, kIterCount = 1, kIterStep = 2, kIterStop = 3 };

std::string iterStateType(const Type* iter) {
  std::string p = llvmType(iter);   // a pointer to the state
  return p.substr(0, p.size() - 1);
}

std::string iterField(FunctionEmitter& fe, const Type* iter, const std::string& it, int k) {
  std::string st = iterStateType(iter);
  return fe.emit("getelementptr inbounds " + st + ", " + st + "* " + it + ", i32 0, i32 " + std::to_string(k));
}

std::string loadField(FunctionEmitter& fe, const Type* iter, const std::string& it, int k) {
  std::string t = llvmScalarType(iter->scalar);
  return fe.emit("load " + t + ", " + t + "* " + iterField(fe, iter, it, k));
}

// len(range(start, stop, step)) as an unsigned value of type t, without
// overflow: the distance toward stop in the step's direction, as unsigned,
// (dist - 1) / |step| + 1 when the range is not empty. A zero step gives
// an empty range (Python raises ValueError). `constStep` (non-zero), when
// the step is a constant, keeps only the direction it has.
std::string rangeCount(FunctionEmitter& fe, const std::string& t, bool isSigned, const std::string& start,
                       const std::string& stop, const std::string& step, std::optional<int64_t> constStep) {
  auto sel = [&](const std::string& c, const std::string& a, const std::string& b) {
    return fe.emit("select i1 " + c + ", " + t + " " + a + ", " + t + " " + b);
  };
  std::string nonempty, dist, divisor;
  if (constStep && (!isSigned || *constStep > 0)) {
    nonempty = fe.emit(std::string(isSigned ? "icmp slt " : "icmp ult ") + t + " " + start + ", " + stop);
    dist = fe.emit("sub " + t + " " + stop + ", " + start);
    divisor = step;
  } else if (constStep) {
    nonempty = fe.emit("icmp sgt " + t + " " + start + ", " + stop);
    dist = fe.emit("sub " + t + " " + start + ", " + stop);
    divisor = fe.emit("sub " + t + " 0, " + step);
  } else if (isSigned) {
    std::string up = fe.emit("icmp sgt " + t + " " + step + ", 0");
    std::string down = fe.emit("icmp slt " + t + " " + step + ", 0");
    std::string below = fe.emit("icmp slt " + t + " " + start + ", " + stop);
    std::string above = fe.emit("icmp sgt " + t + " " + start + ", " + stop);
    std::string fwd = fe.emit("and i1 " + up + ", " + below);
    std::string bwd = fe.emit("and i1 " + down + ", " + above);
    nonempty = fe.emit("or i1 " + fwd + ", " + bwd);
    dist = sel(up, fe.emit("sub " + t + " " + stop + ", " + start), fe.emit("sub " + t + " " + start + ", " + stop));
    std::string zstep = fe.emit("icmp eq " + t + " " + step + ", 0");
    std::string mag = sel(up, step, fe.emit("sub " + t + " 0, " + step));
    divisor = sel(zstep, "1", mag);
  } else {
    std::string zstep = fe.emit("icmp eq " + t + " " + step + ", 0");
    std::string below = fe.emit("icmp ult " + t + " " + start + ", " + stop);
    std::string nz = fe.emit("xor i1 " + zstep + ", true");
    nonempty = fe.emit("and i1 " + below + ", " + nz);
    dist = fe.emit("sub " + t + " " + stop + ", " + start);
    divisor = sel(zstep, "1", step);
  }
  std::string n = dist;   // a unit step: dist items
  if (!(constStep && (*constStep == 1 || (isSigned && *constStep == -1)))) {
    std::string q = unsignedDivide(fe, t, fe.emit("sub " + t + " " + dist + ", 1"), divisor, 0);
    n = fe.emit("add " + t + " " + q + ", 1");
  }
  return sel(nonempty, n, "0");
}

// The step of a range built in this function from a non-zero constant.
std::optional<int64_t> constantStep(const ir::Instr* r) {
  if (r->op != Op::RangeMake || r->operands.size() != 3) return std::nullopt;
  const ir::Instr* s = r->operands[2];
  if (s->op != Op::Const || s->cval.kind != ir::Const::Kind::Int || s->cval.i == 0) return std::nullopt;
  if (s->type != scalarTy(r->type->scalar)) return std::nullopt;
  return s->cval.i;
}

}  // namespace

void lowerTupleOp(FunctionEmitter& fe, const ir::Instr& in) {
  if (in.op == Op::TupleMake) {
    const Type* t = in.type;
    if (!t->is(TypeKind::Tuple) || t->elems.size() != in.operands.size()) {
      fe.fail(in, "tuple", "tuple of type " + typeToString(t) + " built from " +
                               std::to_string(in.operands.size()) + " values");
    }
    std::vector<std::pair<std::string, std::string>> fields;
    for (size_t k = 0; k < t->elems.size(); ++k) {
      if (hasValue(t->elems[k])) fields.push_back({llvmType(t->elems[k]), fe.val(in.operands[k])});
    }
    fe.bind(in, fe.makeStruct(llvmType(t), fields));
    return;
  }
  const ir::Instr* tup = in.operands.at(0);
  if (!tup->type->is(TypeKind::Tuple)) {
    fe.fail(in, "tuple_get", "expected a tuple, found " + typeToString(tup->type));
  }
  int field = tupleField(tup->type, static_cast<int>(in.index));
  if (field < 0) {
    if (hasValue(in.type)) fe.fail(in, "tuple_get", "tuple index " + std::to_string(in.index) + " out of range");
    return;   // an element without a value (None, a symbol)
  }
  fe.emitResult(in, "extractvalue " + fe.tval(tup) + ", " + std::to_string(field));
}

void lowerRangeOp(FunctionEmitter& fe, const ir::Instr& in) {
  switch (in.op) {
    case Op::RangeMake: {
      Scalar s = in.type->scalar;
      std::string t = llvmScalarType(s);
      std::vector<std::pair<std::string, std::string>> fields;
      for (const ir::Instr* o : in.operands) {
        if (!o->type->isScalar()) fe.fail(in, "range", "range bound of type " + typeToString(o->type));
        fields.push_back({t, convertScalar(fe, fe.val(o), o->type->scalar, s)});
      }
      fe.bind(in, fe.makeStruct(llvmType(in.type), fields));
      return;
    }
    case Op::GetIter: {
      const ir::Instr* r = in.operands.at(0);
      if (!r->type->is(TypeKind::Range)) {
        fe.fail(in, "iter", "iterating over " + typeToString(r->type) + " is not supported (only range)");
      }
      std::string st = llvmType(r->type);
      std::string t = llvmScalarType(r->type->scalar);
      std::string it = fe.entryAlloca(iterStateType(in.type), scalarByteSize(r->type->scalar));
      std::string rv = fe.val(r);
      std::string start = fe.emit("extractvalue " + st + " " + rv + ", 0");
      std::string stop = fe.emit("extractvalue " + st + " " + rv + ", 1");
      std::string step = fe.emit("extractvalue " + st + " " + rv + ", 2");
      std::string count = rangeCount(fe, t, scalarSigned(r->type->scalar), start, stop, step, constantStep(r));
      const std::string fields[4] = {start, count, step, stop};   // IterField order
      for (int k = 0; k < 4; ++k) {
        fe.emitLine("store " + t + " " + fields[k] + ", " + t + "* " + iterField(fe, in.type, it, k));
      }
      fe.bind(in, it);
      return;
    }
    case Op::IterValid: {
      const ir::Instr* itv = in.operands.at(0);
      const Type* iter = itv->type;
      std::string t = llvmScalarType(iter->scalar);
      std::string it = fe.val(itv);
      if (in.facts & ir::kFactNonNeg) {   // the range pass proved the step > 0
        std::string cur = loadField(fe, iter, it, kIterCur);
        std::string stop = loadField(fe, iter, it, kIterStop);
        fe.emitResult(in, std::string("icmp ") + (scalarSigned(iter->scalar) ? "slt " : "ult ") + t + " " +
                              cur + ", " + stop);
        return;
      }
      // Otherwise the trip count getiter computed (numba's shape; ptxas 13.0
      // miscompiles some unrolled 'k > -y; k -= c' loops: docs/internals.md).
      std::string count = loadField(fe, iter, it, kIterCount);
      fe.emitResult(in, "icmp ne " + t + " " + count + ", 0");
      return;
    }
    case Op::IterNext: {
      // Yields cur and steps. iter_next also runs on the loop header's exit
      // path, where the count wraps below 0: harmless, an exhausted iterator
      // is never asked again, and a plain decrement keeps the trip count
      // visible to LLVM's loop passes (unrolling).
      const ir::Instr* itv = in.operands.at(0);
      const Type* iter = itv->type;
      std::string t = llvmScalarType(iter->scalar);
      std::string it = fe.val(itv);
      std::string cur = loadField(fe, iter, it, kIterCur);
      std::string count = loadField(fe, iter, it, kIterCount);
      std::string step = loadField(fe, iter, it, kIterStep);
      std::string flags = std::string(in.facts & ir::kFactNuw ? "nuw " : "") + (in.facts & ir::kFactNsw ? "nsw " : "");
      std::string next = fe.emit("add " + flags + t + " " + cur + ", " + step);
      fe.emitLine("store " + t + " " + next + ", " + t + "* " + iterField(fe, iter, it, kIterCur));
      std::string rest = fe.emit("sub " + t + " " + count + ", 1");
      fe.emitLine("store " + t + " " + rest + ", " + t + "* " + iterField(fe, iter, it, kIterCount));
      fe.bind(in, cur);
      return;
    }
    default:
      fe.fail(in, opText(in), "not a range operation");
  }
}

void lowerCallFunc(FunctionEmitter& fe, const ir::Instr& in) {
  const ir::Function* callee = fe.mod().irModule().find(in.name);
  if (!callee) fe.fail(in, "call", "call of unknown function '" + in.name + "'");
  const auto& params = callee->entry()->params;
  if (params.size() != in.operands.size()) {
    fe.fail(in, "call", "'" + in.name + "' takes " + std::to_string(params.size()) + " arguments, " +
                            std::to_string(in.operands.size()) + " given");
  }
  std::string args;
  for (size_t k = 0; k < in.operands.size(); ++k) {
    if (!hasValue(params[k]->type)) continue;
    if (in.operands[k]->type != params[k]->type) {
      fe.fail(in, "call", "argument " + std::to_string(k) + " of '" + in.name + "' has type " +
                              typeToString(in.operands[k]->type) + ", expected " + typeToString(params[k]->type));
    }
    args += (args.empty() ? "" : ", ") + fe.tval(in.operands[k]);
  }
  std::string call = fe.mod().functionName(*callee) + "(" + args + ")";
  const Type* rt = callee->return_type;
  if (rt && hasValue(rt)) {
    fe.emitResult(in, "call " + llvmType(rt) + " " + call);
  } else {
    if (hasValue(in.type)) fe.fail(in, "call", "'" + in.name + "' returns nothing");
    fe.emitLine("call void " + call);
  }
}

}  // namespace cj::codegen
