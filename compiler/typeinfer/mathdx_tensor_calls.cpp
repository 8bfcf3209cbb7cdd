// The values and calls the tensor API's rules share (mathdx_tensor_calls.h).
#include "typeinfer/mathdx_tensor_calls.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <mutex>

#include "typeinfer/infer.h"
#include "typeinfer/library_calls.h"
#include "typeinfer/specializer.h"

namespace cj::typeinfer::mathdx_tensors {
namespace {

// The spec of a call's function; false when its Matmul is not served here.
bool specOf(const Site& s, const Call& c, mathdx::TensorFunctionSpec* spec) {
  if (!c.pipeline_key.empty() && !mathdx::servedPipelineSpec(c.pipeline_key, spec)) return false;
  spec->pipelines = c.pipelines;
  spec->function = c.function;
  spec->tensors = c.tensors;
  spec->alignment = c.alignment;
  if (!c.pipeline_key.empty()) return true;
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
    fail(s, c.construct, c.pipeline_key.empty()
                             ? "this tensor's Matmul was not built in this process (descriptor " + c.mm_key + ")"
                             : "this DevicePipeline was not made in this process (descriptor " + c.pipeline_key + ")");
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

}  // namespace

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

void fail(const Site& s, const std::string& construct, const std::string& message, const std::string& hint) {
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

mathdx::TensorRef tensorRef(const Ref& r) { return {r.tensor, r.like}; }

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
  if (!c.pipeline_key.empty()) {
    if (c.block_wide) call->names.push_back(mathdxLaunchBlockName(s, result->device_pipeline.block_dim));
  } else if (auto mm = c.mm_key.empty() ? nullptr : mathdx::servedResult(c.mm_key)) {
    call->names.push_back(mathdxLaunchBlockName(s, mm->block_dim));
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

}  // namespace cj::typeinfer::mathdx_tensors
