// cudajit.block.* / cudajit.warp.*: cooperative algorithms from CUB.
//
// Each call becomes one library call (makeLibraryCall, library_calls.h):
// `intrinsic cub "<spec>"` (ir/intrinsics.def) whose
// string attribute is the CUB spec in its text form (cub/spec.h): the
// algorithm, the item type, the op, the launch block shape the kernel is
// specialised on (InferOptions::block_dims), the items per thread and the
// arrangement. rules_cub.cpp types and lowers the calls; finishCubCalls,
// run once a function is lowered, reads the items per thread from the local
// arrays passed in (and the bins of a histogram from its shared array) and
// normalises each spec, so that anything CUB would reject is a CompileError
// at the call.
//
// A user op (cuda.block.reduce(x, my_op) with a @cuda.jit(device=True)
// function, or operator.mul & co) becomes a typed function
// `<c name>__impl(T, T) -> T` added to the module (Specializer support
// functions); codegen defines the C-ABI symbol `<c name>` the CUB
// instantiation calls, so the op inlines into CUB's loop at link time.
#pragma once
#include <string>

#include "typeinfer/context.h"

namespace cj::typeinfer {

// Completes and checks the spec of every `intrinsic cub` in the function.
void finishCubCalls(const FunctionContext& ctx);

// The typed function behind the C symbol a spec's user op names.
std::string cubOperatorImplName(const std::string& c_name);

}  // namespace cj::typeinfer
