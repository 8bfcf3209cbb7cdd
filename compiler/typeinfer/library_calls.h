// Type inference's side of library calls (libcalls/library_call.h): the one
// helper that records a typed call and its descriptor in the IR. Every
// library's typing rules (rules_cub.cpp today) create their calls here.
#pragma once
#include <string>
#include <vector>

#include "libcalls/library_call.h"
#include "typeinfer/context.h"

namespace cj::typeinfer {

// Appends `intrinsic <library> "<descriptor>"` of result type `type` taking
// `operands`; `construct` (the Python name, "cudajit.block.sum") is kept for
// messages of the later stages.
ir::Instr* makeLibraryCall(Emitter& e, libcalls::Library library, std::string descriptor,
                           const Type* type, std::vector<ir::Instr*> operands,
                           std::string construct);

}  // namespace cj::typeinfer
