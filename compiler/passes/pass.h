// Passes over typed IR: each a small class with a name and run(Function&)
// (or runOnModule for a pass that must see every function at once). The
// pass manager (pipeline.h) runs them by name, from a named pipeline per
// kind of kernel, with the verifier after every pass when asked.
#pragma once
#include <memory>
#include <string_view>
#include <vector>

#include "ir/ir.h"

namespace cj::passes {

class Pass {
 public:
  virtual ~Pass() = default;
  virtual std::string_view name() const = 0;
  // Returns true if it changed the function.
  virtual bool run(ir::Function& fn) = 0;
  // The whole module: every function in turn, unless the pass needs to see
  // them together (cub-barriers: the users of the storage in all of them).
  virtual bool runOnModule(ir::Module& m) {
    bool changed = false;
    for (auto& fn : m.functions) changed = run(*fn) || changed;
    return changed;
  }
};

// Passes by name (pass_registry.cpp): "simplify-params" (drop block
// parameters that receive one value on every edge), "fold" (constant
// folding), "dce" (dead code), "remove-unreachable", "range" (integer
// ranges: proves the facts codegen uses, see range.h), "cub-barriers"
// (cub_barriers.h). Null for an unknown name.
std::unique_ptr<Pass> createPass(std::string_view name);
// Every registered pass name, comma-separated (for messages).
std::string knownPassNames();
// Adds a pass at run time, for tests (a deliberately broken pass shows that
// the verifier names it); false if the name is taken. Not thread-safe:
// register before compiling.
using PassFactory = std::unique_ptr<Pass> (*)();
bool registerPass(std::string_view name, PassFactory make);

// Runs the named passes (or pipelines: "simt", "default") over the module,
// verifying the input and the IR after every pass whatever the environment
// says (typed or untyped per `typed`); throws CompileError on an unknown
// name or a verifier failure, naming the pass. For tools and tests; the
// compile driver calls runPipeline (pipeline.h).
void runPasses(ir::Module& m, const std::vector<std::string_view>& names, bool typed);

}  // namespace cj::passes
