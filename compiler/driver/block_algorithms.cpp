#include "driver/block_algorithms.h"

#include <cstring>
#include <functional>

#include "libcalls/library_call.h"

namespace cj::driver {

bool usesBlockAlgorithms(const ir::Module& untyped, bool tiles_too) {
  auto isCooperative = [&](const std::string& sym) {
    for (const char* ns : {"cudajit.block", "cudajit.warp", "cudajit.mathdx", "cudajit.tile"}) {
      if (!tiles_too && std::strcmp(ns, "cudajit.tile") == 0) continue;
      size_t n = std::strlen(ns);
      if (sym.compare(0, n, ns) == 0 && (sym.size() == n || sym[n] == '.')) return true;
    }
    return false;
  };
  std::function<bool(const ir::Const&)> refers = [&](const ir::Const& c) {
    if (c.kind == ir::Const::Kind::Symbol) return isCooperative(c.s);
    for (const auto& e : c.elems)
      if (refers(e)) return true;
    return false;
  };
  for (const auto& fn : untyped.functions)
    for (const auto& b : fn->blocks)
      for (const auto& in : b->instrs) {
        if (in->op == ir::Op::Const && refers(in->cval)) return true;
        // typed IR given: the calls themselves
        if (libcalls::isLibraryCall(*in, libcalls::Library::Cub) ||
            libcalls::isLibraryCall(*in, libcalls::Library::Mathdx))
          return true;
      }
  return false;
}

}  // namespace cj::driver
