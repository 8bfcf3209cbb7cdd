// Lowering of `intrinsic mathdx "<key>"` (ir/intrinsics.def): a call of
// libmathdx's entry point with generic pointers, declared from the signature
// the library-call stage resolved (libcalls/mathdx_provider.cpp); nvJitLink
// joins its LTO-IR. cuBLASDx's shared-memory API with static leading
// dimensions is `void f(c_t* alpha, a_t* a, b_t* b, c_t* beta, c_t* c)`:
// alpha and beta (already of C's value type) go through allocas; cuFFTDx's
// register API `void f(value_t* thread_data[, value_t* smem])`; cuRANDDx's
// functions take scalars by pointer and generate's (a, b) as one pair. Arrays pass
// their data pointers. A kernel calling a block-wide routine is required to
// run with the block shape the descriptor was built for (.reqntid).
#include <array>
#include <cstdio>

#include "codegen/emitter.h"
#include "codegen/llvm_types.h"
#include "libcalls/library_call.h"
#include "mathdx/mathdx.h"

namespace cj::codegen {
namespace {

// The launch block a block-wide call's kernel is compiled for, named by the
// call ("block=XxYxZ": typeinfer/rules_mathdx.cpp), else `dims`.
void requireCallBlock(FunctionEmitter& fe, const ir::Instr& in, const std::array<int64_t, 3>* dims) {
  int block[3] = {0, 0, 0};
  if (dims) for (int d = 0; d < 3; ++d) block[d] = static_cast<int>((*dims)[d]);
  for (const std::string& n : in.names)
    if (n.rfind("block=", 0) == 0) std::sscanf(n.c_str(), "block=%dx%dx%d", &block[0], &block[1], &block[2]);
  if (block[0] > 0) fe.mod().requireBlock(block);
}

// A device function of cuBLASDx's tensor API: a tensor operand (marker,
// array[, ld]) goes by value as libmathdx's struct {i8* ptr} or {i8* ptr,
// [1 x i64] ld}, as does a pipeline (a tile's marker and local state, or a
// DevicePipeline's (marker, address)); an array alone as its data pointer; a
// number (alpha, beta, an index) by pointer.
void lowerTensorCall(FunctionEmitter& fe, const ir::Instr& in, const std::string& symbol) {
  std::string params, args;
  for (const ir::Instr* v : in.operands) {
    std::string type, value;
    if (v->type->is(TypeKind::Tuple) && v->type->elems[1]->isScalar()) {
      // a DevicePipeline: its state's address, as struct {void* ptr}
      const std::string word = fe.emit("extractvalue " + llvmType(v->type) + " " + fe.val(v) + ", 0");
      type = "{i8*}";
      value = fe.emit("insertvalue {i8*} undef, i8* " + fe.emit("inttoptr i64 " + word + " to i8*") + ", 0");
    } else if (v->type->is(TypeKind::Array)) {   // a raw pointer: a tile's shared memory, an index pair
      const std::string data = fe.emit("extractvalue " + llvmViewType(v->type) + " " + fe.val(v) + ", 0");
      type = "i8*";
      value = fe.emit("bitcast " + llvmElemType(v->type) + "* " + data + " to i8*");
    } else if (v->type->is(TypeKind::Tuple)) {
      const Type* array = v->type->elems[1];
      const bool ld = v->type->elems.size() == 3;
      type = ld ? "{i8*, [1 x i64]}" : "{i8*}";
      const std::string view = fe.emit("extractvalue " + llvmType(v->type) + " " + fe.val(v) + ", 0");
      const std::string data = fe.emit("extractvalue " + llvmViewType(array) + " " + view + ", 0");
      const std::string ptr = fe.emit("bitcast " + llvmElemType(array) + "* " + data + " to i8*");
      value = fe.emit("insertvalue " + type + " undef, i8* " + ptr + ", 0");
      if (ld) {
        const std::string n = fe.emit("extractvalue " + llvmType(v->type) + " " + fe.val(v) + ", 1");
        value = fe.emit("insertvalue " + type + " " + value + ", i64 " + n + ", 1, 0");
      }
    } else {
      const std::string t = isVectorType(v->type) ? llvmType(v->type) : llvmScalarType(v->type->scalar);
      const std::string slot = fe.entryAlloca(t, 16);
      fe.emitLine("store " + t + " " + fe.val(v) + ", " + t + "* " + slot);
      type = "i8*";
      value = fe.emit("bitcast " + t + "* " + slot + " to i8*");
    }
    params += (params.empty() ? "" : ", ") + type;
    args += (args.empty() ? "" : ", ") + type + " " + value;
  }
  // A value the function writes (is_thread_active's int, map_idx2crd's two
  // ints): one int slot each, passed last, read after the call.
  std::vector<std::string> outs;
  const size_t results = in.type->is(TypeKind::Tuple) ? in.type->elems.size() : in.type->isScalar() ? 1 : 0;
  for (size_t k = 0; k < results; ++k) {
    outs.push_back(fe.entryAlloca("i32", 4));
    params += (params.empty() ? "" : ", ") + std::string("i8*");
    args += (args.empty() ? "" : ", ") + std::string("i8* ") + fe.emit("bitcast i32* " + outs.back() + " to i8*");
  }
  fe.mod().declare("declare void @" + symbol + "(" + params + ")");
  requireCallBlock(fe, in, nullptr);
  fe.emitLine("call void @" + symbol + "(" + args + ")");
  if (!results) return;
  std::vector<std::string> loaded;
  for (const std::string& slot : outs) loaded.push_back(fe.emit("load i32, i32* " + slot));
  if (in.type->isBool()) {
    fe.bind(in, fe.emit("icmp ne i32 " + loaded[0] + ", 0"));
    return;
  }
  std::string value = "undef";
  for (size_t k = 0; k < loaded.size(); ++k)
    value = fe.emit("insertvalue " + llvmType(in.type) + " " + value + ", i32 " + loaded[k] + ", " + std::to_string(k));
  fe.bind(in, value);
}

}  // namespace

void lowerMathdxCall(FunctionEmitter& fe, const ir::Instr& in) {
  if (auto tf = mathdx::servedTensorFunction(in.cval.s)) {
    const libcalls::ResolvedCall* resolved = fe.mod().libraryCalls().find(libcalls::Library::Mathdx, in.cval.s);
    if (!resolved) fe.fail(in, "mathdx", "internal error: MathDx call '" + in.cval.s + "' was not resolved");
    lowerTensorCall(fe, in, tf->symbol);
    return;
  }
  const libcalls::ResolvedCall* entry = fe.mod().libraryCalls().find(libcalls::Library::Mathdx, in.cval.s);
  const bool random = in.cval.s.find(':') != std::string::npos;   // "<key>:<function>"
  std::shared_ptr<const mathdx::MatmulResult> mm = random ? nullptr : mathdx::servedResult(in.cval.s);
  std::shared_ptr<const mathdx::FftResult> fft = random || mm ? nullptr : mathdx::servedFft(in.cval.s);
  if (!entry || (!random && !mm && !fft))
    fe.fail(in, "mathdx", "internal error: MathDx call '" + in.cval.s + "' was not resolved");
  // A cuRANDDx generate takes its distribution's two parameters as one
  // pair: the operands beyond the callee's last parameter share its slot.
  const size_t params = entry->signature.params.size();
  const size_t packed = in.operands.size() >= params ? in.operands.size() - params + 1 : 0;
  if (in.operands.size() < params || (packed > 1 && !random))
    fe.fail(in, "mathdx", "intrinsic mathdx takes " + std::to_string(params) + " operands, has " +
                              std::to_string(in.operands.size()));
  fe.mod().declare(nvvmDeclaration(entry->symbol, entry->signature));
  // A block-wide routine is built for one block shape (a Thread FFT is not).
  // (A GEMM may run in a larger launch block: the call names it.)
  const std::array<int64_t, 3>* dims = mm ? &mm->block_dim : fft && fft->execution == "Block" ? &fft->block_dim : nullptr;
  if (dims) requireCallBlock(fe, in, dims);

  auto bytePointer = [&](const std::string& ptr, const std::string& elem) {
    return fe.emit("bitcast " + elem + "* " + ptr + " to i8*");
  };
  std::string list;
  for (size_t i = 0; i < params; ++i) {
    const ir::Instr* v = in.operands[i];
    // an array's item type, a scalar's type, or a vector's struct (alpha and
    // beta of a complex half GEMM: float16x2)
    const std::string t = v->type->is(TypeKind::Array) ? llvmElemType(v->type)
                          : isVectorType(v->type)      ? llvmType(v->type)
                                                       : llvmScalarType(v->type->scalar);
    std::string p;
    if (v->type->is(TypeKind::Array)) {
      p = bytePointer(fe.emit("extractvalue " + llvmViewType(v->type) + " " + fe.val(v) + ", 0"), t);
    } else if (isVectorType(v->type)) {   // by pointer, component by component
      std::string slot = fe.entryAlloca(t, 16);
      for (size_t k = 0; k < v->type->elems.size(); ++k) {
        const std::string ct = llvmScalarType(v->type->elems[k]->scalar);
        std::string c = fe.emit("extractvalue " + t + " " + fe.val(v) + ", " + std::to_string(k));
        std::string at = fe.emit("getelementptr inbounds " + t + ", " + t + "* " + slot + ", i32 0, i32 " +
                                 std::to_string(k));
        fe.emitLine("store " + ct + " " + c + ", " + ct + "* " + at);
      }
      p = bytePointer(slot, t);
    } else if (i + 1 == params && packed > 1) {   // generate's (a, b)
      const std::string pair = "[" + std::to_string(packed) + " x " + t + "]";
      std::string slot = fe.entryAlloca(pair, 16);
      for (size_t k = 0; k < packed; ++k) {
        std::string at = fe.emit("getelementptr inbounds " + pair + ", " + pair + "* " + slot + ", i64 0, i64 " +
                                 std::to_string(k));
        fe.emitLine("store " + t + " " + fe.val(in.operands[i + k]) + ", " + t + "* " + at);
      }
      p = fe.emit("bitcast " + pair + "* " + slot + " to i8*");
    } else {   // alpha, beta, seeds, counts: by pointer
      std::string slot = fe.entryAlloca(t, 16);
      fe.emitLine("store " + t + " " + fe.val(v) + ", " + t + "* " + slot);
      p = bytePointer(slot, t);
    }
    list += (list.empty() ? "i8* " : ", i8* ") + p;
  }
  fe.emitLine("call void @" + entry->symbol + "(" + list + ")");
}

}  // namespace cj::codegen
