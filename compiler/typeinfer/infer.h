// Stage 2: untyped IR + argument types -> typed IR.
//
// Propagates types to a fixpoint over the CFG (block parameters unify their
// incoming types with numba's rules), resolves Python-level operations
// (getattr, call, getitem, setitem, getiter) against the symbol and intrinsic
// tables, inserts casts so that every typed operation sees the operand types
// it requires, and specialises each called device function on its argument
// types. The result verifies with ir::verifyModule(m, /*typed=*/true).
#pragma once
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ir/ir.h"

namespace cj::typeinfer {

struct InferOptions {
  // Launch block shape for block-level algorithms (0 = not specialised).
  int block_dims[3] = {0, 0, 0};
  // compute_XX the CUB instantiations of block algorithms are built for
  // (part of each `intrinsic cub` spec; the driver passes the target's).
  int arch = 90;
  // A device function compiled alone with a signature's return type: its
  // results are converted to it (numba's compile_ptx(f, "int32(int32)")).
  const Type* entry_return = nullptr;
};

// `untyped.functions[0]` is the kernel (or device function) to type with
// `arg_types` (one per Python argument). Returns a new typed module:
// functions[0] is the specialised entry (it keeps its name), then every
// specialised callee it reaches, in first-call order, named
// "<untyped IR name>__<mangled arg types>" (mangle.h: "scale__f32_a1f32C").
// The input is not modified. Throws CompileError with the source location
// for unsupported constructs and type conflicts ("variable 'acc' is f64 on
// one path and array(f32, 1d, C) on another"); kernels (is_kernel) must
// return none.
//
// What the typed IR guarantees beyond the contract in docs/internals.md
// ("Contract: typed IR"):
//   - constants are scalars, none, str or sym: constant tuples become `tuple`
//     of scalar constants; Python ints are i64, floats f64.
//   - arithmetic computes in numba's result type (operands cast to it);
//     comparisons cast both operands to numba's chosen case type (i32 < u32
//     compares in i64, i64 < u64 in f64); float ** int keeps the integer
//     exponent (numba's case type: i32, i64 or u64).
//   - `not x` is `not (truth x)`; `x is None` is folded to a b1 constant.
//   - a local unassigned on some path reaches a block parameter as an
//     `undef` of the parameter's type; never-assigned parameters are removed.
//   - a call of a device function returning nothing is `call_func` of type none.
//   - pure values nothing uses are removed (the operands of rewritten calls).
//   - math intrinsics get f32/f64 operands of the result type (f16 computed
//     in f32 and cast back); min/max are compare + select, abs of ints is
//     compare + neg + select, of floats math.fabs.
std::unique_ptr<ir::Module> inferTypes(const ir::Module& untyped,
                                       const std::vector<const Type*>& arg_types,
                                       const InferOptions& options = {});

// numba's result type of a binary arithmetic op on two scalar types
// (e.g. i32 + i32 -> i64, i64 + u64 -> f64, i64 / i64 -> f64). Exposed for tests.
const Type* binaryResultType(ir::Op op, const Type* a, const Type* b);

// numba.cuda's vector types kernels may construct (cudajit.float32x4, the
// alias cudajit.float4, ...): (name, canonical <base>x<N> name), from
// vector_types.def, for the Python package's device-only stubs.
std::vector<std::pair<std::string, std::string>> vectorTypeNames();

// The functions of cudajit.fp16 and cudajit.bf16 (half_functions.def).
std::vector<std::string> halfFunctionNames();

}  // namespace cj::typeinfer
