#include "typeinfer/unify.h"

#include "typeinfer/conversion.h"

namespace cj::typeinfer {

const Type* unifyTypes(const Type* a, const Type* b) {
  if (a == b) return a;
  if (a->is(TypeKind::Unknown) || a->is(TypeKind::Undef)) return b;
  if (b->is(TypeKind::Unknown) || b->is(TypeKind::Undef)) return a;
  // None on one path and a number on another: numba's Optional.
  if (a->is(TypeKind::None) && b->isScalar()) return optionalTy(b);
  if (b->is(TypeKind::None) && a->isScalar()) return optionalTy(a);
  if (isOptional(a) != isOptional(b)) {
    const Type* opt = isOptional(a) ? a : b;
    const Type* other = isOptional(a) ? b : a;
    if (other->is(TypeKind::None)) return opt;
    if (!other->isScalar()) return nullptr;
    const Type* v = unifyTypes(optionalValue(opt), other);
    return v && v->isScalar() ? optionalTy(v) : nullptr;
  }
  if (a->kind != b->kind) return nullptr;
  switch (a->kind) {
    case TypeKind::Scalar:
      return scalarTy(unifyScalars(a->scalar, b->scalar));
    case TypeKind::Array: {
      if (a->scalar != b->scalar || a->record != b->record || a->vector != b->vector || a->ndim != b->ndim || a->space != b->space)
        return nullptr;
      Layout layout = a->layout == b->layout ? a->layout : Layout::A;
      return arrayLike(a, a->ndim, layout, a->space, a->readonly || b->readonly);
    }
    case TypeKind::Tuple: {
      if (a->elems.size() != b->elems.size()) return nullptr;
      std::vector<const Type*> elems;
      for (size_t i = 0; i < a->elems.size(); ++i) {
        const Type* e = unifyTypes(a->elems[i], b->elems[i]);
        if (!e) return nullptr;
        elems.push_back(e);
      }
      return tupleTy(elems);
    }
    default:
      return nullptr;   // ranges, symbols, functions, none: only equal types unify
  }
}

bool canCoerce(const Type* from, const Type* to) {
  if (from == to) return true;
  if (isOptional(to) && !isOptional(from))
    return from->is(TypeKind::None) || canCoerce(from, optionalValue(to));
  if (from->kind != to->kind) return false;
  switch (from->kind) {
    case TypeKind::Scalar:
      return scalarConversion(from->scalar, to->scalar) != Conversion::None;
    case TypeKind::Array:
      return from->scalar == to->scalar && from->record == to->record && from->vector == to->vector && from->ndim == to->ndim &&
             from->space == to->space &&
             (to->layout == Layout::A || to->layout == from->layout) &&
             (to->readonly || !from->readonly);
    case TypeKind::Tuple:
      if (from->elems.size() != to->elems.size()) return false;
      for (size_t i = 0; i < from->elems.size(); ++i)
        if (!canCoerce(from->elems[i], to->elems[i])) return false;
      return true;
    default:
      return false;
  }
}

}  // namespace cj::typeinfer
