// cudajit's SIMT symbols: special registers, grid helpers, barriers,
// shared/local arrays, atomics.
#include "typeinfer/records.h"
#include "typeinfer/rules.h"
#include "typeinfer/specializer.h"

namespace cj::typeinfer::rules {
namespace {

// ---- special registers: cuda.threadIdx.x & co are i32 values ----------------

const Type* sregType(const Site&) { return i32Ty(); }

// A kernel specialised on its launch block shape (block algorithms, tile
// operations in SIMT code: it runs with that shape only, .reqntid) knows
// cuda.blockDim: a constant lets the optimiser unroll block-strided loops
// (`for i in range(cuda.threadIdx.x, n, cuda.blockDim.x)`), as CUDA C++
// with a compile-time block size is.
ir::Instr* sregValue(const Site& s, Emitter& e, ir::Intrinsic reg) {
  for (int d = 0; d < 3; ++d) {
    int known = s.ctx.specializer().options().block_dims[d];
    if (reg == kNtid[d] && known > 0) return e.constant(ir::Const::integer(known), i32Ty());
  }
  return e.intrinsic(reg, i32Ty(), {});
}

ir::Instr* sregLower(const Site& s, Emitter& e) { return sregValue(s, e, s.intrinsic); }

// ---- grid(n) / gridsize(n): i64 or a tuple of n i64, expanded inline --------

int gridDims(const Site& s) {
  s.expectArgs(1);
  auto n = constantInt(s.args[0]);
  if (!n || *n < 1 || *n > 3)
    s.fail(std::string(s.name) + "() argument must be the constant 1, 2 or 3");
  return static_cast<int>(*n);
}

const Type* gridType(const Site& s) {
  int n = gridDims(s);
  if (n == 1) return i64Ty();
  return tupleTy(std::vector<const Type*>(n, i64Ty()));
}

ir::Instr* sreg64(const Site& s, Emitter& e, const Sreg3& reg, int dim) {
  return e.convert(sregValue(s, e, reg[dim]), i64Ty());   // sign-extended, as numba does
}

// As numba-cuda: each register sign-extended to i64, then multiplied and added in i64.
ir::Instr* gridLowerWith(const Site& s, Emitter& e, bool size) {
  int n = gridDims(s);
  std::vector<ir::Instr*> dims;
  for (int d = 0; d < n; ++d) {
    if (size) {
      ir::Instr* ntid = sreg64(s, e, kNtid, d);
      ir::Instr* nctaid = sreg64(s, e, kNctaid, d);
      dims.push_back(e.emit(ir::Op::Mul, i64Ty(), {ntid, nctaid}));
    } else {
      ir::Instr* tid = sreg64(s, e, kTid, d);
      ir::Instr* ntid = sreg64(s, e, kNtid, d);
      ir::Instr* ctaid = sreg64(s, e, kCtaid, d);
      ir::Instr* base = e.emit(ir::Op::Mul, i64Ty(), {ntid, ctaid});
      dims.push_back(e.emit(ir::Op::Add, i64Ty(), {base, tid}));
    }
  }
  if (n == 1) return dims[0];
  return e.emit(ir::Op::TupleMake, s.instr->type, dims);
}

ir::Instr* gridLower(const Site& s, Emitter& e) { return gridLowerWith(s, e, false); }
ir::Instr* gridsizeLower(const Site& s, Emitter& e) { return gridLowerWith(s, e, true); }

// ---- barriers and fences: () -> none -------------------------------------------

const Type* barrierType(const Site& s) {
  s.expectArgs(0);
  return noneTy();
}
ir::Instr* barrierLower(const Site& s, Emitter& e) {
  e.intrinsic(s.intrinsic, voidTy(), {});
  return nullptr;
}

// ---- cooperative groups: cg.this_grid() -> the grid group, whose sync() is
// a grid barrier (a symbol-typed marker value; its methods are symbols) -------

constexpr const char* kGridGroup = "cudajit.cg.GridGroup";

const Type* thisGridType(const Site& s) {
  s.expectArgs(0);
  return symbolTy(kGridGroup);
}
ir::Instr* thisGridLower(const Site&, Emitter& e) {
  return e.constant(ir::Const::symbol(kGridGroup), symbolTy(kGridGroup));
}

// ---- shared.array / local.array(shape, dtype) ----------------------------------

struct ArraySpec {
  Scalar dtype;
  std::vector<int64_t> shape;
  int64_t alignment = 0;   // bytes (numba's alignment=); 0: the default
  const Type* record = nullptr;   // a structured dtype: the items are records
  const Type* vector = nullptr;   // a vector type (float16x4, MathDx's complex32x2): the items are vectors
};

// What a dtype argument that names no type was, for the message: a
// string's text ('complex16'), else its type.
std::string dtypeArgText(const ir::Instr* v) {
  if (auto c = constantOf(v); c && c->kind == ir::Const::Kind::Str) return "the string '" + c->s + "'";
  return typeToString(v->type);
}

ArraySpec arraySpec(const Site& s) {
  std::vector<ir::Instr*> a = s.bind({"shape", "dtype", "alignment"}, 2);
  ArraySpec spec;
  auto shape = constantOf(a[0]);
  if (shape && shape->kind == ir::Const::Kind::Int) {
    spec.shape.push_back(shape->i);
  } else if (shape && shape->kind == ir::Const::Kind::Tuple) {
    for (const auto& d : shape->elems)
      spec.shape.push_back(d.kind == ir::Const::Kind::Int ? d.i : -1);
  }
  bool valid = !spec.shape.empty();
  // shared.array(0, dtype): the launch's dynamic shared memory (numba semantics).
  bool dynamic = s.intrinsic == ir::Intrinsic::SharedArray && spec.shape.size() == 1 && spec.shape[0] == 0;
  for (int64_t d : spec.shape) valid = valid && (d > 0 || dynamic);
  if (!valid)
    s.fail(std::string(s.name) + "(): shape must be a constant positive integer or tuple of "
                                 "integers",
           "use a literal or a global constant, e.g. cuda.shared.array(256, numpy.float32)");
  if (spec.shape.size() > 3)
    s.fail(std::string(s.name) + "(): at most 3 dimensions are supported");
  spec.record = recordDtypeOf(a[1]);   // a structured dtype: an array of records
  spec.vector = spec.record ? nullptr : vectorDtypeOf(a[1]);
  auto dtype = spec.record ? std::optional<Scalar>(Scalar::UInt8)
               : spec.vector ? std::optional<Scalar>(spec.vector->elems[0]->scalar)
                             : dtypeOf(a[1]);
  if (!dtype)
    s.fail(std::string(s.name) + "(): dtype must be a numpy scalar type (numpy.float32) or "
                                 "its name ('float32'), a vector type (cudajit.float16x4) or a structured dtype, got " +
           dtypeArgText(a[1]));
  spec.dtype = *dtype;
  if (a[2]) {
    auto align = constantOf(a[2]);
    if (align && align->kind == ir::Const::Kind::None) return spec;
    if (!align || align->kind != ir::Const::Kind::Int || align->i <= 0 || (align->i & (align->i - 1)) || align->i > 4096)
      s.fail(std::string(s.name) + "(): alignment must be a constant power of two up to 4096 (bytes)");
    const int64_t need = spec.record   ? memAlign(spec.record)
                         : spec.vector ? itemAlign(spec.vector)
                                       : scalarByteSize(spec.dtype);
    if (align->i < need)
      s.fail(std::string(s.name) + "(): alignment " + std::to_string(align->i) + " is smaller than the " +
             (spec.record   ? typeToNumbaString(spec.record)
              : spec.vector ? vectorName(spec.vector)
                            : std::string(scalarNumbaName(spec.dtype))) +
             " elements (" + std::to_string(need) + " bytes)");
    spec.alignment = align->i;
  }
  return spec;
}

const Type* memArrayType(const Site& s, MemSpace space) {
  ArraySpec spec = arraySpec(s);
  if (spec.record) return recordArrayTy(spec.record, static_cast<int>(spec.shape.size()), Layout::C, space);
  if (spec.vector) return vectorArrayTy(spec.vector, static_cast<int>(spec.shape.size()), Layout::C, space);
  return arrayTy(spec.dtype, static_cast<int>(spec.shape.size()), Layout::C, space);
}
const Type* sharedType(const Site& s) { return memArrayType(s, MemSpace::Shared); }
const Type* localType(const Site& s) { return memArrayType(s, MemSpace::Local); }

ir::Instr* memArrayLower(const Site& s, Emitter& e) {
  ArraySpec spec = arraySpec(s);
  ir::Instr* arr = e.intrinsic(s.intrinsic, s.instr->type, {}, spec.shape);
  if (spec.alignment) arr->cval = ir::Const::str("align=" + std::to_string(spec.alignment));
  return arr;
}

// ---- atomic.add(arr, idx, val) -> the old value -----------------------------------

// An element index of arr: one integer, or a tuple of ndim integers.
void expectElementIndex(const Site& s, const Type* arr, const Type* idx) {
  size_t n = idx->is(TypeKind::Tuple) ? idx->elems.size() : 1;
  bool ints = idx->is(TypeKind::Tuple) ? true : idx->isInt();
  if (idx->is(TypeKind::Tuple))
    for (const Type* t : idx->elems) ints = ints && t->isInt();
  if (!ints || static_cast<int>(n) != arr->ndim)
    s.fail(std::string(s.name) + "(): index must be " +
           (arr->ndim == 1 ? std::string("an integer") :
                             "a tuple of " + std::to_string(arr->ndim) + " integers") +
           " for a " + std::to_string(arr->ndim) + "-d array, got " + typeToString(idx));
}

// (arr, i64 indices...[, the value as arr's element type]): the operands of
// an element-access intrinsic.
std::vector<ir::Instr*> elementOperands(const Site& s, Emitter& e, bool with_value) {
  ir::Instr* arr = s.args[0];
  std::vector<ir::Instr*> operands = {arr};
  std::vector<ir::Instr*> idx = s.args[1]->type->is(TypeKind::Tuple) ? e.elements(s.args[1])
                                                                     : std::vector{s.args[1]};
  for (ir::Instr* i : idx) operands.push_back(e.convert(i, i64Ty()));
  if (with_value) operands.push_back(e.convert(s.args[2], scalarTy(arr->type->scalar)));
  return operands;
}

bool atomicDtype(Scalar s) {
  switch (s) {
    case Scalar::Float64: case Scalar::Float32: case Scalar::Int32:
    case Scalar::UInt32: case Scalar::Int64: case Scalar::UInt64:
      return true;
    default:
      return false;
  }
}

const Type* atomicType(const Site& s) {
  s.expectArgs(3);
  const Type* arr = s.argType(0);
  const Type* idx = s.argType(1);
  const Type* val = s.argType(2);
  if (!arr->is(TypeKind::Array))
    s.fail(std::string(s.name) + "(): first argument must be an array, got " + typeToString(arr));
  if (!atomicDtype(arr->scalar))
    s.fail(std::string(s.name) + "() does not support arrays of " +
           std::string(scalarNumbaName(arr->scalar)),
           "supported: float64, float32, int32, uint32, int64, uint64");
  if (arr->readonly) s.fail(std::string(s.name) + "() on a readonly array");
  expectElementIndex(s, arr, idx);
  if (!val->isScalar() || val->isComplex())
    s.fail(std::string(s.name) + "(): value must be a number, got " + typeToString(val));
  return scalarTy(arr->scalar);
}

ir::Instr* atomicLower(const Site& s, Emitter& e) {
  return e.intrinsic(s.intrinsic, scalarTy(s.args[0]->type->scalar), elementOperands(s, e, true));
}

// ---- cuda.ldcg(arr, idx) / cuda.stcg(arr, idx, value): cache-hinted accesses ----

// numba's: the integer and float types (and bool), not complex.
void expectHintDtype(const Site& s, const Type* arr) {
  if (!arr->is(TypeKind::Array))
    s.fail(std::string(s.name) + "(): first argument must be an array, got " + typeToString(arr));
  if (arr->scalar == Scalar::Complex64 || arr->scalar == Scalar::Complex128)
    s.fail(std::string(s.name) + "() does not support arrays of " + std::string(scalarNumbaName(arr->scalar)),
           "supported: the integer, float and bool types");
}

const Type* cacheLoadType(const Site& s) {
  s.expectArgs(2);
  expectHintDtype(s, s.argType(0));
  expectElementIndex(s, s.argType(0), s.argType(1));
  return scalarTy(s.argType(0)->scalar);
}
ir::Instr* cacheLoadLower(const Site& s, Emitter& e) {
  return e.intrinsic(s.intrinsic, scalarTy(s.args[0]->type->scalar), elementOperands(s, e, false));
}

const Type* cacheStoreType(const Site& s) {
  s.expectArgs(3);
  const Type* arr = s.argType(0);
  expectHintDtype(s, arr);
  if (arr->readonly) s.fail(std::string(s.name) + "() on a readonly array");
  expectElementIndex(s, arr, s.argType(1));
  if (!s.argType(2)->isScalar() || s.argType(2)->isComplex())
    s.fail(std::string(s.name) + "(): value must be a number, got " + typeToString(s.argType(2)));
  return noneTy();
}
ir::Instr* cacheStoreLower(const Site& s, Emitter& e) {
  e.intrinsic(s.intrinsic, voidTy(), elementOperands(s, e, true));
  return nullptr;
}

}  // namespace

const Rule sreg{sregType, sregLower};
const Rule grid{gridType, gridLower};
const Rule gridsize{gridType, gridsizeLower};
const Rule barrier{barrierType, barrierLower};
const Rule thisGrid{thisGridType, thisGridLower};
const Rule sharedArray{sharedType, memArrayLower};
const Rule localArray{localType, memArrayLower};
const Rule atomicAdd{atomicType, atomicLower};
const Rule cacheLoad{cacheLoadType, cacheLoadLower};
const Rule cacheStore{cacheStoreType, cacheStoreLower};

}  // namespace cj::typeinfer::rules
