// cudajit types: interned, immutable, compared by pointer.
//
// A Type* is valid for the life of the process. Two types are equal iff their
// pointers are equal, so maps keyed by Type* and `a == b` are the idiom.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cj {

struct TileLayout;   // types/tile_layout.h

enum class ScalarKind : uint8_t { Bool, Int, Float, Complex };

enum class Scalar : uint8_t {
#define X(E, short_name, numba_name, kind, bits, is_signed, nvvm, np) E,
#include "types/scalars.def"
#undef X
};

enum class TypeKind : uint8_t {
  Unknown,   // not yet inferred (untyped IR)
  Undef,     // value of a local read before any assignment; unifies with anything
  Void,      // instructions with no result
  None,      // Python None (a function returning nothing returns none)
  Scalar,    // numbers and bool
  Array,     // ndarray view: dtype, ndim, layout, memory space
  Tuple,     // heterogeneous tuple (a UniTuple is just a Tuple with equal elements)
  Symbol,    // a compile-time Python object named by a qualified symbol:
             // "cudajit.grid", "math.sqrt", "numpy.float32", "builtins.range"
  Function,  // a user device function, by IR function name (untyped: by decoded name)
  Range,     // a range object (start, stop, step) of an integer type
  RangeIter, // the iterator over a Range; mutable state lives in codegen
  String,    // a constant string (print arguments)
  Tile,      // a cuTile tile: dtype (scalar) and a constant shape (shape); see docs/tiles.md
  Record,    // a numpy structured dtype's item, by reference (a pointer to its bytes; numba's
             // Record): fields (names), elems (their types), shape (their byte offsets),
             // size, align, aligned, space (where the bytes live)
};

enum class Layout : uint8_t { C, F, A };       // contiguous C, contiguous F, any strides
enum class MemSpace : uint8_t { Global, Shared, Local, Const };

struct Type {
  TypeKind kind;
  Scalar scalar = Scalar::Bool;       // Scalar: which; Array: dtype; Range/RangeIter: index type
  int ndim = 0;                       // Array
  Layout layout = Layout::A;          // Array
  MemSpace space = MemSpace::Global;  // Array
  bool readonly = false;              // Array
  std::vector<const Type*> elems;     // Tuple
  std::string name;                   // Symbol / Function
  std::vector<int64_t> shape;         // Tile: extent of each dimension, outermost first ({} = 0-d)
  const TileLayout* tile_layout = nullptr;  // Tile: set by the layout pass, nullptr before it
  const Type* record = nullptr;       // Array: the record dtype (in global space) when the items are
                                      // records (`scalar` is then meaningless); nullptr otherwise
  const Type* vector = nullptr;       // Array: the vector type (vectorTy) when the items are vectors
                                      // (`scalar` is then its component type); nullptr otherwise
  std::vector<std::string> fields;    // Record: field names, in order
  int64_t size = 0;                   // Record: itemsize in bytes
  int64_t align = 0;                  // Record: numpy's dtype.alignment (1 for a packed dtype)
  bool aligned = false;               // Record: numpy's isalignedstruct (made with align=True)

  bool is(TypeKind k) const { return kind == k; }
  bool isScalar() const { return kind == TypeKind::Scalar; }
  bool isTile() const { return kind == TypeKind::Tile; }
  bool isInt() const;      // any integer scalar (not bool)
  bool isFloat() const;    // f16/f32/f64
  bool isComplex() const;
  bool isBool() const;
  bool isSigned() const;   // signed integer or any float
  int bits() const;        // scalar bit width
  bool isNumeric() const { return isInt() || isFloat() || isComplex() || isBool(); }
};

// Interning constructors.
const Type* unknownTy();
const Type* undefTy();
const Type* voidTy();
const Type* noneTy();
const Type* stringTy();
const Type* scalarTy(Scalar s);
const Type* boolTy();
const Type* i32Ty();
const Type* i64Ty();
const Type* u32Ty();
const Type* u64Ty();
const Type* f32Ty();
const Type* f64Ty();
const Type* arrayTy(Scalar dtype, int ndim, Layout layout,
                    MemSpace space = MemSpace::Global, bool readonly = false);
const Type* tupleTy(const std::vector<const Type*>& elems);
const Type* symbolTy(std::string_view qualified_name);
// A namedtuple's type (a kernel argument Pt(x=1.0, y=2.0)): a tuple whose
// `name` is "Pt(x,y)" (the class and the fields, so that two namedtuples
// with other fields are other types); everything else treats it as the
// tuple of its elements.
const Type* namedTupleTy(const std::vector<const Type*>& elems, std::string_view class_name,
                         const std::vector<std::string>& fields);
// "x,y,z" -> {"x", "y", "z"} (a namedtuple's field list as its name spells it).
std::vector<std::string> splitFieldList(std::string_view list);
// The position of `field` in a namedtuple type, or -1 (any other type).
int namedTupleField(const Type* t, std::string_view field);
const Type* functionTy(std::string_view ir_name);
const Type* rangeTy(Scalar index);
const Type* rangeIterTy(Scalar index);

