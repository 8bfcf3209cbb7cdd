// The symbol and attribute tables (symbols.def, attributes.def) as data.
#include <unordered_map>

#include "support/error.h"
#include "typeinfer/infer.h"
#include "typeinfer/rules.h"
#include "types/signature.h"

namespace cj::typeinfer {
namespace {

using namespace rules;   // the rule names symbols.def uses
const Rule none{};        // the table's "not usable this way"

// symbols.def's argument column: a string or I(Enum), an intrinsic id.
struct Arg {
  constexpr Arg(const char* s) : text(s) {}
  constexpr Arg(ir::Intrinsic i) : id(i) {}
  std::string_view text;
  ir::Intrinsic id = ir::Intrinsic::Count;
};

const SymbolEntry kSymbols[] = {
#define I(E) ir::Intrinsic::E
#define SYMBOL(name, value, call, arg) {name, &value, &call, Arg(arg).text, Arg(arg).id},
#include "typeinfer/symbols.def"
#undef SYMBOL
#undef I
// numpy.float32(x) & co, and their use as dtypes: one row per scalar type.
#define X(E, short_name, numba_name, kind, bits, is_signed, nvvm, np) \
  {"numpy." #numba_name, &none, &scalarCast, #numba_name, ir::Intrinsic::Count},
#include "types/scalars.def"
#undef X
// np.sqrt(x) & co: numpy ufuncs on scalars (rules_ufunc.cpp), named as the
// decoder names a ufunc: numpy.<its __name__> (np.abs -> numpy.absolute).
#define UFUNC(name, nin, nout, loops) {"numpy." #name, &none, &ufunc, #name, ir::Intrinsic::Count},
#include "typeinfer/ufunc_loops.def"
#undef UFUNC
// cudajit.fp16.hadd & co, and the same in cudajit.bf16 (rules_fp16.cpp).
#define HALF_FUNCTION(name, kind, op, intrinsic) \
  {"cudajit.fp16." #name, &none, &fp16Call, "", ir::Intrinsic::Count}, \
  {"cudajit.bf16." #name, &none, &fp16Call, "", ir::Intrinsic::Count},
#include "typeinfer/half_functions.def"
#undef HALF_FUNCTION
// cudajit.float32x4(...) & co: numba.cuda's vector types and their C aliases (rules_vector.cpp).
#define VECTOR_ROW(name, canonical) {"cudajit." name, &none, &vectorMake, canonical, ir::Intrinsic::Count},
#define VECTOR_FAMILY(base) \
  VECTOR_ROW(#base "x1", #base "x1") VECTOR_ROW(#base "x2", #base "x2") \
  VECTOR_ROW(#base "x3", #base "x3") VECTOR_ROW(#base "x4", #base "x4")
#define VECTOR_ALIAS(alias, base) \
  VECTOR_ROW(#alias "1", #base "x1") VECTOR_ROW(#alias "2", #base "x2") \
  VECTOR_ROW(#alias "3", #base "x3") VECTOR_ROW(#alias "4", #base "x4")
#include "typeinfer/vector_types.def"
#undef VECTOR_ALIAS
#undef VECTOR_FAMILY
#undef VECTOR_ROW
// cudajit.libdevice.sinf & co: every function of libdevice by name (rules_libdevice.cpp).
#define LIBDEVICE(name, result, params) {"cudajit.libdevice." #name, &none, &libdeviceCall, #name, ir::Intrinsic::Count},
#include "ir/libdevice.def"
#undef LIBDEVICE
};

const AttributeEntry kAttributes[] = {
#define ATTRIBUTE(kind, name, rule) {TypeKind::kind, name, &rule},
#include "typeinfer/attributes.def"
#undef ATTRIBUTE
};

}  // namespace

const SymbolEntry* findSymbol(std::string_view qualified_name) {
  static const auto index = [] {
    std::unordered_map<std::string_view, const SymbolEntry*> m;
    for (const auto& e : kSymbols) m.emplace(e.name, &e);
    return m;
  }();
  auto it = index.find(qualified_name);
  return it == index.end() ? nullptr : it->second;
}

const AttributeEntry* findAttribute(TypeKind kind, std::string_view name) {
  for (const auto& e : kAttributes)
    if (e.kind == kind && e.name == name) return &e;
  return nullptr;
}

const Type* vectorNamed(std::string_view name, bool dtype_names) {
  for (const auto& [alias, canonical] : vectorTypeNames())
    if (alias == name) return parseVectorName(canonical);
  if (!dtype_names) return nullptr;
#define VECTOR_DTYPE_NAME(alias, vector) \
  if (name == alias) return parseVectorName(vector);
#include "typeinfer/vector_dtype_names.def"
#undef VECTOR_DTYPE_NAME
  return nullptr;
}

const Type* vectorDtypeOf(const ir::Instr* v) {
  if (v->type->is(TypeKind::Symbol)) {   // cudajit.float16x4, cudajit.half4
    std::string_view name = v->type->name;
    return name.rfind("cudajit.", 0) == 0 ? vectorNamed(name.substr(8), false) : nullptr;
  }
  if (auto c = constantOf(v); c && c->kind == ir::Const::Kind::Str) return vectorNamed(c->s, true);
  return nullptr;
}

const Type* itemDtypeOf(const ir::Instr* v) {
  if (const Type* vec = vectorDtypeOf(v)) return vec;
  if (auto s = dtypeOf(v)) return scalarTy(*s);
  return nullptr;
}

std::optional<Scalar> dtypeOf(const ir::Instr* v) {
  const Type* t = v->type;
  std::string_view name;
  if (t->is(TypeKind::Symbol)) {
    name = t->name;
    if (name == "builtins.float") return Scalar::Float64;
    if (name == "builtins.int") return Scalar::Int64;
    if (name == "builtins.bool") return Scalar::Bool;
    if (name.substr(0, 13) == "cudajit.tile.") {
      name.remove_prefix(13);   // ct.bfloat16, ct.tfloat32 (the rest are numpy's)
    } else if (name.substr(0, 6) == "numpy.") {
      name.remove_prefix(6);
    } else {
      return std::nullopt;
    }
  } else if (auto c = constantOf(v); c && c->kind == ir::Const::Kind::Str) {
    Scalar s;
    if (parseScalar(c->s, &s)) return s;
    try {
      const Type* parsed = parseNumbaType(c->s);
      if (parsed->isScalar()) return parsed->scalar;
    } catch (const CompileError&) {
    }
    return std::nullopt;
  } else {
    return std::nullopt;
  }
  Scalar s;
  if (parseScalar(name, &s)) return s;
  return std::nullopt;
}

}  // namespace cj::typeinfer
