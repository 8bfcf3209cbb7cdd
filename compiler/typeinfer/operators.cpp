#include "typeinfer/operators.h"

#include "typeinfer/conversion.h"
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

// Subscripts -----------------------------------------------------------------

// The index of `x[idx]` as a list of integer-typed values' types; fails unless
// it is one integer or a tuple of integers.
std::vector<const Type*> indexTypes(const FunctionContext& ctx, ir::Instr* in, const Type* arr,
                                    const Type* idx) {
  std::vector<const Type*> types =
      idx->is(TypeKind::Tuple) ? idx->elems : std::vector<const Type*>{idx};
  for (const Type* t : types)
    if (!t->isInt())
      ctx.fail(in, "getitem",
               "array index must be an integer or a tuple of integers, got " + typeToString(idx));
  if (static_cast<int>(types.size()) != arr->ndim)
    ctx.fail(in, "getitem",
             std::to_string(types.size()) + " index" + (types.size() == 1 ? "" : "es") +
                 " on a " + std::to_string(arr->ndim) + "-d array: slicing is not supported yet",
             "index every dimension: a[i, j]");
  return types;
}

int64_t tupleIndex(const FunctionContext& ctx, ir::Instr* in, const Type* tup, ir::Instr* idx) {
  auto k = constantInt(idx);
  if (!idx->type->isInt() && !idx->type->isBool())
    ctx.fail(in, "getitem", "tuple index must be an integer, got " + typeToString(idx->type));
  if (!k)
    ctx.fail(in, "getitem", "tuple index must be a constant (the tuple is " + typeToString(tup) + ")");
  int64_t n = static_cast<int64_t>(tup->elems.size());
  int64_t i = *k < 0 ? *k + n : *k;
  if (i < 0 || i >= n)
    ctx.fail(in, "getitem", "tuple index " + std::to_string(*k) + " out of range for " +
                                typeToString(tup));
  return i;
}

std::vector<ir::Instr*> arrayIndices(ir::Instr* idx, Emitter& e) {
  std::vector<ir::Instr*> raw = idx->type->is(TypeKind::Tuple) ? e.elements(idx)
                                                              : std::vector<ir::Instr*>{idx};
  for (ir::Instr*& i : raw) i = e.convert(i, i64Ty());
  return raw;
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
  Signature sig = resolveOperator(ctx, in);
  const Type* result = scalarTy(sig.ret);
  // Comparisons compare in the case's parameter type; every other operator
  // computes in its result type (typed-IR contract).
  const Type* operand = isComparison(in->op) ? scalarTy(sig.params[0]) : result;
  if (in->op == ir::Op::Pos) return e.convert(in->operands[0], result);
  for (ir::Instr*& o : in->operands) o = e.convert(o, operand);
  in->type = result;
  return in;
}

const Type* getItemType(const FunctionContext& ctx, ir::Instr* in) {
  const Type* obj = in->operands[0]->type;
  const Type* idx = in->operands[1]->type;
  if (obj->is(TypeKind::Array)) {
    indexTypes(ctx, in, obj, idx);
    return scalarTy(obj->scalar);
  }
  if (obj->is(TypeKind::Tuple)) return obj->elems[tupleIndex(ctx, in, obj, in->operands[1])];
  ctx.fail(in, "getitem", typeToString(obj) + " is not subscriptable");
}

ir::Instr* lowerGetItem(const FunctionContext& ctx, ir::Instr* in, Emitter& e) {
  ir::Instr* obj = in->operands[0];
  if (obj->type->is(TypeKind::Tuple)) {
    return e.element(obj, tupleIndex(ctx, in, obj->type, in->operands[1]));
  }
  std::vector<ir::Instr*> operands = {obj};
  for (ir::Instr* i : arrayIndices(in->operands[1], e)) operands.push_back(i);
  return e.emit(ir::Op::ArrayLoad, in->type, operands);
}

void checkSetItem(const FunctionContext& ctx, ir::Instr* in) {
  const Type* obj = in->operands[0]->type;
  const Type* val = in->operands[2]->type;
  if (!obj->is(TypeKind::Array))
    ctx.fail(in, "setitem", typeToString(obj) + " does not support item assignment");
  if (obj->readonly) ctx.fail(in, "setitem", "cannot assign to a readonly array " + typeToString(obj));
  indexTypes(ctx, in, obj, in->operands[1]->type);
  if (!val->isScalar() || scalarConversion(val->scalar, obj->scalar) == Conversion::None)
    ctx.fail(in, "setitem",
             "cannot store " + typeToString(val) + " into an array of " +
                 std::string(scalarShortName(obj->scalar)));
}

void lowerSetItem(const FunctionContext& ctx, ir::Instr* in, Emitter& e) {
  ir::Instr* arr = in->operands[0];
  std::vector<ir::Instr*> operands = {arr};
  for (ir::Instr* i : arrayIndices(in->operands[1], e)) operands.push_back(i);
  operands.push_back(e.convert(in->operands[2], scalarTy(arr->type->scalar)));
  e.emit(ir::Op::ArrayStore, voidTy(), operands);
}

}  // namespace cj::typeinfer