// numba's Optional(T): a number or None (a local assigned None on one path
// and a number on another). It is the tuple (sym(optional), b1 present, T),
// so every stage that handles tuples handles it: the marker has no machine
// value, so it lives in registers as {i1, T}. Printed optional(T).
const Type* optionalTy(const Type* value);
bool isOptional(const Type* t);
inline const Type* optionalValue(const Type* optional) { return optional->elems[2]; }

// ---- Tiles (cuTile's tile model; docs/tiles.md) ---------------------------------
// A tile type is a dtype, a constant shape and, once the tile pipeline's layout
// pass has run, a layout (types/tile_layout.h). cuTile's rule: every
// dimension is a power of two (1 included); a 0-d tile (shape {}) is a scalar
// tile. Our own limits, checked here so that later products cannot overflow:
// at most kMaxTileRank dimensions and kMaxTileElements elements. Whether a tile
// fits in registers plus shared memory depends on the layout and the block
// size, so that check belongs to the layout pass, not to the type.
constexpr int kMaxTileRank = 8;
constexpr int64_t kMaxTileElements = int64_t{1} << 24;

// Why `shape` cannot be a tile shape ("dimension 1 is 12, not a power of two"),
// or "" when it can. Callers turn the reason into a CompileError with a location.
std::string tileShapeError(const std::vector<int64_t>& shape);
// Why `dtype` cannot be a tile's element type, or "" (complex has no tile form).
std::string tileDtypeError(Scalar dtype);
// Why `layout` cannot spread a tile of `shape` (its rank differs; a 0-d tile
// has no layout), or "". A null layout is always fine.
std::string tileLayoutError(const std::vector<int64_t>& shape, const TileLayout* layout);
// The interned tile type; nullptr when tileShapeError, tileDtypeError or
// tileLayoutError object.
const Type* tileTy(Scalar dtype, const std::vector<int64_t>& shape, const TileLayout* layout = nullptr);
int64_t tileElements(const Type* tile);       // product of the shape (1 for 0-d)
// Text form: tile(f32, 16x64), tile(i32, 128), tile(b1) for a 0-d tile; with a
// layout, tile(f32, 16x64, blocked<1x4, 8x4, 4x1, 1x0>).
std::string tileTypeToString(const Type* tile);
// cuTile's spelling, used in error messages: Tile[float32,(16,64)].
std::string tileTypeToNumbaString(const Type* tile);
// Parses the text form above (the whole of `text`, spaces allowed around the
// parts). On failure returns nullptr and, when `error` is given, says why.
// parseType() calls it for text that starts with "tile(", so the IR parser
// reads tile types with no change of its own.
const Type* parseTileType(std::string_view text, std::string* error = nullptr);

// ---- Records (numpy structured dtypes; docs/language.md "Records") ---------------
// A record value is a reference to `size` bytes (numba's Record): a[i] of an
// array of records aliases the array's memory, r.x loads field x from it.
// Field types: scalars (bool stored as one byte), records, and fixed-shape
// arrays of those (nestedArrayTy). The record's `space` says where its bytes
// live (global for kernel arguments, shared / local for cuda.shared.array /
// cuda.local.array of records); an array of records stores its record in
// global space and hands out records in its own space (arrayElementType).
struct RecordField {
  std::string name;
  int64_t offset = 0;
  const Type* type = nullptr;
};
// nullptr when a field is out of the record's bytes or is of another kind.
const Type* recordTy(const std::vector<RecordField>& fields, int64_t size, int64_t align, bool aligned,
                     MemSpace space = MemSpace::Global);
bool isRecord(const Type* t);
const Type* recordInSpace(const Type* record, MemSpace space);
int recordFieldIndex(const Type* record, std::string_view name);   // -1 if none
RecordField recordField(const Type* record, int k);
// The value r.<field k> has: the scalar; a record field's record in r's
// space (a reference into r's bytes); a nested array field's C-contiguous
// array view in r's space.
const Type* recordFieldValueType(const Type* record, int k);
// Records whose bytes mean the same (field names, offsets and types, size)
// in any space, whatever numpy's aligned flag and alignment say.
bool sameRecordLayout(const Type* a, const Type* b);
// "x, y, v" (for messages: which fields there are).
std::string recordFieldNames(const Type* record);
// A record field's fixed-shape array: `elem` (a scalar or a record type) in
// C order; printed f32[3x2] inside a record. It is a field type only: r.v
// reads it as an ordinary array view of the record's memory.
const Type* nestedArrayTy(const Type* elem, const std::vector<int64_t>& shape);
bool isNestedArray(const Type* t);
// A field kernels cannot read or write but records carry (numpy strings,
// "<U4" / "S3": numba's CharSeq): `size` bytes that whole-record copies move.
// Printed bytes("<U4", 16) inside a record.
const Type* opaqueFieldTy(std::string_view numpy_dtype, int64_t size);
bool isOpaqueField(const Type* t);
// The symbol a structured dtype object is frozen to in a kernel:
// "numpy.dtype:" followed by its record's text form.
inline constexpr std::string_view kRecordDtypeSymbol = "numpy.dtype:";
// An array whose items are records.
const Type* recordArrayTy(const Type* record, int ndim, Layout layout, MemSpace space = MemSpace::Global,
                          bool readonly = false);
