// numba's signature spelling -> cudajit types, for @jit("void(float32, float32[:])")
// and compile_ptx(f, "float32(float32)").
//
//   scalars   float32, f4, int64, i8 (numba: 8 bytes), uint32, u4, bool, b1, intp, ...
//   arrays    float32[:] (any layout), float32[::1] (C), float32[:, ::1] (C),
//             float32[::1, :] (F), array(float32, 2d, C) (numba's str() of a type)
//   tuples    UniTuple(int64, 2), Tuple(int64, float32)
//   return    void / none, or a type (device functions)
// Errors are CompileError with construct "signature" and the offending text.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "types/types.h"

namespace cj::rt {

struct ParsedSignature {
  const Type* return_type = nullptr;   // nullptr when the text gives only "(args)"
  std::vector<const Type*> args;
};

// "void(float32, float32[:])", "(float32, int32)".
ParsedSignature parseSignature(std::string_view text);
// One type: "float32[:, ::1]", "UniTuple(int64, 2)", "array(float32, 1d, A)".
const Type* parseNumbaType(std::string_view text);

// "(float32, float32[::1])": the spelling of an argument list in messages and keys.
std::string numbaArgsString(const std::vector<const Type*>& args);

}  // namespace cj::rt
