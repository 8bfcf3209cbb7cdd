// Lowering of the tensor-core intrinsics (family Mma of ir/intrinsics.def),
// what tile.dot becomes on sm_80 and newer: inline PTX for ldmatrix,
// mma.sync, the sm_90 wgmma instructions and the cp.async copies that feed
// them (libNVVM's dialect has no intrinsics for most of these). Every multi-register result is an LLVM struct,
// the IR's tuple, that tuple_get takes apart.
//
// Instructions that read shared memory or order asynchronous work are
// `asm sideeffect` with a memory clobber, so that LLVM keeps them between the
// barriers and fences the tile lowering placed around them.
#include "codegen/lower_intrinsic.h"
#include "ir/intrinsics.h"

namespace cj::codegen {
namespace {

using ir::Intrinsic;

std::string operandList(int first, int n) {
  std::string s = "{";
  for (int k = 0; k < n; ++k) s += (k ? ", $" : "$") + std::to_string(first + k);
  return s + "}";
}

std::string structOf(const std::string& t, int n) {
  std::string s = "{";
  for (int k = 0; k < n; ++k) s += (k ? ", " : "") + t;
  return s + "}";
}

// A float-typed operand (tf32 values) as the i32 register PTX wants.
std::string asI32(FunctionEmitter& fe, const ir::Instr* v) {
  if (v->type == i32Ty()) return fe.val(v);
  return fe.emit("bitcast float " + fe.val(v) + " to i32");
}

const char* ptxDtype(int64_t scalar) {
  switch (static_cast<Scalar>(scalar)) {
    case Scalar::Float16: return "f16";
    case Scalar::BFloat16: return "bf16";
    default: return "tf32";
  }
}

void lowerSharedAddress(FunctionEmitter& fe, const ir::Instr& in) {
  const Type* arr = in.operands[0]->type;
  std::string elem = llvmMemType(arr->scalar);
  std::string data = fe.emit("extractvalue " + llvmType(arr) + " " + fe.val(in.operands[0]) + ", 0");
  std::string shared = fe.emit("addrspacecast " + elem + "* " + data + " to " + elem + " addrspace(3)*");
  fe.emitResult(in, "ptrtoint " + elem + " addrspace(3)* " + shared + " to i32");
}

void lowerLdMatrix(FunctionEmitter& fe, const ir::Instr& in) {
  int n = static_cast<int>(in.ints[0]);
  std::string text = "ldmatrix.sync.aligned.m8n8.x" + std::to_string(n) + (in.ints[1] ? ".trans" : "") +
                     ".shared.b16 " + (n == 1 ? std::string("$0") : operandList(0, n)) + ", [$" + std::to_string(n) + "];";
  std::string constraints;
  for (int k = 0; k < n; ++k) constraints += "=r,";
  constraints += "r,~{memory}";
  std::string ret = n == 1 ? "i32" : structOf("i32", n);
  fe.emitResult(in, "call " + ret + " asm sideeffect \"" + text + "\", \"" + constraints + "\"(i32 " +
                        fe.val(in.operands[0]) + ")");
}

void lowerMmaSync(FunctionEmitter& fe, const ir::Instr& in) {
  bool tf32 = static_cast<Scalar>(in.ints[0]) == Scalar::TFloat32;
  std::string d = ptxDtype(in.ints[0]);
  std::string text = std::string("mma.sync.aligned.") + (tf32 ? "m16n8k8" : "m16n8k16") + ".row.col.f32." + d + "." + d +
                     ".f32 " + operandList(0, 4) + ", " + operandList(4, 4) + ", " + operandList(8, 2) + ", " +
                     operandList(10, 4) + ";";
  std::string args;
  for (int k = 0; k < 6; ++k) args += (k ? ", i32 " : "i32 ") + asI32(fe, in.operands[k]);
  for (int k = 6; k < 10; ++k) args += ", float " + fe.val(in.operands[k]);
  fe.emitResult(in, "call " + structOf("float", 4) + " asm \"" + text + "\", \"=f,=f,=f,=f,r,r,r,r,r,r,f,f,f,f\"(" +
                        args + ")");
}

void lowerWgmma(FunctionEmitter& fe, const ir::Instr& in) {
  bool tf32 = static_cast<Scalar>(in.ints[0]) == Scalar::TFloat32;
  int n = static_cast<int>(in.ints[1]), regs = n / 2;
  // A in registers (ints[3]): four 32-bit fragments (tf32) in place of its descriptor.
  bool a_regs = in.ints.size() > 3 && in.ints[3];
  int a_operands = a_regs ? 4 : 1;
  std::string d = ptxDtype(in.ints[0]);
  // Outputs $0..$regs-1, A (a descriptor or its fragments), B's descriptor,
  // a 1 for scale-d (accumulate), then the accumulators tied to the outputs.
  int desc_b = regs + a_operands, scale = desc_b + 1;
  std::string a = a_regs ? operandList(regs, 4) : "$" + std::to_string(regs);
  std::string text = "{ .reg .pred p; setp.ne.b32 p, $" + std::to_string(scale) + ", 0; wgmma.mma_async.sync.aligned.m64n" +
                     std::to_string(n) + (tf32 ? "k8" : "k16") + ".f32." + d + "." + d + " " + operandList(0, regs) +
                     ", " + a + ", $" + std::to_string(desc_b) + ", p, 1, 1" +
                     (tf32 ? "" : in.ints[2] ? ", 0, 1" : ", 0, 0") + "; }";
  std::string constraints;
  for (int k = 0; k < regs; ++k) constraints += "=f,";
  constraints += a_regs ? "r,r,r,r,l,r" : "l,l,r";
  for (int k = 0; k < regs; ++k) constraints += "," + std::to_string(k);
  constraints += ",~{memory}";
  std::string args;
  for (int k = 0; k < a_operands; ++k) {
    const ir::Instr* v = in.operands[k];
    args += a_regs ? "i32 " + fe.emit("bitcast float " + fe.val(v) + " to i32") + ", " : "i64 " + fe.val(v) + ", ";
  }
  args += "i64 " + fe.val(in.operands[a_operands]) + ", i32 1";
  for (int k = 0; k < regs; ++k) args += ", float " + fe.val(in.operands[1 + a_operands + k]);
  fe.emitResult(in, "call " + structOf("float", regs) + " asm sideeffect \"" + text + "\", \"" + constraints + "\"(" +
                        args + ")");
}

void lowerCpAsync(FunctionEmitter& fe, const ir::Instr& in) {
  std::string pred = fe.emit("zext i1 " + fe.val(in.operands[3]) + " to i32");
  // .cg (bypassing L1) exists for 16-byte copies only.
  std::string copy = !in.ints.empty() && in.ints[0] == 4 ? "cp.async.ca.shared.global [$0], [$1], 4, $2;"
                                                         : "cp.async.cg.shared.global [$0], [$1], 16, $2;";
  fe.emitLine("call void asm sideeffect \"{ .reg .pred p; setp.ne.b32 p, $3, 0; @p " + copy + " }\", "
              "\"r,l,r,r,~{memory}\"(i32 " + fe.val(in.operands[0]) + ", i64 " + fe.val(in.operands[1]) +
              ", i32 " + fe.val(in.operands[2]) + ", i32 " + pred + ")");
}

void lowerSharedStoreIf(FunctionEmitter& fe, const ir::Instr& in) {
  const ir::Instr* v = in.operands[2];
  int bits = scalarBits(v->type->scalar);
  if (bits != 16 && bits != 32 && bits != 64) fe.fail(in, in.intrinsicName(), "stores 16-, 32- or 64-bit values");
  std::string reg = "i" + std::to_string(bits);
  std::string type = llvmScalarType(v->type->scalar);
  std::string value = type == reg ? fe.val(v) : fe.emit("bitcast " + type + " " + fe.val(v) + " to " + reg);
  std::string pred = fe.emit("zext i1 " + fe.val(in.operands[1]) + " to i32");
  std::string text = std::string("{ .reg .pred p; setp.ne.b32 p, $1, 0; @p st.shared.b") + std::to_string(bits) + " [$0], $2; }";
  fe.emitLine("call void asm sideeffect \"" + text + "\", \"r,r," + (bits == 16 ? "h" : bits == 32 ? "r" : "l") + ",~{memory}\"(i32 " +
              fe.val(in.operands[0]) + ", i32 " + pred + ", " + reg + " " + value + ")");
}

void lowerSharedVector(FunctionEmitter& fe, const ir::Instr& in) {
  std::string addr = "i32 " + fe.val(in.operands[0]);
  if (in.intrinsic == Intrinsic::SharedLoad4) {
    fe.emitResult(in, "call " + structOf("float", 4) + " asm sideeffect \"ld.shared.v4.b32 {$0, $1, $2, $3}, [$4];\", "
                      "\"=f,=f,=f,=f,r,~{memory}\"(" + addr + ")");
    return;
  }
  std::string args = addr;
  for (int k = 1; k < 5; ++k) args += ", float " + fe.val(in.operands[k]);
  fe.emitLine("call void asm sideeffect \"st.shared.v4.b32 [$0], {$1, $2, $3, $4};\", \"r,f,f,f,f,~{memory}\"(" + args + ")");
}

void lowerTmaLoad(FunctionEmitter& fe, const ir::Instr& in) {
  fe.emitLine("call void asm sideeffect \"cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes "
              "[$0], [$1, {$2, $3}], [$4];\", \"r,l,r,r,r,~{memory}\"(i32 " + fe.val(in.operands[0]) + ", i64 " +
              fe.val(in.operands[1]) + ", i32 " + fe.val(in.operands[2]) + ", i32 " + fe.val(in.operands[3]) + ", i32 " +
              fe.val(in.operands[4]) + ")");
}

void lowerMbarrier(FunctionEmitter& fe, const ir::Instr& in) {
  std::string bar = fe.val(in.operands[0]);
  if (in.intrinsic == Intrinsic::MbarrierInit) {
    fe.emitLine("call void asm sideeffect \"mbarrier.init.shared::cta.b64 [$0], " + std::to_string(in.ints[0]) +
                ";\", \"r,~{memory}\"(i32 " + bar + ")");
  } else if (in.intrinsic == Intrinsic::MbarrierExpectTx) {
    fe.emitLine("call void asm sideeffect \"mbarrier.arrive.expect_tx.shared::cta.b64 _, [$0], $1;\", "
                "\"r,r,~{memory}\"(i32 " + bar + ", i32 " + fe.val(in.operands[1]) + ")");
  } else {
    // The labels are local to the braces (each asm statement its own scope).
    fe.emitLine("call void asm sideeffect \"{ .reg .pred p; wait: mbarrier.try_wait.parity.shared::cta.b64 p, [$0], $1; "
                "@!p bra wait; }\", \"r,r,~{memory}\"(i32 " + bar + ", i32 " + fe.val(in.operands[1]) + ")");
  }
}

void lowerRegisterFence(FunctionEmitter& fe, const ir::Instr& in) {
  int n = static_cast<int>(in.operands.size());
  std::string constraints, args;
  for (int k = 0; k < n; ++k) constraints += (k ? ",=f" : "=f");
  for (int k = 0; k < n; ++k) {
    constraints += "," + std::to_string(k);
    args += (k ? ", float " : "float ") + fe.val(in.operands[k]);
  }
  fe.emitResult(in, "call " + structOf("float", n) + " asm sideeffect \"\", \"" + constraints + ",~{memory}\"(" + args + ")");
}

void asmStatement(FunctionEmitter& fe, const std::string& text) {
  fe.emitLine("call void asm sideeffect \"" + text + "\", \"~{memory}\"()");
}

}  // namespace

void lowerMmaIntrinsic(FunctionEmitter& fe, const ir::Instr& in) {
  switch (in.intrinsic) {
    case Intrinsic::SharedAddress: return lowerSharedAddress(fe, in);
    case Intrinsic::LdMatrix: return lowerLdMatrix(fe, in);
    case Intrinsic::MmaSync: return lowerMmaSync(fe, in);
    case Intrinsic::Wgmma: return lowerWgmma(fe, in);
    case Intrinsic::WgmmaFence: return asmStatement(fe, "wgmma.fence.sync.aligned;");
    case Intrinsic::WgmmaCommit: return asmStatement(fe, "wgmma.commit_group.sync.aligned;");
    case Intrinsic::WgmmaWait: return asmStatement(fe, "wgmma.wait_group.sync.aligned " + std::to_string(in.ints[0]) + ";");
    case Intrinsic::FenceProxyAsync: return asmStatement(fe, "fence.proxy.async.shared::cta;");
    case Intrinsic::CpAsync: return lowerCpAsync(fe, in);
    case Intrinsic::CpAsyncCommit: return asmStatement(fe, "cp.async.commit_group;");
    case Intrinsic::CpAsyncWait: return asmStatement(fe, "cp.async.wait_group " + std::to_string(in.ints[0]) + ";");
    case Intrinsic::SharedStoreIf: return lowerSharedStoreIf(fe, in);
    case Intrinsic::SharedLoad4: case Intrinsic::SharedStore4: return lowerSharedVector(fe, in);
    case Intrinsic::Tf32RoundRn: {
      std::string bits = fe.emit("call i32 asm \"cvt.rn.tf32.f32 $0, $1;\", \"=r,f\"(float " + fe.val(in.operands[0]) + ")");
      return fe.emitResult(in, "bitcast i32 " + bits + " to float");
    }
    case Intrinsic::TensorMapAddress:
      return fe.emitResult(in, "ptrtoint [128 x i8]* " + fe.tensorMapParam(static_cast<size_t>(in.ints[0])) + " to i64");
    case Intrinsic::TensorMapsValid: return fe.emitResult(in, "icmp ne i32 " + fe.tensorMapsValidParam() + ", 0");
    case Intrinsic::TmaLoad: return lowerTmaLoad(fe, in);
    case Intrinsic::RegisterFence: return lowerRegisterFence(fe, in);
    case Intrinsic::MbarrierInit: case Intrinsic::MbarrierExpectTx: case Intrinsic::MbarrierWait: return lowerMbarrier(fe, in);
    case Intrinsic::MbarrierInitFence: return asmStatement(fe, "fence.mbarrier_init.release.cluster;");
    default:
      fe.fail(in, in.intrinsicName(), "not a tensor-core intrinsic");
  }
}

}  // namespace cj::codegen
