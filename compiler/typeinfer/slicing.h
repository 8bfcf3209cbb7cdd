// Basic slicing of arrays, as numba types it: x[1:], x[a:b], x[::2],
// x[i, :], x[i] on a 2-d array (a row view). A slice object is a tuple
// (sym slice:2 | slice:3, start, stop[, step]) whose bounds are integers or
// none; indexing an array with slices (or with fewer integers than it has
// dimensions) gives an `array_view` of the same memory. Steps must be
// constants (their sign decides the bounds arithmetic).
#pragma once
#include "typeinfer/context.h"

namespace cj::typeinfer {

// True for the type of a slice object (start:stop[:step]).
bool isSlice(const Type* t);
// True for the type of `:` (a slice whose start, stop and step are None).
bool isFullSlice(const Type* t);

// True if indexing an array with an index of type `idx` makes a view.
bool isViewIndex(const Type* arr, const Type* idx);
// The view's type (numba's layout rule); fails on unsupported indices.
const Type* sliceViewType(const FunctionContext& ctx, ir::Instr* in, const Type* arr, const Type* idx);
ir::Instr* lowerSliceView(const FunctionContext& ctx, ir::Instr* in, Emitter& e);

}  // namespace cj::typeinfer
