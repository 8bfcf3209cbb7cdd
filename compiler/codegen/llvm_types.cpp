#include "codegen/llvm_types.h"

#include <cctype>
#include <cmath>
#include <cinttypes>
#include <cstdio>
#include <cstring>

namespace cj::codegen {

bool hasValue(const Type* t) {
  switch (t->kind) {
    case TypeKind::Scalar:
    case TypeKind::Array:
    case TypeKind::Tuple:
    case TypeKind::Range:
    case TypeKind::RangeIter:
    case TypeKind::Record:
      return true;
    default:
      return false;
  }
}

std::string llvmScalarType(Scalar s) { return std::string(scalarNvvmType(s)); }

std::string llvmMemType(Scalar s) {
  return s == Scalar::Bool ? "i8" : llvmScalarType(s);
}

// An array's item in memory: a scalar, a record's bytes, or a vector: n = 2
// and 4 as an LLVM vector (<4 x half>: its size is the item's), n = 1 and 3
// as an LLVM array (<3 x float> would take 16 bytes). lower_array.cpp loads
// and stores them.
std::string llvmElemType(const Type* a) {
  if (a->vector) {
    const size_t n = a->vector->elems.size();
    const std::string t = llvmMemType(a->scalar);
    return n == 2 || n == 4 ? "<" + std::to_string(n) + " x " + t + ">" : "[" + std::to_string(n) + " x " + t + "]";
  }
  return a->record ? "[" + std::to_string(a->record->size) + " x i8]" : llvmMemType(a->scalar);
}

std::string llvmViewType(const Type* a) {
  std::string dims = "[" + std::to_string(a->ndim) + " x i64]";
  return "{" + llvmElemType(a) + "*, " + dims + ", " + dims + "}";
}

std::string llvmType(const Type* t) {
  switch (t->kind) {
    case TypeKind::Scalar:
      return llvmScalarType(t->scalar);
    case TypeKind::Array:
      return llvmViewType(t);
    case TypeKind::Record:
      return "i8*";
    case TypeKind::Tuple: {
      std::string out = "{";
      bool first = true;
      for (const Type* e : t->elems) {
        if (!hasValue(e)) continue;
        out += first ? "" : ", ";
        out += llvmType(e);
        first = false;
      }
      return out + "}";
    }
    case TypeKind::Range: {
      std::string s = llvmScalarType(t->scalar);
      return "{" + s + ", " + s + ", " + s + "}";
    }
    case TypeKind::RangeIter: {   // {cur, count, step, stop} (lower_aggregate.cpp)
      std::string s = llvmScalarType(t->scalar);
      return "{" + s + ", " + s + ", " + s + ", " + s + "}*";
    }
    default:
      return "";
  }
}

int tupleField(const Type* tuple, int k) {
  if (k < 0 || k >= static_cast<int>(tuple->elems.size())) return -1;
  if (!hasValue(tuple->elems[k])) return -1;
  int field = 0;
  for (int i = 0; i < k; ++i) field += hasValue(tuple->elems[i]) ? 1 : 0;
  return field;
}

std::string llvmIdent(const std::string& name) {
  bool plain = !name.empty() && !std::isdigit(static_cast<unsigned char>(name[0]));
  for (char c : name) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '$')) {
      plain = false;
    }
  }
  if (plain) return name;
  std::string out = "\"";
  for (char c : name) {
    if (c == '"' || c == '\\' || !std::isprint(static_cast<unsigned char>(c))) {
      char buf[4];
      std::snprintf(buf, sizeof buf, "\\%02X", static_cast<unsigned char>(c));
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

namespace {
// IEEE binary16 bits of a double, rounded once to nearest even (subnormals,
// inf and NaN included): LLVM's `0xH` form, which libNVVM and LLVM 17+ both
// read (LLVM 17 dropped the fptrunc constant expression).
uint16_t halfBits(double d) {
  uint16_t sign = std::signbit(d) ? 0x8000u : 0;
  if (std::isnan(d)) return static_cast<uint16_t>(sign | 0x7e00u);
  double a = std::fabs(d);
  if (a < std::ldexp(1.0, -14))   // subnormal or zero: units of 2^-24
    return static_cast<uint16_t>(sign | static_cast<uint16_t>(std::nearbyint(std::ldexp(a, 24))));
  if (std::isinf(a)) return static_cast<uint16_t>(sign | 0x7c00u);
  int e = 0;
  std::frexp(a, &e);   // a = m 2^e, m in [0.5, 1)
  double q = std::nearbyint(std::ldexp(a, 11 - e));   // 11 significant bits, in [1024, 2048]
  if (q == 2048.0) {
    q = 1024.0;
    ++e;
  }
  int field = e - 1 + 15;
  if (field >= 31) return static_cast<uint16_t>(sign | 0x7c00u);
  return static_cast<uint16_t>(sign | (field << 10) | (static_cast<int>(q) - 1024));
}
}  // namespace

std::string llvmFloatConst(double v, Scalar s) {
  // LLVM reads float and double constants in the 64-bit hex form; a float
  // constant must be exactly representable, so round through float first.
  double exact = v;
  if (s == Scalar::Float32 || s == Scalar::TFloat32 || s == Scalar::BFloat16)
    exact = static_cast<double>(static_cast<float>(v));
  if (s == Scalar::BFloat16) {   // the i16 that holds it: round to nearest even
    float f = static_cast<float>(exact);
    uint32_t x;
    std::memcpy(&x, &f, sizeof x);
    uint32_t b = (x & 0x7fffffffu) > 0x7f800000u ? (x >> 16) | 0x40u : (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;
    return std::to_string(static_cast<int16_t>(static_cast<uint16_t>(b)));
  }
  uint64_t bits;
  std::memcpy(&bits, &exact, sizeof bits);
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%016" PRIX64, bits);
  if (s == Scalar::Float16) {
    std::snprintf(buf, sizeof buf, "0xH%04X", static_cast<unsigned>(halfBits(v)));
  }
  return buf;
}

std::string llvmIntConst(int64_t v, Scalar s) {
  if (s == Scalar::Bool) return v ? "true" : "false";
  int bits = scalarBits(s);
  if (bits < 64) {
    // Print the two's complement value of the low `bits` bits as signed:
    // LLVM accepts any in-range value, and this form always is.
    uint64_t mask = (uint64_t{1} << bits) - 1;
    uint64_t u = static_cast<uint64_t>(v) & mask;
    if (u >> (bits - 1)) u |= ~mask;
    v = static_cast<int64_t>(u);
  }
  return std::to_string(v);
}

}  // namespace cj::codegen
