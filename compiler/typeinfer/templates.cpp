#include "typeinfer/templates.h"

#include <tuple>

#include "typeinfer/conversion.h"

namespace cj::typeinfer {
namespace {

using S = Scalar;

// numba's domains, each in numba's sorted order (the order breaks ties).
const std::vector<S> kSigned = {S::Int8, S::Int16, S::Int32, S::Int64};
const std::vector<S> kUnsigned = {S::UInt8, S::UInt16, S::UInt32, S::UInt64};
const std::vector<S> kReal = {S::Float32, S::Float64};
const std::vector<S> kComplex = {S::Complex64, S::Complex128};
// "Machine" integers: operands of integer operators are widened to these.
const std::vector<S> kMachineInts = {S::Int64, S::UInt64};

// numba's choose_result_int: at least 64 bits, signed if any input is.
S chooseResultInt(std::initializer_list<S> inputs) {
  bool any_signed = false;
  int bits = 64;
  for (S s : inputs) {
    any_signed = any_signed || scalarSigned(s);
    bits = std::max(bits, scalarBits(s));
  }
  (void)bits;   // no integer is wider than 64 bits
  return any_signed ? S::Int64 : S::UInt64;
}

void append(std::vector<Signature>& to, const std::vector<Signature>& from) {
  to.insert(to.end(), from.begin(), from.end());
}

std::vector<Signature> sameBinary(const std::vector<S>& domain) {
  std::vector<Signature> out;
  for (S s : domain) out.push_back({s, {s, s}});
  return out;
}

std::vector<Signature> sameUnary(const std::vector<S>& domain) {
  std::vector<Signature> out;
  for (S s : domain) out.push_back({s, {s}});
  return out;
}

std::vector<Signature> compareCases(const std::vector<S>& domain) {
  std::vector<Signature> out;
  for (S s : domain) out.push_back({S::Bool, {s, s}});
  return out;
}

std::vector<Signature> integerBinop() {
  std::vector<Signature> out;
  for (S a : kMachineInts)
    for (S b : kMachineInts) out.push_back({chooseResultInt({a, b}), {a, b}});
  return out;
}

std::vector<Signature> widenedIntUnary() {
  std::vector<Signature> out;
  for (S s : kUnsigned) out.push_back({chooseResultInt({s}), {s}});
  for (S s : kSigned) out.push_back({chooseResultInt({s}), {s}});
  return out;
}

// numba-cuda types float16 arithmetic and comparisons with float16 results,
// tried before the generic templates and without unsafe conversions.
Template f16Template(std::vector<Signature> cases) {
  Template t;
  t.cases = std::move(cases);
  t.unsafe_casting = false;
  t.needs_f16 = true;
  return t;
}

Template concrete(std::vector<Signature> cases, bool unsafe_casting = true) {
  Template t;
  t.cases = std::move(cases);
  t.unsafe_casting = unsafe_casting;
  return t;
}

// ---- operator families (operators.def) -------------------------------------

TemplateList arithmetic() {
  std::vector<Signature> c = integerBinop();
  append(c, sameBinary(kReal));
  append(c, sameBinary(kComplex));
  return {f16Template({{S::Float16, {S::Float16, S::Float16}}}), concrete(c)};
}

TemplateList trueDivide() {
  std::vector<Signature> c;
  for (S a : kMachineInts)
    for (S b : kMachineInts) c.push_back({S::Float64, {a, b}});
  append(c, sameBinary(kReal));
  append(c, sameBinary(kComplex));
  return {f16Template({{S::Float16, {S::Float16, S::Float16}}}), concrete(c)};
}

TemplateList floorDivide() {
  std::vector<Signature> c = integerBinop();
  append(c, sameBinary(kReal));
  return {concrete(c)};
}

TemplateList modulo() { return floorDivide(); }

TemplateList power() {
  std::vector<Signature> c = integerBinop();
  // numba: "Ensure that float32 ** int doesn't go through DP computations"
  for (S e : {S::Int32, S::Int64, S::UInt64}) c.push_back({S::Float32, {S::Float32, e}});
  for (S e : {S::Int32, S::Int64, S::UInt64}) c.push_back({S::Float64, {S::Float64, e}});
  append(c, sameBinary(kReal));
  append(c, sameBinary(kComplex));
  return {concrete(c)};
}

TemplateList shift() {
  // Only the left operand's signedness matters; the right one is a 64-bit int.
  std::vector<Signature> c;
  for (S s : kSigned)
    for (S r : {S::UInt64, S::Int64}) c.push_back({S::Int64, {s, r}});
  for (S s : kUnsigned)
    for (S r : {S::UInt64, S::Int64}) c.push_back({S::UInt64, {s, r}});
  return {concrete(c, /*unsafe_casting=*/false)};
}

TemplateList bitwise() {
  std::vector<Signature> c = {{S::Bool, {S::Bool, S::Bool}}};
  append(c, integerBinop());
  return {concrete(c, /*unsafe_casting=*/false)};
}

std::vector<Signature> orderedCompareCases() {
  std::vector<Signature> c = {{S::Bool, {S::Bool, S::Bool}}};
  append(c, compareCases(kSigned));
  append(c, compareCases(kUnsigned));
  append(c, compareCases(kReal));
  return c;
}

TemplateList orderedCompare() {
  return {f16Template({{S::Bool, {S::Float16, S::Float16}}}), concrete(orderedCompareCases())};
}

TemplateList unorderedCompare() {
  std::vector<Signature> c = orderedCompareCases();
  append(c, compareCases(kComplex));
  return {f16Template({{S::Bool, {S::Float16, S::Float16}}}), concrete(c)};
}

TemplateList unaryArithmetic() {
  std::vector<Signature> c = widenedIntUnary();
  append(c, sameUnary(kReal));
  append(c, sameUnary(kComplex));
  c.push_back({S::Int64, {S::Bool}});
  return {f16Template({{S::Float16, {S::Float16}}}), concrete(c)};
}

TemplateList invert() {
  // numba follows numpy: ~True is False.
  std::vector<Signature> c = {{S::Bool, {S::Bool}}};
  append(c, widenedIntUnary());
  return {concrete(c, /*unsafe_casting=*/false)};
}

TemplateList logicalNot() {
  std::vector<Signature> c = {{S::Bool, {S::Bool}}};
  for (const auto* domain : {&kSigned, &kUnsigned, &kReal, &kComplex})
    for (S s : *domain) c.push_back({S::Bool, {s}});
  return {concrete(c)};
}

struct OperatorRow {
  ir::Op op;
  std::string_view spelling;
  TemplateList (*family)();
};

const OperatorRow kOperators[] = {
#define X(E, spelling, family) {ir::Op::E, spelling, family},
#include "typeinfer/operators.def"
#undef X
};

const OperatorRow* findOperator(ir::Op op) {
  for (const auto& row : kOperators)
    if (row.op == op) return &row;
  return nullptr;
}

// nullopt if a parameter does not accept its argument.
std::optional<Rating> rate(const Template& t, const Signature& sig, const std::vector<S>& args) {
  if (sig.params.size() != args.size()) return std::nullopt;
  Rating rating{0, 0, 0};
  for (size_t i = 0; i < args.size(); ++i)
    if (!addConversion(scalarConversion(args[i], sig.params[i]), t.unsafe_casting, &rating)) return std::nullopt;
  return rating;
}

}  // namespace

bool addConversion(Conversion c, bool unsafe_casting, Rating* rating) {
  switch (c) {
    case Conversion::Exact: return true;
    case Conversion::Promote: ++std::get<2>(*rating); return true;
    case Conversion::Safe: ++std::get<1>(*rating); return true;
    case Conversion::Unsafe:
      if (!unsafe_casting) return false;
      ++std::get<0>(*rating);
      return true;
    case Conversion::None: return false;
  }
  return false;
}

std::optional<Signature> resolveOverload(const TemplateList& templates, const std::vector<S>& args) {
  bool has_f16 = false;
  for (S a : args) has_f16 = has_f16 || a == S::Float16;
  for (const Template& t : templates) {
    if (t.needs_f16 && !has_f16) continue;
    const Signature* best = nullptr;
    Rating best_rating;
    for (const Signature& sig : t.cases) {
      auto r = rate(t, sig, args);
      if (r && (!best || *r < best_rating)) {   // strict: the first listed wins ties
        best = &sig;
        best_rating = *r;
      }
    }
    if (best) return *best;
  }
  return std::nullopt;
}

const TemplateList* operatorTemplates(ir::Op op) {
  static const std::vector<std::pair<ir::Op, TemplateList>> tables = [] {
    std::vector<std::pair<ir::Op, TemplateList>> m;
    for (const auto& row : kOperators) m.emplace_back(row.op, row.family());
    return m;
  }();
  for (const auto& [o, list] : tables)
    if (o == op) return &list;
  return nullptr;
}

std::string_view operatorSpelling(ir::Op op) {
  const OperatorRow* row = findOperator(op);
  return row ? row->spelling : std::string_view();
}

namespace families {

const TemplateList& mathUnary() {
  static const TemplateList t = {concrete({{S::Float64, {S::Int64}},
                                           {S::Float64, {S::UInt64}},
                                           {S::Float32, {S::Float32}},
                                           {S::Float64, {S::Float64}}})};
  return t;
}

const TemplateList& mathUnaryWithF16() {
  static const TemplateList t = {concrete({{S::Float64, {S::Int64}},
                                           {S::Float64, {S::UInt64}},
                                           {S::Float32, {S::Float32}},
                                           {S::Float64, {S::Float64}},
                                           {S::Float16, {S::Float16}}})};
  return t;
}

const TemplateList& mathPow() {
  static const TemplateList t = {concrete({{S::Float32, {S::Float32, S::Float32}},
                                           {S::Float64, {S::Float64, S::Float64}},
                                           {S::Float32, {S::Float32, S::Int32}},
                                           {S::Float64, {S::Float64, S::Int32}}})};
  return t;
}

const TemplateList& absolute() {
  static const TemplateList t = [] {
    std::vector<Signature> c = sameUnary(kSigned);
    append(c, sameUnary(kUnsigned));
    append(c, sameUnary(kReal));
    c.push_back({S::Float32, {S::Complex64}});
    c.push_back({S::Float64, {S::Complex128}});
    return TemplateList{concrete(c)};
  }();
  return t;
}

const TemplateList& range() {
  static const TemplateList t = [] {
    std::vector<Signature> c;
    for (S s : {S::Int32, S::Int64, S::UInt64}) {
      c.push_back({s, {s}});
      c.push_back({s, {s, s}});
      c.push_back({s, {s, s, s}});
    }
    return TemplateList{concrete(c)};
  }();
  return t;
}

}  // namespace families
}  // namespace cj::typeinfer
