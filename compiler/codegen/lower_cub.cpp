// Lowering of `intrinsic cub "<spec>"` (ir/intrinsics.def): a call of the
// CUB instantiation's extern "C" entry point (cub/cub.h has the C ABI of each
// shape), declared in this module; nvJitLink later joins the instantiation's
// LTO-IR (driver/cub_link.cpp).
//
// Temporary storage lives in static shared memory this module reserves:
//   * block algorithms with `sync` (every spec type inference writes) end
//     with __syncthreads(), so all of them share one buffer,
//     @__cj_cub_temp, as large and as aligned as the largest of the module;
//     block loads/stores that do not touch their storage point there too;
//     a `nosync` block spec (the last user, driver/cub_link.h) too;
//   * warp algorithms (per-warp storage, no block barrier) get a buffer
//     each, @__cj_cub_tmp.N: another warp may still be using its slot while
//     the block enters the next block algorithm.
// Shared memory the kernel declares itself (cuda.shared.array) and the
// dynamic shared memory come on top; the static total must stay under
// 48 KB (ptxas checks it when linking).
//
// Items are passed as generic pointers: a local array's data pointer, or a
// scalar spilled to an alloca (ipt 1 pointer ABIs: sorts, histogram, store)
// and read back after the call. A user op (`op=user:<c name>`) gets its
// C-ABI definition here: `define T @<c name>(T, T)` calling the typed
// function `<c name>__impl` that type inference added (rules_cub.cpp), so
// the CUB instantiation's call resolves to it at link time and inlines.
#include <algorithm>

#include "codegen/emitter.h"
#include "cub/cub.h"
#include "support/error.h"

namespace cj::codegen {
namespace {

constexpr uint64_t kStaticSharedLimit = 48 * 1024;

cub::Spec specOf(FunctionEmitter& fe, const ir::Instr& in) {
  cub::Spec parsed, normalized;
  std::string error;
  if (in.cval.kind != ir::Const::Kind::Str || !cub::parseSpec(in.cval.s, &parsed, &error) ||
      !cub::tryNormalize(parsed, &normalized, &error))
    fe.fail(in, "cub", "bad CUB spec on intrinsic cub: " + error);
  return normalized;
}

// Block algorithms whose storage may be shared with every other such call.
// A `nosync` block spec is one the driver proved to be a last user of the
// storage (driver/cub_link.h): every earlier user ended with a barrier and
// none comes after, so it may share the buffer too.
bool sharesBuffer(const cub::Spec& s) {
  return cub::info(s.algorithm).family == cub::Family::Block;
}

// Size and alignment of the shared buffer: the largest over the module.
std::pair<uint64_t, uint64_t> sharedBufferLayout(FunctionEmitter& fe) {
  uint64_t bytes = 1, align = 16;
  for (const auto& fn : fe.mod().irModule().functions)
    for (const auto& b : fn->blocks)
      for (const auto& in : b->instrs) {
        if (!in->isIntrinsic(ir::Intrinsic::CubCall)) continue;
        cub::Spec s = specOf(fe, *in);
        if (!sharesBuffer(s)) continue;
        cub::Instance inst = cub::instantiate(s);   // this process's memory cache: cheap
        bytes = std::max(bytes, inst.temp_bytes);
        align = std::max(align, inst.temp_align);
      }
  return {bytes, align};
}

// A generic i8* to the call's temp storage.
std::string tempStorage(FunctionEmitter& fe, const ir::Instr& in, const cub::Instance& inst) {
  uint64_t bytes, align;
  std::string global;
  if (sharesBuffer(inst.spec)) {
    std::tie(bytes, align) = sharedBufferLayout(fe);
  } else {
    bytes = std::max<uint64_t>(inst.temp_bytes, 1);
    align = std::max<uint64_t>(inst.temp_align, 16);
  }
  if (bytes > kStaticSharedLimit)
    fe.fail(in, in.names.empty() ? "cub" : in.names[0],
            cub::describe(inst.spec) + " needs " + std::to_string(bytes) +
                " bytes of shared memory, more than the 48 KB a kernel may declare statically "
                "(use fewer items per thread or a smaller block)");
  std::string at = "[" + std::to_string(bytes) + " x i8]";
  std::string def = "internal addrspace(3) global " + at + " undef, align " + std::to_string(align);
  global = sharesBuffer(inst.spec) ? fe.mod().addGlobalOnce("__cj_cub_temp", def)
                                   : fe.mod().addGlobal("__cj_cub_tmp", def);
  std::string p3 = fe.emit("getelementptr inbounds " + at + ", " + at + " addrspace(3)* " + global +
                           ", i64 0, i64 0");
  return fe.emit("addrspacecast i8 addrspace(3)* " + p3 + " to i8*");
}

void defineUserOp(FunctionEmitter& fe, const ir::Instr& in, const cub::Spec& s) {
  // The typed function type inference made for this op (rules_cub.cpp).
  const ir::Function* impl = fe.mod().irModule().find(s.user_op + "__impl");
  if (!impl) fe.fail(in, "cub", "internal error: no function " + s.user_op + "__impl for the user op");
  std::string t = cub::info(s.dtype).nvvm;
  fe.mod().define(s.user_op, "define " + t + " @" + s.user_op + "(" + t + " %a, " + t + " %b) {\n" +
                                 "entry:\n  %r = call " + t + " " + fe.mod().functionName(*impl) + "(" +
                                 t + " %a, " + t + " %b)\n  ret " + t + " %r\n}\n");
}

// Scalars in pointer ABIs: spilled to an alloca, read back after the call.
struct Spill {
  const ir::Instr* value;
  std::string slot;
  std::string type;
};

class CallBuilder {
 public:
  CallBuilder(FunctionEmitter& fe, const ir::Instr& in) : fe_(fe), in_(in) {}

