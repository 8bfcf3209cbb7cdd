#include "typeinfer/operators.h"

#include "typeinfer/templates.h"

namespace cj::typeinfer {
namespace {

bool isComparison(ir::Op op) {
  switch (op) {
    case ir::Op::Lt: case ir::Op::Le: case ir::Op::Gt: case ir::Op::Ge:
    case ir::Op::Eq: case ir::Op::Ne:
      return true;
    default:
      return false;
  }
}

bool hasTruth(const Type* t) {
  return t->isScalar() || t->is(TypeKind::None) || t->is(TypeKind::Tuple);
}

std::string operandList(const ir::Instr* in) {
  std::string s;
  for (size_t i = 0; i < in->operands.size(); ++i) {
    if (i) s += " and ";
    s += typeToString(in->operands[i]->type);
  }
  return s;
}

Signature resolveOperator(const FunctionContext& ctx, ir::Instr* in) {
  std::string spelling(operatorSpelling(in->op));
  std::vector<Scalar> scalars;
  bool all_scalar = true;
  for (ir::Instr* o : in->operands) {
    all_scalar = all_scalar && o->type->isScalar();
    if (o->type->isScalar()) scalars.push_back(o->type->scalar);
  }
  const TemplateList* templates = operatorTemplates(in->op);
  std::optional<Signature> sig;
  if (all_scalar && templates) sig = resolveOverload(*templates, scalars);
  if (!sig) {
    std::string what = in->operands.size() == 1 ? "operand type " : "operand types ";
    ctx.fail(in, std::string(ir::opName(in->op)),
             "unsupported " + what + "for " + spelling + ": " + operandList(in));
  }
  return *sig;
}

// `a + b` on two tuples: their concatenation (numba's TupleAdd); nullptr otherwise.
const Type* tupleConcatType(const ir::Instr* in) {
  if (in->op != ir::Op::Add) return nullptr;
  const Type* a = in->operands[0]->type;
  const Type* b = in->operands[1]->type;
  if (!a->is(TypeKind::Tuple) || !b->is(TypeKind::Tuple)) return nullptr;
  std::vector<const Type*> elems = a->elems;
  elems.insert(elems.end(), b->elems.begin(), b->elems.end());
  return tupleTy(elems);
}

}  // namespace

bool isOperator(ir::Op op) {
  return operatorTemplates(op) != nullptr || op == ir::Op::Is || op == ir::Op::IsNot;
}

const Type* operatorType(const FunctionContext& ctx, ir::Instr* in) {
  switch (in->op) {
    case ir::Op::Is:
    case ir::Op::IsNot: {
      bool none_a = in->operands[0]->type->is(TypeKind::None);
      bool none_b = in->operands[1]->type->is(TypeKind::None);
      if (!none_a && !none_b)
        ctx.fail(in, std::string(ir::opName(in->op)),
                 "'is' is only supported with None, got " + operandList(in));
      return boolTy();
    }
    case ir::Op::Not:
      if (!hasTruth(in->operands[0]->type))
        ctx.fail(in, "not", "no truth value for " + typeToString(in->operands[0]->type));
      return boolTy();
    default: {
      if (const Type* t = tupleConcatType(in)) return t;
      Signature sig = resolveOperator(ctx, in);
      return scalarTy(sig.ret);
    }
  }
}

ir::Instr* lowerOperator(const FunctionContext& ctx, ir::Instr* in, Emitter& e) {
  switch (in->op) {
    case ir::Op::Is:
    case ir::Op::IsNot: {
      // Both None: `is` holds; one None and one value: it does not.
      bool same = in->operands[0]->type == in->operands[1]->type;
      return e.constant(ir::Const::boolean(in->op == ir::Op::Is ? same : !same), boolTy());
    }
    case ir::Op::Not:
      return e.emit(ir::Op::Not, boolTy(), {e.truth(in->operands[0])});
    default:
      break;
  }
  if (const Type* t = tupleConcatType(in)) {
    std::vector<ir::Instr*> elems = e.elements(in->operands[0]);
    for (ir::Instr* x : e.elements(in->operands[1])) elems.push_back(x);
    return e.emit(ir::Op::TupleMake, t, elems);
  }
  Signature sig = resolveOperator(ctx, in);
  const Type* result = scalarTy(sig.ret);
  // Comparisons compare in the case's parameter type; every other operator
  // computes in its result type (typed-IR contract), but for float ** int.
  const Type* operand = isComparison(in->op) ? scalarTy(sig.params[0]) : result;
  if (in->op == ir::Op::Pow && result->isFloat() && scalarKind(sig.params[1]) == ScalarKind::Int) {
    // float ** int: numba keeps the exponent an integer (exact repeated
    // multiplication), so the exponent takes the case's integer type.
    in->operands[0] = e.convert(in->operands[0], result);
    in->operands[1] = e.convert(in->operands[1], scalarTy(sig.params[1]));
    in->type = result;
    return in;
  }
  if (in->op == ir::Op::Pos) return e.convert(in->operands[0], result);
  for (ir::Instr*& o : in->operands) o = e.convert(o, operand);
  in->type = result;
  return in;
}

}  // namespace cj::typeinfer
