// cuBLASDx's tensor API in kernels (mathdx_tensors.h says what the values
// are). A call is checked during the fixpoint; its device function is made
// by libmathdx when the call is lowered (once), cached as the routines are.
#include <algorithm>
#include <cctype>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "mathdx/mathdx.h"
#include "typeinfer/infer.h"
#include "typeinfer/library_calls.h"
#include "typeinfer/mathdx_tensors.h"
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

bool isGlobal(const std::string& tensor) { return tensor.rfind("gmem_", 0) == 0; }
bool isAccumulator(const std::string& tensor) { return tensor.find("accumulator_") != std::string::npos; }
// A thread's registers: a fragment, or an accumulator (its opaque state).
bool isRegister(const std::string& tensor) {
  return tensor.find("rmem_") != std::string::npos || isAccumulator(tensor);
}
// The fragment an accumulator's results and partitions take.
std::string fragmentOf(const std::string& accumulator) {
  return accumulator.rfind("suggested_", 0) == 0 ? "suggested_rmem_c" : "rmem_c";
}
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
  const Type* result = nullptr;   // a value the function writes through pointers (bool, (i32, i32)); null: none
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

// The spec of a call's function; false when its Matmul is not served here.
bool specOf(const Site& s, const Call& c, mathdx::TensorFunctionSpec* spec) {
  spec->function = c.function;
  spec->tensors = c.tensors;
  spec->alignment = c.alignment;
  if (!c.mm_key.empty()) return mathdx::servedMatmulSpec(c.mm_key, &spec->matmul);
  // copy_wait waits for every copy of the thread, whatever its GEMM: a
  // descriptor of its own (libmathdx makes the same function from any).
  spec->matmul.size = {1, 1, 1};
  spec->matmul.precision = {"float32", "float32", "float32"};
  spec->matmul.block_dim = {32, 1, 1};
  spec->matmul.sm = s.ctx.specializer().options().arch;
  return true;
}