  std::string dataPointer(const ir::Instr* arr) {
    return fe_.emit("extractvalue " + llvmViewType(arr->type) + " " + fe_.val(arr) + ", 0");
  }
  // Items as a pointer: the local array's data, or a spilled scalar.
  std::string itemsPointer(const ir::Instr* v) {
    if (v->type->is(TypeKind::Array)) return dataPointer(v);
    std::string t = llvmScalarType(v->type->scalar);
    std::string slot = fe_.entryAlloca(t, 8);
    fe_.emitLine("store " + t + " " + fe_.val(v) + ", " + t + "* " + slot);
    spills_.push_back({v, slot, t});
    return slot;
  }
  // Items as one value (ipt 1 by-value ABIs): the scalar, or element 0.
  std::string itemValue(const ir::Instr* v) {
    if (!v->type->is(TypeKind::Array)) return fe_.val(v);
    std::string t = llvmScalarType(v->type->scalar);
    return fe_.emit("load " + t + ", " + t + "* " + dataPointer(v));
  }
  // The reloaded value of a spilled scalar.
  std::string reload(const ir::Instr* v) {
    for (const Spill& s : spills_)
      if (s.value == v) return fe_.emit("load " + s.type + ", " + s.type + "* " + s.slot);
    fe_.fail(in_, "cub", "internal error: no spill slot");
  }
  bool spilled(const ir::Instr* v) const {
    for (const Spill& s : spills_)
      if (s.value == v) return true;
    return false;
  }

