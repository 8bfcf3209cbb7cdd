// Lowering of `intrinsic mathdx "<key>"` (ir/intrinsics.def): a call of
// libmathdx's entry point with generic pointers, declared from the signature
// the library-call stage resolved (libcalls/mathdx_provider.cpp); nvJitLink
// joins its LTO-IR. cuBLASDx's shared-memory API with static leading
// dimensions is `void f(c_t* alpha, a_t* a, b_t* b, c_t* beta, c_t* c)`:
// alpha and beta (already of C's value type) go through allocas; cuFFTDx's
// register API `void f(value_t* thread_data[, value_t* smem])`. Arrays pass
// their data pointers. A kernel calling a block-wide routine is required to
// run with the block shape the descriptor was built for (.reqntid).
#include <array>

#include "codegen/emitter.h"
#include "codegen/llvm_types.h"
#include "libcalls/library_call.h"
#include "mathdx/mathdx.h"

namespace cj::codegen {

void lowerMathdxCall(FunctionEmitter& fe, const ir::Instr& in) {
  const libcalls::ResolvedCall* entry = fe.mod().libraryCalls().find(libcalls::Library::Mathdx, in.cval.s);
  std::shared_ptr<const mathdx::MatmulResult> mm = mathdx::servedResult(in.cval.s);
  std::shared_ptr<const mathdx::FftResult> fft = mm ? nullptr : mathdx::servedFft(in.cval.s);
  if (!entry || (!mm && !fft))
    fe.fail(in, "mathdx", "internal error: MathDx call '" + in.cval.s + "' was not resolved");
  if (in.operands.size() != entry->signature.params.size())
    fe.fail(in, "mathdx", "intrinsic mathdx takes " + std::to_string(entry->signature.params.size()) +
                              " operands, has " + std::to_string(in.operands.size()));
  fe.mod().declare(nvvmDeclaration(entry->symbol, entry->signature));
  // A block-wide routine is built for one block shape (a Thread FFT is not).
  const std::array<int64_t, 3>* dims = mm ? &mm->block_dim : fft->execution == "Block" ? &fft->block_dim : nullptr;
  if (dims) {
    const int block[3] = {static_cast<int>((*dims)[0]), static_cast<int>((*dims)[1]), static_cast<int>((*dims)[2])};
    fe.mod().requireBlock(block);
  }

  auto bytePointer = [&](const std::string& ptr, const std::string& elem) {
    return fe.emit("bitcast " + elem + "* " + ptr + " to i8*");
  };
  std::string list;
  for (const ir::Instr* v : in.operands) {
    const std::string t = llvmScalarType(v->type->scalar);   // the element type, or the scalar's
    std::string p;
    if (v->type->is(TypeKind::Array)) {
      p = bytePointer(fe.emit("extractvalue " + llvmViewType(v->type) + " " + fe.val(v) + ", 0"), t);
    } else {   // alpha, beta: by pointer
      std::string slot = fe.entryAlloca(t, 16);
      fe.emitLine("store " + t + " " + fe.val(v) + ", " + t + "* " + slot);
      p = bytePointer(slot, t);
    }
    list += (list.empty() ? "i8* " : ", i8* ") + p;
  }
  fe.emitLine("call void @" + entry->symbol + "(" + list + ")");
}

}  // namespace cj::codegen
