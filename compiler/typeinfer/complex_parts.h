// Taking complex values apart and putting them together in typed IR: what
// the complex lowerings of cmath (rules_cmath.cpp, cmath_inverse.cpp), of
// numpy's ufunc loops (rules_ufunc.cpp, ufunc_complex.cpp) and of the
// language (z.conjugate()) are built from.
#pragma once
#include "ir/intrinsics.h"
#include "typeinfer/context.h"

namespace cj::typeinfer {

// The float type of each part of a complex type (complex64 -> float32).
inline const Type* complexPartType(const Type* complex) { return scalarTy(complexPart(complex->scalar)); }

inline ir::Instr* complexReal(Emitter& e, ir::Instr* z) {
  return e.intrinsic(ir::Intrinsic::ComplexReal, complexPartType(z->type), {z});
}
inline ir::Instr* complexImag(Emitter& e, ir::Instr* z) {
  return e.intrinsic(ir::Intrinsic::ComplexImag, complexPartType(z->type), {z});
}
// complex(re, im) of type `complex`, both parts already of its part type.
inline ir::Instr* makeComplex(Emitter& e, const Type* complex, ir::Instr* re, ir::Instr* im) {
  return e.intrinsic(ir::Intrinsic::ComplexMake, complex, {re, im});
}
inline ir::Instr* complexConjugate(Emitter& e, ir::Instr* z) {
  ir::Instr* im = complexImag(e, z);
  return makeComplex(e, z->type, complexReal(e, z), e.emit(ir::Op::Neg, im->type, {im}));
}

}  // namespace cj::typeinfer
