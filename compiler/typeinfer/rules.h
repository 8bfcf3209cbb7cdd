// Typing rules: how one table entry (a symbol, an attribute, a call target)
// is typed during the fixpoint and rewritten into typed IR afterwards.
//
// `type` sees operand types that may still widen in later fixpoint rounds;
// it must be a pure function of them (and of constants). `lower` runs once
// on the final types, with operands already rewritten, and returns the value
// that replaces the site's instruction (nullptr: the instruction had no value).
#pragma once
#include <string_view>

#include "typeinfer/context.h"

namespace cj::typeinfer {

struct Rule {
  const Type* (*type)(const Site&) = nullptr;          // nullptr: not usable this way
  ir::Instr* (*lower)(const Site&, Emitter&) = nullptr;
  explicit operator bool() const { return type != nullptr; }
};

// symbols.def: a qualified Python name -> its rule as a value and as a callee.
struct SymbolEntry {
  std::string_view name;
  const Rule* value;      // never null; an empty Rule when not usable as a value
  const Rule* call;       // never null; an empty Rule when not callable
  std::string_view arg;   // what the rule needs when a string: a scalar name, a cmath function, ...
  ir::Intrinsic intrinsic;   // what the rule needs when an intrinsic (I(Enum) in symbols.def); else Count
};
const SymbolEntry* findSymbol(std::string_view qualified_name);
// cudajit.mathdx.matmul.<key>[...] / cudajit.mathdx.fft.<key>[...]: the symbols of
// Matmul and FFT objects (rules::mathdxCall).
bool isMathdxSymbol(std::string_view qualified_name);
bool isForeignSymbol(std::string_view qualified_name);   // rules_foreign.cpp: cudajit.foreign.<key>

// attributes.def: an attribute of a typed value (array.shape, ...).
struct AttributeEntry {
  TypeKind kind;
  std::string_view name;
  const Rule* rule;
};
const AttributeEntry* findAttribute(TypeKind kind, std::string_view name);

// The scalar a dtype argument names: sym(numpy.float32), the string
// "float32", or builtins.float / int / bool. nullopt otherwise.
std::optional<Scalar> dtypeOf(const ir::Instr* v);
// The vector type a dtype argument names: a vector type's symbol
// (cudajit.float16x4, cudajit.half4), a string naming one ("float16x4"), or
// a name of vector_dtype_names.def ("complex32x2"). nullptr otherwise.
const Type* vectorDtypeOf(const ir::Instr* v);
// The vector type `name` names ("float16x4", "half4"; with dtype_names the
// names of vector_dtype_names.def too), or nullptr.
const Type* vectorNamed(std::string_view name, bool dtype_names);
// The item type a dtype argument names: a vector type, else the scalar of
// dtypeOf; nullptr when it names neither.
const Type* itemDtypeOf(const ir::Instr* v);

namespace rules {
// The special register of each dimension x, y, z (cuda.threadIdx & co, ct.bid & co).
using Sreg3 = ir::Intrinsic[3];
inline constexpr Sreg3 kTid = {ir::Intrinsic::TidX, ir::Intrinsic::TidY, ir::Intrinsic::TidZ};
inline constexpr Sreg3 kNtid = {ir::Intrinsic::NtidX, ir::Intrinsic::NtidY, ir::Intrinsic::NtidZ};
inline constexpr Sreg3 kCtaid = {ir::Intrinsic::CtaidX, ir::Intrinsic::CtaidY, ir::Intrinsic::CtaidZ};
inline constexpr Sreg3 kNctaid = {ir::Intrinsic::NctaidX, ir::Intrinsic::NctaidY, ir::Intrinsic::NctaidZ};

// rules_cuda.cpp
extern const Rule sreg;            // value: an i32 special register (arg = intrinsic name)
extern const Rule grid;            // cudajit.grid(n)
extern const Rule gridsize;        // cudajit.gridsize(n)
extern const Rule barrier;         // syncthreads() & co: () -> none (arg = intrinsic name)
extern const Rule thisGrid;        // cudajit.cg.this_grid() -> the grid group marker
extern const Rule operatorCall;    // operator.add(a, b) & co: the operator (arg = the function's name)
extern const Rule sharedArray;     // cudajit.shared.array(shape, dtype)
extern const Rule localArray;      // cudajit.local.array(shape, dtype)
extern const Rule cacheLoad;       // cudajit.ldcg(arr, i) and the other hinted loads
extern const Rule cacheStore;      // cudajit.stcg(arr, i, v) and the other hinted stores
extern const Rule atomicAdd;       // cudajit.atomic.add(arr, idx, val)
// rules_cub.cpp: cudajit.block.* / cudajit.warp.* (the row is found by the symbol's name)
extern const Rule cubCall;
// rules_mathdx.cpp: cudajit.mathdx.matmul.<key>[.execute] and
// cudajit.mathdx.fft.<key>[.execute] (a Matmul or FFT object and its execute
// method; the symbol is per descriptor, so it is matched by isMathdxSymbol
// rather than a symbols.def row)
extern const Rule mathdxCall;
// rules_foreign.cpp: a cudajit.declare_device(...) object (its symbol is per declaration)
extern const Rule foreignCall;
// rules_libdevice.cpp: cudajit.libdevice.<name> (arg = the name; rows from ir/libdevice.def)
extern const Rule libdeviceCall;
// rules_fp16.cpp: cudajit.fp16.* (the row is found by the symbol's name)
extern const Rule fp16Call;
// rules_math.cpp (arg = intrinsic name)
extern const Rule mathUnary;
extern const Rule mathUnaryWithF16;
extern const Rule mathPow;
// rules_builtins.cpp
extern const Rule range;
extern const Rule len;
extern const Rule minMax;          // arg = "min" | "max"
extern const Rule absolute;
extern const Rule toInt;           // int(x)
extern const Rule toFloat;         // float(x)
extern const Rule toBool;          // bool(x)
extern const Rule scalarCast;      // numpy.float32(x) & co (arg = scalar name)
extern const Rule bf16Conversion;  // cuda.bf16.bfloat16_to_float32 / bfloat16_as_int16 / bfloat16_as_uint16
extern const Rule literalUnroll;   // numba.literal_unroll(t) / cudajit.literal_unroll(t): the tuple
extern const Rule namedTupleMake;  // Pt(1.0, y=2.0) of a namedtuple class (name = "namedtuple Pt(x,y)")
extern const Rule vectorMake;      // cudajit.float32x4(x, y, z, w) & co (arg = the vector's <base>x<N> name)
// rules_array.cpp (attributes)
extern const Rule toComplex;       // complex(re[, im])   (rules_language.cpp)
extern const Rule enumerate;       // enumerate(it[, start])
extern const Rule zip;             // zip(a, b, ...)
extern const Rule print;           // print(...)
extern const Rule slice;           // slice(start, stop[, step])   (slicing.cpp)
extern const Rule scalarReal;      // x.real
extern const Rule scalarImag;      // x.imag
extern const Rule conjugateAttr;   // x.conjugate (a bound method)
extern const Rule conjugateCall;   // x.conjugate()
extern const Rule scalarViewAttr;  // x.view (a bound method)
extern const Rule scalarViewCall;  // x.view(np.int32): the same bits as another scalar type

extern const Rule arrayShape;
extern const Rule arrayStrides;
extern const Rule arraySize;
extern const Rule arrayNdim;
extern const Rule arrayItemsize;
extern const Rule arrayNbytes;
extern const Rule mathdxTensorAttr;
extern const Rule mathdxLayoutAttr;  // layout.cosize & co of a cuBLASDx layout (rules_mathdx_tensors.cpp)  // acc.is_thread_active & co of a cuBLASDx accumulator (rules_mathdx_tensors.cpp)
extern const Rule tupleFieldAttr;    // p.x of a namedtuple (its field's element)
extern const Rule recordFieldAttr;   // r.x of a record (records.cpp)
extern const Rule arrayViewAttr;    // a.view (the bound method)
extern const Rule arrayViewCall;    // a.view(dtype)
extern const Rule arrayTranspose;
// rules_intrin.cpp (issue 5; arg = intrinsic name unless noted)
extern const Rule mathUnaryInt;    // Math_unary without f16 (acos, sinh, erf, ...)
extern const Rule mathBinaryInt;   // atan2, hypot: ints give f64
extern const Rule mathBinary;      // copysign, fmod, nextafter, remainder: floats only
extern const Rule mathFma;         // cuda.fma(a, b, c)
extern const Rule mathCbrt;        // cuda.cbrt(x)
extern const Rule mathIsNan;       // isnan/isinf/isfinite -> bool
extern const Rule mathLdexp;       // ldexp(x, i32)
extern const Rule mathFrexp;       // frexp(x) -> (mantissa, i32 exponent)
extern const Rule mathModf;        // modf(x) -> (frac, integral)
extern const Rule mathAngle;       // arg = "degrees" | "radians"
extern const Rule bitsSame;        // popc, clz: int -> same int
extern const Rule bitsBrev;        // brev: u32/u64
extern const Rule bitsFfs;         // ffs: int -> u32
extern const Rule selp;            // selp(test, a, b)
extern const Rule syncPredicate;   // syncthreads_count/and/or(pred) -> i32
extern const Rule syncwarp;        // syncwarp([mask])
extern const Rule nanosleep;       // nanosleep(ns)
extern const Rule laneMask;        // activemask(), lanemask_lt() -> u32
extern const Rule shfl;            // shfl_*_sync(mask, value, lane)
extern const Rule vote;            // all/any/eq/ballot_sync(mask, pred)
extern const Rule matchAny;        // match_any_sync(mask, value) -> i32
extern const Rule matchAll;        // match_all_sync(mask, value) -> (i32, bool)
extern const Rule atomicOp;        // atomic.sub/max/.../cas(arr, idx, [old,] val)
extern const Rule compareAndSwap;  // atomic.compare_and_swap(arr, old, val)
// rules_cmath.cpp
extern const Rule cmathCall;       // cmath.exp/log/sqrt/sin/... (arg = the function's name)
extern const Rule round;           // round(x[, ndigits])
extern const Rule builtinPow;      // pow(a, b): the ** operator
// rules_const.cpp
extern const Rule constArrayLike;  // cudajit.const.array_like(global numpy array)
// rules_ufunc.cpp: numpy ufuncs on scalars (arg = numpy's ufunc name)
extern const Rule ufunc;
extern const Rule numpyRealImag;   // np.real / np.imag (arg = "real" | "imag")
extern const Rule numpyAngle;      // np.angle(z, deg=False)
extern const Rule numpySinc;       // np.sinc(x)
// rules_tile.cpp / tile_elementwise.cpp: cudajit.tile (arg: the function's name
// where one rule serves several)
extern const Rule tileBid, tileNumBlocks, tileCdiv, tileNumTiles, tileLoad, tileStore;
extern const Rule tileFull;          // full / zeros / ones (arg)
// rules_tile_gather.cpp: gather / scatter / atomic_* (arg: the atomic operation)
extern const Rule tileMemory;
extern const Rule tileArange, tileAstype, tileReshape, tileExpandDims, tileBroadcastTo, tileCat;
extern const Rule tilePermute;       // permute / transpose (arg)
extern const Rule tileItem;
extern const Rule tileExtract;      // extract(x, index, shape), x.extract(...)
extern const Rule tileInsert;       // insert(x, index, value)
extern const Rule tilePackToBytes;      // pack_to_bytes(x)
extern const Rule tileSlice;            // Slice(start, length)
extern const Rule tileLoadAdvanced;     // load_advanced_indexing(array, indices, ...)
extern const Rule tileStoreAdvanced;    // store_advanced_indexing(array, indices, tile, ...)
extern const Rule tileUnpackFromBytes;  // unpack_from_bytes(x, dtype)
extern const Rule tileBitcast;      // bitcast(x, dtype)
extern const Rule tileReduce;        // sum / prod / max / min / argmax / argmin (arg)
extern const Rule tileScan;          // cumsum / cumprod (arg)
extern const Rule tileReduceFunc, tileScanFunc;   // reduce / scan with a combine function
extern const Rule tileMatmul, tileMma;
extern const Rule tileNamedOp;       // add, sub, ..., greater, negative (arg)
extern const Rule tileMinMax;        // minimum / maximum (arg)
extern const Rule tileWhere;
extern const Rule tileMath;          // exp, ... (I(Enum)); rsqrt, abs (arg)
extern const Rule tileMethod;        // x.astype & co: a bound method (attributes.def)
extern const Rule tileShapeAttr, dtypeAttr, tileNdimAttr;
// x.tiled_view(...) (arrayMethod binds it) and the tiled view's members
extern const Rule arrayMethod, arraySlice, tiledViewMake, tiledViewMethod, tiledViewShape, tiledViewDtype;
extern const Rule tiledViewLoad, tiledViewStore, tiledViewNumTiles;
// rules_tile_print.cpp: ct.printf / ct.print (arg), and print() of tiles
extern const Rule tilePrint;
extern const Rule tileAssert;        // ct.assert_
extern const Rule tileStaticAssert;  // ct.static_assert (compile time)
extern const Rule tileEnsureConstant;  // ct.ensure_constant
bool printsTiles(const Site& s);
// f-strings, print's arguments (rules_tile_print.cpp): the decoder's
// cudajit.fstring.value(value, spec) and cudajit.fstring(parts...) type as
// tuples whose symbol carries the template; the values are elements 1.. .
extern const Rule fstringValue, fstring;
bool isFString(const Type* t);
struct FStringPart {
  std::string text;   // literal text, or
  bool slot = false;  // a value: the next element, under printf conversion `spec` ("" default)
  std::string spec;
};
std::vector<FStringPart> fstringParts(const Site& s, const Type* t);
// A print template (Instr::ints of print / tile.print): text, '%' escaped
// for printf, and a value's slot under printf conversion `spec` ("" default).
void appendPrintText(std::vector<int64_t>& out, std::string_view text);
void appendPrintSlot(std::vector<int64_t>& out, std::string_view spec);
}  // namespace rules

}  // namespace cj::typeinfer