std::shared_ptr<const mathdx::TensorFunctionResult> instantiate(const Site& s, const Call& c) {
  mathdx::TensorFunctionSpec spec;
  if (!specOf(s, c, &spec))
    fail(s, c.construct, "this tensor's Matmul was not built in this process (descriptor " + c.mm_key + ")");
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

// What the sites typed so far will instantiate when lowered: recorded while
// typing, made side by side before the first lowering (prefetch), so that a
// kernel's first compile waits for its slowest function, not their sum.
std::mutex g_planned_mutex;
std::map<std::string, mathdx::TensorFunctionSpec> g_planned;

void plan(const mathdx::TensorFunctionSpec& spec) {
  std::lock_guard<std::mutex> lock(g_planned_mutex);
  g_planned.emplace(spec.toString(), spec);
}

void plan(const Site& s, const Call& c) {
  mathdx::TensorFunctionSpec spec;
  if (specOf(s, c, &spec)) plan(spec);
}

void planTraits(const Ref& r) {
  mathdx::TensorFunctionSpec spec;
  if (mathdx::matmulTraitsSpec(r.mm_key, r.like, &spec)) plan(spec);
}

void prefetch() {
  std::vector<mathdx::TensorFunctionSpec> specs;
  {
    std::lock_guard<std::mutex> lock(g_planned_mutex);
    for (auto& [text, spec] : g_planned) specs.push_back(std::move(spec));
    g_planned.clear();
  }
  if (!specs.empty()) mathdx::prefetchTensorFunctions(specs);
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

ir::Instr* marker(Emitter& e, const Ref& r) {
  const std::string name = tensorName(r);
  return e.constant(ir::Const::symbol(name), symbolTy(name));
}

// The call of a tensor function (instantiated now) on `operands`; its value
// when the function writes one (c.result).
ir::Instr* emitCall(const Site& s, Emitter& e, const Call& c, std::vector<ir::Instr*> operands) {
  auto result = instantiate(s, c);
  ir::Instr* call = makeLibraryCall(e, libcalls::Library::Mathdx, mathdx::specKey(result->spec),
                                    c.result ? c.result : voidTy(), std::move(operands), c.construct);
  if (auto mm = c.mm_key.empty() ? nullptr : mathdx::servedResult(c.mm_key)) {
    const InferOptions& options = s.ctx.specializer().options();
    int64_t d[3];
    for (int i = 0; i < 3; ++i) d[i] = options.block_dims[0] > 0 ? options.block_dims[i] : mm->block_dim[i];
    call->names.push_back("block=" + std::to_string(d[0]) + "x" + std::to_string(d[1]) + "x" + std::to_string(d[2]));
  }
  return c.result ? call : nullptr;
}

mathdx::TensorTraits traitsOf(const Site& s, const std::string& construct, const Ref& r) {
  try {
    return mathdx::matmulTensorTraits(r.mm_key, r.tensor, r.like);
  } catch (const CompileError& e) {
    fail(s, construct, "libmathdx: " + e.message);
  } catch (const ToolchainError& e) {
    fail(s, construct, e.what());
  }
}

// The array type of a register buffer of `r`'s items.
const Type* bufferType(const Site& s, const std::string& construct, const Ref& r) {
  const Type* item = itemOf(s, construct, r);
  if (!item->isScalar())
    fail(s, construct, "register fragments of " + typeToString(item) + " are not supported yet",
         "make the fragment with cuda.local.array and make_tensor");
  return arrayTy(item->scalar, 1, Layout::C, MemSpace::Local);
}

// A new register tensor of `r`: a local buffer of its cosize (libmathdx's
// storage bytes; an accumulator's opaque state too), aligned as nvmath's (at
// least 8 bytes).
ir::Instr* newRegisterTensor(const Site& s, Emitter& e, const std::string& construct, const Ref& r) {
  const Type* buffer_type = bufferType(s, construct, r);
  const mathdx::TensorTraits t = traitsOf(s, construct, r);
  const int64_t item = scalarByteSize(buffer_type->scalar);
  const int64_t count = std::max<int64_t>(1, (t.storage_bytes + item - 1) / item);
  ir::Instr* buffer = e.intrinsic(ir::Intrinsic::LocalArray, buffer_type, {}, {count});
  buffer->cval = ir::Const::str("align=" + std::to_string(std::max<int64_t>({t.alignment, item, 8})));
  return e.emit(ir::Op::TupleMake, tensorType(r, buffer_type), {marker(e, r), buffer});
}

// --- accumulators (MM.suggest_accumulator() / MM.get_accumulator()) and their methods

const struct {
  std::string_view method, tensor;
} kAccumulatorMethods[] = {{"suggest_accumulator", "suggested_accumulator_c"}, {"get_accumulator", "accumulator_c"}};

std::string_view accumulatorOfMethod(std::string_view method) {
  for (const auto& row : kAccumulatorMethods)
    if (method == row.method) return row.tensor;
  return {};
}

constexpr std::string_view kMethodPrefix = "method:mathdx.";
const std::string_view kAccumulatorMethodNames[] = {
    "is_thread_active", "is_predicated", "is_index_in_bounds", "map_fragment_index", "get_results",
    "make_empty_fragment", "make_partition_and_copy", "partition_and_copy", "clear",
};

bool isAccumulatorMethodName(std::string_view name) {
  for (std::string_view m : kAccumulatorMethodNames)
    if (name == m) return true;
  return false;
}

// cudajit copies a partition without cuBLASDx's is_thread_active() guard, so
// the launch block must be the GEMM's own (a larger one has threads outside
// the partition).
void requireOwnBlock(const Site& s, const std::string& construct, const Ref& acc) {
  const InferOptions& options = s.ctx.specializer().options();
  auto mm = matmulOf(s, construct, acc);
  if (options.block_dims[0] > 0)
    for (int d = 0; d < 3; ++d)
      if (options.block_dims[d] != mm->block_dim[d])
        fail(s, construct,
             construct + " needs the launch block to be the Matmul's block_dim (" + std::to_string(mm->block_dim[0]) +
                 ", " + std::to_string(mm->block_dim[1]) + ", " + std::to_string(mm->block_dim[2]) + ")",
             "launch with MM.block_dim threads, or guard a copy_fragment with is_thread_active()");
}

// A function on the accumulator alone (create, clear).
Call onAccumulator(const std::string& construct, const char* function, const Ref& acc) {
  Call c;
  c.construct = construct;
  c.function = function;
  c.mm_key = acc.mm_key;
  c.tensors = {tensorRef(acc)};
  return c;
}

// The Call of an accumulator's copy between `src` and `dst` (one of them a fragment).
Call fragmentCopy(const std::string& construct, const Ref& src, const Ref& dst) {
  Call c;
  c.construct = construct;
  c.function = "copy";
  c.mm_key = src.mm_key;
  c.tensors = {tensorRef(src), tensorRef(dst)};
  return c;
}

// A predicate or index map of the accumulator's partition: a function on its
// fragment layout, with (i32 index) in and bool / (i32, i32) out.
Call partitionQuery(const Ref& acc, std::string_view method) {
  Call c;
  c.construct = "accumulator." + std::string(method);
  c.function = method == "map_fragment_index" ? "map_idx2crd_partitioner" : std::string(method);
  c.mm_key = acc.mm_key;
  Ref fragment = acc;
  fragment.tensor = fragmentOf(acc.tensor);
  fragment.like.clear();
  c.tensors = {tensorRef(fragment)};
  c.result = method == "map_fragment_index" ? tupleTy({i32Ty(), i32Ty()}) : boolTy();
  return c;
}

Ref fragmentRef(const Ref& acc) {
  Ref f = acc;
  f.tensor = fragmentOf(acc.tensor);
  return f;
}

const Type* methodType(const Site& s, const Ref& acc, std::string_view method) {
  const std::string construct = "accumulator." + std::string(method);
  auto expect = [&](size_t n) {
    if (s.args.size() != n || !s.kw_args.empty())
      fail(s, construct, construct + " takes " + std::to_string(n) + " argument(s), got " + std::to_string(s.argCount()));
  };
  if (method == "is_thread_active" || method == "is_predicated") {
    expect(0);
    return boolTy();
  }
  if (method == "is_index_in_bounds" || method == "map_fragment_index") {
    expect(1);
    if (!s.argType(0)->isInt()) fail(s, construct, "the index must be an integer, got " + typeToString(s.argType(0)));
    return method == "is_index_in_bounds" ? boolTy() : tupleTy({i32Ty(), i32Ty()});
  }
  if (method == "clear") {
    expect(0);
    return noneTy();
  }
  if (method == "get_results" || method == "make_empty_fragment") {
    expect(0);
    const Ref f = fragmentRef(acc);
    return tensorType(f, bufferType(s, construct, f));
  }
  if (method == "make_partition_and_copy") {
    expect(1);
    Ref src = tensorArg(s, construct, 0, "source");
    if (!isGlobal(src.tensor) || matrixOf(src.tensor) != 'c')
      fail(s, construct, construct + " partitions a global tensor of C, got a " + src.tensor + " tensor");
    Ref f = fragmentRef(acc);
    f.like = src.like;
    if (itemOf(s, construct, src) != itemOf(s, construct, f)) f.like = typeToString(itemOf(s, construct, src));
    return tensorType(f, bufferType(s, construct, f));
  }
  // partition_and_copy(src, dst): a fragment to or from a global tensor of C
  expect(2);
  Ref src = tensorArg(s, construct, 0, "src"), dst = tensorArg(s, construct, 1, "dst");
  if (!((isRegister(src.tensor) && isGlobal(dst.tensor)) || (isGlobal(src.tensor) && isRegister(dst.tensor))))
    fail(s, construct, construct + " copies between a fragment and a global tensor, got " + src.tensor + " and " + dst.tensor);
  return noneTy();
}

ir::Instr* methodLower(const Site& s, Emitter& e, const Ref& acc, ir::Instr* accumulator, std::string_view method) {
  const std::string construct = "accumulator." + std::string(method);
  methodType(s, acc, method);
  if (method == "is_thread_active" || method == "is_predicated")
    return emitCall(s, e, partitionQuery(acc, method), {});
  if (method == "is_index_in_bounds" || method == "map_fragment_index")
    return emitCall(s, e, partitionQuery(acc, method), {e.convert(s.args[0], i32Ty())});
  if (method == "clear") return emitCall(s, e, onAccumulator(construct, "clear", acc), {accumulator});
  if (method == "make_empty_fragment") return newRegisterTensor(s, e, construct, fragmentRef(acc));
  requireOwnBlock(s, construct, acc);
  if (method == "get_results") {
    ir::Instr* fragment = newRegisterTensor(s, e, construct, fragmentRef(acc));
    emitCall(s, e, fragmentCopy(construct, acc, fragmentRef(acc)), {accumulator, fragment});
    return fragment;
  }
  if (method == "make_partition_and_copy") {
    const Type* t = methodType(s, acc, method);
    Ref f;
    parse(t->elems[0]->name, kTensorPrefix, &f);
    Ref src;
    tensorOf(s.argType(0), &src);
    ir::Instr* fragment = newRegisterTensor(s, e, construct, f);
    emitCall(s, e, fragmentCopy(construct, src, f), {s.args[0], fragment});
    return fragment;
  }
  Ref src, dst;
  tensorOf(s.argType(0), &src);
  tensorOf(s.argType(1), &dst);
  return emitCall(s, e, fragmentCopy(construct, src, dst), {s.args[0], s.args[1]});
}

// make_fragment_like(tensor, dtype): a new register fragment of the tensor's
// layout holding `dtype` items.
const Type* fragmentLikeType(const Site& s, Ref* f) {
  const std::string construct = "make_fragment_like";
  if (s.args.size() != 2 || !s.kw_args.empty()) fail(s, construct, "make_fragment_like takes (tensor, dtype)");
  *f = tensorArg(s, construct, 0, "tensor");
  if (!isRegister(f->tensor) || isAccumulator(f->tensor))
    fail(s, construct, "make_fragment_like takes a register fragment, got a " + f->tensor + " tensor");
  std::optional<Scalar> dtype = dtypeOf(s.args[1]);
  if (!dtype) fail(s, construct, "make_fragment_like's dtype must be a numpy scalar type, got " + typeToString(s.argType(1)));
  f->like = std::string(scalarNumbaName(*dtype));
  if (scalarTy(*dtype) == itemOf(s, construct, Ref{f->mm_key, f->tensor, "", {}})) f->like.clear();
  return tensorType(*f, bufferType(s, construct, *f));
}

// Records what a typed site will instantiate (plan); `t` is its type.
void planSite(const Site& s, std::string_view mm_key, std::string_view method, const Type* t) {
  if (isMethod(s.name)) {
    Ref acc, src, dst;
    tensorOf(s.receiver->type->elems[1], &acc);
    const std::string_view m = s.name.substr(kMethodPrefix.size());
    const std::string construct = "accumulator." + std::string(m);
    if (m == "is_thread_active" || m == "is_predicated" || m == "is_index_in_bounds" || m == "map_fragment_index") {
      plan(s, partitionQuery(acc, m));
    } else if (m == "clear") {
      plan(s, onAccumulator(construct, "clear", acc));
    } else if (m == "get_results" || m == "make_empty_fragment") {
      planTraits(fragmentRef(acc));
      if (m == "get_results") plan(s, fragmentCopy(construct, acc, fragmentRef(acc)));
    } else if (m == "make_partition_and_copy" && tensorOf(s.argType(0), &src) && tensorOf(t, &dst)) {
      planTraits(dst);
      plan(s, fragmentCopy(construct, src, dst));
    } else if (m == "partition_and_copy" && tensorOf(s.argType(0), &src) && tensorOf(s.argType(1), &dst)) {
      plan(s, fragmentCopy(construct, src, dst));
    }
    return;
  }
  if (!mm_key.empty() && isLayoutMethod(method)) return;
  if (!mm_key.empty() && !accumulatorOfMethod(method).empty()) {
    const Ref acc{std::string(mm_key), std::string(accumulatorOfMethod(method)), "", {}};
    planTraits(acc);
    for (const char* fn : {"create", "clear"}) plan(s, onAccumulator("Matmul." + std::string(method), fn, acc));
    return;
  }
  if (!mm_key.empty()) return plan(s, analyzeExecute(s, mm_key));
  const std::string_view fn = s.name.substr(kApiPrefix.size());
  Ref r;
  if (fn == "make_tensor") return;
  if (fn == "make_fragment_like" && tensorOf(t, &r)) return planTraits(r);
  plan(s, analyzeApi(s, fn));
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

const Type* itemType(const FunctionContext& ctx, const ir::Instr* at, const Type* tensor, const Type* index) {
  Ref r;
  tensorOf(tensor, &r);
  if (!isRegister(r.tensor) || isAccumulator(r.tensor))
    ctx.fail(at, "getitem", "only a register fragment is indexed in kernels, not a " + r.tensor + " tensor",
             isAccumulator(r.tensor) ? "index accumulator.get_results()" : "index the array the tensor was made from");
  if (!index->isInt()) ctx.fail(at, "getitem", "a register fragment is indexed by an integer, got " + typeToString(index));
  return arrayElementType(tensor->elems[1]);
}

const Type* attributeType(const Site& s, const Type* receiver) {
  Ref r;
  if (tensorOf(receiver, &r) && s.name == "layout") {   // t.layout: the layout it was made with
    const Type* layout = symbolTy(std::string(kLayoutPrefix) + refText(r));
    return isGlobal(r.tensor) ? tupleTy({layout, i64Ty()}) : layout;
  }
  if (!tensorOf(receiver, &r) || !isAccumulator(r.tensor) || !isAccumulatorMethodName(s.name))
    fail(s, "getattr ." + std::string(s.name),
         "a cuBLASDx " + (tensorOf(receiver, &r) ? r.tensor : std::string("tensor")) + " tensor has no attribute '" +
             std::string(s.name) + "' in kernels",
         "accumulators have is_thread_active, is_predicated, is_index_in_bounds, map_fragment_index, get_results, "
         "make_empty_fragment, make_partition_and_copy, partition_and_copy and clear");
  return tupleTy({symbolTy(std::string(kMethodPrefix) + std::string(s.name)), receiver});
}

ir::Instr* attributeLower(const Site& s, Emitter& e, ir::Instr* receiver) {
  const Type* t = attributeType(s, receiver->type);
  if (s.name == "layout") {
    ir::Instr* layout = e.constant(ir::Const::symbol(t->is(TypeKind::Tuple) ? t->elems[0]->name : t->name),
                                   t->is(TypeKind::Tuple) ? t->elems[0] : t);
    return t->is(TypeKind::Tuple) ? e.emit(ir::Op::TupleMake, t, {layout, e.element(receiver, 2)}) : layout;
  }
  return e.emit(ir::Op::TupleMake, t, {e.constant(ir::Const::symbol(t->elems[0]->name), t->elems[0]), receiver});
}

const Type* type(const Site& s, std::string_view mm_key, std::string_view method) {
  const Type* t = typeOf(s, mm_key, method);
  planSite(s, mm_key, method, t);
  return t;
}

const Type* typeOf(const Site& s, std::string_view mm_key, std::string_view method) {
  if (isMethod(s.name)) {
    Ref acc;
    tensorOf(s.receiver->type->elems[1], &acc);
    return methodType(s, acc, s.name.substr(kMethodPrefix.size()));
  }
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
  if (!mm_key.empty() && isAccumulatorMethod(method)) {
    const std::string construct = "Matmul." + std::string(method);
    if (s.argCount() != 0) fail(s, construct, construct + " takes no arguments");
    const Ref acc{std::string(mm_key), std::string(accumulatorOfMethod(method)), "", {}};
    return tensorType(acc, bufferType(s, construct, acc));
  }
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
  if (isMethod(s.name)) {
    Ref acc;
    tensorOf(s.receiver->type->elems[1], &acc);
    return methodLower(s, e, acc, e.element(s.receiver, 1), s.name.substr(kMethodPrefix.size()));
  }
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
  if (!mm_key.empty() && isAccumulatorMethod(method)) {
    // A new accumulator: its state made (CREATE), then zeroed (CLEAR).
    const std::string construct = "Matmul." + std::string(method);
    typeOf(s, mm_key, method);
    const Ref acc{std::string(mm_key), std::string(accumulatorOfMethod(method)), "", {}};
    ir::Instr* accumulator = newRegisterTensor(s, e, construct, acc);
    for (const char* fn : {"create", "clear"}) emitCall(s, e, onAccumulator(construct, fn, acc), {accumulator});
    return accumulator;
  }
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
  if (fn == "make_fragment_like") {
    Ref f;
    fragmentLikeType(s, &f);
    return newRegisterTensor(s, e, "make_fragment_like", f);
  }
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
