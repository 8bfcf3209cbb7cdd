// Array attributes (attributes.def): shape, strides, size, ndim, itemsize,
// nbytes, T.
#include "typeinfer/rules.h"

namespace cj::typeinfer::rules {
namespace {

const Type* perDimType(const Site& s) {
  return tupleTy(std::vector<const Type*>(s.receiver->type->ndim, i64Ty()));
}

ir::Instr* perDimLower(const Site& s, Emitter& e, ir::Op op) {
  std::vector<ir::Instr*> dims;
  for (int d = 0; d < s.receiver->type->ndim; ++d) dims.push_back(e.perDim(op, s.receiver, d));
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

// a.T: the same memory with the dimensions reversed (a view; C order becomes
// F order and back). A 1-D array's .T is itself, as numpy's.
const Type* transposeType(const Site& s) {
  const Type* t = s.receiver->type;
  Layout layout = t->ndim <= 1 ? t->layout
                  : t->layout == Layout::C ? Layout::F
                  : t->layout == Layout::F ? Layout::C
                                           : Layout::A;
  return arrayTy(t->scalar, t->ndim, layout, t->space, t->readonly);
}
ir::Instr* transposeLower(const Site& s, Emitter& e) {
  const Type* t = s.receiver->type;
  if (t->ndim <= 1) return s.receiver;
  std::vector<ir::Instr*> ops = {s.receiver, e.constInt(0)};
  for (ir::Op op : {ir::Op::ArrayDim, ir::Op::ArrayStride})
    for (int d = t->ndim - 1; d >= 0; --d) ops.push_back(e.perDim(op, s.receiver, d));
  return e.emit(ir::Op::ArrayView, transposeType(s), ops);
}

}  // namespace

const Rule arrayShape{perDimType, shapeLower};
const Rule arrayStrides{perDimType, stridesLower};
const Rule arraySize{i64Type, sizeLower};
const Rule arrayNdim{i64Type, ndimLower};
const Rule arrayItemsize{i64Type, itemsizeLower};
const Rule arrayNbytes{i64Type, nbytesLower};
const Rule arrayTranspose{transposeType, transposeLower};

}  // namespace cj::typeinfer::rules
