#include "types/types.h"

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>

namespace cj {
namespace {

struct ScalarRow {
  std::string_view short_name, numba_name;
  ScalarKind kind;
  int bits;
  bool is_signed;
  std::string_view nvvm;
  char np;
};

constexpr ScalarRow kScalars[] = {
#define X(E, short_name, numba_name, kind, bits, is_signed, nvvm, np) \
  {#short_name, #numba_name, ScalarKind::kind, bits, is_signed, nvvm, np},
#include "types/scalars.def"
#undef X
};

const ScalarRow& row(Scalar s) { return kScalars[static_cast<int>(s)]; }

// The interning table: a key made of every field, mapped to the one Type.
using Key = std::tuple<int, int, int, int, int, bool, std::vector<const Type*>, std::string,
                       std::vector<int64_t>, const TileLayout*, const Type*, std::vector<std::string>,
                       int64_t, int64_t, bool, const Type*>;

const Type* intern(Type t) {
  static std::mutex mu;
  static std::map<Key, std::unique_ptr<Type>> table;
  Key key{static_cast<int>(t.kind), static_cast<int>(t.scalar), t.ndim,
          static_cast<int>(t.layout), static_cast<int>(t.space), t.readonly, t.elems, t.name,
          t.shape, t.tile_layout, t.record, t.fields, t.size, t.align, t.aligned, t.vector};
  std::lock_guard<std::mutex> lock(mu);
  auto it = table.find(key);
  if (it != table.end()) return it->second.get();
  auto owned = std::make_unique<Type>(std::move(t));
  const Type* p = owned.get();
  table.emplace(std::move(key), std::move(owned));
  return p;
}

const Type* simple(TypeKind k) {
  Type t;
  t.kind = k;
  return intern(std::move(t));
}

}  // namespace

bool Type::isInt() const { return kind == TypeKind::Scalar && row(scalar).kind == ScalarKind::Int; }
bool Type::isFloat() const { return kind == TypeKind::Scalar && row(scalar).kind == ScalarKind::Float; }
bool Type::isComplex() const { return kind == TypeKind::Scalar && row(scalar).kind == ScalarKind::Complex; }
bool Type::isBool() const { return kind == TypeKind::Scalar && row(scalar).kind == ScalarKind::Bool; }
bool Type::isSigned() const { return kind == TypeKind::Scalar && row(scalar).is_signed; }
int Type::bits() const { return row(scalar).bits; }

const Type* unknownTy() { static const Type* t = simple(TypeKind::Unknown); return t; }
const Type* undefTy() { static const Type* t = simple(TypeKind::Undef); return t; }
const Type* voidTy() { static const Type* t = simple(TypeKind::Void); return t; }
const Type* noneTy() { static const Type* t = simple(TypeKind::None); return t; }
const Type* stringTy() { static const Type* t = simple(TypeKind::String); return t; }

const Type* scalarTy(Scalar s) {
  Type t;
  t.kind = TypeKind::Scalar;
  t.scalar = s;
  return intern(std::move(t));
}
const Type* boolTy() { return scalarTy(Scalar::Bool); }
const Type* i32Ty() { return scalarTy(Scalar::Int32); }
const Type* i64Ty() { return scalarTy(Scalar::Int64); }
const Type* u32Ty() { return scalarTy(Scalar::UInt32); }
const Type* u64Ty() { return scalarTy(Scalar::UInt64); }
const Type* f32Ty() { return scalarTy(Scalar::Float32); }
const Type* f64Ty() { return scalarTy(Scalar::Float64); }

const Type* arrayTy(Scalar dtype, int ndim, Layout layout, MemSpace space, bool readonly) {
  Type t;
  t.kind = TypeKind::Array;
  t.scalar = dtype;
  t.ndim = ndim;
  t.layout = layout;
  t.space = space;
  t.readonly = readonly;
  return intern(std::move(t));
}

const Type* tupleTy(const std::vector<const Type*>& elems) {
  Type t;
  t.kind = TypeKind::Tuple;
  t.elems = elems;
  return intern(std::move(t));
}

const Type* namedTupleTy(const std::vector<const Type*>& elems, std::string_view class_name,
                         const std::vector<std::string>& fields) {
  Type t;
  t.kind = TypeKind::Tuple;
  t.elems = elems;
  t.name = std::string(class_name) + "(";
  for (size_t i = 0; i < fields.size(); ++i) t.name += (i ? "," : "") + fields[i];
  t.name += ")";
  return intern(std::move(t));
}

std::vector<std::string> splitFieldList(std::string_view list) {
  std::vector<std::string> fields;
  for (size_t at = 0; !list.empty() && at <= list.size();) {
    size_t end = list.find(',', at);
    if (end == std::string_view::npos) end = list.size();
    fields.emplace_back(list.substr(at, end - at));
    at = end + 1;
  }
  return fields;
}

int namedTupleField(const Type* t, std::string_view field) {
  if (!t->is(TypeKind::Tuple) || t->name.empty()) return -1;
  const size_t open = t->name.find('('), close = t->name.rfind(')');
  if (open == std::string::npos || close == std::string::npos) return -1;
  std::vector<std::string> fields = splitFieldList(std::string_view(t->name).substr(open + 1, close - open - 1));
  for (size_t k = 0; k < fields.size(); ++k)
    if (fields[k] == field) return static_cast<int>(k);
  return -1;
}

const Type* symbolTy(std::string_view name) {
  Type t;
  t.kind = TypeKind::Symbol;
  t.name = std::string(name);
  return intern(std::move(t));
}

const Type* functionTy(std::string_view name) {
  Type t;
  t.kind = TypeKind::Function;
  t.name = std::string(name);
  return intern(std::move(t));
}

const Type* rangeTy(Scalar index) {
  Type t;
  t.kind = TypeKind::Range;
  t.scalar = index;
  return intern(std::move(t));
}

const Type* rangeIterTy(Scalar index) {
  Type t;
  t.kind = TypeKind::RangeIter;
  t.scalar = index;
  return intern(std::move(t));
}

const Type* tileTy(Scalar dtype, const std::vector<int64_t>& shape, const TileLayout* layout) {
  if (!tileShapeError(shape).empty() || !tileDtypeError(dtype).empty() || !tileLayoutError(shape, layout).empty())
    return nullptr;
  Type t;
  t.kind = TypeKind::Tile;
  t.scalar = dtype;
  t.shape = shape;
  t.tile_layout = layout;
  return intern(std::move(t));
}

// ---- Records ------------------------------------------------------------------

bool isRecord(const Type* t) { return t && t->kind == TypeKind::Record; }
bool isNestedArray(const Type* t) { return t && t->kind == TypeKind::Array && !t->shape.empty(); }

namespace {
constexpr std::string_view kOpaquePrefix = "bytes:";
}  // namespace

const Type* opaqueFieldTy(std::string_view numpy_dtype, int64_t size) {
  if (size <= 0 || numpy_dtype.find_first_of("\"()") != std::string_view::npos) return nullptr;
  Type t;
  t.kind = TypeKind::Symbol;
  t.name = std::string(kOpaquePrefix) + std::string(numpy_dtype);
  t.size = size;
  return intern(std::move(t));
}

bool isOpaqueField(const Type* t) {
  return t && t->kind == TypeKind::Symbol && t->size > 0 && t->name.rfind(kOpaquePrefix, 0) == 0;
}

namespace {
// numba's names of string fields: [unichr x 4] (numpy U4, 4 bytes a
// character), [char x 3] (S3).
std::string opaqueNumbaName(const Type* t) {
  const bool unicode = t->name.find('U', kOpaquePrefix.size()) != std::string::npos;
  return unicode ? "[unichr x " + std::to_string(t->size / 4) + "]" : "[char x " + std::to_string(t->size) + "]";
}
}  // namespace
bool isRecordArray(const Type* t) { return t && t->kind == TypeKind::Array && t->record != nullptr; }

int64_t memSize(const Type* t) {
  if (isRecord(t) || isOpaqueField(t)) return t->size;
  if (isNestedArray(t)) {
    int64_t n = 1;
    for (int64_t d : t->shape) n *= d;
    return n * (t->record ? t->record->size : scalarByteSize(t->scalar));
  }
  return scalarByteSize(t->scalar);
}

int64_t memAlign(const Type* t) {
  if (isRecord(t)) return t->align > 0 ? t->align : 1;
  if (isOpaqueField(t)) return 1;
  if (isNestedArray(t)) return t->record ? memAlign(t->record) : memAlign(scalarTy(t->scalar));
  return scalarKind(t->scalar) == ScalarKind::Complex ? scalarByteSize(complexPart(t->scalar))
                                                      : scalarByteSize(t->scalar);
}

const Type* recordTy(const std::vector<RecordField>& fields, int64_t size, int64_t align, bool aligned,
                     MemSpace space) {
  if (size <= 0 || align <= 0) return nullptr;
  Type t;
  t.kind = TypeKind::Record;
  t.size = size;
  t.align = align;
  t.aligned = aligned;
  t.space = space;
  for (const RecordField& f : fields) {
    if (!f.type || f.name.empty() || f.offset < 0) return nullptr;
    const bool scalar = f.type->isScalar();
    const bool record = isRecord(f.type) && f.type->space == MemSpace::Global;
    if (!scalar && !record && !isNestedArray(f.type) && !isOpaqueField(f.type)) return nullptr;
    if (f.offset + memSize(f.type) > size) return nullptr;
    t.fields.push_back(f.name);
    t.shape.push_back(f.offset);
    t.elems.push_back(f.type);
  }
  return intern(std::move(t));
}

const Type* recordInSpace(const Type* r, MemSpace space) {
  if (r->space == space) return r;
  Type t = *r;
  t.space = space;
  return intern(std::move(t));
}

int recordFieldIndex(const Type* r, std::string_view name) {
  if (!isRecord(r)) return -1;
  for (size_t k = 0; k < r->fields.size(); ++k)
    if (r->fields[k] == name) return static_cast<int>(k);
  return -1;
}

RecordField recordField(const Type* r, int k) {
  return {r->fields.at(static_cast<size_t>(k)), r->shape.at(static_cast<size_t>(k)), r->elems.at(static_cast<size_t>(k))};
}

const Type* recordFieldValueType(const Type* r, int k) {
  const Type* f = r->elems.at(static_cast<size_t>(k));
  if (isRecord(f)) return recordInSpace(f, r->space);
  if (isNestedArray(f))
    return f->record ? recordArrayTy(f->record, f->ndim, Layout::C, r->space)
                     : arrayTy(f->scalar, f->ndim, Layout::C, r->space);
  return f;
}

namespace {
bool sameFieldType(const Type* a, const Type* b) {
  if (a == b) return true;
  if (isRecord(a) || isRecord(b)) return sameRecordLayout(a, b);
  if (isNestedArray(a) && isNestedArray(b))
    return a->shape == b->shape && a->scalar == b->scalar &&
           (a->record == b->record || (a->record && b->record && sameRecordLayout(a->record, b->record)));
  return false;
}
}  // namespace

// The bytes mean the same (names, offsets, field types, size): numpy's
// aligned flag and alignment may differ (a dtype rebuilt from its descr, as
// __cuda_array_interface__ carries it, is never "aligned").
bool sameRecordLayout(const Type* a, const Type* b) {
  if (!isRecord(a) || !isRecord(b)) return false;
  if (a->size != b->size || a->fields != b->fields || a->shape != b->shape) return false;
  for (size_t k = 0; k < a->elems.size(); ++k)
    if (!sameFieldType(a->elems[k], b->elems[k])) return false;
  return true;
}

std::string recordFieldNames(const Type* r) {
  std::string s;
  for (size_t k = 0; k < r->fields.size(); ++k) s += (k ? ", " : "") + r->fields[k];
  return s;
}

const Type* nestedArrayTy(const Type* elem, const std::vector<int64_t>& shape) {
  if (shape.empty()) return nullptr;
  for (int64_t d : shape)
    if (d <= 0) return nullptr;
  if (!elem->isScalar() && !isRecord(elem)) return nullptr;
  Type t;
  t.kind = TypeKind::Array;
  t.ndim = static_cast<int>(shape.size());
  t.layout = Layout::C;
  t.shape = shape;
  if (isRecord(elem)) t.record = recordInSpace(elem, MemSpace::Global);
  else t.scalar = elem->scalar;
  return intern(std::move(t));
}

const Type* recordArrayTy(const Type* record, int ndim, Layout layout, MemSpace space, bool readonly) {
  Type t;
  t.kind = TypeKind::Array;
  t.record = recordInSpace(record, MemSpace::Global);
  t.ndim = ndim;
  t.layout = layout;
  t.space = space;
  t.readonly = readonly;
  return intern(std::move(t));
}

const Type* arrayElementType(const Type* a) {
  if (a->vector) return a->vector;
  return a->record ? recordInSpace(a->record, a->space) : scalarTy(a->scalar);
}

int64_t arrayItemSize(const Type* a) {
  if (a->vector) return itemSize(a->vector);
  return a->record ? a->record->size : scalarByteSize(a->scalar);
}

const Type* arrayLike(const Type* a, int ndim, Layout layout, MemSpace space, bool readonly) {
  if (a->vector) return vectorArrayTy(a->vector, ndim, layout, space, readonly);
  return a->record ? recordArrayTy(a->record, ndim, layout, space, readonly)
                   : arrayTy(a->scalar, ndim, layout, space, readonly);
}

namespace {
constexpr const char* kVectorFields[] = {"x", "y", "z", "w"};
}

const Type* vectorTy(Scalar base, int n) {
  if (n < 1 || n > 4 || scalarKind(base) == ScalarKind::Bool || scalarKind(base) == ScalarKind::Complex) return nullptr;
  std::string name = std::string(scalarNumbaName(base)) + "x" + std::to_string(n);
  return namedTupleTy(std::vector<const Type*>(static_cast<size_t>(n), scalarTy(base)), name,
                      std::vector<std::string>(kVectorFields, kVectorFields + n));
}

const Type* parseVectorName(std::string_view name) {
  size_t cut = name.rfind('x');
  Scalar base;
  if (cut == std::string_view::npos || cut + 2 != name.size() || name[cut + 1] < '1' || name[cut + 1] > '4' ||
      !parseScalar(name.substr(0, cut), &base) || scalarNumbaName(base) != name.substr(0, cut))
    return nullptr;
  return vectorTy(base, name[cut + 1] - '0');
}

bool isVectorType(const Type* t) {
  if (!t || !t->is(TypeKind::Tuple) || t->name.empty() || t->elems.empty()) return false;
  return parseVectorName(std::string_view(t->name).substr(0, t->name.find('('))) == t;
}

std::string vectorName(const Type* v) { return v->name.substr(0, v->name.find('(')); }

bool isComplexPairVector(const Type* t) {
  return isVectorType(t) && t->elems.size() == 2 && t->elems[0]->isFloat();
}

const Type* vectorArrayTy(const Type* vector, int ndim, Layout layout, MemSpace space, bool readonly) {
  if (!isVectorType(vector)) return nullptr;
  Type t;
  t.kind = TypeKind::Array;
  t.vector = vector;
  t.scalar = vector->elems[0]->scalar;
  t.ndim = ndim;
  t.layout = layout;
  t.space = space;
  t.readonly = readonly;
  return intern(std::move(t));
}

bool isVectorArray(const Type* t) { return t && t->kind == TypeKind::Array && t->vector != nullptr; }

const Type* arrayOfItems(const Type* item, int ndim, Layout layout, MemSpace space, bool readonly) {
  if (isVectorType(item)) return vectorArrayTy(item, ndim, layout, space, readonly);
  if (isRecord(item)) return recordArrayTy(item, ndim, layout, space, readonly);
  return arrayTy(item->scalar, ndim, layout, space, readonly);
}

int64_t itemSize(const Type* item) {
  if (isVectorType(item)) return static_cast<int64_t>(item->elems.size()) * scalarByteSize(item->elems[0]->scalar);
  return memSize(item);
}

int64_t itemAlign(const Type* item) {
  if (isVectorType(item)) {
    const int64_t n = static_cast<int64_t>(item->elems.size());
    return n == 2 || n == 4 ? std::min<int64_t>(itemSize(item), 16) : scalarByteSize(item->elems[0]->scalar);
  }
  return memAlign(item);
}

std::string_view scalarShortName(Scalar s) { return row(s).short_name; }
std::string_view scalarNumbaName(Scalar s) { return row(s).numba_name; }
std::string_view scalarNvvmType(Scalar s) { return row(s).nvvm; }
ScalarKind scalarKind(Scalar s) { return row(s).kind; }
int scalarBits(Scalar s) { return row(s).bits; }
bool scalarSigned(Scalar s) { return row(s).is_signed; }
char scalarNumpyChar(Scalar s) { return row(s).np; }
int scalarByteSize(Scalar s) { return row(s).bits == 1 ? 1 : row(s).bits / 8; }
Scalar complexPart(Scalar s) { return s == Scalar::Complex64 ? Scalar::Float32 : Scalar::Float64; }

bool parseScalar(std::string_view name, Scalar* out) {
  if (name == "boolean" || name == "bool_") name = "bool";
  for (size_t i = 0; i < std::size(kScalars); ++i) {
    if (kScalars[i].short_name == name || kScalars[i].numba_name == name) {
      *out = static_cast<Scalar>(i);
      return true;
    }
  }
  return false;
}

namespace {
constexpr std::string_view kOptionalMarker = "optional";
}  // namespace

const Type* optionalTy(const Type* value) { return tupleTy({symbolTy(kOptionalMarker), boolTy(), value}); }

bool isOptional(const Type* t) {
  return t->kind == TypeKind::Tuple && t->elems.size() == 3 && t->elems[0]->kind == TypeKind::Symbol &&
         t->elems[0]->name == kOptionalMarker && t->elems[1] == boolTy();
}

namespace {
const char* layoutName(Layout l) { return l == Layout::C ? "C" : l == Layout::F ? "F" : "A"; }
const char* spaceName(MemSpace s) {
  switch (s) {
    case MemSpace::Global: return "global";
    case MemSpace::Shared: return "shared";
    case MemSpace::Local: return "local";
    case MemSpace::Const: return "const";
  }
  return "?";
}
}  // namespace

std::string typeToString(const Type* t) {
  if (!t) return "<null>";
  switch (t->kind) {
    case TypeKind::Unknown: return "?";
    case TypeKind::Undef: return "undef";
    case TypeKind::Void: return "void";
    case TypeKind::None: return "none";
    case TypeKind::String: return "str";
    case TypeKind::Scalar: return std::string(scalarShortName(t->scalar));
    case TypeKind::Record: {
      std::string s = "record{";
      for (size_t k = 0; k < t->fields.size(); ++k) {
        const Type* f = t->elems[k];
        const std::string ft = isOpaqueField(f) ? "bytes(\"" + f->name.substr(kOpaquePrefix.size()) + "\", " +
                                                      std::to_string(f->size) + ")"
                                                : typeToString(f);
        s += (k ? ", " : "") + t->fields[k] + ": " + ft + " @" + std::to_string(t->shape[k]);
      }
      s += "; size " + std::to_string(t->size) + ", align " + std::to_string(t->align);
      if (t->aligned) s += ", aligned";
      if (t->space != MemSpace::Global) s += std::string(", ") + spaceName(t->space);
      return s + "}";
    }
    case TypeKind::Array: {
      if (isNestedArray(t)) {   // a record field: f32[3x2]
        std::string s = (t->record ? typeToString(t->record) : std::string(scalarShortName(t->scalar))) + "[";
        for (size_t d = 0; d < t->shape.size(); ++d) s += (d ? "x" : "") + std::to_string(t->shape[d]);
        return s + "]";
      }
      std::string s = "array(" + (t->vector   ? vectorName(t->vector)
                                  : t->record ? typeToString(t->record)
                                              : std::string(scalarShortName(t->scalar))) + ", " +
                      std::to_string(t->ndim) + "d, " + layoutName(t->layout);
      if (t->space != MemSpace::Global) s += std::string(", ") + spaceName(t->space);
      if (t->readonly) s += ", readonly";
      return s + ")";
    }
    case TypeKind::Tuple: {
      if (isOptional(t)) return "optional(" + typeToString(optionalValue(t)) + ")";
      std::string s = t->name.empty() ? "tuple(" : "namedtuple " + t->name + " (";
      for (size_t i = 0; i < t->elems.size(); ++i) {
        if (i) s += ", ";
        s += typeToString(t->elems[i]);
      }
      return s + ")";
    }
    case TypeKind::Symbol: return "sym(" + t->name + ")";
    case TypeKind::Function: return "fn(" + t->name + ")";
    case TypeKind::Range: return "range(" + std::string(scalarShortName(t->scalar)) + ")";
    case TypeKind::RangeIter: return "rangeiter(" + std::string(scalarShortName(t->scalar)) + ")";
    case TypeKind::Tile: return tileTypeToString(t);
  }
  return "<bad type>";
}

namespace {

// A small recursive-descent parser over the text typeToString prints.
struct TypeParser {
  std::string_view s;
  size_t pos = 0;

