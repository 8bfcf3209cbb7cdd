// Cache-hinted element accesses (ir/intrinsics.def, family Hint): numba's
// cuda.ldca/ldcg/ldcs/ldlu/ldcv(arr, i) and cuda.stcg/stcs/stwb/stwt(arr, i, v)
// as one PTX ld.global.<op> / st.global.<op> of the element's address,
// through inline asm (NVVM has no cache-operator loads but the .nc ones).
// The address is the element's, as an ordinary access computes it; it must
// be global memory, as numba requires.
#include "codegen/emitter.h"
#include "codegen/llvm_types.h"

namespace cj::codegen {
namespace {

// The PTX type, the register constraint and the LLVM type of the register
// an element of `s` moves through (8-bit values ride in 32-bit registers).
struct Lane {
  const char* ptx;
  const char* constraint;
  const char* reg;
};

Lane laneOf(Scalar s) {
  switch (s) {
    case Scalar::Bool: case Scalar::UInt8: return {"u8", "r", "i32"};
    case Scalar::Int8: return {"s8", "r", "i32"};
    case Scalar::Int16: return {"s16", "h", "i16"};
    case Scalar::UInt16: return {"u16", "h", "i16"};
    case Scalar::Float16: return {"b16", "h", "i16"};
    case Scalar::Int32: return {"s32", "r", "i32"};
    case Scalar::UInt32: return {"u32", "r", "i32"};
    case Scalar::Float32: return {"f32", "f", "float"};
    case Scalar::Int64: return {"s64", "l", "i64"};
    case Scalar::UInt64: return {"u64", "l", "i64"};
    case Scalar::Float64: return {"f64", "d", "double"};
    default: return {nullptr, nullptr, nullptr};
  }
}

}  // namespace

void lowerCacheHint(FunctionEmitter& fe, const ir::Instr& in) {
  const std::string name = in.intrinsicName();            // "ld.cg", "st.wt", ...
  const bool store = name.rfind("st.", 0) == 0;
  const ir::Instr* arr = in.operands.at(0);
  if (!arr->type->is(TypeKind::Array)) fe.fail(in, name, "first operand must be an array");
  const Scalar s = arr->type->scalar;
  const Lane lane = laneOf(s);
  if (!lane.ptx) fe.fail(in, name, "no cache-hinted access for " + typeToString(scalarTy(s)));
  std::vector<const ir::Instr*> idx(in.operands.begin() + 1, in.operands.end() - (store ? 1 : 0));
  const std::string mt = llvmMemType(s);
  const std::string ptr = elementPointer(fe, arr, idx, in.facts);
  const std::string global = fe.emit("addrspacecast " + mt + "* " + ptr + " to " + mt + " addrspace(1)*");
  const std::string address = fe.emit("ptrtoint " + mt + " addrspace(1)* " + global + " to i64");
  const std::string op = name.substr(0, 2) + ".global." + name.substr(3) + "." + lane.ptx;
  const std::string reg = lane.reg;
  if (store) {
    // The value as the register holds it: widened (8-bit), as bits (half), as is.
    std::string v = fe.val(in.operands.back());
    if (s == Scalar::Bool) v = fe.emit("zext i1 " + v + " to i32");
    else if (s == Scalar::Int8 || s == Scalar::UInt8) v = fe.emit("zext i8 " + v + " to i32");
    else if (s == Scalar::Float16) v = fe.emit("bitcast half " + v + " to i16");
    fe.emitLine("call void asm sideeffect \"" + op + " [$0], $1;\", \"l," + lane.constraint + ",~{memory}\"(i64 " +
                address + ", " + reg + " " + v + ")");
    return;
  }
  std::string r = fe.emit("call " + reg + " asm sideeffect \"" + op + " $0, [$1];\", \"=" + lane.constraint +
                          ",l,~{memory}\"(i64 " + address + ")");
  if (s == Scalar::Bool) {
    std::string byte = fe.emit("trunc i32 " + r + " to i8");
    r = fe.emit("icmp ne i8 " + byte + ", 0");
  } else if (s == Scalar::Int8 || s == Scalar::UInt8) {
    r = fe.emit("trunc i32 " + r + " to i8");
  } else if (s == Scalar::Float16) {
    r = fe.emit("bitcast i16 " + r + " to half");
  }
  fe.bind(in, r);
}

}  // namespace cj::codegen
