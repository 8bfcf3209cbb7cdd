// The pass table (name -> factory) and runPasses for tools and tests.
#include <string>

#include "passes/cub_barriers.h"
#include "passes/dce.h"
#include "passes/fold.h"
#include "passes/pass.h"
#include "passes/pipeline.h"
#include "passes/range.h"
#include "passes/remove_unreachable.h"
#include "passes/simplify_params.h"
#include "passes/tile_passes.h"
#include "support/error.h"

namespace cj::passes {
namespace {

struct PassRow {
  std::string_view name;
  PassFactory make;
};

template <typename P>
std::unique_ptr<Pass> makePass() { return std::make_unique<P>(); }

// Every pass, once. Adding a pass is one row (and its place in a pipeline,
// pipeline.cpp).
constexpr PassRow kPasses[] = {
    {SimplifyParams::kName, makePass<SimplifyParams>},
    {Fold::kName, makePass<Fold>},
    {DeadCodeElimination::kName, makePass<DeadCodeElimination>},
    {RemoveUnreachable::kName, makePass<RemoveUnreachable>},
    {ValueRange::kName, makePass<ValueRange>},
    {CubBarriers::kName, makePass<CubBarriers>},
    {TileCheckSimt::kName, makePass<TileCheckSimt>},
    {TileInline::kName, makePass<TileInline>},
    {TileAssignLayouts::kName, makePass<TileAssignLayouts>},
    {TileLower::kName, makePass<TileLower>},
};

// Passes registered at run time (tests); names own their storage.
struct ExtraPass {
  std::string name;
  PassFactory make;
};
std::vector<ExtraPass>& extraPasses() {
  static std::vector<ExtraPass> extra;
  return extra;
}

}  // namespace

std::unique_ptr<Pass> createPass(std::string_view name) {
  for (const PassRow& row : kPasses)
    if (row.name == name) return row.make();
  for (const ExtraPass& row : extraPasses())
    if (row.name == name) return row.make();
  return nullptr;
}

std::string knownPassNames() {
  std::string s;
  for (const PassRow& row : kPasses) s += (s.empty() ? "" : ", ") + std::string(row.name);
  for (const ExtraPass& row : extraPasses()) s += ", " + row.name;
  return s;
}

bool registerPass(std::string_view name, PassFactory make) {
  if (createPass(name) || isPipeline(name) || name == "all") return false;
  extraPasses().push_back({std::string(name), make});
  return true;
}

void runPasses(ir::Module& m, const std::vector<std::string_view>& names, bool typed) {
  PipelineOptions options = PipelineOptions::fromEnvironment(typed);
  options.verify = true;   // a tool asked for these passes: always checked
  runPipeline(m, names, options);
}

}  // namespace cj::passes