  void skipSpace() { while (pos < s.size() && s[pos] == ' ') ++pos; }
  bool eat(char c) {
    skipSpace();
    if (pos < s.size() && s[pos] == c) { ++pos; return true; }
    return false;
  }
  std::string_view word() {
    skipSpace();
    size_t start = pos;
    while (pos < s.size() && (isalnum(static_cast<unsigned char>(s[pos])) || s[pos] == '_' ||
                              s[pos] == '.' || s[pos] == ':'))
      ++pos;
    return s.substr(start, pos - start);
  }
  // Everything up to the matching ')' (symbol and function names may hold any character but ')').
  std::string_view untilClose() {
    size_t start = pos;
    while (pos < s.size() && s[pos] != ')') ++pos;
    return s.substr(start, pos - start);
  }

  // A tuple's elements after its '(', through the ')'.
  bool elements(std::vector<const Type*>* out) {
    if (eat(')')) return true;
    do {
      const Type* e = parse();
      if (!e) return false;
      out->push_back(e);
    } while (eat(','));
    return eat(')');
  }

  bool integer(int64_t* out) {
    skipSpace();
    size_t start = pos;
    while (pos < s.size() && isdigit(static_cast<unsigned char>(s[pos]))) ++pos;
    if (pos == start || pos - start > 18) return false;
    *out = std::stoll(std::string(s.substr(start, pos - start)));
    return true;
  }

