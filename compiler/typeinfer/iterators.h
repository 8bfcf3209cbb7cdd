// Iteration beyond range(): `for x in tuple` (homogeneous, or elements that
// unify to one scalar type), enumerate(it[, start]) and zip(a, b, ...).
//
// Typed IR has no iterator type besides rangeiter(T), so the other iterators
// are tuples whose first element is a marker symbol (no machine value):
//   tuple iterator      (sym iter:tuple, rangeiter(i64) index, the tuple)
//   enumerate iterator  (sym iter:enumerate, rangeiter(i64) counter, inner iterator)
//   zip iterator        (sym iter:zip, iterator of each argument...)
// `iter_valid` / `iter_next` on them lower to the same ops on the range
// iterators inside (plus a select chain picking the tuple element), so codegen
// only ever sees range iterators.
#pragma once
#include "typeinfer/context.h"

namespace cj::typeinfer {

inline constexpr const char* kEnumerateObject = "iter:enumerate_obj";   // enumerate(...) value
inline constexpr const char* kZipObject = "iter:zip_obj";               // zip(...) value

// The iterator type `getiter` of a value of type `t` gives (fails if none).
const Type* iteratorType(const FunctionContext& ctx, const ir::Instr* at, const Type* t);
// The type `iter_next` gives on an iterator of type `it`.
const Type* iteratorItemType(const FunctionContext& ctx, const ir::Instr* at, const Type* it);
// getiter / iter_valid / iter_next for the type fixpoint (operands typed).
const Type* iterationOpType(const FunctionContext& ctx, ir::Instr* in);
// Rewrites getiter / iter_valid / iter_next; returns `in` itself for ranges.
ir::Instr* lowerIterationOp(const FunctionContext& ctx, ir::Instr* in, Emitter& e);

}  // namespace cj::typeinfer
