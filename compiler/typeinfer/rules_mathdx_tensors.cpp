// cuBLASDx's tensor API in kernels (mathdx_tensors.h says what the values
// are): make_tensor, copy, copy_fragment, clear, copy_wait, axpby, a
// Matmul's layouts and MM.execute on tensors; accumulators are in
// rules_mathdx_accumulators.cpp. A call is checked during the fixpoint, where
// its device function is planned; the planned functions are made side by
// side before the first lowering (mathdx_tensor_calls.h).
#include <optional>
#include <string>
#include <vector>

#include "typeinfer/infer.h"
#include "typeinfer/mathdx_tensor_calls.h"
#include "typeinfer/rules.h"
#include "typeinfer/specializer.h"

namespace cj::typeinfer {
namespace mathdx_tensors {
namespace {

// nvmath's layout methods -> cublasdxTensorType's name.
const struct {
  std::string_view method, tensor;
} kLayoutMethods[] = {
    {"get_layout_gmem_a", "gmem_a"},           {"get_layout_gmem_b", "gmem_b"},
    {"get_layout_gmem_c", "gmem_c"},           {"get_layout_smem_a", "smem_a"},
    {"get_layout_smem_b", "smem_b"},           {"get_layout_smem_c", "smem_c"},
    {"suggest_layout_smem_a", "suggested_smem_a"}, {"suggest_layout_smem_b", "suggested_smem_b"},
    {"suggest_layout_smem_c", "suggested_smem_c"}, {"suggest_layout_rmem_c", "suggested_rmem_c"},
    {"get_layout_rmem_c", "rmem_c"},
};

std::string_view tensorOfMethod(std::string_view method) {
  for (const auto& row : kLayoutMethods)
    if (method == row.method) return row.tensor;
  return {};
}

// copy / copy_fragment's alignment: absent, None, or a constant 1, 2, 4, 8 or 16.
int64_t alignmentArg(const Site& s, const std::string& construct) {
  const ir::Instr* v = s.args.size() > 2 ? s.args[2] : nullptr;
  for (size_t k = 0; k < s.kw_names.size(); ++k) {
    if (s.kw_names[k] != "alignment") fail(s, construct, construct + "() got an unexpected keyword '" + s.kw_names[k] + "'");
    v = s.kw_args[k];
  }
  if (!v || v->type->is(TypeKind::None)) return 0;
  std::optional<int64_t> a = constantInt(v);
  if (!a || (*a != 1 && *a != 2 && *a != 4 && *a != 8 && *a != 16))
    fail(s, construct, construct + "'s alignment must be a constant 1, 2, 4, 8 or 16 (bytes)");
  return *a;
}

Call analyzeApi(const Site& s, std::string_view fn) {
  Call c;
  c.construct = std::string(fn);
  c.function = c.construct;
  if (fn == "copy" || fn == "copy_fragment") {
    if (s.args.size() < 2 || s.args.size() > 3)
      fail(s, c.construct, c.construct + " takes (src, dst[, alignment]), got " + std::to_string(s.argCount()) + " arguments");
    Ref src = tensorArg(s, c.construct, 0, "src"), dst = tensorArg(s, c.construct, 1, "dst");
    const bool registers = isRegister(src.tensor) || isRegister(dst.tensor);
    if (fn == "copy" && registers)
      fail(s, c.construct, "copy does not take register tensors", "use copy_fragment for a register fragment");
    if (fn == "copy_fragment" && !registers)
      fail(s, c.construct, "copy_fragment copies to or from a register fragment", "use copy between shared and global tensors");
    if (matrixOf(src.tensor) != matrixOf(dst.tensor))
      fail(s, c.construct, c.construct + " copies between tensors of one matrix; got " + src.tensor + " and " + dst.tensor);
    c.alignment = alignmentArg(s, c.construct);
    c.function = "copy";
    c.mm_key = src.mm_key;
    c.tensors = {tensorRef(src), tensorRef(dst)};
    c.operands = {0, 1};
  } else if (fn == "clear") {
    if (s.args.size() != 1 || !s.kw_args.empty()) fail(s, c.construct, "clear takes one tensor");
    Ref t = tensorArg(s, c.construct, 0, "argument");
    if (!isRegister(t.tensor)) fail(s, c.construct, "clear takes a register fragment, got a " + t.tensor + " tensor");
    c.mm_key = t.mm_key;
    c.tensors = {tensorRef(t)};
    c.operands = {0};
  } else if (fn == "copy_wait") {
    if (s.argCount() != 0) fail(s, c.construct, "copy_wait takes no arguments");
  } else if (fn == "axpby") {
    if (s.args.size() != 4 || !s.kw_args.empty()) fail(s, c.construct, "axpby takes (alpha, x, beta, y)");
    Ref x = tensorArg(s, c.construct, 1, "x"), y = tensorArg(s, c.construct, 3, "y");
    if (!isRegister(x.tensor) || !isRegister(y.tensor))
      fail(s, c.construct, "axpby takes register fragments, got " + x.tensor + " and " + y.tensor);
    for (size_t i : {size_t{0}, size_t{2}})
      if (!s.argType(i)->is(TypeKind::Scalar))
        fail(s, c.construct, std::string(i ? "beta" : "alpha") + " must be a number, got " + typeToString(s.argType(i)));
    c.mm_key = x.mm_key;
    c.tensors = {tensorRef(x), tensorRef(y)};
    c.operands = {0, 1, 2, 3};
    c.scales = {0, 2};
    c.scale_of = {x, y};
  } else {
    fail(s, "cudajit.mathdx." + c.construct, "cudajit.mathdx." + c.construct + " is not callable inside kernels");
  }
  return c;
}

// MM.execute(a, b, c) with C a register fragment (C += A B), or
// MM.execute(alpha, a, b, beta, c) with C a shared tensor.
Call analyzeExecute(const Site& s, std::string_view mm_key) {
  Call c;
  c.construct = "Matmul.execute";
  c.function = "execute";
  c.mm_key = std::string(mm_key);
  const bool registers = s.args.size() == 3;
  if ((s.args.size() != 3 && s.args.size() != 5) || !s.kw_args.empty())
    fail(s, c.construct, "Matmul.execute on tensors takes (a, b, c) with c a register fragment, or (alpha, a, b, beta, c)");
  const size_t at = registers ? 0 : 1;
  Ref a = tensorArg(s, c.construct, at, "a"), b = tensorArg(s, c.construct, at + 1, "b"),
      cc = tensorArg(s, c.construct, registers ? 2 : 4, "c");
  for (const Ref* r : {&a, &b, &cc})
    if (r->mm_key != mm_key)
      fail(s, c.construct, "the tensors must come from this Matmul's layouts (a tensor of descriptor " + r->mm_key + ")");
  if (!isShared(a.tensor) || matrixOf(a.tensor) != 'a' || !isShared(b.tensor) || matrixOf(b.tensor) != 'b')
    fail(s, c.construct, "a and b must be shared-memory tensors of A and B, got " + a.tensor + " and " + b.tensor);
  if (registers != isRegister(cc.tensor))
    fail(s, c.construct,
         registers ? "with 3 arguments c must be a register fragment (suggest_layout_rmem_c) or an accumulator, got " +
                         cc.tensor
                   : "with alpha and beta c must be a shared-memory tensor, got " + cc.tensor);
  c.tensors = {tensorRef(a), tensorRef(b), tensorRef(cc)};
  if (registers) {
    c.operands = {0, 1, 2};
  } else {
    c.operands = {0, 1, 2, 3, 4};
    c.scales = {0, 3};
    c.scale_of = {cc, cc};
  }
  return c;
}

// make_tensor(array, layout): the tensor; an array of another item type than
// the layout's makes a tensor like it (cublasdxMakeTensorLike), as nvmath does.
const Type* makeTensorType(const Site& s, Ref* ref) {
  const std::string construct = "make_tensor";
  if (s.args.size() != 2 || !s.kw_args.empty()) fail(s, construct, "make_tensor takes (array, layout)");
  const Type* array = s.argType(0);
  if (!array->is(TypeKind::Array))
    fail(s, construct, "make_tensor's first argument must be an array, got " + typeToString(array));
  if (!layoutOf(s.argType(1), ref))
    fail(s, construct,
         "make_tensor's layout must be a Matmul's layout (MM.suggest_layout_smem_a(), MM.get_layout_gmem_c(), ...), got " +
             typeToString(s.argType(1)));
  const Type* item = arrayElementType(array);
  if (item != itemOf(s, construct, *ref)) {
    if (!item->isScalar() || isAccumulator(ref->tensor) || !ref->like.empty())
      fail(s, construct,
           "the array's items are " + typeToString(item) + ", the layout's " + typeToString(itemOf(s, construct, *ref)),
           "make the array of the layout's value type");
    ref->like = std::string(scalarNumbaName(item->scalar));   // a tensor like the layout's (cublasdxMakeTensorLike)
  }
  const MemSpace want = isGlobal(ref->tensor) ? MemSpace::Global : isShared(ref->tensor) ? MemSpace::Shared : MemSpace::Local;
  if (array->space != want && !(want == MemSpace::Global && array->space == MemSpace::Const))
    fail(s, construct, "a " + ref->tensor + " layout takes a " +
                           (want == MemSpace::Global ? "global" : want == MemSpace::Shared ? "shared-memory" : "local") +
                           " array, got " + typeToString(array));
  return tensorType(*ref, array);
}

}  // namespace

const Type* typeOf(const Site& s, std::string_view mm_key, std::string_view method);

bool isSymbol(std::string_view name) {
  return name.rfind(kLayoutPrefix, 0) == 0 || name.rfind(kTensorPrefix, 0) == 0 || name.rfind(kApiPrefix, 0) == 0;
}

bool isLayoutMethod(std::string_view method) { return !tensorOfMethod(method).empty(); }
bool isAccumulatorMethod(std::string_view method) { return !accumulatorOfMethod(method).empty(); }

bool isTensor(const Type* t) {
  Ref r;
  return tensorOf(t, &r);
}

bool isMethod(std::string_view name) { return name.rfind(kMethodPrefix, 0) == 0; }

namespace {

// Records what a typed site will instantiate (plan); `t` is its type.
void planSite(const Site& s, std::string_view mm_key, std::string_view method, const Type* t) {
  const std::string_view fn = mm_key.empty() && !isMethod(s.name) ? s.name.substr(kApiPrefix.size()) : std::string_view();
  if (isMethod(s.name) || (!mm_key.empty() && isAccumulatorMethod(method)) || fn == "make_fragment_like")
    return planAccumulatorSite(s, mm_key, method, t);
  if (!mm_key.empty() && isLayoutMethod(method)) return;
  if (!mm_key.empty()) return plan(s, analyzeExecute(s, mm_key));
  if (fn != "make_tensor") plan(s, analyzeApi(s, fn));
}

}  // namespace

const Type* type(const Site& s, std::string_view mm_key, std::string_view method) {
  const Type* t = typeOf(s, mm_key, method);
  planSite(s, mm_key, method, t);
  return t;
}

const Type* typeOf(const Site& s, std::string_view mm_key, std::string_view method) {
  if (isMethod(s.name)) return methodType(s);
  if (!mm_key.empty() && isLayoutMethod(method)) {
    const std::string tensor(tensorOfMethod(method));
    const std::string construct = "Matmul." + std::string(method);
    const std::string name = std::string(kLayoutPrefix) + std::string(mm_key) + "." + tensor;
    if (!isGlobal(tensor)) {
      if (s.argCount() != 0) fail(s, construct, construct + " takes no arguments");
      return symbolTy(name);
    }
    if (s.argCount() > 1 || (s.args.size() == 1 && !s.argType(0)->isInt()))
      fail(s, construct, construct + " takes an optional integer leading dimension");
    return tupleTy({symbolTy(name), i64Ty()});
  }
  if (!mm_key.empty() && isAccumulatorMethod(method)) return accumulatorType(s, mm_key, method);
  if (!mm_key.empty()) {
    analyzeExecute(s, mm_key);
    return noneTy();
  }
  const std::string_view fn = s.name.substr(kApiPrefix.size());
  Ref r;
  if (fn == "make_tensor") return makeTensorType(s, &r);
  if (fn == "make_fragment_like") return fragmentLikeType(s, &r);
  analyzeApi(s, fn);
  return noneTy();
}

ir::Instr* lower(const Site& s, Emitter& e, std::string_view mm_key, std::string_view method) {
  prefetch();
  if (isMethod(s.name)) return methodLower(s, e);
  if (!mm_key.empty() && isLayoutMethod(method)) {
    const Type* t = typeOf(s, mm_key, method);
    if (t->is(TypeKind::Symbol)) return e.constant(ir::Const::symbol(t->name), t);
    ir::Instr* ld;
    if (!s.args.empty()) {
      ld = e.convert(s.args[0], i64Ty());
    } else {   // the Matmul's leading dimension, as nvmath's default
      Ref r;
      parse(t->elems[0]->name, kLayoutPrefix, &r);
      ld = e.constInt(matmulOf(s, "Matmul." + std::string(method), r)->leading_dimension[matrixOf(r.tensor) - 'a']);
    }
    return e.emit(ir::Op::TupleMake, t, {e.constant(ir::Const::symbol(t->elems[0]->name), t->elems[0]), ld});
  }
  if (!mm_key.empty() && isAccumulatorMethod(method)) return accumulatorLower(s, e, mm_key, method);
  const std::string_view fn = mm_key.empty() ? s.name.substr(kApiPrefix.size()) : std::string_view();
  if (fn == "make_tensor") {
    Ref r;
    const Type* t = makeTensorType(s, &r);
    std::vector<ir::Instr*> elems = {marker(e, r), s.args[0]};
    if (isGlobal(r.tensor)) {
      if (s.argType(1)->is(TypeKind::Tuple))
        elems.push_back(e.convert(e.element(s.args[1], 1), i64Ty()));
      else
        elems.push_back(e.constInt(r.ld ? *r.ld : matmulOf(s, "make_tensor", r)->leading_dimension[matrixOf(r.tensor) - 'a']));
    }
    return e.emit(ir::Op::TupleMake, t, elems);
  }
  if (fn == "make_fragment_like") return fragmentLikeLower(s, e);
  const Call c = !mm_key.empty() ? analyzeExecute(s, mm_key) : analyzeApi(s, fn);
  std::vector<ir::Instr*> operands;
  for (size_t i : c.operands) {
    ir::Instr* v = s.args[i];
    for (size_t k = 0; k < c.scales.size(); ++k)
      if (c.scales[k] == i) v = e.convert(v, itemOf(s, c.construct, c.scale_of[k]));
    operands.push_back(v);
  }
  return emitCall(s, e, c, std::move(operands));
}

// layout.size / cosize / alignment / uid of a shared or register layout in a
// kernel: libmathdx's traits, as constants.
bool layoutAttribute(const Site& s, const Type* layout, int64_t* value) {
  Ref r;
  if (!layout->is(TypeKind::Symbol) || !parse(layout->name, kLayoutPrefix, &r)) return false;
  const std::string construct = "layout." + std::string(s.name);
  if (isGlobal(r.tensor))
    fail(s, construct, "a global layout's " + std::string(s.name) + " is not known inside kernels",
         "read it on the host (MM.get_layout_gmem_a().cosize)");
  const mathdx::TensorTraits t = traitsOf(s, construct, r);
  const Type* item = itemOf(s, construct, r);
  const int64_t bytes = item->isScalar() ? scalarByteSize(item->scalar) : 1;
  if (s.name == "size") *value = t.logical_size;
  else if (s.name == "cosize") *value = t.storage_bytes / std::max<int64_t>(bytes, 1);
  else if (s.name == "alignment") *value = t.alignment;
  else if (s.name == "uid") *value = t.uid;
  else fail(s, construct, "a layout has size, cosize, alignment and uid in kernels, not '" + std::string(s.name) + "'");
  return true;
}

}  // namespace mathdx_tensors

namespace rules {
// layout.cosize & co of a layout symbol (sites.cpp routes a layout's attributes here).
const Rule mathdxLayoutAttr{
    [](const Site& s) {
      int64_t v = 0;
      mathdx_tensors::layoutAttribute(s, s.receiver->type, &v);
      return i64Ty();
    },
    [](const Site& s, Emitter& e) {
      int64_t v = 0;
      mathdx_tensors::layoutAttribute(s, s.receiver->type, &v);
      return e.constInt(v);
    }};
// acc.<method> of an accumulator: the bound method (sym method:mathdx.<name>, acc).
const Rule mathdxTensorAttr{
    [](const Site& s) { return mathdx_tensors::attributeType(s, s.receiver->type); },
    [](const Site& s, Emitter& e) { return mathdx_tensors::attributeLower(s, e, s.receiver); }};
}  // namespace rules
}  // namespace cj::typeinfer
