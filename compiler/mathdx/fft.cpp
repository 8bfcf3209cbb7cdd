#include "mathdx/fft.h"

#include "mathdx/code.h"
#include "mathdx/enums.h"
#include "mathdx/library.h"
#include "mathdx/status.h"
#include "support/error.h"

namespace cj::mathdx {
namespace {

// cufftdxOperatorType (libcufftdx.h).
enum Op : int {
  kOpSize = 0, kOpDirection = 1, kOpType = 2, kOpPrecision = 3, kOpSm = 4, kOpExecution = 5,
  kOpFftsPerBlock = 6, kOpElementsPerThread = 7, kOpRealFftOptions = 9, kOpApi = 10,
};
// cufftdxTraitType.
enum Trait : int {
  kTraitValueType = 0, kTraitInputType = 1, kTraitOutputType = 2, kTraitImplicitTypeBatching = 3,
  kTraitElementsPerThread = 4, kTraitStorageSize = 5, kTraitStride = 6, kTraitBlockDim = 7,
  kTraitSharedMemorySize = 8, kTraitFftsPerBlock = 9, kTraitSymbolName = 10, kTraitInputLength = 11,
  kTraitOutputLength = 12, kTraitInputElementsPerThread = 13, kTraitOutputElementsPerThread = 14,
  kTraitSuggestedFftsPerBlock = 15,
};
// cufftdxApi: thread data in registers, void(value_type* thread_data[, value_type* smem]);
// the block's data in shared memory, void(value_type* smem).
constexpr long long kApiRegisters = 0, kApiSharedMemory = 1;

// cufftdxKnobType: the knobs FFT.valid() names.
struct Knob {
  const char* name;
  int id;
};
const Knob kKnobs[] = {{"elements_per_thread", 0}, {"ffts_per_block", 1}};

// The scalar traits; `block_only` ones libmathdx defines for Block execution only.
struct IntTrait {
  int id;
  const char* name;
  int64_t FftResult::*field;
  bool block_only;
};
const IntTrait kIntTraits[] = {
    {kTraitElementsPerThread, "ELEMENTS_PER_THREAD", &FftResult::elements_per_thread, false},
    {kTraitStorageSize, "STORAGE_SIZE", &FftResult::storage_size, false},
    {kTraitStride, "STRIDE", &FftResult::stride, false},
    {kTraitImplicitTypeBatching, "IMPLICIT_TYPE_BATCHING", &FftResult::implicit_type_batching, false},
    {kTraitInputLength, "INPUT_LENGTH", &FftResult::input_length, false},
    {kTraitOutputLength, "OUTPUT_LENGTH", &FftResult::output_length, false},
    {kTraitInputElementsPerThread, "INPUT_ELEMENTS_PER_THREAD", &FftResult::input_elements_per_thread, false},
    {kTraitOutputElementsPerThread, "OUTPUT_ELEMENTS_PER_THREAD", &FftResult::output_elements_per_thread, false},
    {kTraitSharedMemorySize, "SHARED_MEMORY_SIZE", &FftResult::shared_memory_size, true},
    {kTraitFftsPerBlock, "FFTS_PER_BLOCK", &FftResult::ffts_per_block, true},
    {kTraitSuggestedFftsPerBlock, "SUGGESTED_FFTS_PER_BLOCK", &FftResult::suggested_ffts_per_block, true},
};
struct TypeTrait {
  int id;
  const char* name;
  std::string FftResult::*field;
};
const TypeTrait kTypeTraits[] = {
    {kTraitValueType, "VALUE_TYPE", &FftResult::value_type},
    {kTraitInputType, "INPUT_TYPE", &FftResult::input_type},
    {kTraitOutputType, "OUTPUT_TYPE", &FftResult::output_type},
};

// The operators a spec sets; optional ones only when given.
std::vector<Operator> operatorsOf(const FftSpec& s) {
  if (s.size <= 0) throw CompileError("", 0, 0, "mathdx.fft", "FFT size must be positive, got " + std::to_string(s.size));
  std::string direction = s.direction;
  if (direction.empty() && s.fft_type != "c2c") direction = s.fft_type == "r2c" ? "forward" : "inverse";
  if (direction.empty())
    throw CompileError("", 0, 0, "mathdx.fft", "a c2c FFT needs direction ('forward' or 'inverse')");
  const int execution = parseEnum(EnumKind::Execution, s.execution);
  if (s.execution == "Warp") throw CompileError("", 0, 0, "mathdx.fft", "execution is 'Block' or 'Thread'");
  if (!s.api.empty() && s.api != "shared_memory")
    throw CompileError("", 0, 0, "mathdx.fft", "execute_api is 'register_memory' or 'shared_memory', got '" + s.api + "'");
  if (s.api == "shared_memory" && s.execution != "Block")
    throw CompileError("", 0, 0, "mathdx.fft", "the shared-memory API (execute_api='shared_memory') is for Block execution");
  std::vector<Operator> ops = {
      {kOpSize, "SIZE", {s.size}},
      {kOpType, "TYPE", {parseEnum(EnumKind::FftType, s.fft_type)}},
      {kOpDirection, "DIRECTION", {parseEnum(EnumKind::Direction, direction)}},
      {kOpPrecision, "PRECISION", {parseEnum(EnumKind::Precision, s.precision)}},
      {kOpSm, "SM", {static_cast<long long>(s.sm) * 10}},
      {kOpExecution, "EXECUTION", {execution}},
      {kOpApi, "API", {s.api.empty() ? kApiRegisters : kApiSharedMemory}},
  };
  if (s.elements_per_thread > 0) ops.push_back({kOpElementsPerThread, "ELEMENTS_PER_THREAD", {s.elements_per_thread}});
  if (s.ffts_per_block > 0) {
    if (s.execution != "Block") throw CompileError("", 0, 0, "mathdx.fft", "ffts_per_block is for Block execution");
    ops.push_back({kOpFftsPerBlock, "FFTS_PER_BLOCK", {s.ffts_per_block}});
  }
  if (!s.complex_layout.empty() || !s.real_mode.empty())
    ops.push_back({kOpRealFftOptions, "REAL_FFT_OPTIONS",
                   {parseEnum(EnumKind::ComplexLayout, s.complex_layout.empty() ? "natural" : s.complex_layout),
                    parseEnum(EnumKind::RealMode, s.real_mode.empty() ? "normal" : s.real_mode)}});
  return ops;
}

}  // namespace

FftResult compileFft(const FftSpec& spec) {
  const Api& a = api();
  const std::string key = spec.toString();
  std::vector<Operator> ops = operatorsOf(spec);   // spelling errors before any libmathdx call

  FftResult r;
  r.spec = key;
  r.execution = spec.execution;
  r.api = spec.api;
  r.size = spec.size;
  Handle desc{a.cufftdxDestroyDescriptor};
  check(a, a.cufftdxCreateDescriptor(&desc.h), "cufftdxCreateDescriptor", key);
  setOperators(a, desc.h, ops, {"cufftdx", a.cufftdxSetOperatorInt64, a.cufftdxSetOperatorInt64s}, key);
  for (const TypeTrait& t : kTypeTraits) {
    int type = 0;
    check(a, a.cufftdxGetTraitCommondxDataType(desc.h, t.id, &type),
          std::string("cufftdxGetTraitCommondxDataType(") + t.name + ")", key);
    const ValueType* vt = findValueType(type);
    if (!vt) throw ToolchainError("libmathdx returned value type " + std::to_string(type) +
                                  ", unknown to cudajit (mathdx/enums.def)");
    r.*t.field = vt->name;
  }
  const bool block = spec.execution == "Block";
  for (const IntTrait& t : kIntTraits) {
    if (t.block_only && !block) continue;   // kNoTrait
    long long v = 0;
    check(a, a.cufftdxGetTraitInt64(desc.h, t.id, &v), std::string("cufftdxGetTraitInt64(") + t.name + ")", key);
    r.*t.field = v;
  }
  if (block) {
    long long dims[3] = {0, 0, 0};
    check(a, a.cufftdxGetTraitInt64s(desc.h, kTraitBlockDim, 3, dims), "cufftdxGetTraitInt64s(BLOCK_DIM)", key);
    for (int i = 0; i < 3; ++i) r.block_dim[i] = dims[i];
  }
  r.symbol = traitString(a, desc.h, kTraitSymbolName, a.cufftdxGetTraitStrSize, a.cufftdxGetTraitStr,
                         "cufftdxGetTraitStr(SYMBOL_NAME)", key);
  if (spec.code)
    r.ltoir = finalizeLtoir(a, spec.sm, [&](long long code) { return a.cufftdxFinalizeCode(code, desc.h); },
                            "cufftdxFinalizeCode", key);
  return r;
}

std::vector<std::vector<int64_t>> fftKnobs(const FftSpec& spec, const std::vector<std::string>& knobs) {
  std::vector<int> ids;
  for (const std::string& k : knobs) {
    const Knob* hit = nullptr;
    for (const Knob& row : kKnobs)
      if (k == row.name) hit = &row;
    if (!hit)
      throw CompileError("", 0, 0, "FFT.valid",
                         "unknown knob '" + k + "' (the knobs are 'elements_per_thread' and 'ffts_per_block')");
    ids.push_back(hit->id);
  }
  if (ids.empty()) throw CompileError("", 0, 0, "FFT.valid", "name at least one knob");
  const Api& a = api();
  const std::string key = spec.toString();
  std::vector<Operator> ops = operatorsOf(spec);
  Handle desc{a.cufftdxDestroyDescriptor};
  check(a, a.cufftdxCreateDescriptor(&desc.h), "cufftdxCreateDescriptor", key);
  setOperators(a, desc.h, ops, {"cufftdx", a.cufftdxSetOperatorInt64, a.cufftdxSetOperatorInt64s}, key);
  // The values of every combination, one after the other: knobs.size() a combination.
  size_t count = 0;
  check(a, a.cufftdxGetKnobInt64Size(desc.h, ids.size(), ids.data(), &count), "cufftdxGetKnobInt64Size", key);
  std::vector<long long> values(count);
  if (count)
    check(a, a.cufftdxGetKnobInt64s(desc.h, ids.size(), ids.data(), values.size(), values.data()),
          "cufftdxGetKnobInt64s", key);
  std::vector<std::vector<int64_t>> out;
  for (size_t i = 0; i + ids.size() <= values.size(); i += ids.size())
    out.emplace_back(values.begin() + static_cast<std::ptrdiff_t>(i),
                     values.begin() + static_cast<std::ptrdiff_t>(i + ids.size()));
  return out;
}

}  // namespace cj::mathdx
