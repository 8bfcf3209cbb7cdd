// Tuples with field names built in kernels: numba.cuda's vector types
// (vector_types.def) and instances of a namedtuple class.
//
// Vector types: cuda.float32x4(x, y, z, w),
// built from scalars and smaller vectors whose components add up to N,
// read as .x .y .z .w. A vector is a namedtuple type ("float32x4(x,y,z,w)"),
// so fields, passing to device functions, returning and tuple unpacking work
// as they do for namedtuples; numba gives vectors no arithmetic, neither do we.
#include <string>

#include "typeinfer/infer.h"
#include "typeinfer/rules.h"

namespace cj::typeinfer::rules {
namespace {

// The vector type the table row names ("float32x4"): its base and N.
const Type* vectorType(std::string_view name) { return parseVectorName(name); }

// A constructor argument's components: 1 for a number, N for a vector.
int components(const Type* t) {
  if (t->isScalar() && t->isNumeric()) return 1;
  if (isVectorType(t)) return static_cast<int>(t->elems.size());
  return 0;
}

const Type* vectorMakeType(const Site& s) {
  const Type* v = vectorType(s.arg);
  if (!s.kw_args.empty()) s.fail("takes positional arguments only");
  int have = 0;
  for (size_t i = 0; i < s.args.size(); ++i) {
    int c = components(s.argType(i));
    if (c == 0)
      s.fail("argument " + std::to_string(i + 1) + " is " + typeToString(s.argType(i)) +
             ": a vector takes numbers and smaller vectors");
    have += c;
  }
  if (have != static_cast<int>(v->elems.size()))
    s.fail("the arguments have " + std::to_string(have) + " components, " + std::string(s.arg) + " has " +
           std::to_string(v->elems.size()));
  return v;
}

ir::Instr* vectorMakeLower(const Site& s, Emitter& e) {
  const Type* v = vectorType(s.arg);
  std::vector<ir::Instr*> parts;
  for (ir::Instr* a : s.args) {
    if (a->type->isScalar()) {
      parts.push_back(a);
    } else {
      for (ir::Instr* x : e.elements(a)) parts.push_back(x);
    }
  }
  for (ir::Instr*& p : parts) p = e.convert(p, v->elems[0]);
  return e.emit(ir::Op::TupleMake, v, parts);
}

// Pt(1.0, y=2.0) of a namedtuple class: the symbol "namedtuple Pt(x,y)"
// (frozen.cpp) names the class and its fields; the elements take the
// arguments' types, as numba's do, and every field must be given (a class's
// defaults are not read).
struct NamedTupleClass {
  std::string name;
  std::vector<std::string> fields;
};
NamedTupleClass namedTupleClass(std::string_view symbol) {
  NamedTupleClass c;
  std::string_view rest = symbol.substr(std::string_view("namedtuple ").size());
  size_t open = rest.find('(');
  c.name = std::string(rest.substr(0, open));
  c.fields = splitFieldList(rest.substr(open + 1, rest.size() - open - 2));
  return c;
}

std::vector<ir::Instr*> namedTupleArgs(const Site& s, const NamedTupleClass& c) {
  std::vector<std::string_view> params(c.fields.begin(), c.fields.end());
  return s.bind(params, params.size());
}

const Type* namedTupleMakeType(const Site& s) {
  NamedTupleClass c = namedTupleClass(s.name);
  std::vector<const Type*> elems;
  for (ir::Instr* a : namedTupleArgs(s, c)) {
    if (a->type->is(TypeKind::Symbol) || a->type->is(TypeKind::Function))
      s.fail("field values are numbers, arrays or tuples, not " + typeToString(a->type));
    elems.push_back(a->type);
  }
  return namedTupleTy(elems, c.name, c.fields);
}

ir::Instr* namedTupleMakeLower(const Site& s, Emitter& e) {
  return e.emit(ir::Op::TupleMake, namedTupleMakeType(s), namedTupleArgs(s, namedTupleClass(s.name)));
}

}  // namespace

const Rule vectorMake{vectorMakeType, vectorMakeLower};
const Rule namedTupleMake{namedTupleMakeType, namedTupleMakeLower};

}  // namespace cj::typeinfer::rules

namespace cj::typeinfer {

std::vector<std::pair<std::string, std::string>> vectorTypeNames() {
  std::vector<std::pair<std::string, std::string>> out;
#define VECTOR_FAMILY(base) \
  for (int n = 1; n <= 4; ++n) out.emplace_back(#base "x" + std::to_string(n), #base "x" + std::to_string(n));
#define VECTOR_ALIAS(alias, base) \
  for (int n = 1; n <= 4; ++n) out.emplace_back(#alias + std::to_string(n), #base "x" + std::to_string(n));
#include "typeinfer/vector_types.def"
#undef VECTOR_ALIAS
#undef VECTOR_FAMILY
  return out;
}

}  // namespace cj::typeinfer
