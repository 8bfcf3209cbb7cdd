#include "mathdx/tensor.h"

#include <memory>
#include <utility>

#include "mathdx/code.h"
#include "mathdx/enums.h"
#include "mathdx/library.h"
#include "mathdx/matmul.h"
#include "mathdx/status.h"
#include "support/error.h"

namespace cj::mathdx {
namespace {

// cublasdxTensorType, by the name nvmath's layouts give it.
const struct {
  const char* name;
  int value;
} kTensorTypes[] = {
    {"smem_a", 0}, {"smem_b", 1}, {"smem_c", 2}, {"suggested_smem_a", 3}, {"suggested_smem_b", 4},
    {"suggested_smem_c", 5}, {"suggested_rmem_c", 6}, {"gmem_a", 7}, {"gmem_b", 8}, {"gmem_c", 9},
    {"suggested_accumulator_c", 10}, {"rmem_c", 11}, {"accumulator_c", 12},
};

// cublasdxDeviceFunctionType.
const struct {
  const char* name;
  int value;
} kFunctions[] = {
    {"execute", 0}, {"copy", 1}, {"copy_wait", 2}, {"clear", 3}, {"axpby", 4},
    {"map_idx2crd_partitioner", 6}, {"is_thread_active", 8}, {"is_predicated", 9}, {"is_index_in_bounds", 10},
    {"create", 11}, {"destroy", 12}, {"reset", 13}, {"finish_accumulation", 15},
};

// cublasdxPipelineTrait, cublasdxMemorySpace, cublasdxDevicePipelineType
// (SUGGESTED), cublasdxTilePipelineType (DEFAULT), cublasdxBlockSizeStrategy
// (FIXED: the Matmul's block, as nvmath's).
enum : int {
  kPipeStorageBytes = 0, kPipeStorageAlignment = 1, kPipeBufferSize = 2, kPipeBufferAlignment = 3,
  kPipeBlockDim = 5,
};
constexpr int kMemoryGlobal = 2, kDevicePipelineSuggested = 0, kTilePipelineDefault = 0, kBlockSizeFixed = 1;

// cublasdxTensorTrait, cublasdxDeviceFunctionTrait, cublasdxDeviceFunctionOption.
enum : int { kTraitStorageBytes = 0, kTraitAlignmentBytes = 1, kTraitUid = 2, kTraitLogicalSize = 5 };
constexpr int kFunctionTraitSymbol = 1;
constexpr int kOptionCopyAlignment = 1;

template <class Table>
int lookup(const Table& table, const std::string& name, const char* what) {
  std::string names;
  for (const auto& row : table) {
    if (name == row.name) return row.value;
    names += std::string(names.empty() ? "" : ", ") + row.name;
  }
  throw CompileError("", 0, 0, "mathdx.tensor", std::string("unknown ") + what + " '" + name + "' (one of " + names + ")");
}

struct TensorHandle {
  const Api& a;
  long long h = 0;
  ~TensorHandle() {
    if (h) a.cublasdxDestroyTensor(h);
  }
};

struct PipelineHandle {
  const Api& a;
  long long h = 0;
  ~PipelineHandle() {
    if (h) a.cublasdxDestroyPipeline(h);
  }
};

// A device pipeline over the global A and B the spec describes, and its tile
// pipeline, made and finalized on `desc`; their traits into `r`.
struct Pipelines {
  TensorHandle a, b;
  PipelineHandle device, tile;
};

// The value type of the GEMM's matrix i (libmathdx answers the VALUE_TYPE
// trait of a descriptor with pipelines with an internal error).
int valueTypeOf(const MatmulSpec& mm, int i) {
  static const char* const kComplex[][2] = {{"float16", "complex32"}, {"float32", "complex64"}, {"float64", "complex128"}};
  std::string name = mm.precision[i].empty() ? mm.precision[0] : mm.precision[i];
  if (mm.data_type == "complex")
    for (const auto& row : kComplex)
      if (name == row[0]) name = row[1];
  const ValueType* vt = findValueType(name);
  if (!vt) throw CompileError("", 0, 0, "mathdx.pipeline", "no MathDx value type for " + name);
  return vt->value;
}

void makePipelines(const Api& a, long long desc, const MatmulSpec& mm, const PipelineSpec& p, const std::string& key,
                   Pipelines* out, TensorFunctionResult* r) {
  const int types[2] = {valueTypeOf(mm, 0), valueTypeOf(mm, 1)};
  auto global = [&](const std::vector<int64_t>& shape, const std::vector<int64_t>& stride, int type, TensorHandle* t,
                    const char* which) {
    if (shape.empty() || shape.size() != stride.size())
      throw CompileError("", 0, 0, "mathdx.pipeline",
                         std::string("the pipeline's ") + which + " needs a shape and strides of one rank");
    std::vector<long long> sh(shape.begin(), shape.end()), st(stride.begin(), stride.end());
    check(a, a.cublasdxCreateTensorStrided(kMemoryGlobal, type, nullptr, static_cast<long long>(sh.size()), sh.data(),
                                           st.data(), &t->h),
          std::string("cublasdxCreateTensorStrided(") + which + ")", key);
  };
  global(p.a_shape, p.a_stride, types[0], &out->a, "A");
  global(p.b_shape, p.b_stride, types[1], &out->b, "B");
  check(a, a.cublasdxCreateDevicePipeline(desc, kDevicePipelineSuggested, p.depth, kBlockSizeFixed, out->a.h,
                                          out->b.h, &out->device.h),
        "cublasdxCreateDevicePipeline(depth=" + std::to_string(p.depth) + ")", key);
  check(a, a.cublasdxFinalizePipelines(1, &out->device.h), "cublasdxFinalizePipelines(device)", key);
  const long long globals[2] = {out->a.h, out->b.h};
  check(a, a.cublasdxFinalizeTensors(2, globals), "cublasdxFinalizeTensors(A, B)", key);
  check(a, a.cublasdxCreateTilePipeline(desc, kTilePipelineDefault, out->device.h, &out->tile.h),
        "cublasdxCreateTilePipeline", key);
  check(a, a.cublasdxFinalizePipelines(1, &out->tile.h), "cublasdxFinalizePipelines(tile)", key);

  auto trait = [&](long long pipe, int id, const char* name) {
    long long v = 0;
    check(a, a.cublasdxGetPipelineTraitInt64(pipe, id, &v), std::string("cublasdxGetPipelineTraitInt64(") + name + ")",
          key);
    return static_cast<int64_t>(v);
  };
  for (auto [pipe, traits] : {std::pair{out->device.h, &r->device_pipeline}, std::pair{out->tile.h, &r->tile_pipeline}}) {
    traits->storage_bytes = trait(pipe, kPipeStorageBytes, "STORAGE_BYTES");
    traits->storage_alignment = trait(pipe, kPipeStorageAlignment, "STORAGE_ALIGNMENT_BYTES");
  }
  r->device_pipeline.buffer_size = trait(out->device.h, kPipeBufferSize, "BUFFER_SIZE");
  r->device_pipeline.buffer_alignment = trait(out->device.h, kPipeBufferAlignment, "BUFFER_ALIGNMENT_BYTES");
  long long dims[3] = {0, 0, 0};
  check(a, a.cublasdxGetPipelineTraitInt64s(out->device.h, kPipeBlockDim, 3, dims),
        "cublasdxGetPipelineTraitInt64s(BLOCK_DIM)", key);
  for (int i = 0; i < 3; ++i) r->device_pipeline.block_dim[i] = dims[i];
}

}  // namespace

const std::vector<std::string>& tensorTypeNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& row : kTensorTypes) out.push_back(row.name);
    return out;
  }();
  return names;
}

