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
  ModuleArtifact emit(const ir::Module& typed, const CodegenOptions& options,
                      const std::vector<ResolvedLibraryCall>&) const override {
    // Library calls: lower_cub.cpp still resolves them itself (see backend.h).
    return {ModuleArtifact::Format::NvvmText, emitNvvm(typed, options)};
  }
};

}  // namespace

const Backend& nvvmBackend() {
  static const NvvmTextBackend backend;
  return backend;
}

}  // namespace cj::codegen
