#include "typeinfer/operators.h"

#include <algorithm>
#include <optional>

#include "typeinfer/rules.h"
#include "typeinfer/templates.h"
#include "typeinfer/tile_rules.h"

namespace cj::typeinfer {

bool isComparison(ir::Op op) {
  switch (op) {
    case ir::Op::Lt: case ir::Op::Le: case ir::Op::Gt: case ir::Op::Ge:
    case ir::Op::Eq: case ir::Op::Ne:
      return true;
    default:
      return false;
  }
}

namespace {

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
    // An Optional operand is used as its value (numba's Optional -> T cast).
    const Type* t = isOptional(o->type) ? optionalValue(o->type) : o->type;
    all_scalar = all_scalar && t->isScalar();
    if (t->isScalar()) scalars.push_back(t->scalar);
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
  if (!a->is(TypeKind::Tuple) || !b->is(TypeKind::Tuple) || isOptional(a) || isOptional(b)) return nullptr;
  std::vector<const Type*> elems = a->elems;
  elems.insert(elems.end(), b->elems.begin(), b->elems.end());
  return tupleTy(elems);
}

// ---- tuple comparisons (numba's TupleCompare / cpython/tupleobj.py) ------------

bool bothTuples(const ir::Instr* in) {
  const Type* a = in->operands.size() == 2 ? in->operands[0]->type : nullptr;
  const Type* b = a ? in->operands[1]->type : nullptr;
  return isComparison(in->op) && a && a->is(TypeKind::Tuple) && b->is(TypeKind::Tuple) && !isOptional(a) &&
         !isOptional(b);
}

// The scalar case comparing a and b with `op`, or nullopt; tuples compare
// element-wise (checked by comparable()).
std::optional<Signature> scalarCompare(ir::Op op, const Type* a, const Type* b) {
  if (!a->isScalar() || !b->isScalar()) return std::nullopt;
  return resolveOverload(*operatorTemplates(op), {a->scalar, b->scalar});
}

// numba types a tuple comparison when every pair of elements the two
// tuples share compares with the same operator (lengths may differ).
bool comparable(ir::Op op, const Type* a, const Type* b) {
  if (a->is(TypeKind::Tuple) && b->is(TypeKind::Tuple)) {
    for (size_t i = 0; i < std::min(a->elems.size(), b->elems.size()); ++i)
      if (!comparable(op, a->elems[i], b->elems[i])) return false;
    return true;
  }
  // The ordered lowering also needs != on every pair.
  if (op != ir::Op::Eq && op != ir::Op::Ne && !scalarCompare(ir::Op::Ne, a, b)) return false;
  return scalarCompare(op, a, b).has_value();
}

ir::Instr* emitCompare(Emitter& e, ir::Op op, ir::Instr* a, ir::Instr* b);

// ==: equal lengths and every pair equal; !=: its negation.
ir::Instr* tupleEqual(Emitter& e, ir::Instr* a, ir::Instr* b) {
  std::vector<ir::Instr*> x = e.elements(a), y = e.elements(b);
  if (x.size() != y.size()) return e.constant(ir::Const::boolean(false), boolTy());
  ir::Instr* res = e.constant(ir::Const::boolean(true), boolTy());
  for (size_t i = 0; i < x.size(); ++i)
    res = e.emit(ir::Op::BitAnd, boolTy(), {res, emitCompare(e, ir::Op::Eq, x[i], y[i])});
  return res;
}

// <, <=, >, >=: the first pair that differs decides; all equal: the lengths.
ir::Instr* tupleOrdered(Emitter& e, ir::Op op, ir::Instr* a, ir::Instr* b) {
  std::vector<ir::Instr*> x = e.elements(a), y = e.elements(b);
  int64_t la = static_cast<int64_t>(x.size()), lb = static_cast<int64_t>(y.size());
  bool by_length = op == ir::Op::Lt ? la < lb : op == ir::Op::Le ? la <= lb : op == ir::Op::Gt ? la > lb : la >= lb;
  std::vector<std::pair<ir::Instr*, ir::Instr*>> decide;   // (pair differs, op on the pair)
  for (size_t i = 0; i < std::min(x.size(), y.size()); ++i)
    decide.push_back({emitCompare(e, ir::Op::Ne, x[i], y[i]), emitCompare(e, op, x[i], y[i])});
  ir::Instr* res = e.constant(ir::Const::boolean(by_length), boolTy());
  for (size_t i = decide.size(); i-- > 0;)
    res = e.emit(ir::Op::Select, boolTy(), {decide[i].first, decide[i].second, res});
  return res;
}

ir::Instr* emitCompare(Emitter& e, ir::Op op, ir::Instr* a, ir::Instr* b) {
  if (a->type->is(TypeKind::Tuple)) {
    if (op == ir::Op::Eq) return tupleEqual(e, a, b);
    if (op == ir::Op::Ne) return e.emit(ir::Op::Not, boolTy(), {tupleEqual(e, a, b)});
    return tupleOrdered(e, op, a, b);
  }
  Signature sig = *scalarCompare(op, a->type, b->type);
  const Type* operand = scalarTy(sig.params[0]);
  return e.emit(op, boolTy(), {e.convert(a, operand), e.convert(b, operand)});
}

// `A.dtype == ct.float32`, `order == "F"` and the like: two dtypes, or two
// strings (constants in kernels, as numba's literal strings), compare when
// the kernel is compiled (the comparison folds to a constant). nullopt:
// neither.
std::optional<bool> constantComparison(const ir::Instr* in) {
  bool eq = in->op == ir::Op::Eq || in->op == ir::Op::Is, ne = in->op == ir::Op::Ne || in->op == ir::Op::IsNot;
  if ((!eq && !ne) || in->operands.size() != 2) return std::nullopt;
  const ir::Instr* x = in->operands[0];
  const ir::Instr* y = in->operands[1];
  if (x->type->is(TypeKind::String) && y->type->is(TypeKind::String)) {
    auto a = constantOf(x), b = constantOf(y);
    if (!a || !b || a->kind != ir::Const::Kind::Str || b->kind != ir::Const::Kind::Str) return std::nullopt;
    return (a->s == b->s) == eq;
  }
  if (!x->type->is(TypeKind::Symbol) || !y->type->is(TypeKind::Symbol)) return std::nullopt;
  auto a = dtypeOf(x), b = dtypeOf(y);
  if (!a || !b) return std::nullopt;
  return (*a == *b) == eq;
}

}  // namespace

