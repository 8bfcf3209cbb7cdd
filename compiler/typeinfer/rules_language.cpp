// Language rules of issue 5: complex parts (z.real, z.imag, complex(re, im)),
// enumerate(...) and zip(...) (their iteration lives in iterators.cpp).
#include "typeinfer/complex_parts.h"
#include "typeinfer/iterators.h"
#include "typeinfer/rules.h"

namespace cj::typeinfer::rules {
namespace {

// x.real / x.imag: numba types them on every number (a real's imag is 0).
const Type* realType(const Site& s) {
  const Type* t = s.receiver->type;
  return t->isComplex() ? scalarTy(complexPart(t->scalar)) : t;
}

ir::Instr* realLower(const Site& s, Emitter& e) {
  const Type* t = s.receiver->type;
  if (!t->isComplex()) return s.receiver;
  return e.intrinsic(ir::Intrinsic::ComplexReal, realType(s), {s.receiver});
}

ir::Instr* imagLower(const Site& s, Emitter& e) {
  const Type* t = s.receiver->type;
  if (!t->isComplex()) return e.constant(t->isFloat() ? ir::Const::real(0.0) : ir::Const::integer(0), t);
  return e.intrinsic(ir::Intrinsic::ComplexImag, realType(s), {s.receiver});
}

// complex(re[, im]) -> complex128 (numba's typing of the builtin).
const Type* complexType(const Site& s) {
  s.expectArgs(1, 2);
  for (size_t i = 0; i < s.args.size(); ++i)
    if (!s.argType(i)->isScalar() || (i == 1 && s.argType(i)->isComplex()))
      s.fail("complex() arguments must be real numbers, got " + typeToString(s.argType(i)));
  return scalarTy(Scalar::Complex128);
}

ir::Instr* complexLower(const Site& s, Emitter& e) {
  const Type* c = scalarTy(Scalar::Complex128);
  if (s.args.size() == 1) return e.convert(s.args[0], c);
  return e.intrinsic(ir::Intrinsic::ComplexMake, c, {e.convert(s.args[0], f64Ty()), e.convert(s.args[1], f64Ty())});
}

// enumerate(iterable[, start]) and zip(a, b, ...): marker tuples that
// iterators.cpp knows how to iterate.
const Type* enumerateType(const Site& s) {
  std::vector<ir::Instr*> a = s.bind({"iterable", "start"}, 1);
  if (a[1] && !a[1]->type->isInt()) s.fail("enumerate() start must be an integer");
  iteratorType(s.ctx, s.instr, a[0]->type);   // fails early on what cannot be iterated
  return tupleTy({symbolTy(kEnumerateObject), i64Ty(), a[0]->type});
}

ir::Instr* enumerateLower(const Site& s, Emitter& e) {
  std::vector<ir::Instr*> a = s.bind({"iterable", "start"}, 1);
  ir::Instr* start = a[1] ? e.convert(a[1], i64Ty()) : e.constInt(0);
  ir::Instr* marker = e.constant(ir::Const::symbol(kEnumerateObject), symbolTy(kEnumerateObject));
  return e.emit(ir::Op::TupleMake, s.instr->type, {marker, start, a[0]});
}

const Type* zipType(const Site& s) {
  if (!s.kw_names.empty()) s.fail("zip() takes no keyword arguments");
  std::vector<const Type*> elems = {symbolTy(kZipObject)};
  for (ir::Instr* a : s.args) {
    iteratorType(s.ctx, s.instr, a->type);
    elems.push_back(a->type);
  }
  return tupleTy(elems);
}

ir::Instr* zipLower(const Site& s, Emitter& e) {
  std::vector<ir::Instr*> ops = {e.constant(ir::Const::symbol(kZipObject), symbolTy(kZipObject))};
  for (ir::Instr* a : s.args) ops.push_back(a);
  return e.emit(ir::Op::TupleMake, s.instr->type, ops);
}

// print(a, b, ...): numba-cuda's format (items separated by spaces, a
// newline at the end; ints as %lld / %llu, floats as %f, bools as
// True/False, constant strings verbatim, tuples as "(a, b)"). Lowered to
// `intrinsic print`, the template in Instr::ints as character codes with
// kPrintSlot where each value operand goes (codegen picks its format).
constexpr int64_t kPrintSlot = 1;

void checkPrintable(const Site& s, const Type* t) {
  if (isFString(t)) {
    fstringParts(s, t);   // its format specs
    for (size_t k = 1; k < t->elems.size(); ++k) checkPrintable(s, t->elems[k]);
    return;
  }
  if (t->is(TypeKind::Tuple)) {
    for (const Type* e : t->elems) checkPrintable(s, e);
    return;
  }
  if ((t->isScalar() && !t->isComplex()) || t->is(TypeKind::String) || t->is(TypeKind::None)) return;
  s.fail("print() of " + typeToString(t) + " is not supported (numbers, strings, tuples of them)");
}

const Type* printType(const Site& s) {
  if (printsTiles(s)) return tilePrint.type(s);   // cuTile's print of tiles
  for (const std::string& k : s.kw_names)
    if (k != "sep" && k != "end") s.fail("print() keyword '" + k + "' is not supported");
  if (!s.kw_names.empty()) s.fail("print() with sep= or end= is not supported (numba-cuda rejects it too)");
  for (ir::Instr* a : s.args) checkPrintable(s, a->type);
  return noneTy();
}

void appendItem(const Site& s, Emitter& e, ir::Instr* v, std::vector<int64_t>& tmpl, std::vector<ir::Instr*>& values) {
  const Type* t = v->type;
  if (isFString(t)) {   // its text, and its values under their specs
    int k = 1;
    for (const FStringPart& part : fstringParts(s, t)) {
      if (!part.slot) {
        appendPrintText(tmpl, part.text);
        continue;
      }
      appendPrintSlot(tmpl, part.spec);
      values.push_back(e.element(v, k++));
    }
    return;
  }
  if (t->is(TypeKind::Tuple)) {
    std::vector<ir::Instr*> elems = e.elements(v);
    appendPrintText(tmpl, "(");
    for (size_t k = 0; k < elems.size(); ++k) {
      if (k) appendPrintText(tmpl, ", ");
      appendItem(s, e, elems[k], tmpl, values);
    }
    appendPrintText(tmpl, elems.size() == 1 ? ",)" : ")");
    return;
  }
  if (t->is(TypeKind::None)) return appendPrintText(tmpl, "None");
  if (t->is(TypeKind::String)) {
    if (v->op != ir::Op::Const) return appendPrintText(tmpl, "<str>");
    return appendPrintText(tmpl, v->cval.s);
  }
  tmpl.push_back(kPrintSlot);
  values.push_back(v);
}

ir::Instr* printLower(const Site& s, Emitter& e) {
  if (printsTiles(s)) return tilePrint.lower(s, e);
  std::vector<int64_t> tmpl;
  std::vector<ir::Instr*> values;
  for (size_t i = 0; i < s.args.size(); ++i) {
    if (i) appendPrintText(tmpl, " ");
    appendItem(s, e, s.args[i], tmpl, values);
  }
  appendPrintText(tmpl, "\n");
  e.intrinsic(ir::Intrinsic::Print, voidTy(), values, tmpl);
  return nullptr;
}

// z.conjugate(): the attribute is a bound method, a tuple (sym
// method:conjugate, z) that sites.cpp's bindCall dispatches on.
constexpr const char* kConjugate = "method:conjugate";

const Type* conjugateAttrType(const Site& s) { return tupleTy({symbolTy(kConjugate), s.receiver->type}); }
ir::Instr* conjugateAttrLower(const Site& s, Emitter& e) {
  return e.emit(ir::Op::TupleMake, conjugateAttrType(s),
                {e.constant(ir::Const::symbol(kConjugate), symbolTy(kConjugate)), s.receiver});
}

const Type* conjugateCallType(const Site& s) {
  s.expectArgs(0);
  return s.receiver->type->elems[1];
}
ir::Instr* conjugateCallLower(const Site& s, Emitter& e) {
  ir::Instr* z = e.element(s.receiver, 1);
  if (!z->type->isComplex()) return z;
  return complexConjugate(e, z);
}

// x.view(dtype): numpy's scalar view, the bits of x as a scalar type of the
// same width (np.float32(v).view(np.int32)); bool and complex have no view.
constexpr const char* kView = "method:view";

const Type* viewAttrType(const Site& s) { return tupleTy({symbolTy(kView), s.receiver->type}); }
ir::Instr* viewAttrLower(const Site& s, Emitter& e) {
  return e.emit(ir::Op::TupleMake, viewAttrType(s), {e.constant(ir::Const::symbol(kView), symbolTy(kView)), s.receiver});
}

const Type* viewCallType(const Site& s) {
  s.expectArgs(1);
  const Type* from = s.receiver->type->elems[1];
  std::optional<Scalar> to = dtypeOf(s.args[0]);
  if (!to) s.fail("view(): the argument must be a numpy dtype (np.int32, ...), got " + typeToString(s.argType(0)));
  const Type* target = scalarTy(*to);
  auto viewable = [](const Type* t) { return t->isInt() || t->isFloat(); };
  if (!viewable(from) || !viewable(target))
    s.fail("view(): only integer and float scalars have views, got " + typeToString(from) + " to " +
           typeToString(target));
  if (scalarBits(from->scalar) != scalarBits(*to))
    s.fail("view(): " + typeToString(from) + " and " + typeToString(target) +
           " differ in size; a view keeps the bits, so the widths must match");
  return target;
}
ir::Instr* viewCallLower(const Site& s, Emitter& e) {
  ir::Instr* x = e.element(s.receiver, 1);
  const Type* target = scalarTy(*dtypeOf(s.args[0]));
  if (x->type == target) return x;
  return e.intrinsic(ir::Intrinsic::Bitcast, target, {x});
}

}  // namespace

const Rule scalarViewAttr{viewAttrType, viewAttrLower};
const Rule scalarViewCall{viewCallType, viewCallLower};
const Rule conjugateAttr{conjugateAttrType, conjugateAttrLower};
const Rule conjugateCall{conjugateCallType, conjugateCallLower};
const Rule print{printType, printLower};
const Rule scalarReal{realType, realLower};
const Rule scalarImag{realType, imagLower};
const Rule toComplex{complexType, complexLower};
const Rule enumerate{enumerateType, enumerateLower};
const Rule zip{zipType, zipLower};

}  // namespace cj::typeinfer::rules
