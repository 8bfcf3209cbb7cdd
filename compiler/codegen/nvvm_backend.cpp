// nvvmBackend(): the Backend (backend.h) that writes NVVM IR text.
#include "codegen/backend.h"
#include "codegen/nvvm_emitter.h"

namespace cj::codegen {
namespace {

class NvvmTextBackend final : public Backend {
 public:
  std::string_view name() const override { return "nvvm-text"; }
  std::string kernelSymbol(const ir::Function& kernel) const override {
    return codegen::kernelSymbol(kernel);
  }
  std::string externDeclaration(std::string_view symbol, const CSignature& signature) const override {
    return nvvmDeclaration(symbol, signature);
  }
  ModuleArtifact emit(const ir::Module& typed, const CodegenOptions& options,
                      const libcalls::ResolvedCalls& library_calls) const override {
    return {ModuleArtifact::Format::NvvmText, emitNvvm(typed, options, library_calls)};
  }
};

}  // namespace

const Backend& nvvmBackend() {
  static const NvvmTextBackend backend;
  return backend;
}

}  // namespace cj::codegen
