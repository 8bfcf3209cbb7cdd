// numba's scalar conversion lattice and numpy's type promotion: the facts
// that overload resolution (templates.h) and unification (unify.h) rest on.
#pragma once
#include "types/types.h"

namespace cj::typeinfer {

// Ordered from strict to loose, as numba's typeconv.Conversion.
enum class Conversion : uint8_t { Exact = 1, Promote = 2, Safe = 3, Unsafe = 4, None = 99 };

// How a value of scalar `from` converts to scalar `to` (numba's
// TypingContext.can_convert on scalars). None: not at all (complex -> real).
Conversion scalarConversion(Scalar from, Scalar to);

// numpy.promote_types(a, b) on numeric (non-bool) scalars: the smallest type
// both cast to safely (i8 + u8 -> i16, i64 + u64 -> f64, i32 + f32 -> f64).
Scalar numpyPromote(Scalar a, Scalar b);

// numba's unify_pairs on scalars (block parameters, min/max): numbers unify
// by numpy promotion; bool unifies with any scalar by conversion (-> the other).
Scalar unifyScalars(Scalar a, Scalar b);

std::string_view conversionName(Conversion c);   // "exact", "promote", ...

}  // namespace cj::typeinfer
