// Module-level bookkeeping of type inference: one typed function per
// (untyped function, argument types), inferred on first use and memoised;
// recursion (direct or mutual) is rejected.
#pragma once
#include <optional>
#include <tuple>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "typeinfer/context.h"
#include "typeinfer/infer.h"

namespace cj::typeinfer {

struct Specialization {
  std::string name;                       // "<name>__<mangled argument types>"
  std::unique_ptr<ir::Function> fn;       // typed
  const Type* ret = nullptr;
};

class Specializer {
 public:
  Specializer(const ir::Module& untyped, const InferOptions& options)
      : untyped_(untyped), options_(options) {}

  // The untyped device function `name` ("fn:<name>" symbols); fails at `at` if missing.
  const ir::Function& untypedFunction(const FunctionContext& caller, const ir::Instr* at,
                                      std::string_view name) const;
  // The typed specialisation of `fn` for `args`, inferred now if new.
  // `constants`, when given, has one entry per argument: the value of an
  // argument the caller knows at compile time (an int, a bool or a tuple of
  // them), which the specialisation sees as that constant -- so that shapes a
  // tile helper builds from its parameters are constants, as in cuTile.
  const Specialization& specialize(const FunctionContext& caller, const ir::Instr* at,
                                   const ir::Function& fn, const std::vector<const Type*>& args,
                                   const std::vector<std::optional<ir::Const>>& constants = {});
  // Types the entry function (it keeps its name); kernels must return none.
  std::unique_ptr<ir::Function> inferEntry(const ir::Function& fn, const std::vector<const Type*>& args);
  // The specialisations `root` calls, directly or not, in first-call order,
  // moved out of the memo table.
  std::vector<std::unique_ptr<ir::Function>> takeCallees(const ir::Function& root);

  const InferOptions& options() const { return options_; }
  // Typed functions the module needs that no call_func reaches: the C-ABI
  // operator wrappers CUB instantiations call (rules_cub.cpp). One per name.
  ir::Function* supportFunction(std::string_view name) const;
  ir::Function* addSupportFunction(std::unique_ptr<ir::Function> fn);
  std::vector<std::unique_ptr<ir::Function>> takeSupportFunctions();

 private:
  // Clones `fn` as `name`, types it for `args`, rewrites it into typed IR.
  std::unique_ptr<ir::Function> infer(const ir::Function& fn, const std::string& name,
                                      const std::vector<const Type*>& args, const Type** ret,
                                      const std::vector<std::optional<ir::Const>>& constants = {});

  const ir::Module& untyped_;
  const InferOptions& options_;
  // (function, argument types, constant arguments' text) -> its specialisation
  std::map<std::tuple<std::string, std::vector<const Type*>, std::string>, std::unique_ptr<Specialization>> memo_;
  std::map<std::string, Specialization*> by_name_;
  std::vector<std::string> active_;       // untyped names being inferred, outermost first
  std::vector<std::unique_ptr<ir::Function>> support_;
};

}  // namespace cj::typeinfer
