// cuBLASDx's tensor API in kernels (mathdx_tensors.h says what the values
// are). A call is checked during the fixpoint; its device function is made
// by libmathdx when the call is lowered (once), cached as the routines are.
#include <cctype>
#include <optional>
#include <string>
#include <vector>

#include "mathdx/mathdx.h"
#include "typeinfer/infer.h"
#include "typeinfer/library_calls.h"
#include "typeinfer/mathdx_tensors.h"
#include "typeinfer/rules.h"
#include "typeinfer/specializer.h"

namespace cj::typeinfer::mathdx_tensors {
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

bool isGlobal(const std::string& tensor) { return tensor.rfind("gmem_", 0) == 0; }
bool isRegister(const std::string& tensor) { return tensor.find("rmem_") != std::string::npos; }
bool isShared(const std::string& tensor) { return tensor.find("smem_") != std::string::npos; }
char matrixOf(const std::string& tensor) { return tensor.back(); }   // 'a', 'b' or 'c'

// A layout or tensor as its symbol names it: <mm key>.<tensor>[.<like>][.ld<N>].
struct Ref {
  std::string mm_key, tensor, like;
  std::optional<int64_t> ld;   // a global layout's leading dimension fixed on the host
};

bool parse(std::string_view name, std::string_view prefix, Ref* out) {
  if (name.rfind(prefix, 0) != 0) return false;
  std::vector<std::string> parts;
  std::string_view rest = name.substr(prefix.size());
  while (!rest.empty()) {
    const size_t dot = rest.find('.');
    parts.emplace_back(rest.substr(0, dot));
    rest = dot == std::string_view::npos ? std::string_view() : rest.substr(dot + 1);
  }
  if (parts.size() < 2) return false;
  out->mm_key = parts[0];
  out->tensor = parts[1];
  for (size_t i = 2; i < parts.size(); ++i) {
    if (parts[i].rfind("ld", 0) == 0 && parts[i].size() > 2 && isdigit(static_cast<unsigned char>(parts[i][2])))
      out->ld = std::stoll(parts[i].substr(2));
    else
      out->like = parts[i];
  }
  return true;
}

std::string refText(const Ref& r) { return r.mm_key + "." + r.tensor + (r.like.empty() ? "" : "." + r.like); }

// A layout value: its symbol, or (symbol, ld) for a global layout made in the kernel.
bool layoutOf(const Type* t, Ref* out) {
  if (t->is(TypeKind::Symbol)) return parse(t->name, kLayoutPrefix, out);
  return t->is(TypeKind::Tuple) && t->elems.size() == 2 && t->elems[0]->is(TypeKind::Symbol) &&
         parse(t->elems[0]->name, kLayoutPrefix, out) && t->elems[1]->isInt();
}

bool tensorOf(const Type* t, Ref* out) {
  return t->is(TypeKind::Tuple) && (t->elems.size() == 2 || t->elems.size() == 3) &&
         t->elems[0]->is(TypeKind::Symbol) && parse(t->elems[0]->name, kTensorPrefix, out) &&
         t->elems[1]->is(TypeKind::Array);
}

[[noreturn]] void fail(const Site& s, const std::string& construct, const std::string& message,
                       const std::string& hint = {}) {
  s.ctx.fail(s.instr, construct, message, hint);
}

std::shared_ptr<const mathdx::MatmulResult> matmulOf(const Site& s, const std::string& construct, const Ref& r) {
  auto mm = mathdx::servedResult(r.mm_key);
  if (!mm) fail(s, construct, "this layout's Matmul was not built in this process (descriptor " + r.mm_key + ")");
  return mm;
}

// The item type of a layout's tensors: its "like" type, else its matrix's.
const Type* itemOf(const Site& s, const std::string& construct, const Ref& r) {
  const std::string name = !r.like.empty() ? r.like : matmulOf(s, construct, r)->value_type[matrixOf(r.tensor) - 'a'];
  const Type* t = mathdxValueItemType(name);
  if (!t) fail(s, construct, "the value type " + name + " has no array type in cudajit kernels");
  return t;
}

std::string tensorName(const Ref& r) { return std::string(kTensorPrefix) + refText(r); }

const Type* tensorType(const Ref& r, const Type* array) {
  std::vector<const Type*> elems = {symbolTy(tensorName(r)), array};
  if (isGlobal(r.tensor)) elems.push_back(i64Ty());
  return tupleTy(elems);
}

// A tensor argument, or a clear failure naming what the function takes.
Ref tensorArg(const Site& s, const std::string& construct, size_t i, const std::string& what) {
  Ref r;
  if (i >= s.args.size() || !tensorOf(s.argType(i), &r))
    fail(s, construct,
         construct + "'s " + what + " must be a tensor (make_tensor(array, layout)), got " +
             (i < s.args.size() ? typeToString(s.argType(i)) : std::string("nothing")));
  return r;
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

// What a call is: the function of libmathdx it becomes, its tensors and the
// operands in the order the device function takes them.
struct Call {
  std::string construct, function, mm_key;
  std::vector<mathdx::TensorRef> tensors;
  int64_t alignment = 0;
  std::vector<size_t> operands;   // argument positions
  std::vector<size_t> scales;     // of those, the positions converted to a tensor's item type (alpha, beta) ...
  std::vector<Ref> scale_of;      // ... and that tensor
};

mathdx::TensorRef tensorRef(const Ref& r) { return {r.tensor, r.like}; }

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
         registers ? "with 3 arguments c must be a register fragment (suggest_layout_rmem_c), got " + cc.tensor
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

std::shared_ptr<const mathdx::TensorFunctionResult> instantiate(const Site& s, const Call& c) {
  mathdx::TensorFunctionSpec spec;
  spec.function = c.function;
  spec.tensors = c.tensors;
  spec.alignment = c.alignment;
  if (c.mm_key.empty()) {
    // copy_wait waits for every copy of the thread, whatever its GEMM: a
    // descriptor of its own (libmathdx makes the same function from any).
    spec.matmul.size = {1, 1, 1};
    spec.matmul.precision = {"float32", "float32", "float32"};
    spec.matmul.block_dim = {32, 1, 1};
    spec.matmul.sm = s.ctx.specializer().options().arch;
  } else if (!mathdx::servedMatmulSpec(c.mm_key, &spec.matmul)) {
    fail(s, c.construct, "this tensor's Matmul was not built in this process (descriptor " + c.mm_key + ")");
  }
  try {
    return mathdx::tensorFunction(spec);
  } catch (const CompileError& e) {
    fail(s, c.construct, "libmathdx: " + e.message);
  } catch (const mathdx::LibraryMissing& e) {
    fail(s, c.construct, e.what(), "pip install nvidia-libmathdx-cu13 (or cudajit[mathdx])");
  } catch (const ToolchainError& e) {
    fail(s, c.construct, e.what());
  }
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
    if (!item->isScalar() || !isRegister(ref->tensor))
      fail(s, construct,
           "the array's items are " + typeToString(item) + ", the layout's " + typeToString(itemOf(s, construct, *ref)),
           "only a register fragment may take another item type (make_fragment_like)");
    ref->like = std::string(scalarNumbaName(item->scalar));
  }
  const MemSpace want = isGlobal(ref->tensor) ? MemSpace::Global : isShared(ref->tensor) ? MemSpace::Shared : MemSpace::Local;
  if (array->space != want && !(want == MemSpace::Global && array->space == MemSpace::Const))
    fail(s, construct, "a " + ref->tensor + " layout takes a " +
                           (want == MemSpace::Global ? "global" : want == MemSpace::Shared ? "shared-memory" : "local") +
                           " array, got " + typeToString(array));
  return tensorType(*ref, array);
}

}  // namespace

