// NVVM declarations of extern "C" functions from their C ABI (types/c_abi.h):
// the entry points of library calls, declared by the module that calls them.
#include "codegen/llvm_types.h"
#include "codegen/nvvm_emitter.h"

namespace cj::codegen {
namespace {

// LLVM 7 typed pointers in the generic address space; signedness lives in
// the operations, not the ABI (uint32 is i32).
std::string nvvmType(const CType& t) {
  switch (t.kind) {
    case CType::Kind::Void: return "void";
    case CType::Kind::Value: return llvmScalarType(t.scalar);
    case CType::Kind::Pointer: return llvmScalarType(t.scalar) + "*";
    case CType::Kind::VoidPointer: return "i8*";
  }
  return "void";
}

}  // namespace

std::string nvvmDeclaration(std::string_view symbol, const CSignature& signature) {
  std::string out = "declare " + nvvmType(signature.ret) + " @" + std::string(symbol) + "(";
  for (size_t i = 0; i < signature.params.size(); ++i)
    out += (i ? ", " : "") + nvvmType(signature.params[i]);
  return out + ")";
}

}  // namespace cj::codegen
