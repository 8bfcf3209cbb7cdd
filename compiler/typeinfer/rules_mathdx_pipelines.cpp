// cuBLASDx's pipelines in kernels (nvmath.device's DevicePipeline and
// TilePipeline): a kernel argument made by MM.suggest_device_pipeline(depth,
// a, b) -- its state in global memory, made on the host -- and the tile
// pipeline a block gets from it:
//
//   tile = device_pipeline.get_tile(smem, idx, idy)   # create(DP, TP, smem*, idx*, idy*)
//   tile.execute(accumulator)                         # execute(TP, C)
//   device_pipeline.reset_tile(tile, idx, idy)        # reset(DP, TP, idx*, idy*)
//   tile._del()                                       # destroy(TP)
//
// idx / idy are an integer or a pair of them (the tile's place in a 3-D
// operand). The host's one-thread kernels call p._create(a, b) and
// p._destroy() (cudajit/mathdx.py). Attributes (buffer_size, ...) are
// libmathdx's traits, constants.
#include <algorithm>
#include <string>
#include <vector>

#include "typeinfer/infer.h"
#include "typeinfer/mathdx_tensor_calls.h"
#include "typeinfer/rules.h"

namespace cj::typeinfer::mathdx_tensors {
namespace {

// The pipeline's traits: those of the tensor function served for it when the
// DevicePipeline was made (its "traits" spec).
std::shared_ptr<const mathdx::TensorFunctionResult> servedPipeline(const Site& s, const std::string& key,
                                                                     const std::string& construct) {
  auto r = mathdx::servedTensorFunction(key);
  if (!r) fail(s, construct, "this DevicePipeline was not made in this process (descriptor " + key + ")");
  return r;
}

const Type* tileType(const std::string& key) {
  return tupleTy({symbolTy(std::string(kTilePipelinePrefix) + key), arrayTy(Scalar::UInt8, 1, Layout::C, MemSpace::Local)});
}

// An index of a tile: an integer, or a pair of them.
void checkIndex(const Site& s, const std::string& construct, size_t i, const char* what) {
  const Type* t = s.argType(i);
  const bool pair = t->is(TypeKind::Tuple) && t->elems.size() == 2 && t->elems[0]->isInt() && t->elems[1]->isInt();
  if (!t->isInt() && !pair)
    fail(s, construct, std::string(what) + " must be an integer or a pair of integers, got " + typeToString(t));
}

// An index operand: an i32 (passed by pointer), or a pair in a local int32[2].
ir::Instr* indexOperand(Emitter& e, ir::Instr* v) {
  if (v->type->isInt()) return e.convert(v, i32Ty());
  const Type* array = arrayTy(Scalar::Int32, 1, Layout::C, MemSpace::Local);
  ir::Instr* buffer = e.intrinsic(ir::Intrinsic::LocalArray, array, {}, {2});
  for (int k = 0; k < 2; ++k)
    e.emit(ir::Op::ArrayStore, voidTy(), {buffer, e.constInt(k), e.convert(e.element(v, k), i32Ty())});
  return buffer;
}

struct Method {
  std::string construct;
  Call call;
  const Type* type = nullptr;   // the site's value
};

Call pipelineCall(const std::string& construct, const std::string& key, const char* function, const char* takes) {
  Call c;
  c.construct = construct;
  c.function = function;
  c.pipeline_key = key;
  c.pipelines = takes;
  return c;
}

// A pipeline's block size is fixed (cuBLASDx's FIXED strategy): every thread
// of the block takes part in its barriers, so the launch block must be its.
void requirePipelineBlock(const Site& s, const std::string& construct, const std::string& key) {
  const auto& want = servedPipeline(s, key, construct)->device_pipeline.block_dim;
  if (auto launched = mathdxOtherLaunchBlock(s, want))
    fail(s, construct,
         construct + " runs in the pipeline's block_dim " + mathdxDimText(want.data()) +
             "; this kernel is launched with " + mathdxDimText(launched->data()),
         "launch with device_pipeline.block_dim threads");
}

// p.<name>(...) typed: what it calls and its value.
Method methodOf(const Site& s, const std::string& key, bool tile, std::string_view name) {
  Method m;
  m.construct = std::string(tile ? "TilePipeline." : "DevicePipeline.") + std::string(name);
  if (name != "_create" && name != "_destroy") requirePipelineBlock(s, m.construct, key);
  auto expect = [&](size_t n) {
    if (s.args.size() != n || !s.kw_args.empty())
      fail(s, m.construct, m.construct + " takes " + std::to_string(n) + " argument(s), got " + std::to_string(s.argCount()));
  };
  m.type = noneTy();
  if (!tile && name == "get_tile") {
    expect(3);
    if (!s.argType(0)->is(TypeKind::Array))
      fail(s, m.construct, "get_tile's shared memory must be an array, got " + typeToString(s.argType(0)));
    checkIndex(s, m.construct, 1, "idx");
    checkIndex(s, m.construct, 2, "idy");
    m.call = pipelineCall(m.construct, key, "create", "tile");
    m.type = tileType(key);
  } else if (!tile && name == "reset_tile") {
    expect(3);
    std::string tile_key;
    bool is_tile = false;
    if (!pipelineOf(s.argType(0), &tile_key, &is_tile) || !is_tile || tile_key != key)
      fail(s, m.construct, "reset_tile takes a tile of this pipeline (device_pipeline.get_tile(...)), got " +
                               typeToString(s.argType(0)));
    checkIndex(s, m.construct, 1, "idx");
    checkIndex(s, m.construct, 2, "idy");
    m.call = pipelineCall(m.construct, key, "reset", "device,tile");
  } else if (!tile && (name == "_create" || name == "_destroy")) {
    expect(name == "_create" ? 2 : 0);
    for (size_t i = 0; i < s.args.size(); ++i)
      if (!s.argType(i)->is(TypeKind::Array))
        fail(s, m.construct, "the pipeline's operands must be arrays, got " + typeToString(s.argType(i)));
    m.call = pipelineCall(m.construct, key, name == "_create" ? "create" : "destroy", "device");
    m.call.block_wide = false;
  } else if (tile && name == "execute") {
    expect(1);
    Ref acc = tensorArg(s, m.construct, 0, "accumulator");
    if (!isAccumulator(acc.tensor))
      fail(s, m.construct, "a tile pipeline executes into an accumulator (MM.suggest_accumulator()), got a " +
                               acc.tensor + " tensor");
    m.call = pipelineCall(m.construct, key, "execute", "tile");
    m.call.tensors = {tensorRef(acc)};
  } else if (tile && name == "_del") {
    expect(0);
    m.call = pipelineCall(m.construct, key, "destroy", "tile");
  } else {
    fail(s, "getattr ." + std::string(name),
         std::string(tile ? "a TilePipeline" : "a DevicePipeline") + " has no method '" + std::string(name) +
             "' in kernels",
         tile ? "a TilePipeline has execute(accumulator) and _del()"
              : "a DevicePipeline has get_tile(smem, idx, idy) and reset_tile(tile, idx, idy)");
  }
  return m;
}

bool isMethodName(bool tile, std::string_view name) {
  if (tile) return name == "execute" || name == "_del";
  return name == "get_tile" || name == "reset_tile" || name == "_create" || name == "_destroy";
}

// The pipeline a bound method is on.
void receiverOf(const Site& s, std::string* key, bool* tile) {
  pipelineOf(s.receiver->type->elems[1], key, tile);
}

}  // namespace

bool pipelineOf(const Type* t, std::string* key, bool* tile) {
  if (!t->is(TypeKind::Tuple) || t->elems.size() != 2 || !t->elems[0]->is(TypeKind::Symbol)) return false;
  const std::string& name = t->elems[0]->name;
  for (auto [prefix, is_tile] : {std::pair{kPipelinePrefix, false}, std::pair{kTilePipelinePrefix, true}}) {
    if (name.rfind(prefix, 0) == 0) {
      *key = name.substr(prefix.size());
      *tile = is_tile;
      return true;
    }
  }
  return false;
}

bool isPipeline(const Type* t) {
  std::string key;
  bool tile = false;
  return pipelineOf(t, &key, &tile);
}

const Type* pipelineAttributeType(const Site& s, const Type* receiver) {
  std::string key;
  bool tile = false;
  pipelineOf(receiver, &key, &tile);
  if (isMethodName(tile, s.name)) return tupleTy({symbolTy(std::string(kMethodPrefix) + std::string(s.name)), receiver});
  const std::string construct = "getattr ." + std::string(s.name);
  servedPipeline(s, key, construct);   // made in this process, or a clear error
  if (s.name == "block_dim" && !tile) return tupleTy({i64Ty(), i64Ty(), i64Ty()});
  int64_t value = 0;
  if (pipelineConstant(receiver, std::string(s.name), &value)) return i64Ty();
  fail(s, construct,
       std::string(tile ? "a TilePipeline" : "a DevicePipeline") + " has no attribute '" + std::string(s.name) +
           "' in kernels",
       tile ? "storage_bytes, storage_alignment, execute and _del"
            : "buffer_size, buffer_alignment, storage_bytes, storage_alignment, block_dim, pipeline_depth, get_tile "
              "and reset_tile");
}

ir::Instr* pipelineAttributeLower(const Site& s, Emitter& e, ir::Instr* receiver) {
  const Type* t = pipelineAttributeType(s, receiver->type);
  std::string key;
  bool tile = false;
  pipelineOf(receiver->type, &key, &tile);
  if (isMethodName(tile, s.name))
    return e.emit(ir::Op::TupleMake, t, {e.constant(ir::Const::symbol(t->elems[0]->name), t->elems[0]), receiver});
  auto r = servedPipeline(s, key, "getattr ." + std::string(s.name));
  if (s.name == "block_dim") {
    const auto& d = r->device_pipeline.block_dim;
    return e.emit(ir::Op::TupleMake, t, {e.constInt(d[0]), e.constInt(d[1]), e.constInt(d[2])});
  }
  int64_t v = 0;
  pipelineConstant(receiver->type, std::string(s.name), &v);
  return e.constInt(v);
}

bool pipelineConstant(const Type* t, const std::string& name, int64_t* value) {
  std::string key;
  bool tile = false;
  if (!pipelineOf(t, &key, &tile)) return false;
  auto r = mathdx::servedTensorFunction(key);
  if (!r) return false;
  const mathdx::PipelineTraits& p = tile ? r->tile_pipeline : r->device_pipeline;
  if (name == "storage_bytes") *value = p.storage_bytes;
  else if (name == "storage_alignment") *value = p.storage_alignment;
  else if (tile) return false;
  else if (name == "buffer_size") *value = p.buffer_size;
  else if (name == "buffer_alignment") *value = p.buffer_alignment;
  else if (name == "pipeline_depth") {
    mathdx::TensorFunctionSpec spec;
    if (!mathdx::servedPipelineSpec(key, &spec)) return false;
    *value = spec.pipeline.depth;
  } else {
    return false;
  }
  return true;
}

const Type* pipelineMethodType(const Site& s) {
  std::string key;
  bool tile = false;
  receiverOf(s, &key, &tile);
  return methodOf(s, key, tile, s.name.substr(kMethodPrefix.size())).type;
}

ir::Instr* pipelineMethodLower(const Site& s, Emitter& e) {
  std::string key;
  bool tile = false;
  receiverOf(s, &key, &tile);
  const std::string_view name = s.name.substr(kMethodPrefix.size());
  const Method m = methodOf(s, key, tile, name);
  ir::Instr* self = e.element(s.receiver, 1);
  std::vector<ir::Instr*> operands = {self};
  if (name == "get_tile") {
    ir::Instr* made = tileState(s, e, key);
    operands.push_back(made);
    operands.push_back(s.args[0]);
    operands.push_back(indexOperand(e, s.args[1]));
    operands.push_back(indexOperand(e, s.args[2]));
    emitCall(s, e, m.call, operands);
    return made;
  }
  if (name == "reset_tile") {
    operands.push_back(s.args[0]);
    operands.push_back(indexOperand(e, s.args[1]));
    operands.push_back(indexOperand(e, s.args[2]));
  } else if (name == "_create") {
    // A and B go as libmathdx's tensors, struct {void* ptr}.
    for (ir::Instr* a : s.args) {
      const Type* sym = symbolTy("cudajit.mathdx.pipeline_operand");
      operands.push_back(e.emit(ir::Op::TupleMake, tupleTy({sym, a->type}),
                                {e.constant(ir::Const::symbol(sym->name), sym), a}));
    }
  } else if (name == "execute") {
    operands.push_back(s.args[0]);
  }
  emitCall(s, e, m.call, operands);
  return nullptr;
}

ir::Instr* tileState(const Site& s, Emitter& e, const std::string& key) {
  auto r = servedPipeline(s, key, "TilePipeline");
  const Type* t = tileType(key);
  ir::Instr* buffer = e.intrinsic(ir::Intrinsic::LocalArray, t->elems[1], {},
                                  {std::max<int64_t>(1, r->tile_pipeline.storage_bytes)});
  buffer->cval = ir::Const::str("align=" + std::to_string(std::max<int64_t>(8, r->tile_pipeline.storage_alignment)) +
                                " slot=tile_pipeline." + key);
  return e.emit(ir::Op::TupleMake, t, {e.constant(ir::Const::symbol(t->elems[0]->name), t->elems[0]), buffer});
}

std::string pipelineForMatmul(const Site& s, const std::string& construct, const std::string& mm_key) {
  mathdx::MatmulSpec mm;
  if (!mathdx::servedMatmulSpec(mm_key, &mm) || !mm.with_pipeline) return "";
  auto same = [](mathdx::MatmulSpec a, mathdx::MatmulSpec b) {
    a.api = b.api = "tensors";
    a.code = b.code = true;
    return a.toString() == b.toString();
  };
  std::vector<std::string> keys;
  for (const auto& p : s.ctx.fn().blocks[0]->params) {
    std::string key;
    bool tile = false;
    mathdx::TensorFunctionSpec spec;
    if (p->type && pipelineOf(p->type, &key, &tile) && !tile && mathdx::servedPipelineSpec(key, &spec) &&
        same(spec.matmul, mm) && std::find(keys.begin(), keys.end(), key) == keys.end())
      keys.push_back(key);
  }
  if (keys.empty())
    fail(s, construct,
         "a Matmul built with with_pipeline=True works with a tile pipeline: the kernel must take its DevicePipeline "
         "(MM.suggest_device_pipeline(depth, a, b)) as an argument",
         "pass the DevicePipeline to the kernel and call device_pipeline.get_tile(smem, idx, idy) before the "
         "accumulator's methods");
  if (keys.size() > 1)
    fail(s, construct, "the kernel takes " + std::to_string(keys.size()) +
                           " DevicePipelines of this Matmul: cudajit cannot tell which tile its accumulator is of");
  return keys[0];
}

void planPipelineSite(const Site& s) {
  std::string key;
  bool tile = false;
  receiverOf(s, &key, &tile);
  plan(s, methodOf(s, key, tile, s.name.substr(kMethodPrefix.size())).call);
}

}  // namespace cj::typeinfer::mathdx_tensors
