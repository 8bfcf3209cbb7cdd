// cuda.const.array_like(arr): numba.cuda's constant-memory arrays. The
// argument must be a global numpy array, which the decoder has already
// frozen into a constant array (ir::Const::Kind::Array, typed
// array(dtype, nd, C, const, readonly)); the call gives that array back.
// Plain reads of a global numpy array work the same way without the call.
#include "typeinfer/rules.h"

namespace cj::typeinfer::rules {
namespace {

const Type* arrayLikeType(const Site& s) {
  s.expectArgs(1);
  const Type* t = s.argType(0);
  if (!t->is(TypeKind::Array) || t->space != MemSpace::Const)
    s.fail("cuda.const.array_like() needs a global numpy array, got " + typeToString(t),
           "define the array at module level (numba copies it into constant memory at compile time)");
  return t;
}

ir::Instr* arrayLikeLower(const Site& s, Emitter&) { return s.args[0]; }

}  // namespace

const Rule constArrayLike{arrayLikeType, arrayLikeLower};

}  // namespace cj::typeinfer::rules
