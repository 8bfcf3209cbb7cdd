// The pass table, the default pipeline and the verified pass runner.
#include <functional>
#include <string>

#include "passes/dce.h"
#include "passes/fold.h"
#include "passes/pass.h"
#include "passes/range.h"
#include "passes/remove_unreachable.h"
#include "passes/simplify_params.h"
#include "support/error.h"

namespace cj::passes {
namespace {

struct PassRow {
  std::string_view name;
  std::unique_ptr<Pass> (*make)();
};

template <typename P>
std::unique_ptr<Pass> makePass() { return std::make_unique<P>(); }

// Every pass, once. Adding a pass is one row.
constexpr PassRow kPasses[] = {
    {SimplifyParams::kName, makePass<SimplifyParams>},
    {Fold::kName, makePass<Fold>},
    {DeadCodeElimination::kName, makePass<DeadCodeElimination>},
    {RemoveUnreachable::kName, makePass<RemoveUnreachable>},
    {ValueRange::kName, makePass<ValueRange>},
};

std::string knownPasses() {
  std::string s;
  for (const PassRow& row : kPasses) s += (s.empty() ? "" : ", ") + std::string(row.name);
  return s;
}

}  // namespace

std::unique_ptr<Pass> createPass(std::string_view name) {
  for (const PassRow& row : kPasses)
    if (row.name == name) return row.make();
  return nullptr;
}

std::vector<std::string_view> defaultPipeline() {
  // range last: it proves facts about the final instructions (a later pass
  // that rewrote operands would leave them stale).
  return {SimplifyParams::kName, Fold::kName, DeadCodeElimination::kName, ValueRange::kName};
}

void runPasses(ir::Module& m, const std::vector<std::string_view>& names, bool typed) {
  // "default" stands for the default pipeline (handy for tests and tools).
  std::vector<std::string_view> expanded;
  for (std::string_view n : names) {
    if (n == "default") {
      for (std::string_view d : defaultPipeline()) expanded.push_back(d);
    } else {
      expanded.push_back(n);
    }
  }
  std::vector<std::unique_ptr<Pass>> passes;
  for (std::string_view n : expanded) {
    passes.push_back(createPass(n));
    if (!passes.back())
      throw CompileError("", 0, 0, "pass " + std::string(n),
                         "unknown pass '" + std::string(n) + "'", "known passes: " + knownPasses());
  }
  // The input is checked first, so that a failure after a pass is the pass's fault.
  std::string error;
  if (!ir::verifyModule(m, typed, &error))
    throw CompileError("", 0, 0, "IR verifier", "invalid IR before the passes: " + error);
  for (auto& pass : passes) {
    for (auto& fn : m.functions) pass->run(*fn);
    if (!ir::verifyModule(m, typed, &error))
      throw CompileError("", 0, 0, "pass " + std::string(pass->name()),
                         "IR invalid after pass '" + std::string(pass->name()) + "': " + error);
  }
}

}  // namespace cj::passes
