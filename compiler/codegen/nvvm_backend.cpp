// nvvmBackend() and llvmBackend(): the Backends (backend.h) over the one
// lowering that writes LLVM assembly; they differ in who reads it.
#include "codegen/backend.h"
#include "codegen/nvvm_emitter.h"

namespace cj::codegen {
namespace {

// The lowering's text for one reader: its name, artifact format and dialect.
class TextBackend final : public Backend {
 public:
  constexpr TextBackend(std::string_view name, ModuleArtifact::Format format, Dialect dialect)
      : name_(name), format_(format), dialect_(dialect) {}
  std::string_view name() const override { return name_; }
  std::string kernelSymbol(const ir::Function& kernel) const override {
    return codegen::kernelSymbol(kernel);
  }
  std::string externDeclaration(std::string_view symbol, const CSignature& signature) const override {
    return nvvmDeclaration(symbol, signature);
  }
  ModuleArtifact emit(const ir::Module& typed, const CodegenOptions& options,
                      const libcalls::ResolvedCalls& library_calls) const override {
    CodegenOptions o = options;
    o.dialect = dialect_;
    return {format_, emitNvvm(typed, o, library_calls)};
  }

 private:
  std::string_view name_;
  ModuleArtifact::Format format_;
  Dialect dialect_;
};

}  // namespace

const Backend& nvvmBackend() {
  static const TextBackend backend("nvvm-text", ModuleArtifact::Format::NvvmText, Dialect::Nvvm);
  return backend;
}

const Backend& llvmBackend() {
  static const TextBackend backend("llvm-nvptx", ModuleArtifact::Format::LlvmText, Dialect::Llvm);
  return backend;
}

}  // namespace cj::codegen
