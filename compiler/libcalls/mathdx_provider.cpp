// The MathDx provider: descriptors are the keys of cuBLASDx and cuFFTDx
// descriptors this process instantiated (mathdx/mathdx.h: specKey), which
// the Python Matmul / FFT object did when it was built; each resolves to
// libmathdx's entry point and its LTO-IR: a GEMM's shared-memory API with
// static leading dimensions, void(alpha*, a*, b*, beta*, c*); an FFT's
// register API, void(thread_data*[, smem*]); a Random's functions
// ("<key>:<function>"); a device function of cuBLASDx's tensor API.
#include "libcalls/provider.h"
#include "mathdx/mathdx.h"
#include "support/error.h"

namespace cj::libcalls {
namespace {

// A call of `symbol` with `pointers` generic pointer parameters and no
// result, defined by `ltoir`.
ResolvedCall pointerCall(const std::string& symbol, int pointers, std::shared_ptr<const std::vector<char>> ltoir) {
  ResolvedCall c;
  c.symbol = symbol;
  c.signature.ret = CType{};
  for (int i = 0; i < pointers; ++i) c.signature.params.push_back(CType::voidPointer());
  c.ltoir = std::move(ltoir);
  return c;
}

// A GEMM's or an FFT's entry point, from the descriptor's one LTO-IR module.
ResolvedCall entry(const std::string& spec, const std::string& symbol, const std::vector<std::vector<char>>& ltoir,
                   int pointers) {
  if (ltoir.size() != 1)
    throw ToolchainError("MathDx descriptor " + spec + " came as " + std::to_string(ltoir.size()) +
                         " LTO-IR modules; cudajit links one");
  return pointerCall(symbol, pointers, std::make_shared<const std::vector<char>>(ltoir[0]));
}

// A cuRANDDx function: init(seed*, subsequence*, offset*, state*),
// generate(state*, out*, params*), skip_offset / skip_subsequence(state*, n*).
// All of them share the descriptor's one module (linked once: driver/compile.cpp
// joins the calls by module).
ResolvedCall randomEntry(const mathdx::RandomResult& r, const std::string& function) {
  static const struct {
    const char* name;
    mathdx::RandomFunction id;
    int pointers;
  } kFunctions[] = {{"init", mathdx::RandomFunction::Init, 4},
                    {"generate", mathdx::RandomFunction::Generate, 3},
                    {"skip_offset", mathdx::RandomFunction::SkipOffset, 2},
                    {"skip_subsequence", mathdx::RandomFunction::SkipSubsequence, 2}};
  for (const auto& f : kFunctions)
    if (function == f.name) return pointerCall(r.symbols[static_cast<size_t>(f.id)], f.pointers, r.ltoir);
  throw ToolchainError("MathDx: a Random has no device function '" + function + "'");
}

class MathdxProvider : public Provider {
 public:
  Library library() const override { return Library::Mathdx; }

  std::vector<ResolvedCall> resolve(const std::vector<std::string>& keys) const override {
    std::vector<ResolvedCall> out;
    for (const std::string& key : keys) {
      const size_t colon = key.find(':');
      if (colon != std::string::npos) {   // "<key>:<function>" of a Random
        auto rng = mathdx::servedRandom(key.substr(0, colon));
        if (!rng) throw ToolchainError("MathDx descriptor " + key + " was not instantiated in this process");
        out.push_back(randomEntry(*rng, key.substr(colon + 1)));
      } else if (mathdx::servedResult(key)) {
        auto mm = mathdx::matmulCode(key);   // a Matmul object holds only its traits
        out.push_back(entry(mm->spec, mm->symbol, mm->ltoir, mm->api == "dynamic_ld" ? 8 : 5));
      } else if (auto tf = mathdx::servedTensorFunction(key)) {
        // cuBLASDx's tensor API: tensors by value (codegen/lower_mathdx.cpp declares it)
        out.push_back(entry(tf->spec, tf->symbol, tf->ltoir, 0));
        // a pipeline's functions rewrite TMA descriptors (tensormap.replace: sm_90a)
        out.back().arch_specific = tf->device_pipeline.storage_bytes > 0;
      } else if (auto fft = mathdx::servedFft(key)) {
        out.push_back(entry(fft->spec, fft->symbol, fft->ltoir, fft->execution == "Block" && fft->api.empty() ? 2 : 1));
      } else {
        throw ToolchainError("MathDx descriptor " + key + " was not instantiated in this process");
      }
    }
    return out;
  }
};

}  // namespace

const Provider& mathdxProvider() {
  static const MathdxProvider provider;
  return provider;
}

}  // namespace cj::libcalls