 private:
  FunctionEmitter& fe_;
  const ir::Instr& in_;
  std::vector<Spill> spills_;
};

}  // namespace

void lowerCubCall(FunctionEmitter& fe, const ir::Instr& in) {
  cub::Spec spec = specOf(fe, in);
  cub::Instance inst = cub::instantiate(spec);
  const cub::EntryPoint& entry = inst.entry;
  fe.mod().declare(entry.nvvmDeclaration());
  fe.mod().requireBlock(spec.block);
  if (spec.op == cub::Op::User) defineUserOp(fe, in, spec);

  const auto& ops = in.operands;
  auto need = [&](size_t n) {
    if (ops.size() != n)
      fe.fail(in, "cub", "intrinsic cub for " + cub::describe(spec) + " takes " + std::to_string(n) +
                             " operands, has " + std::to_string(ops.size()));
  };
  CallBuilder cb(fe, in);
  std::string t = cub::info(spec.dtype).nvvm;
  bool one = spec.items_per_thread == 1;
  std::vector<std::string> args;   // typed: "float %v3"
  const ir::Instr* written_back = nullptr;   // ipt-1 scan into element 0 of an array
  switch (cub::info(spec.algorithm).shape) {
    case cub::Shape::Reduce:
      need(1);
      args.push_back(one ? t + " " + cb.itemValue(ops[0]) : t + "* " + cb.itemsPointer(ops[0]));
      break;
    case cub::Shape::Scan:
    case cub::Shape::ScanInit:
      need(cub::info(spec.algorithm).shape == cub::Shape::Scan ? 1 : 2);
      if (one) {
        args.push_back(t + " " + cb.itemValue(ops[0]));
        if (ops[0]->type->is(TypeKind::Array)) written_back = ops[0];
      } else {
        args.push_back(t + "* " + cb.itemsPointer(ops[0]));
      }
      if (ops.size() == 2) args.push_back(t + " " + fe.val(ops[1]));
      break;
    case cub::Shape::Load:
    case cub::Shape::Store: {
      need(3);
      const ir::Instr* arr = ops[0];
      std::string data = cb.dataPointer(arr);
      std::string start = fe.val(ops[1]);
      std::string ptr = fe.emit("getelementptr " + t + ", " + t + "* " + data + ", i64 " + start);
      std::string size = fe.emit("extractvalue " + llvmViewType(arr->type) + " " + fe.val(arr) + ", 1, 0");
      std::string valid = fe.emit("sub i64 " + size + ", " + start);
      std::string items = cb.itemsPointer(ops[2]);
      args = {t + "* " + ptr, t + "* " + items, "i64 " + valid};
      if (spec.algorithm == cub::Algorithm::BlockLoad)
        args.push_back(t + " " + (cub::info(spec.dtype).is_integer ? std::string("0")
                                                                    : llvmFloatConst(0.0, arr->type->scalar)));
      break;
    }
    case cub::Shape::Sort:
      need(1);
      args.push_back(t + "* " + cb.itemsPointer(ops[0]));
      break;
    case cub::Shape::SortPairs:
      need(2);
      args.push_back(t + "* " + cb.itemsPointer(ops[0]));
      args.push_back(std::string(cub::info(spec.value_dtype).nvvm) + "* " + cb.itemsPointer(ops[1]));
      break;
    case cub::Shape::Histogram:
      need(2);
      args.push_back(t + "* " + cb.itemsPointer(ops[0]));
      args.push_back(std::string(cub::info(spec.value_dtype).nvvm) + "* " + cb.dataPointer(ops[1]));
      break;
  }
  args.push_back("i8* " + tempStorage(fe, in, inst));

  std::string list;
  for (const auto& a : args) list += (list.empty() ? "" : ", ") + a;
  std::string call = "call " + entry.ret_nvvm + " @" + entry.name + "(" + list + ")";
  if (entry.ret_nvvm == "void") {
    fe.emitLine(call);
  } else {
    std::string r = fe.emit(call);
    if (written_back) {
      fe.emitLine("store " + t + " " + r + ", " + t + "* " + cb.dataPointer(written_back));
    } else if (hasValue(in.type)) {
      fe.bind(in, r);
    }
  }
  // Scalars sorted through a pointer: their new values are the result.
  const Type* rt = in.type;
  if (rt->isScalar() && cb.spilled(ops[0])) {
    fe.bind(in, cb.reload(ops[0]));
  } else if (rt->is(TypeKind::Tuple) && ops.size() == 2 && cb.spilled(ops[0])) {
    std::string k = cb.reload(ops[0]);
    std::string v = cb.reload(ops[1]);
    fe.bind(in, fe.makeStruct(llvmType(rt), {{llvmType(rt->elems[0]), k}, {llvmType(rt->elems[1]), v}}));
  }
  if (hasValue(rt) && !rt->isScalar() && !rt->is(TypeKind::Tuple))
    fe.fail(in, "cub", "intrinsic cub cannot produce " + typeToString(rt));
}

}  // namespace cj::codegen