TensorFunctionResult compileTensorFunction(const TensorFunctionSpec& in) {
  const Api& a = api();
  TensorFunctionSpec spec = in;
  spec.matmul.api = "tensors";
  const std::string key = spec.toString();
  std::vector<Operator> ops = matmulOperators(spec.matmul);
  const bool code = spec.function != "traits";
  const int function = code ? lookup(kFunctions, spec.function, "device function") : -1;

  Handle desc{a.cublasdxDestroyDescriptor};
  check(a, a.cublasdxCreateDescriptor(&desc.h), "cublasdxCreateDescriptor", key);
  setOperators(a, desc.h, ops, {"cublasdx", a.cublasdxSetOperatorInt64, a.cublasdxSetOperatorInt64s}, key);

  // The tensors (a "like" tensor from its source), finalized together.
  std::vector<std::unique_ptr<TensorHandle>> owned;
  std::vector<long long> tensors;
  for (const TensorRef& t : spec.tensors) {
    auto made = std::make_unique<TensorHandle>(TensorHandle{a});
    check(a, a.cublasdxCreateTensor(desc.h, lookup(kTensorTypes, t.type, "tensor type"), &made->h),
          "cublasdxCreateTensor(" + t.type + ")", key);
    if (!t.like.empty()) {
      const ValueType* vt = findValueType(t.like);
      if (!vt) throw CompileError("", 0, 0, "mathdx.tensor", "unknown value type '" + t.like + "'");
      auto like = std::make_unique<TensorHandle>(TensorHandle{a});
      check(a, a.cublasdxMakeTensorLike(made->h, vt->value, &like->h), "cublasdxMakeTensorLike(" + t.like + ")", key);
      owned.push_back(std::move(made));
      made = std::move(like);
    }
    tensors.push_back(made->h);
    owned.push_back(std::move(made));
  }
  if (!tensors.empty())
    check(a, a.cublasdxFinalizeTensors(tensors.size(), tensors.data()), "cublasdxFinalizeTensors", key);

  TensorFunctionResult r;
  r.spec = key;
  for (size_t i = 0; i < spec.tensors.size(); ++i) {
    TensorTraits t;
    const struct {
      int trait;
      const char* name;
      int64_t* field;
    } traits[] = {{kTraitUid, "UID", &t.uid},
                  {kTraitStorageBytes, "STORAGE_BYTES", &t.storage_bytes},
                  {kTraitAlignmentBytes, "ALIGNMENT_BYTES", &t.alignment},
                  {kTraitLogicalSize, "LOGICAL_SIZE", &t.logical_size}};
    for (const auto& q : traits) {
      long long v = 0;
      check(a, a.cublasdxGetTensorTraitInt64(tensors[i], q.trait, &v),
            std::string("cublasdxGetTensorTraitInt64(") + spec.tensors[i].type + ", " + q.name + ")", key);
      *q.field = v;
    }
    r.tensors.push_back(t);
  }
  std::unique_ptr<Pipelines> pipes;
  if (spec.pipeline.depth > 0) {
    pipes = std::make_unique<Pipelines>(Pipelines{{a}, {a}, {a}, {a}});
    makePipelines(a, desc.h, spec.matmul, spec.pipeline, key, pipes.get(), &r);
  }
  if (!code) return r;

  Handle fn{a.cublasdxDestroyDeviceFunction};
  if (spec.pipelines.empty()) {
    check(a, a.cublasdxCreateDeviceFunction(desc.h, function, tensors.size(), tensors.data(), &fn.h),
          "cublasdxCreateDeviceFunction(" + spec.function + ")", key);
  } else {
    if (!pipes) throw CompileError("", 0, 0, "mathdx.pipeline", "a pipeline function needs the pipeline's spec");
    std::vector<long long> taken;
    for (const char* which : {"device", "tile"})
      if (spec.pipelines.find(which) != std::string::npos)
        taken.push_back(std::string(which) == "device" ? pipes->device.h : pipes->tile.h);
    check(a, a.cublasdxCreateDeviceFunctionWithPipelines(desc.h, function, tensors.size(), tensors.data(), taken.size(),
                                                         taken.data(), &fn.h),
          "cublasdxCreateDeviceFunctionWithPipelines(" + spec.function + ", " + spec.pipelines + ")", key);
  }
  if (spec.alignment > 0)
    check(a, a.cublasdxSetDeviceFunctionOptionInt64(fn.h, kOptionCopyAlignment, spec.alignment),
          "cublasdxSetDeviceFunctionOptionInt64(COPY_ALIGNMENT)", key);
  r.symbol = traitString(a, fn.h, kFunctionTraitSymbol, a.cublasdxGetDeviceFunctionTraitStrSize,
                         a.cublasdxGetDeviceFunctionTraitStr, "cublasdxGetDeviceFunctionTraitStr(SYMBOL)", key);
  const long long functions[1] = {fn.h};
  r.ltoir = finalizeLtoir(a, spec.matmul.sm,
                          [&](long long c) { return a.cublasdxFinalizeDeviceFunctions(c, 1, functions); },
                          "cublasdxFinalizeDeviceFunctions", key, /*arch_specific=*/spec.pipeline.depth > 0);
  return r;
}

}  // namespace cj::mathdx
