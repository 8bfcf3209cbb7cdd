// The passes of the "tile" pipeline (docs/tiles.md, "The tile pipeline"):
//
//   tile-inline           device functions with tiles inlined into their callers
//   tile-check-simt       SIMT kernels with tiles (Function::simt_block): every
//                         tile operation is reached by every thread of the
//                         block and takes the same scalars in all of them
//                         (uniformity.h); a CompileError otherwise
//   tile-assign-layouts   picks the function's warp count (Function::num_warps,
//                         unless the kernel set one) and gives every tile
//                         value a blocked layout in its type
//   tile-lower            rewrites every tile value into per-thread scalar
//                         fragments and every tile operation into SIMT IR
//                         (global vector loads and stores, warp shuffles,
//                         shared memory, barriers); no tile type remains
#pragma once
#include <string>
#include <string_view>

#include "passes/pass.h"

namespace cj::passes {

// tile-inline (tile_inline.cpp): device functions with tiles inlined into
// their callers (a tile has no calling convention).
class TileInline : public Pass {
 public:
  static constexpr std::string_view kName = "tile-inline";
  std::string_view name() const override { return kName; }
  bool run(ir::Function&) override { return false; }   // works on the module
  bool runOnModule(ir::Module& m) override;
};

class TileAssignLayouts : public Pass {
 public:
  static constexpr std::string_view kName = "tile-assign-layouts";
  std::string_view name() const override { return kName; }
  bool run(ir::Function& fn) override;
};

class TileCheckSimt : public Pass {
 public:
  static constexpr std::string_view kName = "tile-check-simt";
  std::string_view name() const override { return kName; }
  bool run(ir::Function& fn) override;   // callees are taken as varying
  bool runOnModule(ir::Module& m) override;
};

class TileLower : public Pass {
 public:
  static constexpr std::string_view kName = "tile-lower";
  std::string_view name() const override { return kName; }
  bool run(ir::Function& fn) override;
};

// Whether an instruction is a tile operation: it makes or takes a tile.
bool isTileOp(const ir::Instr& in);
// cuTile's spelling of a tile operation for messages ("ct.load"), or the operator.
std::string tileOpName(const ir::Instr& in);

// The layout every tile of `shape` gets in a function of `num_warps` warps.
const TileLayout* tileLayoutFor(const std::vector<int64_t>& shape, int num_warps);

}  // namespace cj::passes
