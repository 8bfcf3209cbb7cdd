// Passes over typed IR: each a small class with a name and run(Function&).
// The pipeline runs the verifier after every pass (see runPasses).
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
};

// Passes by name: "simplify-params" (drop block parameters that receive one
// value on every edge), "fold" (constant folding), "dce" (dead code),
// "range" (integer ranges: proves the facts codegen uses, see range.h).
std::unique_ptr<Pass> createPass(std::string_view name);
// The default optimisation pipeline for typed IR.
std::vector<std::string_view> defaultPipeline();
// Runs the named passes over every function, verifying after each (typed or
// untyped per `typed`); throws CompileError on a verifier failure, naming the pass.
void runPasses(ir::Module& m, const std::vector<std::string_view>& names, bool typed);

}  // namespace cj::passes
