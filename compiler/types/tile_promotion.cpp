// cuTile's implicit promotion of two tile dtypes (docs/tiles.md, "Promotion").
//
// Not numba's rules (typeinfer/operators.cpp): in cuTile the higher category
// wins outright (int64 + float16 -> float16), integers of mixed signedness do
// not promote at all, and nothing widens past the wider operand. cuTile states
// them as a table; the three rules below reproduce it for the dtypes our
// scalar table has (tests/test_tile_api.py checks every pair against the table).
#include "types/tile_promotion.h"

namespace cj {
namespace {

// bool < integer < float; complex is not a tile dtype.
int category(Scalar s) {
  switch (scalarKind(s)) {
    case ScalarKind::Bool: return 0;
    case ScalarKind::Int: return 1;
    case ScalarKind::Float: return 2;
    case ScalarKind::Complex: return -1;
  }
  return -1;
}

}  // namespace

bool promoteTileDtypes(Scalar a, Scalar b, Scalar* out, std::string* why) {
  auto fail = [&](std::string text) {
    if (why) *why = std::move(text);
    return false;
  };
  for (Scalar s : {a, b})
    if (std::string e = tileDtypeError(s); !e.empty()) return fail(e);
  if (a == b) {
    *out = a;
    return true;
  }
  // tfloat32 only meets itself (it feeds ct.mma); float16 and bfloat16 do not
  // mix (cuTile's table says ERR for both).
  if (a == Scalar::TFloat32 || b == Scalar::TFloat32)
    return fail("implicit promotion of " + std::string(scalarNumbaName(a)) + " and " + std::string(scalarNumbaName(b)) +
                " is not supported (tfloat32 is a restricted dtype): use astype");
  if (scalarKind(a) == ScalarKind::Float && scalarKind(b) == ScalarKind::Float && scalarBits(a) == scalarBits(b))
    return fail("implicit promotion of " + std::string(scalarNumbaName(a)) + " and " + std::string(scalarNumbaName(b)) +
                " is not supported: use astype");
  int ca = category(a), cb = category(b);
  if (ca != cb) {   // 1. the higher category's dtype, whatever the widths
    *out = ca > cb ? a : b;
    return true;
  }
  // 2. integers of different signedness need an explicit astype.
  if (ca == 1 && scalarSigned(a) != scalarSigned(b))
    return fail("implicit promotion of " + std::string(scalarNumbaName(a)) + " and " +
                std::string(scalarNumbaName(b)) + " is not supported (signed with unsigned): use astype");
  // 3. same category and signedness: the wider one.
  *out = scalarBits(a) >= scalarBits(b) ? a : b;
  return true;
}

}  // namespace cj
