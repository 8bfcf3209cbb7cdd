// Issue 5: the rest of numba.cuda's intrinsics — predicate barriers, every
// atomic, warp shuffles/votes/matches, bit operations, and the math module
// functions whose typing is not the plain unary/pow templates. Types follow
// numba-cuda 0.30 (cudadecl.py, cudamath.py, intrinsics.py).
#include <cmath>

#include "typeinfer/rules.h"
#include "typeinfer/templates.h"

namespace cj::typeinfer::rules {
namespace {

using S = Scalar;

std::string nameOf(const Site& s) { return std::string(s.name); }

// ---- a small concrete-template resolver for the tables below -----------------

Signature resolve(const Site& s, const std::vector<Signature>& cases, size_t arity) {
  s.expectArgs(arity);
  std::vector<Scalar> scalars;
  for (size_t i = 0; i < arity; ++i) {
    if (!s.argType(i)->isScalar())
      s.fail(nameOf(s) + "() argument must be a number, got " + typeToString(s.argType(i)));
    scalars.push_back(s.argType(i)->scalar);
  }
  TemplateList t{Template{cases, true, false}};
  auto sig = resolveOverload(t, scalars);
  if (!sig) {
    std::string got;
    for (size_t i = 0; i < arity; ++i) got += (i ? ", " : "") + typeToString(s.argType(i));
    s.fail(nameOf(s) + "() does not support arguments (" + got + ")");
  }
  return *sig;
}

const std::vector<Signature>& unaryCases() {   // cudamath Math_unary
  static const std::vector<Signature> c = {
      {S::Float64, {S::Int64}}, {S::Float64, {S::UInt64}}, {S::Float32, {S::Float32}}, {S::Float64, {S::Float64}}};
  return c;
}
const std::vector<Signature>& binaryIntCases() {   // Math_atan2 / Math_hypot
  static const std::vector<Signature> c = {{S::Float64, {S::Int64, S::Int64}},
                                           {S::Float64, {S::UInt64, S::UInt64}},
                                           {S::Float32, {S::Float32, S::Float32}},
                                           {S::Float64, {S::Float64, S::Float64}}};
  return c;
}
const std::vector<Signature>& binaryCases() {   // Math_binary / Math_remainder
  static const std::vector<Signature> c = {{S::Float32, {S::Float32, S::Float32}},
                                           {S::Float64, {S::Float64, S::Float64}}};
  return c;
}
const std::vector<Signature>& fmaCases() {
  static const std::vector<Signature> c = {{S::Float32, {S::Float32, S::Float32, S::Float32}},
                                           {S::Float64, {S::Float64, S::Float64, S::Float64}}};
  return c;
}
const std::vector<Signature>& cbrtCases() {
  static const std::vector<Signature> c = {{S::Float32, {S::Float32}}, {S::Float64, {S::Float64}}};
  return c;
}
const std::vector<Signature>& isnanCases() {
  static const std::vector<Signature> c = {
      {S::Bool, {S::Int64}}, {S::Bool, {S::UInt64}}, {S::Bool, {S::Float32}}, {S::Bool, {S::Float64}}};
  return c;
}
const std::vector<Signature>& ldexpCases() {
  static const std::vector<Signature> c = {{S::Float32, {S::Float32, S::Int32}},
                                           {S::Float64, {S::Float64, S::Int32}}};
  return c;
}
const std::vector<Signature>& frexpCases() {   // also modf: the float argument
  static const std::vector<Signature> c = {{S::Float32, {S::Float32}}, {S::Float64, {S::Float64}}};
  return c;
}
const std::vector<Signature>& intSameCases() {   // popc, clz
  static const std::vector<Signature> c = {
      {S::Int8, {S::Int8}},   {S::Int16, {S::Int16}},   {S::Int32, {S::Int32}},   {S::Int64, {S::Int64}},
      {S::UInt8, {S::UInt8}}, {S::UInt16, {S::UInt16}}, {S::UInt32, {S::UInt32}}, {S::UInt64, {S::UInt64}}};
  return c;
}
const std::vector<Signature>& brevCases() {
  static const std::vector<Signature> c = {{S::UInt32, {S::UInt32}}, {S::UInt64, {S::UInt64}}};
  return c;
}
const std::vector<Signature>& ffsCases() {
  static const std::vector<Signature> c = {
      {S::UInt32, {S::Int8}},  {S::UInt32, {S::Int16}},  {S::UInt32, {S::Int32}},  {S::UInt32, {S::Int64}},
      {S::UInt32, {S::UInt8}}, {S::UInt32, {S::UInt16}}, {S::UInt32, {S::UInt32}}, {S::UInt32, {S::UInt64}}};
  return c;
}

// The operands converted to a signature's parameter types.
std::vector<ir::Instr*> convertArgs(const Site& s, Emitter& e, const Signature& sig) {
  std::vector<ir::Instr*> ops;
  for (size_t i = 0; i < sig.params.size(); ++i) ops.push_back(e.convert(s.args[i], scalarTy(sig.params[i])));
  return ops;
}

// ---- math: libdevice functions with numba's cases (arg = intrinsic name) -------

template <const std::vector<Signature>& (*Cases)(), size_t Arity>
const Type* mathType(const Site& s) { return scalarTy(resolve(s, Cases(), Arity).ret); }

template <const std::vector<Signature>& (*Cases)(), size_t Arity>
ir::Instr* mathLower(const Site& s, Emitter& e) {
  Signature sig = resolve(s, Cases(), Arity);
  // int arguments give f64: compute every operand in the result's float type.
  std::vector<ir::Instr*> ops;
  for (ir::Instr* a : s.args) ops.push_back(e.convert(a, scalarTy(sig.ret)));
  return e.intrinsic(s.intrinsic, scalarTy(sig.ret), ops);
}

// isnan/isinf/isfinite: integers are never NaN/inf (numba folds them).
const Type* isnanType(const Site& s) { return scalarTy(resolve(s, isnanCases(), 1).ret); }
ir::Instr* isnanLower(const Site& s, Emitter& e) {
  Signature sig = resolve(s, isnanCases(), 1);
  if (sig.params[0] != S::Float32 && sig.params[0] != S::Float64)
    return e.constant(ir::Const::boolean(s.intrinsic == ir::Intrinsic::IsFinite), boolTy());
  return e.intrinsic(s.intrinsic, boolTy(), {e.convert(s.args[0], scalarTy(sig.params[0]))});
}

const Type* ldexpType(const Site& s) { return scalarTy(resolve(s, ldexpCases(), 2).ret); }
ir::Instr* ldexpLower(const Site& s, Emitter& e) {
  Signature sig = resolve(s, ldexpCases(), 2);
  return e.intrinsic(ir::Intrinsic::Ldexp, scalarTy(sig.ret), convertArgs(s, e, sig));
}

// frexp(x) -> (mantissa: float, exponent: i32); modf(x) -> (frac, integral).
const Type* frexpType(const Site& s) {
  Signature sig = resolve(s, frexpCases(), 1);
  return tupleTy({scalarTy(sig.ret), i32Ty()});
}
ir::Instr* frexpLower(const Site& s, Emitter& e) {
  Signature sig = resolve(s, frexpCases(), 1);
  ir::Instr* x = e.convert(s.args[0], scalarTy(sig.ret));
  ir::Instr* m = e.intrinsic(ir::Intrinsic::FrexpMant, scalarTy(sig.ret), {x});
  ir::Instr* ex = e.intrinsic(ir::Intrinsic::FrexpExp, i32Ty(), {x});
  return e.emit(ir::Op::TupleMake, s.instr->type, {m, ex});
}
const Type* modfType(const Site& s) {
  Signature sig = resolve(s, frexpCases(), 1);
  return tupleTy({scalarTy(sig.ret), scalarTy(sig.ret)});
}
ir::Instr* modfLower(const Site& s, Emitter& e) {
  Signature sig = resolve(s, frexpCases(), 1);
  ir::Instr* x = e.convert(s.args[0], scalarTy(sig.ret));
  ir::Instr* frac = e.intrinsic(ir::Intrinsic::ModfFrac, scalarTy(sig.ret), {x});
  ir::Instr* whole = e.intrinsic(ir::Intrinsic::Trunc, scalarTy(sig.ret), {x});
  return e.emit(ir::Op::TupleMake, s.instr->type, {frac, whole});
}

// degrees/radians: Math_unary typing, a multiplication by a constant.
const Type* angleType(const Site& s) { return scalarTy(resolve(s, unaryCases(), 1).ret); }
ir::Instr* angleLower(const Site& s, Emitter& e) {
  Signature sig = resolve(s, unaryCases(), 1);
  const Type* t = scalarTy(sig.ret);
  double k = s.arg == "degrees" ? 180.0 / M_PI : M_PI / 180.0;
  return e.emit(ir::Op::Mul, t, {e.convert(s.args[0], t), e.constant(ir::Const::real(k), t)});
}

// ---- cuda: bit operations (arg = intrinsic name) ----------------------------------

template <const std::vector<Signature>& (*Cases)()>
const Type* bitsType(const Site& s) { return scalarTy(resolve(s, Cases(), 1).ret); }
template <const std::vector<Signature>& (*Cases)()>
ir::Instr* bitsLower(const Site& s, Emitter& e) {
  Signature sig = resolve(s, Cases(), 1);
  return e.intrinsic(s.intrinsic, scalarTy(sig.ret), convertArgs(s, e, sig));
}

// selp(test, a, b): a and b of one type among numba's list; a select.
const Type* selpType(const Site& s) {
  s.expectArgs(3);
  const Type* a = s.argType(1);
  const Type* b = s.argType(2);
  static const S ok[] = {S::Float64, S::Float32, S::Int16, S::UInt16, S::Int32, S::UInt32, S::Int64, S::UInt64};
  bool good = a == b && a->isScalar();
  if (good) {
    good = false;
    for (S k : ok) good = good || a->scalar == k;
  }
  if (!good)
    s.fail("selp(): both values must have one type among float64, float32, (u)int16/32/64, got " +
           typeToString(a) + " and " + typeToString(b));
  return a;
}
ir::Instr* selpLower(const Site& s, Emitter& e) {
  return e.emit(ir::Op::Select, s.args[1]->type, {e.truth(s.args[0]), s.args[1], s.args[2]});
}

// ---- synchronisation ----------------------------------------------------------------

// syncthreads_count/and/or(predicate: integer) -> i32.
const Type* syncPredType(const Site& s) {
  s.expectArgs(1);
  if (!s.argType(0)->isInt() && !s.argType(0)->isBool())
    s.fail(nameOf(s) + "() predicate must be an integer or bool, got " + typeToString(s.argType(0)));
  return i32Ty();
}
ir::Instr* syncPredLower(const Site& s, Emitter& e) {
  return e.intrinsic(s.intrinsic, i32Ty(), {e.convert(s.args[0], i32Ty())});
}

// syncwarp([mask]) -> none; nanosleep(ns) -> none.
const Type* syncwarpType(const Site& s) {
  s.expectArgs(0, 1);
  if (!s.args.empty() && !s.argType(0)->isInt())
    s.fail("syncwarp() mask must be an integer, got " + typeToString(s.argType(0)));
  return noneTy();
}
ir::Instr* syncwarpLower(const Site& s, Emitter& e) {
  ir::Instr* mask = s.args.empty() ? e.constant(ir::Const::integer(-1), i32Ty()) : e.convert(s.args[0], i32Ty());
  e.intrinsic(ir::Intrinsic::SyncWarp, voidTy(), {mask});
  return nullptr;
}
const Type* nanosleepType(const Site& s) {
  s.expectArgs(1);
  if (!s.argType(0)->isInt()) s.fail("nanosleep() argument must be an integer, got " + typeToString(s.argType(0)));
  return noneTy();
}
ir::Instr* nanosleepLower(const Site& s, Emitter& e) {
  e.intrinsic(ir::Intrinsic::NanoSleep, voidTy(), {e.convert(s.args[0], u32Ty())});
  return nullptr;
}

// activemask() / lanemask_lt() -> u32.
const Type* maskType(const Site& s) {
  s.expectArgs(0);
  return u32Ty();
}
ir::Instr* maskLower(const Site& s, Emitter& e) { return e.intrinsic(s.intrinsic, u32Ty(), {}); }

// ---- warp: shuffles, votes, matches ---------------------------------------------------

bool warpValue(const Type* t) {
  return t->isScalar() && (t->scalar == S::Int32 || t->scalar == S::Int64 || t->scalar == S::Float32 ||
                           t->scalar == S::Float64);
}

const Type* shflType(const Site& s) {
  s.expectArgs(3);
  if (!s.argType(0)->isInt()) s.fail(nameOf(s) + "() mask must be an integer");
  if (!warpValue(s.argType(1)))
    s.fail(nameOf(s) + "() only supports 32- and 64-bit ints and floats, got " + typeToString(s.argType(1)));
  if (!s.argType(2)->isInt()) s.fail(nameOf(s) + "() lane/delta must be an integer");
  return s.argType(1);
}
ir::Instr* shflLower(const Site& s, Emitter& e) {
  return e.intrinsic(s.intrinsic, s.args[1]->type,
                     {e.convert(s.args[0], i32Ty()), s.args[1], e.convert(s.args[2], i32Ty())});
}

// all_sync/any_sync/eq_sync -> b1; ballot_sync -> i32 as numba types it.
const Type* voteType(const Site& s) {
  s.expectArgs(2);
  if (!s.argType(0)->isInt()) s.fail(nameOf(s) + "() mask must be an integer");
  if (!s.argType(1)->isScalar()) s.fail(nameOf(s) + "() predicate must be a scalar");
  return s.intrinsic == ir::Intrinsic::VoteBallot ? i32Ty() : boolTy();
}
ir::Instr* voteLower(const Site& s, Emitter& e) {
  const Type* t = s.intrinsic == ir::Intrinsic::VoteBallot ? i32Ty() : boolTy();
  return e.intrinsic(s.intrinsic, t, {e.convert(s.args[0], i32Ty()), e.truth(s.args[1])});
}

const Type* matchCheck(const Site& s) {
  s.expectArgs(2);
  if (!s.argType(0)->isInt()) s.fail(nameOf(s) + "() mask must be an integer");
  if (!warpValue(s.argType(1)))
    s.fail(nameOf(s) + "() value must be int32, int64, float32 or float64, got " + typeToString(s.argType(1)));
  return i32Ty();
}
const Type* matchAnyType(const Site& s) { return matchCheck(s); }
ir::Instr* matchAnyLower(const Site& s, Emitter& e) {
  return e.intrinsic(ir::Intrinsic::MatchAny, i32Ty(), {e.convert(s.args[0], i32Ty()), s.args[1]});
}
const Type* matchAllType(const Site& s) {
  matchCheck(s);
  return tupleTy({i32Ty(), boolTy()});
}
ir::Instr* matchAllLower(const Site& s, Emitter& e) {
  ir::Instr* mask = e.convert(s.args[0], i32Ty());
  ir::Instr* m = e.intrinsic(ir::Intrinsic::MatchAllMask, i32Ty(), {mask, s.args[1]});
  ir::Instr* p = e.intrinsic(ir::Intrinsic::MatchAllPred, boolTy(), {mask, s.args[1]});
  return e.emit(ir::Op::TupleMake, s.instr->type, {m, p});
}

// ---- atomics (arg = intrinsic name) ------------------------------------------------------

enum class AtomicKinds { All, Integer, Unsigned };

AtomicKinds atomicKinds(ir::Intrinsic op) {
  using I = ir::Intrinsic;
  switch (op) {
    case I::AtomicAnd: case I::AtomicOr: case I::AtomicXor: case I::AtomicExch: case I::AtomicCas:
      return AtomicKinds::Integer;
    case I::AtomicInc: case I::AtomicDec: return AtomicKinds::Unsigned;
    default: return AtomicKinds::All;
  }
}

bool atomicAllows(AtomicKinds k, S s) {
  bool isU = s == S::UInt32 || s == S::UInt64;
  bool isI = isU || s == S::Int32 || s == S::Int64;
  switch (k) {
    case AtomicKinds::All: return isI || s == S::Float32 || s == S::Float64;
    case AtomicKinds::Integer: return isI;
    case AtomicKinds::Unsigned: return isU;
  }
  return false;
}

const char* allowedText(AtomicKinds k) {
  switch (k) {
    case AtomicKinds::All: return "float64, float32, int32, uint32, int64, uint64";
    case AtomicKinds::Integer: return "int32, uint32, int64, uint64";
    case AtomicKinds::Unsigned: return "uint32, uint64";
  }
  return "";
}

const Type* atomicOpType(const Site& s) {
  bool cas = s.intrinsic == ir::Intrinsic::AtomicCas;
  s.expectArgs(cas ? 4 : 3);
  const Type* arr = s.argType(0);
  const Type* idx = s.argType(1);
  if (!arr->is(TypeKind::Array))
    s.fail(nameOf(s) + "(): first argument must be an array, got " + typeToString(arr));
  AtomicKinds k = atomicKinds(s.intrinsic);
  if (!atomicAllows(k, arr->scalar))
    s.fail(nameOf(s) + "() does not support arrays of " + std::string(scalarNumbaName(arr->scalar)),
           std::string("supported: ") + allowedText(k));
  if (arr->readonly) s.fail(nameOf(s) + "() on a readonly array");
  size_t n = idx->is(TypeKind::Tuple) ? idx->elems.size() : 1;
  bool ints = idx->is(TypeKind::Tuple) ? true : idx->isInt();
  if (idx->is(TypeKind::Tuple))
    for (const Type* t : idx->elems) ints = ints && t->isInt();
  if (!ints || static_cast<int>(n) != arr->ndim)
    s.fail(nameOf(s) + "(): index must be " +
           (arr->ndim == 1 ? std::string("an integer") : "a tuple of " + std::to_string(arr->ndim) + " integers") +
           " for a " + std::to_string(arr->ndim) + "-d array, got " + typeToString(idx));
  for (size_t i = 2; i < s.args.size(); ++i)
    if (!s.argType(i)->isScalar() || s.argType(i)->isComplex())
      s.fail(nameOf(s) + "(): value must be a number, got " + typeToString(s.argType(i)));
  return scalarTy(arr->scalar);
}

ir::Instr* atomicOpLower(const Site& s, Emitter& e) {
  ir::Instr* arr = s.args[0];
  const Type* dt = scalarTy(arr->type->scalar);
  std::vector<ir::Instr*> ops = {arr};
  std::vector<ir::Instr*> idx =
      s.args[1]->type->is(TypeKind::Tuple) ? e.elements(s.args[1]) : std::vector{s.args[1]};
  for (ir::Instr* i : idx) ops.push_back(e.convert(i, i64Ty()));
  for (size_t i = 2; i < s.args.size(); ++i) ops.push_back(e.convert(s.args[i], dt));
  return e.intrinsic(s.intrinsic, dt, ops);
}

// compare_and_swap(arr, old, val): cas on arr[0] of a 1-d integer array.
const Type* compareAndSwapType(const Site& s) {
  s.expectArgs(3);
  const Type* arr = s.argType(0);
  if (!arr->is(TypeKind::Array) || arr->ndim != 1 || !atomicAllows(AtomicKinds::Integer, arr->scalar))
    s.fail("compare_and_swap(): first argument must be a 1-d array of int32/uint32/int64/uint64, got " +
           typeToString(arr));
  return scalarTy(arr->scalar);
}
ir::Instr* compareAndSwapLower(const Site& s, Emitter& e) {
  const Type* dt = scalarTy(s.args[0]->type->scalar);
  return e.intrinsic(ir::Intrinsic::AtomicCas, dt,
                     {s.args[0], e.constInt(0), e.convert(s.args[1], dt), e.convert(s.args[2], dt)});
}

}  // namespace

const Rule mathUnaryInt{mathType<unaryCases, 1>, mathLower<unaryCases, 1>};
const Rule mathBinaryInt{mathType<binaryIntCases, 2>, mathLower<binaryIntCases, 2>};
const Rule mathBinary{mathType<binaryCases, 2>, mathLower<binaryCases, 2>};
const Rule mathFma{mathType<fmaCases, 3>, mathLower<fmaCases, 3>};
const Rule mathCbrt{mathType<cbrtCases, 1>, mathLower<cbrtCases, 1>};
const Rule mathIsNan{isnanType, isnanLower};
const Rule mathLdexp{ldexpType, ldexpLower};
const Rule mathFrexp{frexpType, frexpLower};
const Rule mathModf{modfType, modfLower};
const Rule mathAngle{angleType, angleLower};
const Rule bitsSame{bitsType<intSameCases>, bitsLower<intSameCases>};
const Rule bitsBrev{bitsType<brevCases>, bitsLower<brevCases>};
const Rule bitsFfs{bitsType<ffsCases>, bitsLower<ffsCases>};
const Rule selp{selpType, selpLower};
const Rule syncPredicate{syncPredType, syncPredLower};
const Rule syncwarp{syncwarpType, syncwarpLower};
const Rule nanosleep{nanosleepType, nanosleepLower};
const Rule laneMask{maskType, maskLower};
const Rule shfl{shflType, shflLower};
const Rule vote{voteType, voteLower};
const Rule matchAny{matchAnyType, matchAnyLower};
const Rule matchAll{matchAllType, matchAllLower};
const Rule atomicOp{atomicOpType, atomicOpLower};
const Rule compareAndSwap{compareAndSwapType, compareAndSwapLower};

}  // namespace cj::typeinfer::rules