bool isOperator(ir::Op op) {
  return operatorTemplates(op) != nullptr || op == ir::Op::Is || op == ir::Op::IsNot || op == ir::Op::MatMul;
}

const Type* operatorType(const FunctionContext& ctx, ir::Instr* in) {
  if (isTileOperation(in)) return tileOperatorType(ctx, in);
  if (constantComparison(in)) return boolTy();
  if (in->op == ir::Op::MatMul)
    ctx.fail(in, "@ operator", "matrix multiplication (@) works on cudajit.tile tiles only, not on " + operandList(in));
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
      if (bothTuples(in)) {
        if (!comparable(in->op, in->operands[0]->type, in->operands[1]->type))
          ctx.fail(in, std::string(ir::opName(in->op)),
                   "unsupported operand types for " + std::string(operatorSpelling(in->op)) + ": " +
                       operandList(in) + " (the elements do not compare)");
        return boolTy();
      }
      Signature sig = resolveOperator(ctx, in);
      return scalarTy(sig.ret);
    }
  }
}

ir::Instr* lowerOperator(const FunctionContext& ctx, ir::Instr* in, Emitter& e) {
  if (isTileOperation(in)) return lowerTileOperator(ctx, in, e);
  if (auto same = constantComparison(in)) return e.constant(ir::Const::boolean(*same), boolTy());
  switch (in->op) {
    case ir::Op::Is:
    case ir::Op::IsNot: {
      // An Optional against None: its presence flag decides.
      for (int k = 0; k < 2; ++k) {
        ir::Instr* opt = in->operands[k];
        if (isOptional(opt->type) && in->operands[1 - k]->type->is(TypeKind::None)) {
          ir::Instr* present = e.element(opt, 1);
          return in->op == ir::Op::IsNot ? present : e.emit(ir::Op::Not, boolTy(), {present});
        }
      }
      // Both None: `is` holds; one None and one value: it does not.
      bool same = in->operands[0]->type == in->operands[1]->type;
      return e.constant(ir::Const::boolean(in->op == ir::Op::Is ? same : !same), boolTy());
    }
    case ir::Op::Not:
      return e.emit(ir::Op::Not, boolTy(), {e.truth(in->operands[0])});
    default:
      break;
  }
  if (bothTuples(in)) return emitCompare(e, in->op, in->operands[0], in->operands[1]);
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
    in->setOperand(0, e.convert(in->operands[0], result));
    in->setOperand(1, e.convert(in->operands[1], scalarTy(sig.params[1])));
    in->type = result;
    return in;
  }
  if (in->op == ir::Op::Pos) return e.convert(in->operands[0], result);
  if ((in->op == ir::Op::Neg || in->op == ir::Op::Invert) && result->isInt()) {
    // numba negates and inverts an integer in its own type, then widens it
    // (int_negate_impl: "Negate before upcasting, for unsigned numbers"):
    // -np.uint32(1) is 4294967295 and -np.int32(-2**31) is -2**31, as uint64
    // and int64. (A bool is widened first, as numba's bool_negate_impl does.)
    const Type* param = scalarTy(sig.params[0]);
    if (param != result && param->isInt()) {
      ir::Instr* narrow = e.emit(in->op, param, {e.convert(in->operands[0], param)});
      return e.convert(narrow, result);
    }
  }
  for (size_t i = 0; i < in->operands.size(); ++i) in->setOperand(i, e.convert(in->operands[i], operand));
  in->type = result;
  return in;
}

}  // namespace cj::typeinfer
