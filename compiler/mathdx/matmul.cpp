#include "mathdx/matmul.h"

#include <memory>
#include <mutex>

#include "mathdx/code.h"
#include "mathdx/enums.h"
#include "mathdx/library.h"
#include "mathdx/status.h"
#include "support/error.h"

namespace cj::mathdx {
namespace {

// cublasdxOperatorType (libcublasdx.h).
enum Op : int {
  kOpFunction = 0, kOpSize = 1, kOpType = 2, kOpPrecision = 3, kOpSm = 4, kOpExecution = 5,
  kOpBlockDim = 6, kOpLeadingDimension = 7, kOpTransposeMode = 8, kOpApi = 9,
  kOpArrangement = 10, kOpAlignment = 11, kOpStaticBlockDim = 12, kOpEnableInputStreaming = 13, kOpWithPipeline = 14,
};
// cublasdxTraitType.
enum Trait : int {
  kTraitValueType = 0, kTraitSize = 1, kTraitBlockDim = 3, kTraitLeadingDimension = 4,
  kTraitSymbolName = 5, kTraitArrangement = 6, kTraitAlignment = 7,
  kTraitSuggestedLeadingDimension = 8, kTraitSuggestedBlockDim = 9, kTraitMaxThreadsPerBlock = 10,
};
// cublasdxApi: the shared-memory pointer API, void(alpha*, a*, b*, beta*, c*);
// with leading dimensions at the call, void(alpha*, a*, lda*, b*, ldb*, beta*, c*, ldc*).
// cuBLASDx's tensor API: the device functions of tensor.cpp on opaque tensors.
constexpr long long kApiSmem = 0, kApiSmemDynamicLd = 1, kApiTensors = 2;

// The integer-array traits and where they go. (BLOCK_SIZE is left out:
// libmathdx 0.4 answers it with COMMONDX_INTERNAL_ERROR; MAX_THREADS_PER_BLOCK
// is the same product.)
struct ArrayTrait {
  int id;
  const char* name;
  std::array<int64_t, 3> MatmulResult::*field;
};
const ArrayTrait kArrayTraits[] = {
    {kTraitSize, "SIZE", &MatmulResult::size},
    {kTraitBlockDim, "BLOCK_DIM", &MatmulResult::block_dim},
    {kTraitSuggestedBlockDim, "SUGGESTED_BLOCK_DIM", &MatmulResult::suggested_block_dim},
    {kTraitLeadingDimension, "LEADING_DIMENSION", &MatmulResult::leading_dimension},
    {kTraitSuggestedLeadingDimension, "SUGGESTED_LEADING_DIMENSION",
     &MatmulResult::suggested_leading_dimension},
    {kTraitAlignment, "ALIGNMENT", &MatmulResult::alignment},
};

bool anySet(const std::array<int64_t, 3>& v) { return v[0] || v[1] || v[2]; }

template <size_t N>
std::vector<long long> parseAll(EnumKind kind, const std::array<std::string, N>& v) {
  std::vector<long long> out;
  for (const auto& s : v) out.push_back(parseEnum(kind, s));
  return out;
}

// The operators a spec sets, in cuBLASDx's order; optional ones only when given.
std::vector<Operator> operatorsOf(const MatmulSpec& s) {
  if (!s.api.empty() && s.api != "dynamic_ld" && s.api != "tensors")
    throw CompileError("", 0, 0, "mathdx.matmul", "api is '', 'dynamic_ld' or 'tensors', got '" + s.api + "'");
  std::vector<Operator> ops = {
      {kOpFunction, "FUNCTION", {parseEnum(EnumKind::Function, s.function)}},
      {kOpSize, "SIZE", {s.size[0], s.size[1], s.size[2]}},
      {kOpType, "TYPE", {parseEnum(EnumKind::DataType, s.data_type)}},
      {kOpPrecision, "PRECISION", parseAll(EnumKind::Precision, s.precision)},
      {kOpSm, "SM", {static_cast<long long>(s.sm) * 10}},   // 800 for sm_80
      {kOpExecution, "EXECUTION", {parseEnum(EnumKind::Execution, s.execution)}},
      {kOpApi, "API", {s.api.empty() ? kApiSmem : s.api == "dynamic_ld" ? kApiSmemDynamicLd : kApiTensors}},
  };
  if (anySet(s.block_dim)) ops.push_back({kOpBlockDim, "BLOCK_DIM", {s.block_dim.begin(), s.block_dim.end()}});
  if (anySet(s.leading_dimension))
    ops.push_back({kOpLeadingDimension, "LEADING_DIMENSION",
                   {s.leading_dimension.begin(), s.leading_dimension.end()}});
  if (anySet(s.alignment)) ops.push_back({kOpAlignment, "ALIGNMENT", {s.alignment.begin(), s.alignment.end()}});
  if (!s.arrangement[0].empty())
    ops.push_back({kOpArrangement, "ARRANGEMENT", parseAll(EnumKind::Arrangement, s.arrangement)});
  if (s.static_block_dim) ops.push_back({kOpStaticBlockDim, "STATIC_BLOCK_DIM", {1}});
  if (s.input_streaming) ops.push_back({kOpEnableInputStreaming, "ENABLE_INPUT_STREAMING", {1}});
  if (s.with_pipeline) ops.push_back({kOpWithPipeline, "WITH_PIPELINE", {1}});
  if (!s.transpose_mode[0].empty())
    ops.push_back({kOpTransposeMode, "TRANSPOSE_MODE", parseAll(EnumKind::Transpose, s.transpose_mode)});
  return ops;
}

// Elements a (rows x cols) matrix takes in shared memory at leading dimension ld.
int64_t storedElements(int64_t rows, int64_t cols, int64_t ld, const std::string& arrangement) {
  return ld * (arrangement == "row_major" ? rows : cols);
}

// A, B, C one after the other, each at its alignment (cuBLASDx's shared
// storage layout for the pointer API).
int64_t sharedMemorySize(const MatmulResult& r) {
  const int64_t m = r.size[0], n = r.size[1], k = r.size[2];
  const int64_t rows[3] = {m, k, m}, cols[3] = {k, n, n};
  int64_t offset = 0;
  for (int i = 0; i < 3; ++i) {
    int64_t align = r.alignment[i] > 0 ? r.alignment[i] : 1;
    offset = (offset + align - 1) / align * align;
    offset += storedElements(rows[i], cols[i], r.leading_dimension[i], r.arrangement[i]) * r.value_size[i];
  }
  return offset;
}

}  // namespace

std::vector<Operator> matmulOperators(const MatmulSpec& spec) { return operatorsOf(spec); }

MatmulResult compileMatmul(const MatmulSpec& spec) {
  const Api& a = api();
  const std::string key = spec.toString();
  std::vector<Operator> ops = operatorsOf(spec);   // spelling errors before any libmathdx call

  MatmulResult r;
  r.spec = key;
  r.api = spec.api;
  Handle desc{a.cublasdxDestroyDescriptor};
  check(a, a.cublasdxCreateDescriptor(&desc.h), "cublasdxCreateDescriptor", key);
  setOperators(a, desc.h, ops, {"cublasdx", a.cublasdxSetOperatorInt64, a.cublasdxSetOperatorInt64s}, key);

  int types[3] = {0, 0, 0};
  check(a, a.cublasdxGetTraitCommondxDataTypes(desc.h, kTraitValueType, 3, types),
        "cublasdxGetTraitCommondxDataTypes(VALUE_TYPE)", key);
  for (int i = 0; i < 3; ++i) {
    const ValueType* vt = findValueType(types[i]);
    if (!vt) throw ToolchainError("libmathdx returned value type " + std::to_string(types[i]) +
                                  ", unknown to cudajit (mathdx/enums.def)");
    r.value_type[i] = vt->name;
    r.value_size[i] = vt->size;
  }
  for (const ArrayTrait& t : kArrayTraits) {
    long long v[3] = {0, 0, 0};
    check(a, a.cublasdxGetTraitInt64s(desc.h, t.id, 3, v), std::string("cublasdxGetTraitInt64s(") + t.name + ")", key);
    for (int i = 0; i < 3; ++i) (r.*t.field)[i] = v[i];
  }
  long long arrangement[3] = {0, 0, 0};
  check(a, a.cublasdxGetTraitInt64s(desc.h, kTraitArrangement, 3, arrangement),
        "cublasdxGetTraitInt64s(ARRANGEMENT)", key);
  for (int i = 0; i < 3; ++i) r.arrangement[i] = enumName(EnumKind::Arrangement, int(arrangement[i]));
  long long max_threads = 0;
  check(a, a.cublasdxGetTraitInt64(desc.h, kTraitMaxThreadsPerBlock, &max_threads),
        "cublasdxGetTraitInt64(MAX_THREADS_PER_BLOCK)", key);
  r.max_threads_per_block = max_threads;
  r.symbol = traitString(a, desc.h, kTraitSymbolName, a.cublasdxGetTraitStrSize, a.cublasdxGetTraitStr,
                         "cublasdxGetTraitStr(SYMBOL_NAME)", key);
  r.shared_memory_size = sharedMemorySize(r);

  if (spec.code)
    r.ltoir = finalizeLtoir(a, spec.sm, [&](long long code) { return a.cublasdxFinalizeCode(code, desc.h); },
                            "cublasdxFinalizeCode", key);
  return r;
}

}  // namespace cj::mathdx
