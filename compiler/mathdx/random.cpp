#include "mathdx/random.h"

#include "mathdx/code.h"
#include "mathdx/enums.h"
#include "mathdx/library.h"
#include "mathdx/status.h"
#include "support/error.h"

namespace cj::mathdx {
namespace {

// curanddxOperatorType (libcuranddx.h).
enum Op : int {
  kOpGenerator = 0, kOpPhiloxRounds = 1, kOpSm = 2, kOpExecution = 3, kOpDistribution = 4,
  kOpOutputType = 5, kOpGenerateMethod = 6, kOpNormalMethod = 7, kOpDeviceFunctions = 8,
};
// curanddxDeviceFunctionType: the functions made, and the traits naming them
// (curanddxTraitType), in RandomFunction order.
constexpr long long kFunctionBits[] = {1 << 2, 1 << 1, 1 << 4, 1 << 5};
constexpr int kSymbolTraits[] = {1, 0, 3, 4};
constexpr const char* kSymbolNames[] = {"INIT_STATE", "GENERATE", "SKIP_OFFSET", "SKIP_SUBSEQUENCE"};
constexpr int kTraitStateSize = 6, kTraitStateAlignment = 7;
constexpr int kExecutionThread = 0;

[[noreturn]] void refuse(const std::string& message) { throw CompileError("", 0, 0, "mathdx.random", message); }

}  // namespace

RandomResult compileRandom(const RandomSpec& spec) {
  const Api& a = api();
  const std::string key = spec.toString();
  // Spellings first: errors before any libmathdx call.
  const int generator = parseEnum(EnumKind::Generator, spec.generator);
  const int distribution = parseEnum(EnumKind::Distribution, spec.distribution);
  const int method = parseEnum(EnumKind::GenerateMethod, spec.method);
  const ValueType* output = findValueType(spec.output_type);
  if (!output) refuse("unknown output type '" + spec.output_type + "'");
  const bool normal = spec.distribution == "normal" || spec.distribution == "log_normal";
  if (!spec.normal_method.empty() && !normal) refuse("normal_method is for the normal and log-normal distributions");
  const int normal_method = spec.normal_method.empty() ? -1 : parseEnum(EnumKind::NormalMethod, spec.normal_method);
  if (spec.philox_rounds != 0 && spec.generator != "philox4_32") refuse("philox_rounds is for the philox4_32 generator");

  RandomResult r;
  r.spec = key;
  r.output_type = spec.output_type;
  r.param_type = spec.distribution == "poisson" ? "float64" : spec.output_type;
  r.count = int64_t{1} << method;
  Handle desc{a.curanddxDestroyDescriptor};
  check(a, a.curanddxCreateDescriptor(&desc.h), "curanddxCreateDescriptor", key);
  long long functions = 0;
  for (long long bit : kFunctionBits) functions |= bit;
  std::vector<Operator> ops = {
      {kOpGenerator, "GENERATOR", {generator}},       {kOpSm, "SM", {static_cast<long long>(spec.sm) * 10}},
      {kOpExecution, "EXECUTION", {kExecutionThread}}, {kOpDistribution, "DISTRIBUTION", {distribution}},
      {kOpOutputType, "OUTPUT_TYPE", {output->value}}, {kOpGenerateMethod, "GENERATE_METHOD", {method}},
      {kOpDeviceFunctions, "DEVICE_FUNCTIONS", {functions}},
  };
  if (spec.philox_rounds > 0) ops.push_back({kOpPhiloxRounds, "PHILOX_ROUNDS", {spec.philox_rounds}});
  if (normal_method >= 0) ops.push_back({kOpNormalMethod, "NORMAL_METHOD", {normal_method}});
  setOperators(a, desc.h, ops, {"curanddx", a.curanddxSetOperatorInt64, nullptr}, key);
  for (size_t f = 0; f < r.symbols.size(); ++f)
    r.symbols[f] = traitString(a, desc.h, kSymbolTraits[f], a.curanddxGetTraitStrSize, a.curanddxGetTraitStr,
                               std::string("curanddxGetTraitStr(SYMBOL_") + kSymbolNames[f] + "_NAME)", key);
  long long state_size = 0, state_alignment = 0;
  check(a, a.curanddxGetTraitInt64(desc.h, kTraitStateSize, &state_size), "curanddxGetTraitInt64(STATE_SIZE)", key);
  check(a, a.curanddxGetTraitInt64(desc.h, kTraitStateAlignment, &state_alignment),
        "curanddxGetTraitInt64(STATE_ALIGNMENT)", key);
  r.state_size = state_size;
  r.state_alignment = state_alignment;
  auto modules = finalizeLtoir(a, spec.sm, [&](long long code) { return a.curanddxFinalizeCode(code, desc.h); },
                               "curanddxFinalizeCode", key);
  if (modules.size() != 1)
    throw ToolchainError("libmathdx made " + std::to_string(modules.size()) + " LTO-IR modules for " + key +
                         "; cudajit links one");
  r.ltoir = std::make_shared<const std::vector<char>>(std::move(modules[0]));
  return r;
}

}  // namespace cj::mathdx
