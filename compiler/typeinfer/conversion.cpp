#include "typeinfer/conversion.h"

#include <array>

namespace cj::typeinfer {
namespace {

constexpr int kNumScalars = 0
#define X(E, short_name, numba_name, kind, bits, is_signed, nvvm, np) +1
#include "types/scalars.def"
#undef X
    ;

struct Rule {
  Scalar from, to;
  Conversion forward, backward;
};

constexpr Rule kRules[] = {
#define X(from, to, fwd, bwd) {Scalar::from, Scalar::to, Conversion::fwd, Conversion::bwd},
#include "typeinfer/conversions.def"
#undef X
};

using Table = std::array<std::array<Conversion, kNumScalars>, kNumScalars>;

// Transitive closure of the rule graph: a path converts as its loosest edge,
// a pair as its strictest path (min-max closure, Floyd-Warshall).
Table buildTable() {
  Table t;
  for (auto& row : t) row.fill(Conversion::None);
  for (int i = 0; i < kNumScalars; ++i) t[i][i] = Conversion::Exact;
  auto relax = [](Conversion& slot, Conversion c) { if (c < slot) slot = c; };
  for (const Rule& r : kRules) {
    relax(t[int(r.from)][int(r.to)], r.forward);
    relax(t[int(r.to)][int(r.from)], r.backward);
  }
  for (int k = 0; k < kNumScalars; ++k)
    for (int i = 0; i < kNumScalars; ++i)
      for (int j = 0; j < kNumScalars; ++j)
        relax(t[i][j], std::max(t[i][k], t[k][j]));
  return t;
}

const Table& table() {
  static const Table t = buildTable();
  return t;
}

// numpy's "safe" casting between numeric scalars (np.can_cast(a, b, "safe")).
bool numpySafeCast(Scalar from, Scalar to) {
  ScalarKind fk = scalarKind(from), tk = scalarKind(to);
  int fb = scalarBits(from), tb = scalarBits(to);
  if (fk == ScalarKind::Bool) return true;
  if (tk == ScalarKind::Bool) return false;
  switch (fk) {
    case ScalarKind::Int:
      if (tk == ScalarKind::Int) {
        bool fs = scalarSigned(from), ts = scalarSigned(to);
        if (fs == ts) return tb >= fb;
        return !fs && ts && tb > fb;   // unsigned fits a wider signed
      }
      // Integers go to floats with enough mantissa (64-bit ints count as
      // fitting a float64, as numpy says).
      if (tk == ScalarKind::Float) return tb >= (fb <= 8 ? 16 : fb <= 16 ? 32 : 64);
      return tb >= 2 * (fb <= 8 ? 16 : fb <= 16 ? 32 : 64);   // complex: two floats
    case ScalarKind::Float:
      if (tk == ScalarKind::Float) return tb >= fb;
      return tk == ScalarKind::Complex && tb >= 2 * fb;
    case ScalarKind::Complex:
      return tk == ScalarKind::Complex && tb >= fb;
    case ScalarKind::Bool:
      return true;
  }
  return false;
}

}  // namespace

Conversion scalarConversion(Scalar from, Scalar to) { return table()[int(from)][int(to)]; }

Scalar numpyPromote(Scalar a, Scalar b) {
  // Candidates from small to large; ints before floats before complex, so
  // that i8 + u8 gives i16 rather than f16.
  static constexpr Scalar kOrder[] = {
      Scalar::Bool,    Scalar::UInt8,   Scalar::Int8,    Scalar::UInt16,    Scalar::Int16,
      Scalar::UInt32,  Scalar::Int32,   Scalar::UInt64,  Scalar::Int64,     Scalar::Float16,
      Scalar::Float32, Scalar::Float64, Scalar::Complex64, Scalar::Complex128};
  for (Scalar c : kOrder)
    if (numpySafeCast(a, c) && numpySafeCast(b, c)) return c;
  return Scalar::Complex128;
}

Scalar unifyScalars(Scalar a, Scalar b) {
  if (a == b) return a;
  bool a_num = scalarKind(a) != ScalarKind::Bool, b_num = scalarKind(b) != ScalarKind::Bool;
  if (a_num && b_num) return numpyPromote(a, b);
  // numba's Boolean has no unify rule: fall back on conversions (bool -> x is safe).
  if (scalarConversion(a, b) <= Conversion::Safe) return b;
  return a;
}

std::string_view conversionName(Conversion c) {
  switch (c) {
    case Conversion::Exact: return "exact";
    case Conversion::Promote: return "promote";
    case Conversion::Safe: return "safe";
    case Conversion::Unsafe: return "unsafe";
    case Conversion::None: return "none";
  }
  return "?";
}

}  // namespace cj::typeinfer