  // A record's body after the word "record": {name: type @offset, ...; size N, align N[, aligned][, space]}.
  const Type* record() {
    if (!eat('{')) return nullptr;
    std::vector<RecordField> fields;
    skipSpace();
    while (pos < s.size() && s[pos] != ';') {
      RecordField f;
      skipSpace();
      size_t start = pos;
      while (pos < s.size() && (isalnum(static_cast<unsigned char>(s[pos])) || s[pos] == '_')) ++pos;
      f.name = std::string(s.substr(start, pos - start));
      if (f.name.empty() || !eat(':')) return nullptr;
      skipSpace();
      const Type* elem = nullptr;
      if (s.substr(pos, 7) == "bytes(\"") {   // an opaque field: bytes("<U4", 16)
        pos += 7;
        const size_t close = s.find('"', pos);
        if (close == std::string_view::npos) return nullptr;
        std::string_view what = s.substr(pos, close - pos);
        pos = close + 1;
        int64_t n = 0;
        if (!eat(',') || !integer(&n) || !eat(')') || !(elem = opaqueFieldTy(what, n))) return nullptr;
      } else {
        elem = parse();
      }
      if (!elem) return nullptr;
      skipSpace();
      if (pos < s.size() && s[pos] == '[') {   // a nested array: elem[3x2]
        ++pos;
        std::vector<int64_t> shape;
        do {
          int64_t d;
          if (!integer(&d)) return nullptr;
          shape.push_back(d);
        } while (eat('x'));
        if (!eat(']') || !(elem = nestedArrayTy(elem, shape))) return nullptr;
      }
      if (!eat('@') || !integer(&f.offset)) return nullptr;
      f.type = elem;
      fields.push_back(std::move(f));
      if (!eat(',')) break;
    }
    int64_t size = 0, align = 0;
    bool aligned = false;
    MemSpace space = MemSpace::Global;
    if (!eat(';') || word() != "size" || !integer(&size) || !eat(',') || word() != "align" || !integer(&align))
      return nullptr;
    while (eat(',')) {
      std::string_view flag = word();
      if (flag == "aligned") aligned = true;
      else if (flag == "shared") space = MemSpace::Shared;
      else if (flag == "local") space = MemSpace::Local;
      else if (flag == "const") space = MemSpace::Const;
      else return nullptr;
    }
    if (!eat('}')) return nullptr;
    return recordTy(fields, size, align, aligned, space);
  }

