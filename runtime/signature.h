// Signatures for @jit("void(float32, float32[:])") and compile_ptx, in
// numba's spelling. Parsing is the typing stage's (typeinfer/signature.h);
// this adapter gives the runtime its vocabulary and the message spelling.
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

// "void(float32, float32[:])", "(float32, int32)"; CompileError when unreadable.
ParsedSignature parseSignature(std::string_view text);
// One type: "float32[:, ::1]", "UniTuple(int64, 2)", "array(float32, 1d, A)".
const Type* parseNumbaType(std::string_view text);

// "(float32, float32[::1])": the spelling of an argument list in messages.
std::string numbaArgsString(const std::vector<const Type*>& args);

}  // namespace cj::rt
