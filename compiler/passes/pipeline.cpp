// The pipeline table and the pass manager (pipeline.h).
#include "passes/pipeline.h"

#include <cstdio>
#include <cstdlib>
#include <memory>

#include "passes/cub_barriers.h"
#include "passes/dce.h"
#include "passes/fold.h"
#include "passes/pass.h"
#include "passes/range.h"
#include "passes/simplify_params.h"
#include "passes/tile_passes.h"
#include "support/error.h"

namespace cj::passes {
namespace {

struct PipelineRow {
  std::string_view name;
  std::vector<std::string_view> passes;
};

// One row per kind of kernel.
const std::vector<PipelineRow>& pipelines() {
  static const std::vector<PipelineRow> rows = {
      // SIMT kernels and device functions. range after the rewriting passes:
      // it proves facts about the final instructions (a later pass that
      // rewrote operands would leave them stale). cub-barriers only edits
      // the library-call descriptors of kernels (a no-op for device
      // functions compiled alone).
      {"simt",
       {SimplifyParams::kName, Fold::kName, DeadCodeElimination::kName, ValueRange::kName,
        CubBarriers::kName}},
      // Tile kernels (docs/tiles.md): helpers with tiles inlined first, dead tiles next (no layout, no
      // code), and block parameters that only forward one value (what a
      // branch decided at compile time leaves) so that the tile passes see
      // each load's uses; the tile passes leave SIMT IR, then the SIMT passes.
      {"tile",
       {TileInline::kName, DeadCodeElimination::kName, SimplifyParams::kName, TileAssignLayouts::kName, TileLower::kName, SimplifyParams::kName, Fold::kName,
        DeadCodeElimination::kName, ValueRange::kName, CubBarriers::kName}},
      // SIMT kernels with tile operations (Function::simt_block): the tile
      // pipeline after a check that every thread reaches the tile operations
      // with the same scalars.
      {"simt-tile",
       {TileInline::kName, DeadCodeElimination::kName, SimplifyParams::kName, TileCheckSimt::kName, TileAssignLayouts::kName,
        TileLower::kName, SimplifyParams::kName, Fold::kName, DeadCodeElimination::kName, ValueRange::kName,
        CubBarriers::kName}},
  };
  return rows;
}

// Another name for a pipeline (tests and tools say "default").
std::string_view canonicalPipeline(std::string_view name) {
  return name == "default" ? std::string_view("simt") : name;
}

const PipelineRow* findPipeline(std::string_view name) {
  name = canonicalPipeline(name);
  for (const PipelineRow& row : pipelines())
    if (row.name == name) return &row;
  return nullptr;
}

bool listed(const std::vector<std::string>& names, std::string_view pass) {
  for (const std::string& n : names)
    if (n == "all" || n == pass) return true;
  return false;
}

// Unset: debug builds verify, release builds do not.
bool verifyFromEnvironment() {
  const char* v = std::getenv("CUDAJIT_VERIFY_IR");
  if (v && *v) return std::string_view(v) != "0";
#ifdef NDEBUG
  return false;
#else
  return true;
#endif
}

void verifyOrThrow(const ir::Module& m, bool typed, std::string_view pass) {
  std::string error;
  if (ir::verifyModule(m, typed, &error)) return;
  if (pass.empty())
    throw CompileError("", 0, 0, "IR verifier", "invalid IR before the passes: " + error);
  throw CompileError("", 0, 0, "pass " + std::string(pass),
                     "IR invalid after pass '" + std::string(pass) + "': " + error);
}

}  // namespace

PipelineOptions PipelineOptions::fromEnvironment(bool typed) {
  PipelineOptions o;
  o.typed = typed;
  o.verify = verifyFromEnvironment();
  if (const char* p = std::getenv("CUDAJIT_PRINT_AFTER"); p && *p) {
    o.print_after = splitPassList(p);
    checkPassNames(o.print_after, "CUDAJIT_PRINT_AFTER");
  }
  return o;
}

const std::vector<std::string_view>& pipelinePasses(std::string_view pipeline) {
  if (const PipelineRow* row = findPipeline(pipeline)) return row->passes;
  throw CompileError("", 0, 0, "pipeline " + std::string(pipeline),
                     "unknown pipeline '" + std::string(pipeline) + "'",
                     "known pipelines: " + knownPipelineNames());
}

bool isPipeline(std::string_view name) { return findPipeline(name) != nullptr; }

std::string knownPipelineNames() {
  std::string s;
  for (const PipelineRow& row : pipelines()) s += (s.empty() ? "" : ", ") + std::string(row.name);
  return s + " (default = simt)";
}

std::vector<std::string_view> expandPassNames(const std::vector<std::string_view>& names) {
  std::vector<std::string_view> out;
  for (std::string_view n : names) {
    if (const PipelineRow* row = findPipeline(n)) {
      out.insert(out.end(), row->passes.begin(), row->passes.end());
    } else if (createPass(n)) {
      out.push_back(n);
    } else {
      throw CompileError("", 0, 0, "pass " + std::string(n), "unknown pass '" + std::string(n) + "'",
                         "known passes: " + knownPassNames() +
                             "; pipelines: " + knownPipelineNames());
    }
  }
  return out;
}

void checkPassNames(const std::vector<std::string>& names, std::string_view what) {
  for (const std::string& n : names)
    if (n != "all" && !createPass(n))
      throw CompileError("", 0, 0, std::string(what),
                         std::string(what) + " names an unknown pass '" + n + "'",
                         "known passes: " + knownPassNames() + " (or all)");
}

std::vector<std::string> splitPassList(std::string_view list) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= list.size()) {
    size_t end = list.find(',', start);
    if (end == std::string_view::npos) end = list.size();
    std::string_view item = list.substr(start, end - start);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (!item.empty()) out.emplace_back(item);
    start = end + 1;
  }
  return out;
}

std::vector<IrSnapshot> runPipeline(ir::Module& m, const std::vector<std::string_view>& names,
                                    const PipelineOptions& options) {
  std::vector<std::string_view> expanded = expandPassNames(names);
  std::vector<std::unique_ptr<Pass>> passes;
  for (std::string_view n : expanded) passes.push_back(createPass(n));
  // The input is checked first, so that a failure after a pass is the pass's fault.
  if (options.verify) verifyOrThrow(m, options.typed, "");
  std::vector<IrSnapshot> snapshots;
  for (auto& pass : passes) {
    pass->runOnModule(m);
    if (options.verify) verifyOrThrow(m, options.typed, pass->name());
    const bool print = listed(options.print_after, pass->name());
    const bool capture = listed(options.capture_after, pass->name());
    if (!print && !capture) continue;
    std::string text = ir::printModule(m);
    if (print) {
      std::fprintf(stderr, "; *** IR after pass '%s' ***\n%s", std::string(pass->name()).c_str(),
                   text.c_str());
      std::fflush(stderr);
    }
    if (capture) snapshots.push_back({std::string(pass->name()), std::move(text)});
  }
  return snapshots;
}

}  // namespace cj::passes
