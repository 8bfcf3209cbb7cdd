// Lowering of the intrinsics in ir/intrinsics.def.
//
//   sreg.*              llvm.nvvm.read.ptx.sreg.* (i32), converted to the
//                       instruction's integer type if it differs
//   syncthreads, threadfence[_block]
//                       llvm.nvvm.barrier0 / membar.gl / membar.cta
//   shared_array        an `internal addrspace(3)` global per instruction;
//                       shape () or 0 elements: the dynamic shared memory
//                       (an `external` [0 x i8]), its length from
//                       %dynamic_smem_size / itemsize (numba semantics)
//   local_array         an alloca in the entry block
//   atomic_add          atomicrmw add (integers of 32/64 bits), NVVM's
//                       atomic.load.add.f32/f64 for floats (libNVVM 13 does
//                       not parse `atomicrmw fadd`)
//   math.*              libdevice, per the table's f32/f64 columns; with
//                       fastmath f32 uses the __nv_fast_* variants numba uses
#include <cstring>

#include "codegen/emitter.h"
#include "codegen/lower_intrin_ext.h"
#include "ir/intrinsics.h"

namespace cj::codegen {
namespace {

using ir::Intrinsic;

struct BarrierRow {
  Intrinsic id;
  const char* llvm;
};
constexpr BarrierRow kBarriers[] = {
    {Intrinsic::SyncThreads, "llvm.nvvm.barrier0"},
    {Intrinsic::ThreadFence, "llvm.nvvm.membar.gl"},
    {Intrinsic::ThreadFenceBlock, "llvm.nvvm.membar.cta"},
};

// numba's fastmath replacements for f32 libdevice functions.
struct FastRow {
  const char* precise;
  const char* fast;
};
constexpr FastRow kFastMath[] = {
    {"__nv_sinf", "__nv_fast_sinf"}, {"__nv_cosf", "__nv_fast_cosf"},
    {"__nv_tanf", "__nv_fast_tanf"}, {"__nv_expf", "__nv_fast_expf"},
    {"__nv_logf", "__nv_fast_logf"}, {"__nv_powf", "__nv_fast_powf"},
    {"__nv_log2f", "__nv_fast_log2f"}, {"__nv_log10f", "__nv_fast_log10f"},
};

void lowerSreg(FunctionEmitter& fe, const ir::Instr& in) {
  std::string reg = "llvm.nvvm.read.ptx.sreg." + in.name.substr(std::strlen("sreg."));
  fe.mod().declare("declare i32 @" + reg + "() nounwind readnone");
  std::string v = fe.emit("call i32 @" + reg + "()");
  if (!in.type->isInt()) fe.fail(in, in.name, "special register read as " + typeToString(in.type));
  // Registers are never negative: widen with zext.
  if (in.type->bits() > 32) {
    fe.bind(in, fe.emit("zext i32 " + v + " to " + llvmScalarType(in.type->scalar)));
  } else {
    fe.bind(in, convertScalar(fe, v, Scalar::Int32, in.type->scalar));
  }
}

std::vector<int64_t> constantShape(FunctionEmitter& fe, const ir::Instr& in) {
  const Type* t = in.type;
  if (!t->is(TypeKind::Array)) fe.fail(in, in.name, "result must be an array, is " + typeToString(t));
  if (static_cast<int>(in.ints.size()) != t->ndim) {
    fe.fail(in, in.name, "shape has " + std::to_string(in.ints.size()) + " dimensions for a " +
                             std::to_string(t->ndim) + "-d array");
  }
  for (int64_t n : in.ints) {
    if (n < 0) fe.fail(in, in.name, "negative array dimension " + std::to_string(n));
  }
  return in.ints;
}

int64_t product(const std::vector<int64_t>& v) {
  int64_t p = 1;
  for (int64_t x : v) p *= x;
  return p;
}

std::string constView(FunctionEmitter& fe, const Type* t, const std::string& data,
                      const std::vector<int64_t>& shape) {
  std::vector<std::string> sh, st;
  for (int64_t n : shape) sh.push_back(std::to_string(n));
  for (int64_t s : contiguousStrides(t, shape)) st.push_back(std::to_string(s));
  return makeView(fe, t, data, sh, st);
}

void lowerSharedArray(FunctionEmitter& fe, const ir::Instr& in) {
  const Type* t = in.type;
  std::vector<int64_t> shape = constantShape(fe, in);
  std::string mt = llvmMemType(t->scalar);
  int64_t n = product(shape);
  if (n == 0) {
    // Dynamic shared memory: one extern array for the whole kernel; its
    // length comes from the launch (numba: 1-d, size = bytes / itemsize).
    if (t->ndim != 1) fe.fail(in, in.name, "dynamic shared arrays (size 0) must be 1-d");
    std::string g = fe.mod().addGlobalOnce("__cj_dynamic_shared", "external addrspace(3) global [0 x i8], align 16");
    std::string p3 = fe.emit("getelementptr inbounds [0 x i8], [0 x i8] addrspace(3)* " + g + ", i64 0, i64 0");
    std::string typed = fe.emit("bitcast i8 addrspace(3)* " + p3 + " to " + mt + " addrspace(3)*");
    std::string data = fe.emit("addrspacecast " + mt + " addrspace(3)* " + typed + " to " + mt + "*");
    std::string bytes = fe.emit("call i32 asm \"mov.u32 $0, %dynamic_smem_size;\", \"=r\"()");
    std::string bytes64 = fe.emit("zext i32 " + bytes + " to i64");
    std::string len = fe.emit("udiv i64 " + bytes64 + ", " + std::to_string(scalarByteSize(t->scalar)));
    fe.bind(in, makeView(fe, t, data, {len}, {std::to_string(scalarByteSize(t->scalar))}));
    return;
  }
  std::string at = "[" + std::to_string(n) + " x " + mt + "]";
  std::string hint = "__cj_shared." + fe.function().name + ".v" + std::to_string(in.id);
  std::string g = fe.mod().addGlobal(hint, "internal addrspace(3) global " + at + " undef, align 16");
  std::string p3 = fe.emit("getelementptr inbounds " + at + ", " + at + " addrspace(3)* " + g + ", i64 0, i64 0");
  std::string data = fe.emit("addrspacecast " + mt + " addrspace(3)* " + p3 + " to " + mt + "*");
  fe.bind(in, constView(fe, t, data, shape));
}

void lowerLocalArray(FunctionEmitter& fe, const ir::Instr& in) {
  const Type* t = in.type;
  std::vector<int64_t> shape = constantShape(fe, in);
  int64_t n = product(shape);
  if (n == 0) fe.fail(in, in.name, "local arrays need a size > 0");
  std::string mt = llvmMemType(t->scalar);
  std::string at = "[" + std::to_string(n) + " x " + mt + "]";
  std::string slot = fe.entryAlloca(at, 16);
  std::string data = fe.emit("getelementptr inbounds " + at + ", " + at + "* " + slot + ", i64 0, i64 0");
  fe.bind(in, constView(fe, t, data, shape));
}

void lowerAtomicAdd(FunctionEmitter& fe, const ir::Instr& in) {
  if (in.operands.size() < 2) fe.fail(in, "atomic.add", "expected (array, indices..., value)");
  const ir::Instr* arr = in.operands[0];
  if (!arr->type->is(TypeKind::Array)) fe.fail(in, "atomic.add", "first argument must be an array");
  Scalar s = arr->type->scalar;
  const ir::Instr* value = in.operands.back();
  if (value->type != scalarTy(s)) {
    fe.fail(in, "atomic.add", "adding a " + typeToString(value->type) + " to an array of " +
                                  typeToString(scalarTy(s)) + " (type inference must insert a cast)");
  }
  std::vector<const ir::Instr*> idx(in.operands.begin() + 1, in.operands.end() - 1);
  std::string ptr = elementPointer(fe, arr, idx, in.facts);
  std::string t = llvmScalarType(s);
  std::string v = fe.val(value);
  if (scalarKind(s) == ScalarKind::Int && scalarBits(s) >= 32) {
    fe.emitResult(in, "atomicrmw add " + t + "* " + ptr + ", " + t + " " + v + " monotonic");
    return;
  }
  if (s == Scalar::Float32 || s == Scalar::Float64) {
    std::string sfx = s == Scalar::Float32 ? "f32.p0f32" : "f64.p0f64";
    std::string fn = "@llvm.nvvm.atomic.load.add." + sfx;
    fe.mod().declare("declare " + t + " " + fn + "(" + t + "*, " + t + ")");
    fe.emitResult(in, "call " + t + " " + fn + "(" + t + "* " + ptr + ", " + t + " " + v + ")");
    return;
  }
  fe.fail(in, "atomic.add", "atomic add on " + typeToString(scalarTy(s)) +
                                " is not supported (int32/int64/uint32/uint64/float32/float64)");
}

void lowerMath(FunctionEmitter& fe, const ir::Instr& in, const ir::IntrinsicInfo& info) {
  if (static_cast<int>(in.operands.size()) != info.arity) {
    fe.fail(in, in.name, "takes " + std::to_string(info.arity) + " arguments, " +
                             std::to_string(in.operands.size()) + " given");
  }
  // f32 when every operand fits in f32 (f16 is widened), else f64.
  Scalar work = Scalar::Float32;
  for (const ir::Instr* o : in.operands) {
    if (!o->type->isScalar() || o->type->isComplex()) {
      fe.fail(in, in.name, "argument of type " + typeToString(o->type) + " (expected a real number)");
    }
    if (o->type->scalar != Scalar::Float32 && o->type->scalar != Scalar::Float16) work = Scalar::Float64;
  }
  std::string name(work == Scalar::Float32 ? info.libdevice_f32 : info.libdevice_f64);
  if (work == Scalar::Float32 && fe.options().fastmath) {
    for (const auto& row : kFastMath) {
      if (name == row.precise) name = row.fast;
    }
  }
  std::vector<std::string> args;
  for (const ir::Instr* o : in.operands) args.push_back(convertScalar(fe, fe.val(o), o->type->scalar, work));
  std::string r = callLibdevice(fe, name, work, args);
  if (!in.type->isScalar()) fe.fail(in, in.name, "result of type " + typeToString(in.type));
  fe.bind(in, convertScalar(fe, r, work, in.type->scalar));
}

}  // namespace

void lowerIntrinsic(FunctionEmitter& fe, const ir::Instr& in) {
  const ir::IntrinsicInfo* info = ir::findIntrinsic(in.name);
  if (!info) fe.fail(in, in.name, "unknown intrinsic '" + in.name + "'");
  if (!info->libdevice_f32.empty()) return lowerMath(fe, in, *info);
  if (in.name.rfind("sreg.", 0) == 0) return lowerSreg(fe, in);
  if (in.name.rfind("complex.", 0) == 0 && lowerComplexIntrinsic(fe, in)) return;
  if (lowerCmathIntrinsic(fe, in)) return;
  for (const auto& row : kBarriers) {
    if (row.id == info->id) {
      fe.mod().declare(std::string("declare void @") + row.llvm + "()");
      fe.emitLine(std::string("call void @") + row.llvm + "()");
      return;
    }
  }
  switch (info->id) {
    case Intrinsic::SharedArray: return lowerSharedArray(fe, in);
    case Intrinsic::LocalArray: return lowerLocalArray(fe, in);
    case Intrinsic::AtomicAdd: return lowerAtomicAdd(fe, in);
    case Intrinsic::CubCall: return lowerCubCall(fe, in);
    case Intrinsic::Print: return lowerPrint(fe, in);
    default:
      if (lowerIntrinsicExt(fe, in)) return;
      fe.fail(in, in.name, "codegen has no lowering for intrinsic '" + in.name + "'");
  }
}

}  // namespace cj::codegen
