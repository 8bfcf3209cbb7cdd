// libdevice's functions by name (ir/libdevice.def, generated from
// libdevice.10.bc by scripts/gen_libdevice.py): what cudajit.libdevice.<name>
// takes and returns, for type inference and codegen alike.
#pragma once
#include <string_view>
#include <vector>

#include "types/types.h"

namespace cj::ir {

struct LibdeviceFunction {
  std::string_view name;                // without __nv_
  bool returns_void = false;
  Scalar result = Scalar::Int32;
  std::vector<Scalar> inputs;           // passed by value
  std::vector<Scalar> outputs;          // returned through pointers, after the result
  std::vector<bool> param_is_output;    // the C parameters in order: output or input
};

// nullptr for a name libdevice does not have (or cudajit leaves out).
const LibdeviceFunction* findLibdeviceFunction(std::string_view name);
const std::vector<LibdeviceFunction>& libdeviceFunctions();

}  // namespace cj::ir
