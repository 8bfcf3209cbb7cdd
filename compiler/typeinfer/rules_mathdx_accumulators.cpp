// Accumulators (MM.suggest_accumulator() / get_accumulator()) and register
// fragments in kernels: nvmath's accumulator and partition methods,
// make_fragment_like, fragment[i], tensor.layout. libmathdx 0.4 makes an
// accumulator an opaque, stateful tensor: a local buffer of its storage
// bytes, created (CREATE) and cleared where it is made.
#include <optional>
#include <string>
#include <vector>

#include "typeinfer/infer.h"
#include "typeinfer/mathdx_tensor_calls.h"
#include "typeinfer/rules.h"
#include "typeinfer/specializer.h"

namespace cj::typeinfer::mathdx_tensors {
namespace {

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
  auto mm = matmulOf(s, construct, acc);
  if (mathdxOtherLaunchBlock(s, mm->block_dim))
    fail(s, construct,
         construct + " needs the launch block to be the Matmul's block_dim " + mathdxDimText(mm->block_dim.data()),
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

const Type* methodTypeOf(const Site& s, const Ref& acc, std::string_view method) {
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
    // a fragment of the source's item type (nvmath: the layout made like it)
    const Type* item = itemOf(s, construct, src);
    if (item != itemOf(s, construct, f)) {
      if (!item->isScalar()) fail(s, construct, "a partition of " + typeToString(item) + " items is not supported yet");
      f.like = std::string(scalarNumbaName(item->scalar));
    }
    return tensorType(f, bufferType(s, construct, f));
  }
  // partition_and_copy(src, dst): a fragment to or from a global tensor of C
  expect(2);
  Ref src = tensorArg(s, construct, 0, "src"), dst = tensorArg(s, construct, 1, "dst");
  if (!((isRegister(src.tensor) && isGlobal(dst.tensor)) || (isGlobal(src.tensor) && isRegister(dst.tensor))))
    fail(s, construct, construct + " copies between a fragment and a global tensor, got " + src.tensor + " and " + dst.tensor);
  return noneTy();
}

// What a site does when lowered: the device functions it calls, in order, all
// on the same operands: the accumulator when `on_accumulator`, then the
// site's arguments (integers as i32), then the register fragment it makes
// (`fragment`), which is also its value. Planning (planAccumulatorSite) and
// lowering (lowerWork) both read it.
struct Work {
  std::vector<Call> calls;
  std::optional<Ref> fragment;
  bool on_accumulator = false;
};

// What acc.<method>(...) calls (a pipelined Matmul's changes aside).
Work methodCalls(const Site& s, const Ref& acc, std::string_view method, const Type* t) {
  const std::string construct = "accumulator." + std::string(method);
  Work w;
  if (method == "is_thread_active" || method == "is_predicated" || method == "is_index_in_bounds" ||
      method == "map_fragment_index") {
    w.calls = {partitionQuery(acc, method)};
  } else if (method == "clear") {
    w.calls = {onAccumulator(construct, "clear", acc)};
    w.on_accumulator = true;
  } else if (method == "make_empty_fragment") {
    w.fragment = fragmentRef(acc);
  } else if (method == "get_results") {
    w.fragment = fragmentRef(acc);
    w.calls = {fragmentCopy(construct, acc, *w.fragment)};
    w.on_accumulator = true;
  } else if (method == "make_partition_and_copy") {
    Ref src, f;
    tensorOf(s.argType(0), &src);
    tensorOf(t, &f);
    w.fragment = f;
    w.calls = {fragmentCopy(construct, src, f)};
  } else {   // partition_and_copy
    Ref src, dst;
    tensorOf(s.argType(0), &src);
    tensorOf(s.argType(1), &dst);
    w.calls = {fragmentCopy(construct, src, dst)};
  }
  return w;
}

// A pipelined Matmul's (with_pipeline=True) accumulator functions that
// partition (create, the partition queries, copies to or from global memory)
// take the tile pipeline; its results are read after finish_accumulation
// (libmathdx 0.4: once after the last execute into it).
void pipelineWork(const Site& s, const std::string& construct, const std::string& mm_key, Work* w) {
  const std::string key = pipelineForMatmul(s, construct, mm_key);
  if (key.empty()) return;
  std::vector<Call> calls;
  for (Call c : w->calls) {
    bool global = false;
    for (const mathdx::TensorRef& t : c.tensors) global = global || isGlobal(t.type);
    if (c.function == "copy" && !global) {   // get_results
      Call finish = c;
      finish.function = "finish_accumulation";
      finish.tensors = {c.tensors[0]};
      calls.push_back(finish);
    }
    if (c.result) {
      // libmathdx 0.4.1 makes no partition query for a pipelined GEMM. Its
      // block size is fixed (the Matmul's), so every thread takes part:
      // is_thread_active() is true (methodLower); the others are refused.
      if (c.function == "is_thread_active") continue;
      fail(s, construct, construct + " is not available for a Matmul built with with_pipeline=True (libmathdx "
                         "makes no partition query for pipelined GEMMs)",
           "a pipelined GEMM's tiles are whole: copy the partition with make_partition_and_copy / partition_and_copy");
    }
    if (c.function == "create" || (c.function == "copy" && global)) {
      c.pipeline_key = key;
      c.pipelines = "tile";
    }
    calls.push_back(c);
  }
  w->calls = std::move(calls);
}

// acc.<method>(...) of a typed site; `t` is its type.
Work methodWork(const Site& s, const Ref& acc, std::string_view method, const Type* t) {
  const std::string construct = "accumulator." + std::string(method);
  Work w = methodCalls(s, acc, method, t);
  pipelineWork(s, construct, acc.mm_key, &w);
  return w;
}

// The accumulator MM.suggest_accumulator() / get_accumulator() makes.
Ref accumulatorRef(std::string_view mm_key, std::string_view method) {
  return {std::string(mm_key), std::string(accumulatorOfMethod(method)), "", {}};
}

// A new accumulator (MM.suggest_accumulator() / get_accumulator()): its
// state made (CREATE), then zeroed (CLEAR).
Work accumulatorWork(const Site& s, std::string_view mm_key, std::string_view method) {
  const std::string construct = "Matmul." + std::string(method);
  const Ref acc = accumulatorRef(mm_key, method);
  Work w;
  w.fragment = acc;
  for (const char* fn : {"create", "clear"}) w.calls.push_back(onAccumulator(construct, fn, acc));
  pipelineWork(s, construct, acc.mm_key, &w);
  return w;
}

void planWork(const Site& s, const Work& w) {
  for (const Call& c : w.calls) plan(s, c);
  if (w.fragment) planTraits(*w.fragment);
}

ir::Instr* lowerWork(const Site& s, Emitter& e, const std::string& construct, const Work& w, ir::Instr* accumulator) {
  std::vector<ir::Instr*> operands;
  if (w.on_accumulator) operands.push_back(accumulator);
  for (ir::Instr* a : s.args) operands.push_back(a->type->isInt() ? e.convert(a, i32Ty()) : a);
  ir::Instr* fragment = w.fragment ? newRegisterTensor(s, e, construct, *w.fragment) : nullptr;
  if (fragment) operands.push_back(fragment);
  ir::Instr* value = nullptr;
  for (const Call& c : w.calls) {
    std::vector<ir::Instr*> ops = c.function == "finish_accumulation" ? std::vector<ir::Instr*>{accumulator} : operands;
    if (!c.pipeline_key.empty()) ops.insert(ops.begin(), tileState(s, e, c.pipeline_key));
    value = emitCall(s, e, c, ops);
  }
  return fragment ? fragment : value;
}

}  // namespace

std::string_view accumulatorOfMethod(std::string_view method) {
  if (method == "suggest_accumulator") return "suggested_accumulator_c";
  if (method == "get_accumulator") return "accumulator_c";
  return {};
}

const Type* accumulatorType(const Site& s, std::string_view mm_key, std::string_view method) {
  const std::string construct = "Matmul." + std::string(method);
  if (s.argCount() != 0) fail(s, construct, construct + " takes no arguments");
  const Ref acc = accumulatorRef(mm_key, method);
  return tensorType(acc, bufferType(s, construct, acc));
}

ir::Instr* accumulatorLower(const Site& s, Emitter& e, std::string_view mm_key, std::string_view method) {
  accumulatorType(s, mm_key, method);
  return lowerWork(s, e, "Matmul." + std::string(method), accumulatorWork(s, mm_key, method), nullptr);
}

const Type* methodType(const Site& s) {
  if (isPipeline(s.receiver->type->elems[1])) return pipelineMethodType(s);
  Ref acc;
  tensorOf(s.receiver->type->elems[1], &acc);
  return methodTypeOf(s, acc, s.name.substr(kMethodPrefix.size()));
}

ir::Instr* methodLower(const Site& s, Emitter& e) {
  if (isPipeline(s.receiver->type->elems[1])) return pipelineMethodLower(s, e);
  Ref acc;
  tensorOf(s.receiver->type->elems[1], &acc);
  const std::string_view method = s.name.substr(kMethodPrefix.size());
  const std::string construct = "accumulator." + std::string(method);
  const Work w = methodWork(s, acc, method, methodTypeOf(s, acc, method));
  if (method == "is_thread_active" && w.calls.empty()) return e.constant(ir::Const::boolean(true), boolTy());
  for (const Call& c : w.calls)
    if (c.function == "copy") requireOwnBlock(s, construct, acc);
  return lowerWork(s, e, construct, w, e.element(s.receiver, 1));
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

ir::Instr* fragmentLikeLower(const Site& s, Emitter& e) {
  Ref f;
  fragmentLikeType(s, &f);
  return newRegisterTensor(s, e, "make_fragment_like", f);
}

void planAccumulatorSite(const Site& s, std::string_view mm_key, std::string_view method, const Type* t) {
  Ref r;
  if (isMethod(s.name) && isPipeline(s.receiver->type->elems[1])) {
    planPipelineSite(s);
  } else if (isMethod(s.name)) {
    tensorOf(s.receiver->type->elems[1], &r);
    planWork(s, methodWork(s, r, s.name.substr(kMethodPrefix.size()), t));
  } else if (!mm_key.empty()) {
    planWork(s, accumulatorWork(s, mm_key, method));
  } else if (tensorOf(t, &r)) {   // make_fragment_like
    planTraits(r);
  }
}

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
  if (isPipeline(receiver)) return pipelineAttributeType(s, receiver);
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
  if (isPipeline(receiver->type)) return pipelineAttributeLower(s, e, receiver);
  const Type* t = attributeType(s, receiver->type);
  if (s.name == "layout") {
    ir::Instr* layout = e.constant(ir::Const::symbol(t->is(TypeKind::Tuple) ? t->elems[0]->name : t->name),
                                   t->is(TypeKind::Tuple) ? t->elems[0] : t);
    return t->is(TypeKind::Tuple) ? e.emit(ir::Op::TupleMake, t, {layout, e.element(receiver, 2)}) : layout;
  }
  return e.emit(ir::Op::TupleMake, t, {e.constant(ir::Const::symbol(t->elems[0]->name), t->elems[0]), receiver});
}

}  // namespace cj::typeinfer::mathdx_tensors
