// The rewrite into typed IR, once the fixpoint has settled: Python-level ops
// become typed ops (through their rules), casts are inserted where an
// operation, a branch argument or a `ret` needs another type, `is None` is
// folded, and values with no machine representation that nothing uses
// (symbols, never-assigned locals) are dropped.
#pragma once
#include <memory>
#include <unordered_map>
#include <vector>

#include "typeinfer/context.h"

namespace cj::typeinfer {

class Lowerer {
 public:
  Lowerer(const FunctionContext& ctx, const Type* return_type)
      : ctx_(ctx), ret_(return_type) {}
  void run();

 private:
  ir::Instr* lower(ir::Instr* in, Emitter& e);
  ir::Instr* lowerConst(ir::Instr* in, Emitter& e);
  ir::Instr* mapped(ir::Instr* v) const;
  void remapOperands(ir::Instr* in) {
    for (size_t i = 0; i < in->operands.size(); ++i) in->setOperand(i, mapped(in->operands[i]));
  }
  void coerceEdges();
  void removeUndefParams();
  void removeDeadValues();

  const FunctionContext& ctx_;
  const Type* ret_;
  std::unordered_map<ir::Instr*, ir::Instr*> replaced_;
  std::vector<std::unique_ptr<ir::Instr>> graveyard_;   // replaced instructions stay alive until remapped
};

}  // namespace cj::typeinfer
