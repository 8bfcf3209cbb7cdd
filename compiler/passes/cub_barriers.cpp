// The cub-barriers pass (cub_barriers.h).
#include "passes/cub_barriers.h"


#include "cub/spec.h"
#include "ir/cfg.h"
#include "libcalls/library_call.h"

namespace cj::passes {
namespace {

using libcalls::Library;

// The normalized spec of a call of a block algorithm that uses the block's
// shared storage; false for other instructions.
bool storageUser(const ir::Instr& in, cub::Spec* spec) {
  if (!libcalls::isLibraryCall(in, Library::Cub)) return false;
  cub::Spec s;
  std::string error;
  if (!cub::parseSpec(in.cval.s, &s, &error) || !cub::tryNormalize(s, &s, &error)) return false;
  if (!cub::usesBlockTempStorage(s)) return false;
  if (spec) *spec = s;
  return true;
}

bool anyStorageUser(const ir::Block& b, size_t from, size_t to) {
  for (size_t k = from; k < to && k < b.instrs.size(); ++k)
    if (storageUser(*b.instrs[k], nullptr)) return true;
  return false;
}

// May another call that uses the storage (or the same one, in a loop) run
// after instruction `at` of block `b`?
bool storageUsedAfter(const ir::Cfg& cfg, const ir::Block* b, size_t at) {
  if (anyStorageUser(*b, at + 1, b->instrs.size())) return true;
  std::vector<char> after = ir::reachableAfter(cfg.graph(), cfg.node(b));
  for (int n = 0; n < cfg.size(); ++n)   // b itself when it is on a cycle: a loop
    if (after[n] && anyStorageUser(*cfg.block(n), 0, cfg.block(n)->instrs.size())) return true;
  return false;
}

bool dropBarriers(ir::Function& kernel) {
  // Decide for every call first (the specs change below).
  std::vector<std::pair<ir::Instr*, cub::Spec>> last;
  const ir::Cfg cfg(kernel);
  for (auto& b : kernel.blocks)
    for (size_t k = 0; k < b->instrs.size(); ++k) {
      cub::Spec spec;
      if (!storageUser(*b->instrs[k], &spec) || !spec.sync) continue;
      if (spec.algorithm == cub::Algorithm::BlockHistogram) continue;
      if (!storageUsedAfter(cfg, b.get(), k)) last.push_back({b->instrs[k].get(), spec});
    }
  for (auto& [in, spec] : last) {
    spec.sync = false;
    libcalls::setDescriptor(*in, cub::toString(spec));
  }
  return !last.empty();
}

}  // namespace

bool CubBarriers::run(ir::Function& fn) {
  return fn.is_kernel && dropBarriers(fn);
}

bool CubBarriers::runOnModule(ir::Module& m) {
  ir::Function* kernel = nullptr;
  for (auto& fn : m.functions)
    if (fn->is_kernel && !kernel) kernel = fn.get();
  if (!kernel) return false;
  // Device functions may run any number of times from anywhere: only when
  // every user of the storage is in the kernel itself.
  for (auto& fn : m.functions) {
    if (fn.get() == kernel) continue;
    for (auto& b : fn->blocks)
      if (anyStorageUser(*b, 0, b->instrs.size())) return false;
  }
  return dropBarriers(*kernel);
}

}  // namespace cj::passes
