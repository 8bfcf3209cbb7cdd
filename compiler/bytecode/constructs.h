// Rejects whole-function constructs before decoding starts, so the error
// names the construct the user wrote ("try/except", "lambda") rather than
// the first odd opcode it compiled to.
#pragma once
#include "bytecode/code_reader.h"

namespace cj::bytecode {

// Throws CompileError for generators, *args / **kwargs, nested functions,
// lambdas, comprehensions, with, try/except and closures made inside the
// function.
void rejectUnsupportedConstructs(const CodeInfo& code);

}  // namespace cj::bytecode