  const Type* parse() {
    skipSpace();
    if (eat('?')) return unknownTy();
    size_t start = pos;
    std::string_view w = word();
    if (w == "tile") {   // tile_type.cpp owns the tile grammar
      untilClose();
      if (!eat(')')) return nullptr;
      return parseTileType(s.substr(start, pos - start));
    }
    if (w == "undef") return undefTy();
    if (w == "void") return voidTy();
    if (w == "none") return noneTy();
    if (w == "str") return stringTy();
    if (w == "sym" || w == "fn") {
      if (!eat('(')) return nullptr;
      std::string_view name = untilClose();
      if (!eat(')')) return nullptr;
      return w == "sym" ? symbolTy(name) : functionTy(name);
    }
    if (w == "namedtuple") {   // namedtuple Pt(x,y) (f64, f64): the class, its fields, the elements
      skipSpace();
      size_t open = s.find('(', pos);
      if (open == std::string_view::npos) return nullptr;
      std::string_view cls = s.substr(pos, open - pos);
      pos = open + 1;
      std::vector<std::string> fields = splitFieldList(untilClose());
      std::vector<const Type*> elems;
      if (!eat(')') || !eat('(') || !elements(&elems) || fields.size() != elems.size()) return nullptr;
      return namedTupleTy(elems, cls, fields);
    }
    if (w == "tuple") {
      std::vector<const Type*> elems;
      if (!eat('(') || !elements(&elems)) return nullptr;
      return tupleTy(elems);
    }
    if (w == "optional") {
      if (!eat('(')) return nullptr;
      const Type* v = parse();
      if (!v || !eat(')')) return nullptr;
      return optionalTy(v);
    }
    if (w == "range" || w == "rangeiter") {
      Scalar sc;
      if (!eat('(') || !parseScalar(word(), &sc) || !eat(')')) return nullptr;
      return w == "range" ? rangeTy(sc) : rangeIterTy(sc);
    }
    if (w == "record") return record();
    if (w == "array") {
      Scalar sc = Scalar::Bool;
      const Type* rec = nullptr;
      const Type* vec = nullptr;
      if (!eat('(')) return nullptr;
      skipSpace();
      if (s.substr(pos, 7) == "record{") {
        word();
        if (!(rec = record())) return nullptr;
      } else {
        std::string_view item = word();
        if (!parseScalar(item, &sc) && !(vec = parseVectorName(item))) return nullptr;
      }
      if (!eat(',')) return nullptr;
      std::string_view nd = word();
      if (nd.size() != 2 || nd[1] != 'd' || nd[0] < '0' || nd[0] > '9') return nullptr;
      if (!eat(',')) return nullptr;
      std::string_view lay = word();
      Layout layout;
      if (lay == "C") layout = Layout::C;
      else if (lay == "F") layout = Layout::F;
      else if (lay == "A") layout = Layout::A;
      else return nullptr;
      MemSpace space = MemSpace::Global;
      bool readonly = false;
      while (eat(',')) {
        std::string_view attr = word();
        if (attr == "shared") space = MemSpace::Shared;
        else if (attr == "local") space = MemSpace::Local;
        else if (attr == "const") space = MemSpace::Const;
        else if (attr == "global") space = MemSpace::Global;
        else if (attr == "readonly") readonly = true;
        else return nullptr;
      }
      if (!eat(')')) return nullptr;
      if (vec) return vectorArrayTy(vec, nd[0] - '0', layout, space, readonly);
      return rec ? recordArrayTy(rec, nd[0] - '0', layout, space, readonly)
                 : arrayTy(sc, nd[0] - '0', layout, space, readonly);
    }
    Scalar sc;
    if (parseScalar(w, &sc)) return scalarTy(sc);
    return nullptr;
  }
};

}  // namespace

const Type* parseType(std::string_view text) {
  TypeParser p{text};
  const Type* t = p.parse();
  p.skipSpace();
  if (!t || p.pos != text.size()) return nullptr;
  return t;
}

std::string typeToNumbaString(const Type* t) {
  switch (t->kind) {
    case TypeKind::Scalar: return std::string(scalarNumbaName(t->scalar));
    case TypeKind::None: return "none";
    case TypeKind::Void: return "void";
    case TypeKind::Record: {   // numba's Record(x[type=float32;offset=0],...;8;False)
      std::string s = "Record(";
      for (size_t k = 0; k < t->fields.size(); ++k)
        s += (k ? "," : "") + t->fields[k] + "[type=" +
             (isOpaqueField(t->elems[k]) ? opaqueNumbaName(t->elems[k]) : typeToNumbaString(t->elems[k])) +
             ";offset=" + std::to_string(t->shape[k]) + "]";
      return s + ";" + std::to_string(t->size) + ";" + (t->aligned ? "True" : "False") + ")";
    }
    case TypeKind::Array: {
      if (isNestedArray(t)) {   // numba's NestedArray(float32, (3, 2))
        std::string s = "nestedarray(" + (t->record ? typeToNumbaString(t->record) : std::string(scalarNumbaName(t->scalar))) + ", (";
        for (size_t d = 0; d < t->shape.size(); ++d) s += (d ? ", " : "") + std::to_string(t->shape[d]);
        return s + (t->shape.size() == 1 ? ",))" : "))");
      }
      std::string s = (t->vector   ? vectorName(t->vector)
                       : t->record ? typeToNumbaString(t->record)
                                   : std::string(scalarNumbaName(t->scalar))) + "[";
      for (int d = 0; d < t->ndim; ++d) {
        if (d) s += ", ";
        bool contiguous_dim = (t->layout == Layout::C && d == t->ndim - 1) ||
                              (t->layout == Layout::F && d == 0);
        s += contiguous_dim ? "::1" : ":";
      }
      return s + "]";
    }
    case TypeKind::Tuple: {
      if (isOptional(t)) return "OptionalType(" + typeToNumbaString(optionalValue(t)) + ")";
      if (isVectorType(t)) return vectorName(t);   // numba prints its vector types by name
      if (!t->name.empty()) {   // numba's NamedTuple / NamedUniTuple, with the class's fields
        std::string s = "NamedTuple(" + t->name + ", ";
        for (size_t i = 0; i < t->elems.size(); ++i) s += (i ? ", " : "") + typeToNumbaString(t->elems[i]);
        return s + ")";
      }
      bool uniform = !t->elems.empty();
      for (auto* e : t->elems) uniform = uniform && e == t->elems[0];
      if (uniform)
        return "UniTuple(" + typeToNumbaString(t->elems[0]) + ", " + std::to_string(t->elems.size()) + ")";
      std::string s = "Tuple(";
      for (size_t i = 0; i < t->elems.size(); ++i) {
        if (i) s += ", ";
        s += typeToNumbaString(t->elems[i]);
      }
      return s + ")";
    }
    case TypeKind::Tile: return tileTypeToNumbaString(t);
    default: return typeToString(t);
  }
}

bool torchDtypeScalar(std::string_view name, Scalar* out) {
  static const std::pair<std::string_view, Scalar> kNames[] = {
      {"float16", Scalar::Float16}, {"half", Scalar::Float16},     {"bfloat16", Scalar::BFloat16},
      {"float32", Scalar::Float32}, {"float", Scalar::Float32},    {"float64", Scalar::Float64},
      {"double", Scalar::Float64},  {"int8", Scalar::Int8},        {"int16", Scalar::Int16},
      {"short", Scalar::Int16},     {"int32", Scalar::Int32},      {"int", Scalar::Int32},
      {"int64", Scalar::Int64},     {"long", Scalar::Int64},       {"uint8", Scalar::UInt8},
      {"uint16", Scalar::UInt16},   {"uint32", Scalar::UInt32},    {"uint64", Scalar::UInt64},
      {"bool", Scalar::Bool},       {"complex64", Scalar::Complex64}, {"complex128", Scalar::Complex128}};
  for (const auto& [n, s] : kNames)
    if (n == name) {
      *out = s;
      return true;
    }
  return false;
}

std::string dtypeSymbolName(Scalar s) {
  if (s == Scalar::BFloat16) return "cudajit.tile.bfloat16";
  if (s == Scalar::Bool) return "numpy.bool_";
  return "numpy." + std::string(scalarNumbaName(s));
}

}  // namespace cj
