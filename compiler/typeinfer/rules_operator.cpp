// The operator module's functions in kernels (operator.add(a, b), operator.neg(x),
// operator.iadd(a, b), ...): each is its operator, typed and lowered as
// `a + b` is (operators.h), as numba types them.
#include <utility>

#include "typeinfer/operators.h"
#include "typeinfer/rules.h"

namespace cj::typeinfer::rules {
namespace {

struct OperatorRow {
  std::string_view name;
  ir::Op op;
};
constexpr OperatorRow kOperators[] = {
    {"add", ir::Op::Add},        {"iadd", ir::Op::Add},           {"sub", ir::Op::Sub},
    {"isub", ir::Op::Sub},       {"mul", ir::Op::Mul},            {"imul", ir::Op::Mul},
    {"truediv", ir::Op::TrueDiv}, {"itruediv", ir::Op::TrueDiv},  {"floordiv", ir::Op::FloorDiv},
    {"ifloordiv", ir::Op::FloorDiv}, {"mod", ir::Op::Mod},        {"imod", ir::Op::Mod},
    {"pow", ir::Op::Pow},        {"ipow", ir::Op::Pow},           {"lshift", ir::Op::LShift},
    {"ilshift", ir::Op::LShift}, {"rshift", ir::Op::RShift},      {"irshift", ir::Op::RShift},
    {"and_", ir::Op::BitAnd},    {"iand", ir::Op::BitAnd},        {"or_", ir::Op::BitOr},
    {"ior", ir::Op::BitOr},      {"xor", ir::Op::BitXor},         {"ixor", ir::Op::BitXor},
    {"neg", ir::Op::Neg},        {"pos", ir::Op::Pos},            {"invert", ir::Op::Invert},
    {"inv", ir::Op::Invert},     {"not_", ir::Op::Not},           {"lt", ir::Op::Lt},
    {"le", ir::Op::Le},          {"eq", ir::Op::Eq},              {"ne", ir::Op::Ne},
    {"gt", ir::Op::Gt},          {"ge", ir::Op::Ge},
};

ir::Op operatorOf(const Site& s) {
  for (const OperatorRow& row : kOperators)
    if (row.name == s.arg) return row.op;
  s.fail("operator." + std::string(s.arg) + "() is not supported in kernels");
}

size_t arityOf(ir::Op op) {
  return op == ir::Op::Neg || op == ir::Op::Pos || op == ir::Op::Invert || op == ir::Op::Not ? 1 : 2;
}

const Type* operatorCallType(const Site& s) {
  const ir::Op op = operatorOf(s);
  s.expectArgs(arityOf(op));
  // The operator's own typing, on a detached instruction of that operator.
  std::unique_ptr<ir::Instr> probe = s.ctx.fn().make(op, unknownTy(), s.args, s.instr->loc);
  const Type* t = operatorType(s.ctx, probe.get());
  probe->dropAllReferences();
  return t;
}

ir::Instr* operatorCallLower(const Site& s, Emitter& e) {
  // As the typer lowers an operator: its operands converted first, then it.
  std::unique_ptr<ir::Instr> in = s.ctx.fn().make(operatorOf(s), s.instr->type, s.args, s.instr->loc);
  ir::Instr* lowered = lowerOperator(s.ctx, in.get(), e);
  if (lowered != in.get()) {
    in->dropAllReferences();
    return lowered;
  }
  return e.append(std::move(in));
}

}  // namespace

const Rule operatorCall{operatorCallType, operatorCallLower};

}  // namespace cj::typeinfer::rules
