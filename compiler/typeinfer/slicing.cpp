#include "typeinfer/slicing.h"

#include "typeinfer/rules.h"

namespace cj::typeinfer {
namespace {

constexpr const char* kSlice2 = "slice:2";
constexpr const char* kSlice3 = "slice:3";

}  // namespace

bool isSlice(const Type* t) {
  return t->is(TypeKind::Tuple) && !t->elems.empty() && t->elems[0]->is(TypeKind::Symbol) &&
         (t->elems[0]->name == kSlice2 || t->elems[0]->name == kSlice3);
}

bool isFullSlice(const Type* t) {
  if (!isSlice(t)) return false;
  for (size_t k = 1; k < t->elems.size(); ++k)
    if (t->elems[k] != noneTy()) return false;
  return true;
}

namespace {

std::vector<const Type*> indexList(const Type* idx) {
  if (isSlice(idx) || !idx->is(TypeKind::Tuple)) return {idx};
  return idx->elems;
}

// i64 arithmetic in typed IR.
struct Calc {
  Emitter& e;
  ir::Instr* c(int64_t v) { return e.constInt(v); }
  ir::Instr* op(ir::Op o, ir::Instr* a, ir::Instr* b) { return e.emit(o, i64Ty(), {a, b}); }
  ir::Instr* lt(ir::Instr* a, ir::Instr* b) { return e.emit(ir::Op::Lt, boolTy(), {a, b}); }
  ir::Instr* sel(ir::Instr* cond, ir::Instr* a, ir::Instr* b) { return e.emit(ir::Op::Select, i64Ty(), {cond, a, b}); }
  ir::Instr* max(ir::Instr* a, ir::Instr* b) { return sel(lt(a, b), b, a); }
  ir::Instr* min(ir::Instr* a, ir::Instr* b) { return sel(lt(a, b), a, b); }
  // Python's normalisation of a slice bound against a length n.
  ir::Instr* bound(ir::Instr* v, ir::Instr* n, bool up) {
    ir::Instr* wrapped = sel(lt(v, c(0)), op(ir::Op::Add, v, n), v);
    return up ? min(max(wrapped, c(0)), n) : min(max(wrapped, c(-1)), op(ir::Op::Sub, n, c(1)));
  }
};

}  // namespace

bool isViewIndex(const Type* arr, const Type* idx) {
  std::vector<const Type*> list = indexList(idx);
  for (const Type* t : list)
    if (isSlice(t)) return true;
  return static_cast<int>(list.size()) < arr->ndim;
}

const Type* sliceViewType(const FunctionContext& ctx, ir::Instr* in, const Type* arr, const Type* idx) {
  std::vector<const Type*> list = indexList(idx);
  if (static_cast<int>(list.size()) > arr->ndim)
    ctx.fail(in, "getitem", "too many indices for a " + std::to_string(arr->ndim) + "-d array");
  int ndim = 0;
  for (const Type* t : list) {
    if (isSlice(t)) {
      ++ndim;
      for (size_t k = 1; k < t->elems.size(); ++k)
        if (!t->elems[k]->is(TypeKind::None) && !t->elems[k]->isInt() && !t->elems[k]->isBool())
          ctx.fail(in, "slice", "slice bounds must be integers or None, got " + typeToString(t->elems[k]));
    } else if (!t->isInt()) {
      ctx.fail(in, "getitem", "array index must be an integer or a slice, got " + typeToString(t));
    }
  }
  ndim += arr->ndim - static_cast<int>(list.size());
  // numba's layout rule: a C array stays C when the indices are integers
  // on the left and at most an unstrided slice innermost (F: mirrored; A stays A).
  Layout layout = arr->layout;
  if (layout == Layout::C) {
    bool full = static_cast<int>(list.size()) == arr->ndim;
    bool keeps = true;
    if (!full) {
      // Missing trailing dimensions are full slices: every given index must be an integer.
      for (const Type* t : list) keeps = keeps && !isSlice(t);
    } else {
      for (size_t k = 0; k < list.size(); ++k) {
        bool innermost = k + 1 == list.size();
        bool ok = !isSlice(list[k]) || (innermost && list[k]->elems[0]->name == kSlice2);
        keeps = keeps && ok;
      }
    }
    if (!keeps) layout = Layout::A;
  } else if (layout == Layout::F) {
    layout = ndim <= 1 && list.size() == 1 && isSlice(list[0]) && list[0]->elems[0]->name == kSlice2
                 ? Layout::F : Layout::A;
  }
  if (ndim == 0) ctx.fail(in, "getitem", "internal: a view with no dimensions");
  return arrayLike(arr, ndim, layout, arr->space, arr->readonly);
}

ir::Instr* lowerSliceView(const FunctionContext& ctx, ir::Instr* in, Emitter& e) {
  ir::Instr* arr = in->operands[0];
  ir::Instr* idx = in->operands[1];
  const Type* at = arr->type;
  std::vector<ir::Instr*> list =
      isSlice(idx->type) || !idx->type->is(TypeKind::Tuple) ? std::vector<ir::Instr*>{idx} : e.elements(idx);
  Calc k{e};
  ir::Instr* offset = k.c(0);
  std::vector<ir::Instr*> shape, strides;
  for (int d = 0; d < at->ndim; ++d) {
    ir::Instr* n = e.arrayDim(arr, d);
    ir::Instr* stride = e.arrayStride(arr, d);
    if (d >= static_cast<int>(list.size())) {   // a missing trailing index: the whole dimension
      shape.push_back(n);
      strides.push_back(stride);
      continue;
    }
    ir::Instr* ix = list[d];
    if (!isSlice(ix->type)) {   // an integer: this dimension goes (negative wraps)
      ir::Instr* i = e.convert(ix, i64Ty());
      i = k.sel(k.lt(i, k.c(0)), k.op(ir::Op::Add, i, n), i);
      offset = k.op(ir::Op::Add, offset, k.op(ir::Op::Mul, i, stride));
      continue;
    }
    std::vector<ir::Instr*> parts = e.elements(ix);
    int64_t step = 1;
    if (parts.size() > 3 && !parts[3]->type->is(TypeKind::None)) {
      auto s = constantInt(parts[3]);
      if (!s) ctx.fail(in, "slice", "a slice step must be a constant");
      if (*s == 0) ctx.fail(in, "slice", "slice step cannot be zero");
      step = *s;
    }
    bool up = step > 0;
    auto given = [&](size_t p) { return !parts[p]->type->is(TypeKind::None); };
    ir::Instr* start = given(1) ? k.bound(e.convert(parts[1], i64Ty()), n, up)
                                : (up ? k.c(0) : k.op(ir::Op::Sub, n, k.c(1)));
    ir::Instr* stop = given(2) ? k.bound(e.convert(parts[2], i64Ty()), n, up) : (up ? n : k.c(-1));
    // len = max(0, ceil((stop - start) / step)), for either sign of step.
    ir::Instr* span = up ? k.op(ir::Op::Sub, stop, start) : k.op(ir::Op::Sub, start, stop);
    int64_t mag = up ? step : -step;
    ir::Instr* len = k.op(ir::Op::FloorDiv, k.op(ir::Op::Add, span, k.c(mag - 1)), k.c(mag));
    len = k.max(len, k.c(0));
    offset = k.op(ir::Op::Add, offset, k.op(ir::Op::Mul, start, stride));
    shape.push_back(len);
    strides.push_back(step == 1 ? stride : k.op(ir::Op::Mul, stride, k.c(step)));
  }
  std::vector<ir::Instr*> ops = {arr, offset};
  ops.insert(ops.end(), shape.begin(), shape.end());
  ops.insert(ops.end(), strides.begin(), strides.end());
  return e.emit(ir::Op::ArrayView, in->type, ops);
}

namespace rules {
namespace {

const Type* sliceType(const Site& s) {
  s.expectArgs(2, 3);
  std::vector<const Type*> elems = {symbolTy(s.args.size() == 3 ? kSlice3 : kSlice2)};
  for (ir::Instr* a : s.args) {
    if (!a->type->is(TypeKind::None) && !a->type->isInt() && !a->type->isBool())
      s.fail("slice bounds must be integers or None, got " + typeToString(a->type));
    elems.push_back(a->type);
  }
  return tupleTy(elems);
}

ir::Instr* sliceLower(const Site& s, Emitter& e) {
  const char* m = s.args.size() == 3 ? kSlice3 : kSlice2;
  std::vector<ir::Instr*> ops = {e.constant(ir::Const::symbol(m), symbolTy(m))};
  for (ir::Instr* a : s.args) ops.push_back(a);
  return e.emit(ir::Op::TupleMake, s.instr->type, ops);
}

}  // namespace

const Rule slice{sliceType, sliceLower};

}  // namespace rules
}  // namespace cj::typeinfer
