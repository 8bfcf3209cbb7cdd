// The library-call stage, after the passes and before codegen: the calls a
// typed module makes, resolved by their providers into entry symbols,
// C-ABI signatures, temp storage sizes and LTO-IR modules. Codegen reads the
// ResolvedCalls table; the link joins the modules (library_call.h has the
// whole picture).
#pragma once
#include <vector>

#include "ir/ir.h"
#include "libcalls/library_call.h"

namespace cj::libcalls {

// Every distinct library call of the module, in order of appearance.
std::vector<LibraryCall> collect(const ir::Module& typed);

// Resolves the calls, each library's at once through its provider (which
// compiles them in parallel); rethrows the first failure.
ResolvedCalls resolve(const std::vector<LibraryCall>& calls);

}  // namespace cj::libcalls
