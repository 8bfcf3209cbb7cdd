// Lowering of the address-based global memory intrinsics (family Global of
// ir/intrinsics.def), what tile loads and stores become:
//
//   array_address        ptrtoint of the view's data pointer
//   global.load_if/      inline PTX with a predicate (`@p ld.global[.v2/.v4]`),
//   global.store_if/     so a masked-off access never happens, even when its
//   global.atomic_if     address lies outside any allocation
#include "codegen/lower_intrinsic.h"
#include "ir/intrinsics.h"

namespace cj::codegen {
namespace {

using ir::Intrinsic;

// How PTX moves one element of a scalar type through a register. Bool and
// 8-bit integers travel in 16-bit registers (PTX has no 8-bit ones).
struct PtxElement {
  const char* mem;         // ld/st type suffix
  const char* mov;         // mov type suffix for the register
  const char* constraint;  // inline asm register class
  std::string reg;         // LLVM type of the asm operand
};

PtxElement ptxElement(Scalar s) {
  switch (s) {
    case Scalar::Float32: return {"b32", "f32", "f", "float"};
    case Scalar::Float64: return {"b64", "f64", "d", "double"};
    case Scalar::Float16: return {"b16", "b16", "h", "i16"};   // libNVVM takes no half asm operands
    default: break;
  }
  switch (scalarByteSize(s)) {
    case 1: return {"u8", "b16", "h", "i16"};
    case 2: return {"b16", "b16", "h", "i16"};
    case 4: return {"b32", "b32", "r", "i32"};
    default: return {"b64", "b64", "l", "i64"};
  }
}

// A register value (LLVM type of `s`) as the asm operand type, and back.
std::string toAsm(FunctionEmitter& fe, Scalar s, const std::string& v) {
  if (s == Scalar::Float16) return fe.emit("bitcast half " + v + " to i16");
  if (s == Scalar::Bool) return fe.emit("zext i1 " + v + " to i16");
  if (scalarByteSize(s) == 1) return fe.emit("zext i8 " + v + " to i16");
  return v;
}
std::string fromAsm(FunctionEmitter& fe, Scalar s, const std::string& v) {
  if (s == Scalar::Float16) return fe.emit("bitcast i16 " + v + " to half");
  if (s == Scalar::Bool) return fe.emit("icmp ne i16 " + v + ", 0");
  if (scalarByteSize(s) == 1) return fe.emit("trunc i16 " + v + " to i8");
  return v;
}

// "{$0, $1}" style operand lists of inline PTX.
std::string asmList(int first, size_t n) {
  if (n == 1) return "$" + std::to_string(first);
  std::string s = "{";
  for (size_t k = 0; k < n; ++k) s += (k ? ", $" : "$") + std::to_string(first + static_cast<int>(k));
  return s + "}";
}
std::string vectorSuffix(size_t n) { return n == 1 ? "" : ".v" + std::to_string(n); }

void lowerLoadIf(FunctionEmitter& fe, const ir::Instr& in) {
  size_t w = in.operands.size() - 2;
  Scalar s = in.operands[2]->type->scalar;
  PtxElement e = ptxElement(s);
  std::string pred = fe.emit("zext i1 " + fe.val(in.operands[1]) + " to i32");
  // Outputs $0..$w-1, then the address, the predicate and the w defaults.
  int addr = static_cast<int>(w), p = addr + 1, first_default = p + 1;
  std::string text = "{ .reg .pred p; setp.ne.b32 p, $" + std::to_string(p) + ", 0; ";
  for (size_t k = 0; k < w; ++k)
    text += std::string("mov.") + e.mov + " $" + std::to_string(k) + ", $" + std::to_string(first_default + static_cast<int>(k)) + "; ";
  text += std::string("@p ld.global") + vectorSuffix(w) + "." + e.mem + " " + asmList(0, w) + ", [$" + std::to_string(addr) + "]; }";
  std::string constraints, args = "i64 " + fe.val(in.operands[0]) + ", i32 " + pred;
  for (size_t k = 0; k < w; ++k) constraints += std::string(k ? ",=" : "=") + e.constraint;
  constraints += ",l,r";
  for (size_t k = 0; k < w; ++k) {
    constraints += std::string(",") + e.constraint;
    args += ", " + e.reg + " " + toAsm(fe, s, fe.val(in.operands[2 + k]));
  }
  std::string ret = e.reg;
  if (w > 1) {
    ret = "{";
    for (size_t k = 0; k < w; ++k) ret += (k ? ", " : "") + e.reg;
    ret += "}";
  }
  std::string v = fe.emit("call " + ret + " asm sideeffect \"" + text + "\", \"" + constraints + "\"(" + args + ")");
  if (w == 1) {
    fe.bind(in, fromAsm(fe, s, v));
    return;
  }
  std::vector<std::pair<std::string, std::string>> fields;
  for (size_t k = 0; k < w; ++k)
    fields.push_back({llvmScalarType(s), fromAsm(fe, s, fe.emit("extractvalue " + ret + " " + v + ", " + std::to_string(k)))});
  fe.bind(in, fe.makeStruct(llvmType(in.type), fields));
}

void lowerStoreIf(FunctionEmitter& fe, const ir::Instr& in) {
  size_t w = in.operands.size() - 2;
  Scalar s = in.operands[2]->type->scalar;
  PtxElement e = ptxElement(s);
  std::string pred = fe.emit("zext i1 " + fe.val(in.operands[1]) + " to i32");
  std::string text = "{ .reg .pred p; setp.ne.b32 p, $1, 0; @p st.global" + vectorSuffix(w) + "." + e.mem + " [$0], " +
                     asmList(2, w) + "; }";
  std::string constraints = "l,r", args = "i64 " + fe.val(in.operands[0]) + ", i32 " + pred;
  for (size_t k = 0; k < w; ++k) {
    constraints += std::string(",") + e.constraint;
    args += ", " + e.reg + " " + toAsm(fe, s, fe.val(in.operands[2 + k]));
  }
  fe.emitLine("call void asm sideeffect \"" + text + "\", \"" + constraints + ",~{memory}\"(" + args + ")");
}

// atom.global.<op>.<type>: the type suffix PTX takes for each operation.
std::string atomicSuffix(ir::TileAtomicKind kind, Scalar s) {
  using K = ir::TileAtomicKind;
  int bits = scalarBits(s);
  std::string b = std::to_string(bits);
  switch (kind) {
    case K::Add:
      if (scalarKind(s) == ScalarKind::Float) return "add.f" + b;
      return bits == 64 ? "add.u64" : scalarSigned(s) ? "add.s32" : "add.u32";
    case K::Max: case K::Min:
      return std::string(kind == K::Max ? "max." : "min.") + (scalarSigned(s) ? "s" : "u") + b;
    case K::And: return "and.b" + b;
    case K::Or: return "or.b" + b;
    case K::Xor: return "xor.b" + b;
    case K::Xchg: return "exch.b" + b;
    case K::Cas: return "cas.b" + b;
  }
  return "";
}

void lowerAtomicIf(FunctionEmitter& fe, const ir::Instr& in) {
  auto kind = static_cast<ir::TileAtomicKind>(in.ints[0]);
  Scalar s = in.type->scalar;
  PtxElement e = ptxElement(s);
  bool cas = kind == ir::TileAtomicKind::Cas;
  std::string pred = fe.emit("zext i1 " + fe.val(in.operands[1]) + " to i32");
  // The memory order and scope (sm_70+), when given: atom.acq_rel.gpu.global...
  std::string order;
  if (in.ints.size() >= 3) {
    static const char* kOrders[] = {".relaxed", ".acquire", ".release", ".acq_rel"};
    static const char* kScopes[] = {".cta", ".cluster", ".gpu", ".sys"};
    order = std::string(kOrders[in.ints[1] & 3]) + kScopes[in.ints[2] & 3];
  }
  std::string text = "{ .reg .pred p; setp.ne.b32 p, $2, 0; mov." + std::string(e.mov) + " $0, $3; @p atom" + order +
                     ".global." + atomicSuffix(kind, s) + " $0, [$1], $3" + (cas ? ", $4" : "") + "; }";
  std::string constraints = std::string("=") + e.constraint + ",l,r," + e.constraint + (cas ? std::string(",") + e.constraint : "");
  std::string args = "i64 " + fe.val(in.operands[0]) + ", i32 " + pred + ", " + e.reg + " " + toAsm(fe, s, fe.val(in.operands[2]));
  if (cas) args += ", " + e.reg + " " + toAsm(fe, s, fe.val(in.operands[3]));
  std::string v = fe.emit("call " + e.reg + " asm sideeffect \"" + text + "\", \"" + constraints + ",~{memory}\"(" + args + ")");
  fe.bind(in, fromAsm(fe, s, v));
}

void lowerArrayAddress(FunctionEmitter& fe, const ir::Instr& in) {
  const Type* a = in.operands[0]->type;
  if (isRecord(a)) {   // a record is the (generic) address of its bytes
    fe.bind(in, fe.emit("ptrtoint i8* " + fe.val(in.operands[0]) + " to i64"));
    return;
  }
  std::string data = fe.emit("extractvalue " + llvmViewType(a) + " " + fe.val(in.operands[0]) + ", 0");
  fe.bind(in, fe.emit("ptrtoint " + llvmElemType(a) + "* " + data + " to i64"));
}

}  // namespace

void lowerGlobalIntrinsic(FunctionEmitter& fe, const ir::Instr& in) {
  switch (in.intrinsic) {
    case Intrinsic::ArrayAddress: return lowerArrayAddress(fe, in);
    case Intrinsic::GlobalLoadIf: return lowerLoadIf(fe, in);
    case Intrinsic::GlobalStoreIf: return lowerStoreIf(fe, in);
    case Intrinsic::GlobalAtomicIf: return lowerAtomicIf(fe, in);
    default: fe.fail(in, in.intrinsicName(), "not a global memory intrinsic");
  }
}

}  // namespace cj::codegen
