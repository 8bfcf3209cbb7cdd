// tile-check-simt (tile_passes.h): tile operations in a SIMT kernel are
// block-collective. A thread that skips one leaves the others waiting at its
// barriers (a hang) or reading shared memory nobody wrote; a scalar that
// differs between threads has no meaning as one tile's value. Both are
// refused here, at the operation's line, with where the variation comes from.
#include <string>

#include "ir/intrinsics.h"
#include "passes/tile_passes.h"
#include "passes/uniformity.h"
#include "support/error.h"

namespace cj::passes {

std::string tileOpName(const ir::Instr& in) {
  if (in.op != ir::Op::Intrinsic) return "tile " + std::string(ir::opName(in.op));
  std::string name = in.intrinsicName();
  return name.rfind("tile.", 0) == 0 ? "ct." + name.substr(5) : name;
}

namespace {

std::string lineOf(const ir::Instr* in) { return in ? " at line " + std::to_string(in->loc.line) : ""; }

// Where a value's variation comes from, in the kernel's words.
std::string describeOrigin(const ir::Instr* origin) {
  if (!origin) return "the thread";
  if (origin->op == ir::Op::CondBr) return "a value that depends on the path taken at the branch" + lineOf(origin);
  if (origin->op == ir::Op::CallFunc) return "a device function's result that depends on the thread" + lineOf(origin);
  if (origin->op == ir::Op::ArrayLoad) return "a local (per-thread) array read" + lineOf(origin);
  if (origin->op == ir::Op::Intrinsic) {
    if (const char* source = threadIndexSource(origin->intrinsic)) return source + lineOf(origin);
    switch (ir::intrinsicFamily(origin->intrinsic)) {
      case ir::IntrinsicFamily::Atomic: return "an atomic's old value" + lineOf(origin);
      case ir::IntrinsicFamily::Cub:
        return "a block algorithm's result (valid in thread 0 only)" + lineOf(origin);
      default: return origin->intrinsicName() + lineOf(origin);
    }
  }
  return std::string(ir::opName(origin->op)) + lineOf(origin);
}

const char* memSpaceWord(MemSpace s) {
  switch (s) {
    case MemSpace::Shared: return "shared array (cuda.shared.array)";
    case MemSpace::Local: return "local array (cuda.local.array)";
    case MemSpace::Const: return "constant array (cuda.const.array_like)";
    default: return "global array";
  }
}

[[noreturn]] void fail(const ir::Function& fn, const ir::Instr& at, const std::string& msg) {
  throw CompileError(fn.filename, at.loc.line, at.loc.col, tileOpName(at), msg);
}

bool check(const ir::Function& fn, const ir::Module* module) {
  if (!fn.simt_block[0]) return false;
  bool any = false;
  for (const auto& b : fn.blocks)
    for (const auto& in : b->instrs) any = any || isTileOp(*in);
  if (!any) return false;
  const Uniformity u = analyzeUniformity(fn, module);
  for (const auto& b : fn.blocks)
    for (const auto& in : b->instrs) {
      if (!isTileOp(*in)) continue;
      if (const ir::Instr* branch = u.divergentBranch(b.get()))
        fail(fn, *in,
             tileOpName(*in) + " is in code that not every thread of the block reaches: the branch" +
                 lineOf(branch) + " depends on " +
                 describeOrigin(branch->operands.empty() ? nullptr : u.varyingOrigin(branch->operands[0])) +
                 ". Tile operations in a SIMT kernel are block-collective: every thread must reach "
                 "them (docs/tiles.md, \"Tiles inside SIMT kernels\")");
      for (size_t k = 0; k < in->operands.size(); ++k) {
        const ir::Instr* o = in->operands[k];
        if (o->type->isTile()) continue;
        if (o->type->is(TypeKind::Array) && o->type->space != MemSpace::Global)
          fail(fn, *in,
               tileOpName(*in) + " works on arrays in global memory (kernel arguments and their views); "
                   "this one is a " + memSpaceWord(o->type->space) +
                   ", which tile operations do not read or write yet");
        if (const ir::Instr* origin = u.varyingOrigin(o))
          fail(fn, *in,
               "scalar operand " + std::to_string(k + 1) + " of " + tileOpName(*in) +
                   " differs between the threads of the block (it depends on " + describeOrigin(origin) +
                   "); a tile is one value of the whole block, so the scalars it is made from must "
                   "be the same in every thread");
      }
    }
  return false;
}

}  // namespace

bool TileCheckSimt::run(ir::Function& fn) { return check(fn, nullptr); }

bool TileCheckSimt::runOnModule(ir::Module& m) {
  for (const auto& fn : m.functions) check(*fn, &m);
  return false;
}

}  // namespace cj::passes
