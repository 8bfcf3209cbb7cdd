// Array attributes (attributes.def): shape, strides, size, ndim, itemsize, nbytes.
#include "typeinfer/rules.h"

namespace cj::typeinfer::rules {
namespace {

const Type* perDimType(const Site& s) {
  return tupleTy(std::vector<const Type*>(s.receiver->type->ndim, i64Ty()));
}

ir::Instr* perDimLower(const Site& s, Emitter& e, ir::Op op) {
  std::vector<ir::Instr*> dims;
  for (int d = 0; d < s.receiver->type->ndim; ++d) {
    ir::Instr* v = e.emit(op, i64Ty(), {s.receiver});
    v->index = d;
    dims.push_back(v);
  }
  return e.emit(ir::Op::TupleMake, perDimType(s), dims);
}

ir::Instr* shapeLower(const Site& s, Emitter& e) { return perDimLower(s, e, ir::Op::ArrayDim); }
ir::Instr* stridesLower(const Site& s, Emitter& e) { return perDimLower(s, e, ir::Op::ArrayStride); }

const Type* i64Type(const Site&) { return i64Ty(); }
ir::Instr* sizeLower(const Site& s, Emitter& e) {
  return e.emit(ir::Op::ArraySize, i64Ty(), {s.receiver});
}
ir::Instr* ndimLower(const Site& s, Emitter& e) { return e.constInt(s.receiver->type->ndim); }
ir::Instr* itemsizeLower(const Site& s, Emitter& e) {
  return e.constInt(scalarByteSize(s.receiver->type->scalar));
}
ir::Instr* nbytesLower(const Site& s, Emitter& e) {   // numba: size * itemsize, as intp
  return e.emit(ir::Op::Mul, i64Ty(), {sizeLower(s, e), itemsizeLower(s, e)});
}

}  // namespace

const Rule arrayShape{perDimType, shapeLower};
const Rule arrayStrides{perDimType, stridesLower};
const Rule arraySize{i64Type, sizeLower};
const Rule arrayNdim{i64Type, ndimLower};
const Rule arrayItemsize{i64Type, itemsizeLower};
const Rule arrayNbytes{i64Type, nbytesLower};

}  // namespace cj::typeinfer::rules