bool isRecordArray(const Type* t);
// The type of one item of an array (scalarTy(dtype), its vector, or its
// record in the array's memory space) and its size in bytes.
const Type* arrayElementType(const Type* array);
int64_t arrayItemSize(const Type* array);
// An array of the same items (scalar or record) as `array` with another shape,
// layout, space or readonly flag: what views of it are.
const Type* arrayLike(const Type* array, int ndim, Layout layout, MemSpace space, bool readonly);
// Size and alignment in memory of a field type (scalar, record, nested array).
int64_t memSize(const Type* t);
int64_t memAlign(const Type* t);

// ---- Vector types (numba.cuda's float32x4 & co; docs/language.md) ----------------
// A vector value is the namedtuple type "float16x4(x,y,z,w)" of n components
// (1..4) of one scalar type, so fields, tuple unpacking and passing to device
// functions treat it as the tuple it is. Arrays may hold vectors (items of n
// components, aligned as CUDA's vector types are: the item size for n = 2
// and 4, at most 16 bytes; a component's for n = 1 and 3): the items of
// cuda.local.array(n, float16x4), which MathDx's half-precision routines take.
const Type* vectorTy(Scalar base, int n);       // nullptr unless 1 <= n <= 4 and base is a number
bool isVectorType(const Type* t);               // a type vectorTy made
// "float16x4" -> vectorTy(float16, 4); nullptr for anything else (the C
// aliases float4 & co are the typing stage's, vector_types.def).
const Type* parseVectorName(std::string_view name);
std::string vectorName(const Type* vector);     // "float16x4"
// A vector of two floats, which converts to and from a complex number (nvmath's
// float16x2 / float32x2 / float64x2: real part in x, imaginary in y).
bool isComplexPairVector(const Type* t);
const Type* vectorArrayTy(const Type* vector, int ndim, Layout layout, MemSpace space = MemSpace::Global,
                          bool readonly = false);
bool isVectorArray(const Type* t);
// An array of `item` items (a scalar or a vector type; a record through recordArrayTy).
const Type* arrayOfItems(const Type* item, int ndim, Layout layout, MemSpace space = MemSpace::Global,
                         bool readonly = false);
// The size and alignment of a scalar or vector item in memory.
int64_t itemSize(const Type* item);
int64_t itemAlign(const Type* item);

// PyTorch's dtype names (what str(torch.float16) gives after "torch."): the
// scalar, and the symbol kernels use for it (numpy.float16,
// cudajit.tile.bfloat16, numpy.bool_); false / "" for names with no cudajit type.
bool torchDtypeScalar(std::string_view name, Scalar* out);
std::string dtypeSymbolName(Scalar s);

// Scalar table lookups.
std::string_view scalarShortName(Scalar s);   // "f32"
std::string_view scalarNumbaName(Scalar s);   // "float32"
std::string_view scalarNvvmType(Scalar s);    // "float"
ScalarKind scalarKind(Scalar s);
int scalarBits(Scalar s);
bool scalarSigned(Scalar s);
char scalarNumpyChar(Scalar s);
int scalarByteSize(Scalar s);                 // bool is 1 byte in memory
Scalar complexPart(Scalar s);                 // the float type of each part of a complex (c64 -> f32)
// Parses "float32", "f32", "int64", "i64", numpy names ("float64"), "bool",
// "boolean", "b1"; false if unknown.
bool parseScalar(std::string_view name, Scalar* out);

// Text form, stable (golden tests read it):
//   f32, i64, b1, array(f32, 2d, C), array(f32, 1d, A, shared), tuple(i64, f32),
//   sym(cudajit.grid), fn(axpy__helper), range(i64), rangeiter(i64), none, str,
//   void, undef, ?, optional(f64), tile(f32, 16x64),
//   record{x: f32 @0, v: f32[3x2] @4, p: record{...} @28; size 40, align 4, aligned},
//   array(record{...}, 1d, C) (a record in shared or local memory adds ", shared" / ", local"
//   after the flags), array(float16x4, 1d, C, local) (an array of vectors)
std::string typeToString(const Type* t);
// Parses what typeToString prints; nullptr on error.
const Type* parseType(std::string_view text);

// numba's signature spelling: "float32", "float32[:]", "float32[:, ::1]",
// "float32[::1, :]", "UniTuple(int64, 2)", "Tile[float32,(16,64)]"; used in error messages and
// kernel.signatures.
std::string typeToNumbaString(const Type* t);

}  // namespace cj
