// Removes block parameters that receive one value on every edge (or the
// parameter itself, around a loop): uses of the parameter become that value.
// Iterates to a fixpoint, since removing one parameter can make another
// trivial. Works on untyped IR too: the decoder gives each block a parameter
// per live local, and most of them are trivial.
#pragma once
#include "passes/pass.h"

namespace cj::passes {

class SimplifyParams : public Pass {
 public:
  static constexpr std::string_view kName = "simplify-params";
  std::string_view name() const override { return kName; }
  bool run(ir::Function& fn) override;
};

}  // namespace cj::passes
