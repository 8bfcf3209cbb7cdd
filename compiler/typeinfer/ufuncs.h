// numpy ufuncs on scalars (np.sqrt(x), np.maximum(a, b), ...): the loop table
// of ufunc_loops.def and numba-cuda's loop choice (numpy_support.py
// ufunc_find_matching_loop): the first loop, in numpy's order, that every
// argument casts to safely (any integer casts to a float/complex loop when
// the arguments mix integers and floats).
#pragma once
#include <optional>
#include <string_view>
#include <vector>

#include "types/types.h"

namespace cj::typeinfer {

struct UfuncLoop {
  std::vector<Scalar> ins;
  std::vector<Scalar> outs;
  bool supported = true;   // numba has a lowering for it (else choosing it is an error)
  std::string text;        // "ff:f", for messages
};

struct Ufunc {
  std::string_view name;   // numpy's name: "sqrt", "absolute"
  int nin = 0;
  int nout = 0;
  std::vector<UfuncLoop> loops;
};

const Ufunc* findUfunc(std::string_view name);

// numpy's can_cast(from, to, "safe") on numba scalars (float16 included).
bool safeCast(Scalar from, Scalar to);

// The loop numba chooses for these argument types; nullptr when none matches.
const UfuncLoop* chooseLoop(const Ufunc& u, const std::vector<Scalar>& args);

}  // namespace cj::typeinfer
