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
#include <vector>

#include "ir/ir.h"

namespace cj::typeinfer {

struct InferOptions {
  // Launch block shape for block-level algorithms (0 = not specialised).
  int block_dims[3] = {0, 0, 0};
};

// `untyped.functions[0]` is the kernel (or device function) to type with
// `arg_types` (one per Python argument). Returns a new typed module:
// functions[0] is the specialised entry, then every specialised callee
// (named "<py_name>__<mangled arg types>"). Throws CompileError with the
// source location for unsupported constructs and type conflicts
// ("variable 'acc' is f64 on one path and array(f32, 1d, C) on another").
std::unique_ptr<ir::Module> inferTypes(const ir::Module& untyped,
                                       const std::vector<const Type*>& arg_types,
                                       const InferOptions& options = {});

// numba's result type of a binary arithmetic op on two scalar types
// (e.g. i32 + i32 -> i64, i64 + u64 -> f64, i64 / i64 -> f64). Exposed for tests.
const Type* binaryResultType(ir::Op op, const Type* a, const Type* b);

}  // namespace cj::typeinfer
