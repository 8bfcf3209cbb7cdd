// Tuples (literal structs of their elements that have a value), range
// objects and their iterators, and calls of the module's device functions.
//
// A range iterator's state { cur, stop, step } lives in an alloca in the
// entry block; the iterator value is its address. mem2reg/SROA turn the
// loads and stores into phis, leaving the usual counted loop.
#include "codegen/emitter.h"

namespace cj::codegen {
namespace {

using ir::Op;

std::string opText(const ir::Instr& in) { return std::string(ir::opName(in.op)); }

// Pointer to field k of the iterator state.
std::string iterField(FunctionEmitter& fe, const Type* iter, const std::string& it, int k) {
  std::string st = llvmType(rangeTy(iter->scalar));   // the state has the range's layout
  return fe.emit("getelementptr inbounds " + st + ", " + st + "* " + it + ", i32 0, i32 " + std::to_string(k));
}

std::string loadField(FunctionEmitter& fe, const Type* iter, const std::string& it, int k) {
  std::string t = llvmScalarType(iter->scalar);
  return fe.emit("load " + t + ", " + t + "* " + iterField(fe, iter, it, k));
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
      std::string it = fe.entryAlloca(st, scalarByteSize(r->type->scalar));
      std::string rv = fe.val(r);
      for (int k = 0; k < 3; ++k) {
        std::string v = fe.emit("extractvalue " + st + " " + rv + ", " + std::to_string(k));
        fe.emitLine("store " + t + " " + v + ", " + t + "* " + iterField(fe, in.type, it, k));
      }
      fe.bind(in, it);
      return;
    }
    case Op::IterValid: {
      const ir::Instr* itv = in.operands.at(0);
      const Type* iter = itv->type;
      std::string t = llvmScalarType(iter->scalar);
      std::string it = fe.val(itv);
      std::string cur = loadField(fe, iter, it, 0);
      std::string stop = loadField(fe, iter, it, 1);
      if (!scalarSigned(iter->scalar)) {
        fe.emitResult(in, "icmp ult " + t + " " + cur + ", " + stop);
        return;
      }
      if (in.facts & ir::kFactNonNeg) {   // the range pass proved the step > 0
        fe.emitResult(in, "icmp slt " + t + " " + cur + ", " + stop);
        return;
      }
      // Python: a positive step runs while cur < stop, a negative one while cur > stop.
      std::string step = loadField(fe, iter, it, 2);
      std::string up = fe.emit("icmp sgt " + t + " " + step + ", 0");
      std::string below = fe.emit("icmp slt " + t + " " + cur + ", " + stop);
      std::string above = fe.emit("icmp sgt " + t + " " + cur + ", " + stop);
      fe.emitResult(in, "select i1 " + up + ", i1 " + below + ", i1 " + above);
      return;
    }
    case Op::IterNext: {
      const ir::Instr* itv = in.operands.at(0);
      const Type* iter = itv->type;
      std::string t = llvmScalarType(iter->scalar);
      std::string it = fe.val(itv);
      std::string cur = loadField(fe, iter, it, 0);
      std::string step = loadField(fe, iter, it, 2);
      std::string flags = std::string(in.facts & ir::kFactNuw ? "nuw " : "") + (in.facts & ir::kFactNsw ? "nsw " : "");
      std::string next = fe.emit("add " + flags + t + " " + cur + ", " + step);
      fe.emitLine("store " + t + " " + next + ", " + t + "* " + iterField(fe, iter, it, 0));
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