bool isSymbol(std::string_view name) {
  return name.rfind(kLayoutPrefix, 0) == 0 || name.rfind(kTensorPrefix, 0) == 0 || name.rfind(kApiPrefix, 0) == 0;
}

bool isLayoutMethod(std::string_view method) { return !tensorOfMethod(method).empty(); }

bool isTensor(const Type* t) {
  Ref r;
  return tensorOf(t, &r);
}

const Type* type(const Site& s, std::string_view mm_key, std::string_view method) {
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
  if (!mm_key.empty()) {
    analyzeExecute(s, mm_key);
    return noneTy();
  }
  const std::string_view fn = s.name.substr(kApiPrefix.size());
  if (fn == "make_tensor") {
    Ref r;
    return makeTensorType(s, &r);
  }
  analyzeApi(s, fn);
  return noneTy();
}

ir::Instr* lower(const Site& s, Emitter& e, std::string_view mm_key, std::string_view method) {
  if (!mm_key.empty() && isLayoutMethod(method)) {
    const Type* t = type(s, mm_key, method);
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
  if (mm_key.empty() && s.name.substr(kApiPrefix.size()) == "make_tensor") {
    Ref r;
    const Type* t = makeTensorType(s, &r);
    std::vector<ir::Instr*> elems = {e.constant(ir::Const::symbol(t->elems[0]->name), t->elems[0]), s.args[0]};
    if (isGlobal(r.tensor)) {
      if (s.argType(1)->is(TypeKind::Tuple))
        elems.push_back(e.convert(e.element(s.args[1], 1), i64Ty()));
      else
        elems.push_back(e.constInt(r.ld ? *r.ld : matmulOf(s, "make_tensor", r)->leading_dimension[matrixOf(r.tensor) - 'a']));
    }
    return e.emit(ir::Op::TupleMake, t, elems);
  }
  const Call c = !mm_key.empty() ? analyzeExecute(s, mm_key) : analyzeApi(s, s.name.substr(kApiPrefix.size()));
  auto result = instantiate(s, c);
  std::vector<ir::Instr*> operands;
  for (size_t i : c.operands) {
    ir::Instr* v = s.args[i];
    for (size_t k = 0; k < c.scales.size(); ++k)
      if (c.scales[k] == i) v = e.convert(v, itemOf(s, c.construct, c.scale_of[k]));
    operands.push_back(v);
  }
  ir::Instr* call = makeLibraryCall(e, libcalls::Library::Mathdx, mathdx::specKey(result->spec), voidTy(),
                                    std::move(operands), c.construct);
  if (!c.mm_key.empty()) {
    auto mm = mathdx::servedResult(c.mm_key);
    if (mm) {
      const InferOptions& options = s.ctx.specializer().options();
      int64_t d[3];
      for (int i = 0; i < 3; ++i) d[i] = options.block_dims[0] > 0 ? options.block_dims[i] : mm->block_dim[i];
      call->names.push_back("block=" + std::to_string(d[0]) + "x" + std::to_string(d[1]) + "x" + std::to_string(d[2]));
    }
  }
  return nullptr;
}

}  // namespace cj::typeinfer::mathdx_tensors
