// Default argument values of a Python function (__defaults__ and
// __kwdefaults__) that freeze to constants. The decoder emits each as a
// `const` in the entry block named "default:<parameter>"; type inference
// passes it for a device-function parameter a call leaves out.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "bytecode/code_reader.h"
#include "ir/ir.h"

namespace cj::bytecode {

inline constexpr const char* kDefaultPrefix = "default:";

std::vector<std::pair<std::string, ir::Const>> readDefaults(const CodeInfo& code);

}  // namespace cj::bytecode
