#include "typeinfer/mangle.h"

#include <cctype>

namespace cj::typeinfer {
namespace {

std::string identifier(std::string_view s) {
  std::string out;
  for (char c : s) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return out;
}

// A record: its fields' names are too long for a symbol, so "rec" and a
// stable hash of its text form (FNV-1a; the text spells every field,
// offset, size, alignment and space).
std::string recordMangle(const Type* t) {
  uint64_t h = 1469598103934665603ull;
  for (char c : typeToString(t)) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  static const char* kHex = "0123456789abcdef";
  std::string s = "rec";
  for (int k = 0; k < 12; ++k, h >>= 4) s += kHex[h & 15];
  return s;
}

}  // namespace

std::string mangleType(const Type* t) {
  switch (t->kind) {
    case TypeKind::Scalar: return std::string(scalarShortName(t->scalar));
    case TypeKind::Array: {
      std::string s = "a" + std::to_string(t->ndim) +
                      (t->vector   ? "v" + vectorName(t->vector)
                       : t->record ? recordMangle(t->record)
                                   : std::string(scalarShortName(t->scalar)));
      s += t->layout == Layout::C ? "C" : t->layout == Layout::F ? "F" : "A";
      if (t->space == MemSpace::Shared) s += "s";
      if (t->space == MemSpace::Local) s += "l";
      if (t->space == MemSpace::Const) s += "k";
      if (t->readonly) s += "r";
      return s;
    }
    case TypeKind::Tuple: {
      // A namedtuple is another type than the plain tuple of its elements:
      // a device function called with both needs two specialisations.
      std::string s = t->name.empty() ? "T" : "N" + identifier(t->name) + "T";
      for (size_t i = 0; i < t->elems.size(); ++i) {
        if (i) s += "_";
        s += mangleType(t->elems[i]);
      }
      return s + "E";
    }
    case TypeKind::Record: return recordMangle(t);
    case TypeKind::Range: return "R" + std::string(scalarShortName(t->scalar));
    case TypeKind::RangeIter: return "I" + std::string(scalarShortName(t->scalar));
    case TypeKind::None: return "none";
    case TypeKind::String: return "str";
    case TypeKind::Symbol: return "sym_" + identifier(t->name);
    case TypeKind::Function: return "fn_" + identifier(t->name);
    default: return "x";
  }
}

std::string mangleFunctionName(std::string_view base, const std::vector<const Type*>& args) {
  std::string s = identifier(base) + "__";
  for (size_t i = 0; i < args.size(); ++i) {
    if (i) s += "_";
    s += mangleType(args[i]);
  }
  return s;
}

}  // namespace cj::typeinfer
