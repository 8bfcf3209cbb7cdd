// Lowering of `intrinsic foreign "<key>"` (ir/intrinsics.def): a call of a
// device function the user links (libcalls/foreign.h) with numba's ABI,
// `int name(T* return_value, args...)`, declared from the signature the
// library-call stage resolved. The result comes back through a slot in
// local memory (as numba allocates it); a CPointer argument arrives as the
// i64 address of an array's data. The status is ignored (numba's foreign
// functions always return 0).
#include "codegen/emitter.h"
#include "codegen/llvm_types.h"
#include "libcalls/library_call.h"

namespace cj::codegen {

void lowerForeignCall(FunctionEmitter& fe, const ir::Instr& in) {
  const libcalls::ResolvedCall* entry = fe.mod().libraryCalls().find(libcalls::Library::Foreign, in.cval.s);
  if (!entry) fe.fail(in, "foreign", "internal error: foreign call '" + in.cval.s + "' was not resolved");
  const CSignature& sig = entry->signature;
  if (sig.params.size() != in.operands.size() + 1)
    fe.fail(in, "foreign", "intrinsic foreign has " + std::to_string(in.operands.size()) + " operands, its declaration " +
                               std::to_string(sig.params.size() - 1));
  fe.mod().declare(nvvmDeclaration(entry->symbol, sig));
  const bool returns = sig.params[0].kind == CType::Kind::Pointer;
  const std::string ret_type = returns ? llvmScalarType(sig.params[0].scalar) : "i8";
  const std::string slot = fe.entryAlloca(ret_type, 16);
  std::string list = ret_type + "* " + slot;
  for (size_t i = 0; i < in.operands.size(); ++i) {
    const CType& p = sig.params[i + 1];
    const ir::Instr* v = in.operands[i];
    if (p.kind == CType::Kind::Value) {
      list += ", " + llvmScalarType(p.scalar) + " " + fe.val(v);
    } else {   // the address of an array's data
      const std::string type = p.kind == CType::Kind::Pointer ? llvmScalarType(p.scalar) + "*" : "i8*";
      list += ", " + type + " " + fe.emit("inttoptr i64 " + fe.val(v) + " to " + type);
    }
  }
  fe.emitLine("call i32 @" + entry->symbol + "(" + list + ")");
  if (returns) fe.emitResult(in, "load " + ret_type + ", " + ret_type + "* " + slot);
}

}  // namespace cj::codegen
