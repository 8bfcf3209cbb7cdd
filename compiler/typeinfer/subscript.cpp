#include "typeinfer/subscript.h"

#include "typeinfer/conversion.h"
#include "typeinfer/mathdx_tensors.h"
#include "typeinfer/records.h"
#include "typeinfer/slicing.h"
#include "typeinfer/tile_rules.h"

namespace cj::typeinfer {
namespace {

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

// The positions t[start:stop:step] takes from a tuple (MM.b_dim[::-1]); the
// bounds must be constants or None.
std::vector<int64_t> tupleSlice(const FunctionContext& ctx, ir::Instr* in, const Type* tup, ir::Instr* idx) {
  std::optional<int64_t> b[3];
  if (!constantSliceBounds(idx, b))
    ctx.fail(in, "getitem", "a tuple is sliced with constant bounds only (the tuple is " + typeToString(tup) + ")");
  if (b[2] && *b[2] == 0) ctx.fail(in, "getitem", "slice step cannot be zero");
  return slicePositions(static_cast<int64_t>(tup->elems.size()), b[0], b[1], b[2].value_or(1));
}

// t[i] with i known only at run time, of a tuple whose elements share one
// type (numba's UniTuple getitem): a chain of selects over the elements,
// negative indices from the end as in Python. An index out of range gives
// element 0 (numba-cuda reads past the tuple's storage there).
bool isRuntimeIndexOfUniformTuple(const Type* tup, const ir::Instr* idx) {
  if (!idx->type->isInt() || constantInt(idx) || tup->elems.empty()) return false;
  for (const Type* t : tup->elems)
    if (t != tup->elems[0]) return false;
  return true;
}

ir::Instr* lowerRuntimeTupleIndex(ir::Instr* tuple, ir::Instr* idx, Emitter& e) {
  const int64_t n = static_cast<int64_t>(tuple->type->elems.size());
  ir::Instr* i = e.convert(idx, i64Ty());
  ir::Instr* zero = e.constInt(0);
  ir::Instr* wrapped = e.emit(ir::Op::Add, i64Ty(), {i, e.constInt(n)});
  i = e.emit(ir::Op::Select, i64Ty(), {e.emit(ir::Op::Lt, boolTy(), {i, zero}), wrapped, i});
  ir::Instr* r = e.element(tuple, 0);
  for (int64_t k = 1; k < n; ++k)
    r = e.emit(ir::Op::Select, r->type, {e.emit(ir::Op::Eq, boolTy(), {i, e.constInt(k)}), e.element(tuple, k), r});
  return r;
}

std::vector<ir::Instr*> arrayIndices(ir::Instr* idx, Emitter& e) {
  std::vector<ir::Instr*> raw = idx->type->is(TypeKind::Tuple) ? e.elements(idx)
                                                              : std::vector<ir::Instr*>{idx};
  for (ir::Instr*& i : raw) i = e.convert(i, i64Ty());
  return raw;
}

}  // namespace

const Type* getItemType(const FunctionContext& ctx, ir::Instr* in) {
  const Type* obj = in->operands[0]->type;
  const Type* idx = in->operands[1]->type;
  if (mathdx_tensors::isTensor(obj)) return mathdx_tensors::itemType(ctx, in, obj, idx);
  if (obj->is(TypeKind::Array)) {
    if (isViewIndex(obj, idx)) return sliceViewType(ctx, in, obj, idx);   // slicing.h
    indexTypes(ctx, in, obj, idx);
    return arrayElementType(obj);   // of an array of records: the item, a reference
  }
  if (isRecord(obj)) return recordGetItemType(ctx, in);
  if (obj->isTile()) return tileGetItemType(ctx, in);
  if (isOptional(obj))
    ctx.fail(in, "getitem", typeToString(obj) + " (a number or None) is not subscriptable");
  if (obj->is(TypeKind::Tuple) && isSlice(idx)) {
    std::vector<const Type*> elems;
    for (int64_t i : tupleSlice(ctx, in, obj, in->operands[1])) elems.push_back(obj->elems[i]);
    return tupleTy(elems);
  }
  if (obj->is(TypeKind::Tuple) && isRuntimeIndexOfUniformTuple(obj, in->operands[1])) return obj->elems[0];
  if (obj->is(TypeKind::Tuple)) return obj->elems[tupleIndex(ctx, in, obj, in->operands[1])];
  ctx.fail(in, "getitem", typeToString(obj) + " is not subscriptable");
}

ir::Instr* lowerGetItem(const FunctionContext& ctx, ir::Instr* in, Emitter& e) {
  ir::Instr* obj = in->operands[0];
  if (mathdx_tensors::isTensor(obj->type))   // a register fragment's item: its buffer's
    return e.emit(ir::Op::ArrayLoad, in->type, {e.element(obj, 1), e.convert(in->operands[1], i64Ty())});
  if (obj->type->isTile()) return lowerTileGetItem(ctx, in, e);
  if (obj->type->is(TypeKind::Tuple) && isSlice(in->operands[1]->type)) {
    std::vector<ir::Instr*> elems;
    for (int64_t i : tupleSlice(ctx, in, obj->type, in->operands[1])) elems.push_back(e.element(obj, i));
    return e.emit(ir::Op::TupleMake, in->type, elems);
  }
  if (obj->type->is(TypeKind::Tuple) && isRuntimeIndexOfUniformTuple(obj->type, in->operands[1]))
    return lowerRuntimeTupleIndex(obj, in->operands[1], e);
  if (obj->type->is(TypeKind::Tuple)) {
    return e.element(obj, tupleIndex(ctx, in, obj->type, in->operands[1]));
  }
  if (isRecord(obj->type)) return lowerRecordGet(obj, *constantFieldName(obj->type, in->operands[1]), in->type, e);
  if (in->type->is(TypeKind::Array)) return lowerSliceView(ctx, in, e);
  std::vector<ir::Instr*> operands = {obj};
  for (ir::Instr* i : arrayIndices(in->operands[1], e)) operands.push_back(i);
  return e.emit(ir::Op::ArrayLoad, in->type, operands);
}

void checkSetItem(const FunctionContext& ctx, ir::Instr* in) {
  const Type* obj = in->operands[0]->type;
  const Type* val = in->operands[2]->type;
  if (mathdx_tensors::isTensor(obj)) {
    mathdx_tensors::itemType(ctx, in, obj, in->operands[1]->type);
    if (!val->isScalar()) ctx.fail(in, "setitem", "cannot store " + typeToString(val) + " into a register fragment");
    return;
  }
  if (isRecord(obj)) {   // r['x'] = v
    auto name = constantFieldName(obj, in->operands[1]);
    if (!name)
      ctx.fail(in, "setitem",
               "a record is indexed by a constant field name or position (r['x'] = v, r[0] = v), got " +
                   typeToString(in->operands[1]->type));
    checkRecordStore(ctx, in, obj, *name, val, "setitem");
    return;
  }
  if (!obj->is(TypeKind::Array))
    ctx.fail(in, "setitem", typeToString(obj) + " does not support item assignment");
  if (obj->readonly) ctx.fail(in, "setitem", "cannot assign to a readonly array " + typeToString(obj));
  if (isViewIndex(obj, in->operands[1]->type))
    ctx.fail(in, "setitem", "assigning to a slice of an array is not supported",
             "assign element by element in a loop");
  indexTypes(ctx, in, obj, in->operands[1]->type);
  if (obj->record) return checkRecordItemStore(ctx, in, obj, val);   // a[i] = b[j]
  if (obj->vector) {   // a vector of the array's type, or a complex number into float16x2 & co
    if (val != obj->vector && !(val->isComplex() && isComplexPairVector(obj->vector)))
      ctx.fail(in, "setitem",
               "cannot store " + typeToNumbaString(val) + " into an array of " + vectorName(obj->vector),
               "build the item with " + vectorName(obj->vector) + "(...)");
    return;
  }
  if (isComplexPairVector(val) && scalarKind(obj->scalar) == ScalarKind::Complex) return;   // float16x2 & co into a complex array
  if (!val->isScalar() || scalarConversion(val->scalar, obj->scalar) == Conversion::None)
    ctx.fail(in, "setitem",
             "cannot store " + typeToString(val) + " into an array of " +
                 std::string(scalarShortName(obj->scalar)));
}

void lowerSetItem(const FunctionContext& ctx, ir::Instr* in, Emitter& e) {
  ir::Instr* arr = in->operands[0];
  if (mathdx_tensors::isTensor(arr->type)) {
    ir::Instr* buffer = e.element(arr, 1);
    e.emit(ir::Op::ArrayStore, voidTy(),
           {buffer, e.convert(in->operands[1], i64Ty()), e.convert(in->operands[2], arrayElementType(buffer->type))});
    return;
  }
  if (isRecord(arr->type))
    return lowerRecordStore(arr, *constantFieldName(arr->type, in->operands[1]), in->operands[2], e);
  std::vector<ir::Instr*> operands = {arr};
  for (ir::Instr* i : arrayIndices(in->operands[1], e)) operands.push_back(i);
  if (arr->type->record) {   // a whole record: the item's reference, then its bytes
    ir::Instr* item = e.emit(ir::Op::ArrayLoad, arrayElementType(arr->type), operands);
    e.emit(ir::Op::RecordCopy, voidTy(), {item, in->operands[2]});
    return;
  }
  operands.push_back(e.convert(in->operands[2], arrayElementType(arr->type)));
  e.emit(ir::Op::ArrayStore, voidTy(), operands);
}

}  // namespace cj::typeinfer
