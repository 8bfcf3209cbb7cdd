// math.* functions: typed with numba-cuda's cudamath templates, lowered to
// the libdevice intrinsics of intrinsics.def. Every operand of a math
// intrinsic has the result's float type; float16 is computed in float32.
#include "typeinfer/rules.h"
#include "typeinfer/templates.h"

namespace cj::typeinfer::rules {
namespace {

Signature resolveMath(const Site& s, const TemplateList& templates, size_t arity) {
  s.expectArgs(arity);
  std::vector<Scalar> scalars;
  for (size_t i = 0; i < arity; ++i) {
    if (!s.argType(i)->isScalar())
      s.fail(std::string(s.name) + "() argument must be a number, got " + typeToString(s.argType(i)));
    scalars.push_back(s.argType(i)->scalar);
  }
  auto sig = resolveOverload(templates, scalars);
  if (!sig) {
    std::string got;
    for (size_t i = 0; i < arity; ++i) got += (i ? ", " : "") + typeToString(s.argType(i));
    s.fail(std::string(s.name) + "() does not support arguments (" + got + ")");
  }
  return *sig;
}

ir::Instr* lowerMath(const Site& s, Emitter& e, const Signature& sig) {
  const Type* result = scalarTy(sig.ret);
  const Type* compute = sig.ret == Scalar::Float16 ? f32Ty() : result;
  std::vector<ir::Instr*> operands;
  for (ir::Instr* a : s.args) operands.push_back(e.convert(a, compute));
  return e.convert(e.intrinsic(s.intrinsic, compute, operands), result);
}

const Type* unaryType(const Site& s) { return scalarTy(resolveMath(s, families::mathUnary(), 1).ret); }
ir::Instr* unaryLower(const Site& s, Emitter& e) {
  return lowerMath(s, e, resolveMath(s, families::mathUnary(), 1));
}

const Type* unaryF16Type(const Site& s) {
  return scalarTy(resolveMath(s, families::mathUnaryWithF16(), 1).ret);
}
ir::Instr* unaryF16Lower(const Site& s, Emitter& e) {
  return lowerMath(s, e, resolveMath(s, families::mathUnaryWithF16(), 1));
}

const Type* powType(const Site& s) { return scalarTy(resolveMath(s, families::mathPow(), 2).ret); }
ir::Instr* powLower(const Site& s, Emitter& e) {
  return lowerMath(s, e, resolveMath(s, families::mathPow(), 2));
}

}  // namespace

const Rule mathUnary{unaryType, unaryLower};
const Rule mathUnaryWithF16{unaryF16Type, unaryF16Lower};
const Rule mathPow{powType, powLower};

}  // namespace cj::typeinfer::rules
