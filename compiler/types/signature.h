// numba's spelling of types and signatures, parsed: what @jit("void(float32,
// float32[:])"), compile_ptx and the typing of numba type names read.
//   parseNumbaType("float32[:, ::1]")            -> array(f32, 2d, C)
//   parseSignature("void(float32, float32[:])")   -> {none, {f32, array(f32, 1d, A)}}
//
// Types: scalar names (float32, int64, uint8, boolean, bool_, complex128, intp,
// and the short forms f4, i8, u4, c16, f32, i64, b1), arrays `T[:]` (A),
// `T[::1]` (C), `T[:, ::1]` (C), `T[::1, :]` (F), `T[:, :]` (A), tuples
// `UniTuple(T, n)` and `Tuple(T, U, ...)`, `void` / `none`, and the IR text
// form ("array(f32, 2d, C)", "tuple(i64, f32)").
//
// It lives with the types (below type inference) because both the typing
// stage and the launch path (runtime/) read signatures.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "types/types.h"

namespace cj {

struct ParsedSignature {
  const Type* return_type = nullptr;   // nullptr when the text gives only "(args)"
  std::vector<const Type*> args;
};

// Throw CompileError (construct "signature") on text they cannot read.
const Type* parseNumbaType(std::string_view text);
ParsedSignature parseSignature(std::string_view text);

// "(float32, float32[::1])": the spelling of an argument list in messages.
std::string numbaArgsString(const std::vector<const Type*>& args);
// A parsed signature back in numba's spelling: "float32(float32, int64)", or
// "(float32, int64)" without a return type.
std::string signatureToString(const ParsedSignature& sig);

}  // namespace cj
