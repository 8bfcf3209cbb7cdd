#include "typeinfer/library_calls.h"

namespace cj::typeinfer {

ir::Instr* makeLibraryCall(Emitter& e, libcalls::Library library, std::string descriptor,
                           const Type* type, std::vector<ir::Instr*> operands,
                           std::string construct) {
  ir::Instr* call = e.intrinsic(libcalls::libraryIntrinsic(library), type, std::move(operands));
  libcalls::setDescriptor(*call, std::move(descriptor));
  call->names = {std::move(construct)};
  return call;
}

}  // namespace cj::typeinfer
