// Stage 2 entry points (infer.h).
#include "typeinfer/infer.h"

#include "support/error.h"
#include "typeinfer/specializer.h"
#include "typeinfer/templates.h"

namespace cj::typeinfer {

std::unique_ptr<ir::Module> inferTypes(const ir::Module& untyped,
                                       const std::vector<const Type*>& arg_types,
                                       const InferOptions& options) {
  if (untyped.functions.empty())
    throw CompileError("", 0, 0, "infer", "the module has no function to type");
  Specializer specializer(untyped, options);
  auto out = std::make_unique<ir::Module>();
  out->functions.push_back(specializer.inferEntry(*untyped.functions[0], arg_types));
  for (auto& callee : specializer.takeCallees(*out->functions[0]))
    out->functions.push_back(std::move(callee));
  // CUB operator wrappers, and what they call that the entry does not.
  for (auto& support : specializer.takeSupportFunctions()) {
    const ir::Function& fn = *support;
    out->functions.push_back(std::move(support));
    for (auto& callee : specializer.takeCallees(fn)) out->functions.push_back(std::move(callee));
  }

  std::string error;
  if (!ir::verifyModule(*out, /*typed=*/true, &error)) {
    const ir::Function& entry = *out->functions[0];
    throw CompileError(entry.filename, entry.first_line, 0, "verify",
                       "internal error: type inference produced IR that does not verify: " + error,
                       "typed IR:\n" + ir::printModule(*out));
  }
  return out;
}

const Type* binaryResultType(ir::Op op, const Type* a, const Type* b) {
  const TemplateList* templates = operatorTemplates(op);
  if (!templates || !a->isScalar() || !b->isScalar()) return nullptr;
  auto sig = resolveOverload(*templates, {a->scalar, b->scalar});
  return sig ? scalarTy(sig->ret) : nullptr;
}

}  // namespace cj::typeinfer
