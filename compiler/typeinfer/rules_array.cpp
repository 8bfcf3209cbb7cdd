// Array attributes (attributes.def): shape, strides, size, ndim, itemsize,
// nbytes, T, and the method view(dtype); a namedtuple's fields.
#include <optional>

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
  return e.constInt(arrayItemSize(s.receiver->type));
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
  return arrayLike(t, t->ndim, layout, t->space, t->readonly);
}
ir::Instr* transposeLower(const Site& s, Emitter& e) {
  const Type* t = s.receiver->type;
  if (t->ndim <= 1) return s.receiver;
  std::vector<ir::Instr*> ops = {s.receiver, e.constInt(0)};
  for (ir::Op op : {ir::Op::ArrayDim, ir::Op::ArrayStride})
    for (int d = t->ndim - 1; d >= 0; --d) ops.push_back(e.perDim(op, s.receiver, d));
  return e.emit(ir::Op::ArrayView, transposeType(s), ops);
}

// a.view(dtype): the same memory as another element type (numpy's and
// numba's ndarray.view; what cuFFTDx's real FFTs need: a complex thread
// array seen as reals). Of another item size the last axis changes length
// (n * old // new elements) and must be contiguous, which only a C array's
// is known to be; the attribute is a bound method, (sym method:array.view, a).
constexpr const char* kArrayView = "method:array.view";

const Type* viewAttrType(const Site& s) { return tupleTy({symbolTy(kArrayView), s.receiver->type}); }
ir::Instr* viewAttrLower(const Site& s, Emitter& e) {
  return e.emit(ir::Op::TupleMake, viewAttrType(s),
                {e.constant(ir::Const::symbol(kArrayView), symbolTy(kArrayView)), s.receiver});
}

const Type* viewCallType(const Site& s) {
  s.expectArgs(1);
  const Type* from = s.receiver->type->elems[1];
  const Type* to = itemDtypeOf(s.args[0]);
  if (!to)
    s.fail("view(): the argument must be a numpy dtype (np.float32, ...) or a vector type (float16x2), got " +
           typeToString(s.argType(0)));
  if (from->record) s.fail("view(): an array of records has no view as another type here");
  const int64_t old_size = arrayItemSize(from), new_size = itemSize(to);
  if (old_size != new_size) {
    if (from->ndim == 0 || from->layout != Layout::C)
      s.fail("view(): a view as " + typeToNumbaString(to) + " changes the item size, which needs the "
             "last axis contiguous: a C-contiguous array, got " + typeToString(from),
             "declare the argument C-contiguous (float32[:, ::1]) or view a local / shared array");
  }
  // Vector loads assume the item's alignment: only memory cudajit placed
  // (local and shared arrays, aligned to 16 bytes) is known to have it.
  if (isVectorType(to) && itemAlign(to) > itemAlign(arrayElementType(from)) && from->space != MemSpace::Local &&
      from->space != MemSpace::Shared)
    s.fail("view(): a view of " + typeToString(from) + " as " + typeToNumbaString(to) + " needs " +
               std::to_string(itemAlign(to)) + "-byte aligned items, which only local and shared arrays are "
               "known to have",
           "copy the data into a cuda.local.array / cuda.shared.array of " + typeToNumbaString(to));
  return arrayOfItems(to, from->ndim, from->layout, from->space, from->readonly);
}

ir::Instr* viewCallLower(const Site& s, Emitter& e) {
  ir::Instr* arr = e.element(s.receiver, 1);
  const Type* from = arr->type;
  const Type* to = viewCallType(s);
  const int64_t old_size = arrayItemSize(from), new_size = arrayItemSize(to);
  std::vector<ir::Instr*> shape, strides;
  for (int d = 0; d < from->ndim; ++d) {
    shape.push_back(e.arrayDim(arr, d));
    strides.push_back(e.arrayStride(arr, d));
  }
  if (old_size != new_size) {
    ir::Instr* bytes = e.emit(ir::Op::Mul, i64Ty(), {shape.back(), e.constInt(old_size)});
    shape.back() = e.emit(ir::Op::FloorDiv, i64Ty(), {bytes, e.constInt(new_size)});
    strides.back() = e.constInt(new_size);
  }
  std::vector<ir::Instr*> ops = {arr, e.constInt(0)};
  ops.insert(ops.end(), shape.begin(), shape.end());
  ops.insert(ops.end(), strides.begin(), strides.end());
  return e.emit(ir::Op::ArrayView, to, ops);
}

// p.x of a namedtuple: the element at the field's position.
const Type* fieldType(const Site& s) {
  return s.receiver->type->elems[static_cast<size_t>(namedTupleField(s.receiver->type, s.name))];
}
ir::Instr* fieldLower(const Site& s, Emitter& e) {
  return e.element(s.receiver, namedTupleField(s.receiver->type, s.name));
}

}  // namespace

const Rule tupleFieldAttr{fieldType, fieldLower};
const Rule arrayViewAttr{viewAttrType, viewAttrLower};
const Rule arrayViewCall{viewCallType, viewCallLower};
const Rule arrayShape{perDimType, shapeLower};
const Rule arrayStrides{perDimType, stridesLower};
const Rule arraySize{i64Type, sizeLower};
const Rule arrayNdim{i64Type, ndimLower};
const Rule arrayItemsize{i64Type, itemsizeLower};
const Rule arrayNbytes{i64Type, nbytesLower};
const Rule arrayTranspose{transposeType, transposeLower};

}  // namespace cj::typeinfer::rules
