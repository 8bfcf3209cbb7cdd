// nvvmBackend() and llvmBackend(): the Backends (backend.h) over the one
// lowering that writes LLVM assembly; they differ in who reads it.
#include "codegen/backend.h"
#include "codegen/nvvm_emitter.h"

namespace cj::codegen {
namespace {

class TextBackend : public Backend {
 public:
  std::string kernelSymbol(const ir::Function& kernel) const override {
    return codegen::kernelSymbol(kernel);
  }
  std::string externDeclaration(std::string_view symbol, const CSignature& signature) const override {
    return nvvmDeclaration(symbol, signature);
  }
  ModuleArtifact emit(const ir::Module& typed, const CodegenOptions& options,
                      const libcalls::ResolvedCalls& library_calls) const override {
    CodegenOptions o = options;
    o.dialect = dialect();
    return {format(), emitNvvm(typed, o, library_calls)};
  }

 protected:
  virtual ModuleArtifact::Format format() const = 0;
  virtual Dialect dialect() const = 0;
};

class NvvmTextBackend final : public TextBackend {
 public:
  std::string_view name() const override { return "nvvm-text"; }

 private:
  ModuleArtifact::Format format() const override { return ModuleArtifact::Format::NvvmText; }
  Dialect dialect() const override { return Dialect::Nvvm; }
};

class LlvmTextBackend final : public TextBackend {
 public:
  std::string_view name() const override { return "llvm-nvptx"; }

 private:
  ModuleArtifact::Format format() const override { return ModuleArtifact::Format::LlvmText; }
  Dialect dialect() const override { return Dialect::Llvm; }
};

}  // namespace

const Backend& nvvmBackend() {
  static const NvvmTextBackend backend;
  return backend;
}

const Backend& llvmBackend() {
  static const LlvmTextBackend backend;
  return backend;
}

}  // namespace cj::codegen
