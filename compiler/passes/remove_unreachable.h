// Deletes the blocks the entry cannot reach (left behind when `fold` turns a
// constant cbr into br).
#pragma once
#include "passes/pass.h"

namespace cj::passes {

class RemoveUnreachable : public Pass {
 public:
  static constexpr std::string_view kName = "remove-unreachable";
  std::string_view name() const override { return kName; }
  bool run(ir::Function& fn) override;
};

}  // namespace cj::passes
