// Lowering of the intrinsics in ir/intrinsics.def.
//
//   sreg.*              llvm.nvvm.read.ptx.sreg.* (i32), converted to the
//                       instruction's integer type if it differs
//   shared_array        an `internal addrspace(3)` global per instruction;
//                       shape () or 0 elements: the dynamic shared memory
//                       (an `external` [0 x i8]), its length from
//                       %dynamic_smem_size / itemsize (numba semantics)
//   local_array         an alloca in the entry block
//   math.*              libdevice, per the table's f32/f64 columns; with
//                       fastmath f32 uses the __nv_fast_* variants numba uses
//
// Every other family has its own file (lower_intrinsic.h): the dispatch below
// switches on the instruction's IntrinsicFamily, then the file on its id.
#include <algorithm>
#include <cstdlib>

#include "codegen/emitter.h"
#include "codegen/lower_intrinsic.h"
#include "ir/intrinsics.h"

namespace cj::codegen {
namespace {

using ir::Intrinsic;


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

// The PTX special register each sreg intrinsic reads.
struct SregRow {
  Intrinsic id;
  const char* ptx;
};
constexpr SregRow kSregs[] = {
    {Intrinsic::TidX, "tid.x"},       {Intrinsic::TidY, "tid.y"},       {Intrinsic::TidZ, "tid.z"},
    {Intrinsic::CtaidX, "ctaid.x"},   {Intrinsic::CtaidY, "ctaid.y"},   {Intrinsic::CtaidZ, "ctaid.z"},
    {Intrinsic::NtidX, "ntid.x"},     {Intrinsic::NtidY, "ntid.y"},     {Intrinsic::NtidZ, "ntid.z"},
    {Intrinsic::NctaidX, "nctaid.x"}, {Intrinsic::NctaidY, "nctaid.y"}, {Intrinsic::NctaidZ, "nctaid.z"},
    {Intrinsic::LaneId, "laneid"},    {Intrinsic::WarpSize, "warpsize"},
};

void lowerSreg(FunctionEmitter& fe, const ir::Instr& in) {
  const char* ptx = nullptr;
  for (const auto& row : kSregs)
    if (row.id == in.intrinsic) ptx = row.ptx;
  if (!ptx) fe.fail(in, in.intrinsicName(), "no PTX special register for this intrinsic");
  std::string reg = std::string("llvm.nvvm.read.ptx.sreg.") + ptx;
  fe.mod().declare("declare i32 @" + reg + "() nounwind readnone");
  std::string v = fe.emit("call i32 @" + reg + "()");
  if (!in.type->isInt()) fe.fail(in, in.intrinsicName(), "special register read as " + typeToString(in.type));
  // Registers are never negative: widen with zext.
  if (in.type->bits() > 32) {
    fe.bind(in, fe.emit("zext i32 " + v + " to " + llvmScalarType(in.type->scalar)));
  } else {
    fe.bind(in, convertScalar(fe, v, Scalar::Int32, in.type->scalar));
  }
}

std::vector<int64_t> constantShape(FunctionEmitter& fe, const ir::Instr& in) {
  const Type* t = in.type;
  if (!t->is(TypeKind::Array)) fe.fail(in, in.intrinsicName(), "result must be an array, is " + typeToString(t));
  if (static_cast<int>(in.ints.size()) != t->ndim) {
    fe.fail(in, in.intrinsicName(), "shape has " + std::to_string(in.ints.size()) + " dimensions for a " +
                             std::to_string(t->ndim) + "-d array");
  }
  for (int64_t n : in.ints) {
    if (n < 0) fe.fail(in, in.intrinsicName(), "negative array dimension " + std::to_string(n));
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

// A shared or local array's alignment in bytes: 16, or more where the kernel
// asked (alignment=, kept as the "align=N" attribute).
int arrayAlignment(const ir::Instr& in) {
  if (in.cval.kind == ir::Const::Kind::Str && in.cval.s.rfind("align=", 0) == 0)
    return std::max(16, std::atoi(in.cval.s.c_str() + 6));
  return 16;
}

void lowerSharedArray(FunctionEmitter& fe, const ir::Instr& in) {
  const Type* t = in.type;
  if (in.intrinsic == Intrinsic::SharedSlice) {
    std::string mt = llvmElemType(t);
    // ints = {n, byte offset} into the dynamic shared memory.
    std::string g = fe.mod().addGlobalOnce("__cj_dynamic_shared", "external addrspace(3) global [0 x i8], align 16");
    std::string p3 = fe.emit("getelementptr inbounds [0 x i8], [0 x i8] addrspace(3)* " + g + ", i64 0, i64 " +
                             std::to_string(in.ints[1]));
    std::string typed = fe.emit("bitcast i8 addrspace(3)* " + p3 + " to " + mt + " addrspace(3)*");
    std::string data = fe.emit("addrspacecast " + mt + " addrspace(3)* " + typed + " to " + mt + "*");
    fe.bind(in, constView(fe, t, data, {in.ints[0]}));
    return;
  }
  std::vector<int64_t> shape = constantShape(fe, in);
  std::string mt = llvmElemType(t);
  int64_t n = product(shape);
  if (n == 0) {
    // Dynamic shared memory: one extern array for the whole kernel; its
    // length comes from the launch (numba: 1-d, size = bytes / itemsize).
    if (t->ndim != 1) fe.fail(in, in.intrinsicName(), "dynamic shared arrays (size 0) must be 1-d");
    std::string g = fe.mod().addGlobalOnce("__cj_dynamic_shared", "external addrspace(3) global [0 x i8], align 16");
    std::string p3 = fe.emit("getelementptr inbounds [0 x i8], [0 x i8] addrspace(3)* " + g + ", i64 0, i64 0");
    std::string typed = fe.emit("bitcast i8 addrspace(3)* " + p3 + " to " + mt + " addrspace(3)*");
    std::string data = fe.emit("addrspacecast " + mt + " addrspace(3)* " + typed + " to " + mt + "*");
    std::string bytes = fe.emit("call i32 asm \"mov.u32 $0, %dynamic_smem_size;\", \"=r\"()");
    std::string bytes64 = fe.emit("zext i32 " + bytes + " to i64");
    std::string len = fe.emit("udiv i64 " + bytes64 + ", " + std::to_string(arrayItemSize(t)));
    fe.bind(in, makeView(fe, t, data, {len}, {std::to_string(arrayItemSize(t))}));
    return;
  }
  std::string at = "[" + std::to_string(n) + " x " + mt + "]";
  std::string hint = "__cj_shared." + fe.function().name + ".v" + std::to_string(in.id);
  std::string g = fe.mod().addGlobal(hint, "internal addrspace(3) global " + at + " undef, align " +
                                           std::to_string(arrayAlignment(in)));
  std::string p3 = fe.emit("getelementptr inbounds " + at + ", " + at + " addrspace(3)* " + g + ", i64 0, i64 0");
  std::string data = fe.emit("addrspacecast " + mt + " addrspace(3)* " + p3 + " to " + mt + "*");
  fe.bind(in, constView(fe, t, data, shape));
}

void lowerLocalArray(FunctionEmitter& fe, const ir::Instr& in) {
  const Type* t = in.type;
  std::vector<int64_t> shape = constantShape(fe, in);
  int64_t n = product(shape);
  if (n == 0) fe.fail(in, in.intrinsicName(), "local arrays need a size > 0");
  std::string mt = llvmElemType(t);
  std::string at = "[" + std::to_string(n) + " x " + mt + "]";
  // "align=N slot=NAME": one alloca for every local array of the function naming NAME
  const size_t named = in.cval.kind == ir::Const::Kind::Str ? in.cval.s.find(" slot=") : std::string::npos;
  std::string slot = named != std::string::npos ? fe.namedEntryAlloca(in.cval.s.substr(named + 6), at, arrayAlignment(in))
                                                : fe.entryAlloca(at, arrayAlignment(in));
  std::string data = fe.emit("getelementptr inbounds " + at + ", " + at + "* " + slot + ", i64 0, i64 0");
  fe.bind(in, constView(fe, t, data, shape));
}

void lowerMath(FunctionEmitter& fe, const ir::Instr& in, const ir::IntrinsicInfo& info) {
  if (static_cast<int>(in.operands.size()) != info.arity) {
    fe.fail(in, in.intrinsicName(), "takes " + std::to_string(info.arity) + " arguments, " +
                             std::to_string(in.operands.size()) + " given");
  }
  // f32 when every operand fits in f32 (f16 and bf16 are widened), else f64.
  Scalar work = Scalar::Float32;
  for (const ir::Instr* o : in.operands) {
    if (!o->type->isScalar() || o->type->isComplex()) {
      fe.fail(in, in.intrinsicName(), "argument of type " + typeToString(o->type) + " (expected a real number)");
    }
    if (scalarKind(o->type->scalar) != ScalarKind::Float || scalarBits(o->type->scalar) > 32) work = Scalar::Float64;
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
  if (!in.type->isScalar()) fe.fail(in, in.intrinsicName(), "result of type " + typeToString(in.type));
  fe.bind(in, convertScalar(fe, r, work, in.type->scalar));
}

}  // namespace

std::string declareCall(FunctionEmitter& fe, const std::string& ret, const std::string& fn,
                        const std::vector<std::pair<std::string, std::string>>& args, bool value) {
  std::string types, typed;
  for (size_t i = 0; i < args.size(); ++i) {
    types += (i ? ", " : "") + args[i].first;
    typed += (i ? ", " : "") + args[i].first + " " + args[i].second;
  }
  fe.mod().declare("declare " + ret + " @" + fn + "(" + types + ")");
  std::string call = "call " + ret + " @" + fn + "(" + typed + ")";
  if (!value) {
    fe.emitLine(call);
    return "";
  }
  return fe.emit(call);
}

void lowerIntrinsic(FunctionEmitter& fe, const ir::Instr& in) {
  if (in.intrinsic == Intrinsic::Count) fe.fail(in, in.name, "unknown intrinsic '" + in.name + "'");
  const ir::IntrinsicInfo& info = ir::intrinsicInfo(in.intrinsic);
  if (ir::isLibdeviceCall(info.id)) return lowerMath(fe, in, info);
  using F = ir::IntrinsicFamily;
  switch (info.family) {
    case F::Sreg: return lowerSreg(fe, in);
    case F::Sync: return lowerSyncIntrinsic(fe, in);
    case F::Memory:
      if (info.id == Intrinsic::SharedArray || info.id == Intrinsic::SharedSlice) return lowerSharedArray(fe, in);
      return lowerLocalArray(fe, in);
    case F::Atomic: return lowerAtomicIntrinsic(fe, in);
    case F::Cub: return lowerCubCall(fe, in);
    case F::Mathdx: return lowerMathdxCall(fe, in);
    case F::Foreign: return lowerForeignCall(fe, in);
    case F::Libdevice: return lowerLibdeviceCall(fe, in);
    case F::Math: return lowerFloatMathIntrinsic(fe, in);
    case F::Complex:
      if (lowerComplexIntrinsic(fe, in)) return;
      break;
    case F::Print: return lowerPrint(fe, in);
    case F::Warp: return lowerWarpIntrinsic(fe, in);
    case F::Bits: return lowerBitIntrinsic(fe, in);
    case F::Cmath:
    case F::Round:
      if (lowerCmathIntrinsic(fe, in)) return;
      break;
    case F::Global: return lowerGlobalIntrinsic(fe, in);
    case F::Hint: return lowerCacheHint(fe, in);
    case F::Mma: return lowerMmaIntrinsic(fe, in);
    case F::Tile:
      fe.fail(in, in.intrinsicName(), "internal error: tile operation '" + in.intrinsicName() +
                                          "' reached codegen (the tile pipeline lowers every one)");
  }
  fe.fail(in, in.intrinsicName(), "codegen has no lowering for intrinsic '" + in.intrinsicName() + "'");
}

}  // namespace cj::codegen
