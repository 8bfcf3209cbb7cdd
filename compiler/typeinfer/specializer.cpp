#include "typeinfer/specializer.h"

#include "typeinfer/prune.h"

#include <algorithm>
#include <functional>

#include "ir/cfg.h"
#include "support/error.h"
#include "typeinfer/cub_calls.h"
#include "typeinfer/lower.h"
#include "typeinfer/mangle.h"
#include "typeinfer/typer.h"

namespace cj::typeinfer {
namespace {

// Pops the active-function stack however inference ends.
struct ActiveGuard {
  std::vector<std::string>& stack;
  ActiveGuard(std::vector<std::string>& s, std::string name) : stack(s) { stack.push_back(std::move(name)); }
  ~ActiveGuard() { stack.pop_back(); }
};

// The Python name users wrote: "rec" for "test.<locals>.rec".
std::string displayName(const ir::Function& fn) {
  const std::string& q = fn.py_name.empty() ? fn.name : fn.py_name;
  size_t dot = q.rfind('.');
  return dot == std::string::npos ? q : q.substr(dot + 1);
}

}  // namespace

const ir::Function& Specializer::untypedFunction(const FunctionContext& caller, const ir::Instr* at,
                                                 std::string_view name) const {
  const ir::Function* fn = untyped_.find(name);
  if (!fn) caller.fail(at, "call", "device function '" + std::string(name) + "' is not in the module");
  return *fn;
}

namespace {

// The constant arguments as a name part: "" when there are none, else
// "__k" and one item per argument ("_" for a runtime one; ints with m for
// minus, b0/b1, t<n>... for tuples).
void constantText(const ir::Const& c, std::string& out) {
  switch (c.kind) {
    case ir::Const::Kind::Bool: out += c.i ? "b1" : "b0"; return;
    case ir::Const::Kind::Int: {
      std::string digits = std::to_string(c.i);
      if (digits[0] == '-') digits[0] = 'm';
      out += digits;
      return;
    }
    case ir::Const::Kind::Tuple:
      out += "t" + std::to_string(c.elems.size());
      for (const ir::Const& e : c.elems) {
        out += "x";
        constantText(e, out);
      }
      return;
    default: out += "?"; return;
  }
}

std::string constantsText(const std::vector<std::optional<ir::Const>>& constants) {
  if (std::none_of(constants.begin(), constants.end(), [](const auto& c) { return c.has_value(); })) return "";
  std::string out = "__k";
  for (const auto& c : constants) {
    out += "_";
    if (c) constantText(*c, out);
  }
  return out;
}

}  // namespace

const Specialization& Specializer::specialize(const FunctionContext& caller, const ir::Instr* at,
                                              const ir::Function& fn,
                                              const std::vector<const Type*>& args,
                                              const std::vector<std::optional<ir::Const>>& constants) {
  std::string consts = constantsText(constants);
  auto key = std::make_tuple(fn.name, args, consts);
  if (auto it = memo_.find(key); it != memo_.end()) return *it->second;
  if (std::find(active_.begin(), active_.end(), fn.name) != active_.end())
    caller.fail(at, "call " + fn.name,
                "recursive call to device function '" + displayName(fn) + "' is not supported");
  auto spec = std::make_unique<Specialization>();
  spec->name = mangleFunctionName(fn.name, args) + consts;
  try {
    spec->fn = infer(fn, spec->name, args, &spec->ret, constants);
  } catch (CompileError& e) {
    // The error's own place is inside the device function (perhaps a
    // library's); name the call that led there, outermost last.
    const std::string where = caller.fn().filename + ":" + std::to_string(at ? at->loc.line : 0);
    std::string note = "called from " + where + " (device function '" + displayName(fn) + "')";
    if (e.file != caller.fn().filename || e.line != (at ? at->loc.line : 0))
      e.hint = e.hint.empty() ? note : e.hint + "\n  " + note;
    throw CompileError(e.file, e.line, e.col, e.construct, e.message, e.hint);
  }
  by_name_[spec->name] = spec.get();
  return *memo_.emplace(key, std::move(spec)).first->second;
}

std::unique_ptr<ir::Function> Specializer::inferEntry(const ir::Function& fn,
                                                       const std::vector<const Type*>& args) {
  const Type* ret = nullptr;
  std::unique_ptr<ir::Function> typed = infer(fn, fn.name, args, &ret);
  if (fn.is_kernel && !ret->is(TypeKind::None)) {
    const ir::Instr* at = nullptr;
    for (auto& b : typed->blocks)
      if (ir::Instr* t = b->terminator(); t && t->op == ir::Op::Ret && !t->operands.empty() &&
                                          !t->operands[0]->type->is(TypeKind::None))
        at = at ? at : t;
    FunctionContext ctx(*typed, *this);
    ctx.fail(at, "return", "a kernel must not return a value (it returns " + typeToString(ret) + ")",
             "write results into an array argument");
  }
  const Type* want = options_.entry_return;
  if (!fn.is_kernel && want && want != ret && !want->is(TypeKind::None) && !want->is(TypeKind::Void)) {
    for (auto& b : typed->blocks) {
      ir::Instr* t = b->terminator();
      if (!t || t->op != ir::Op::Ret || t->operands.empty()) continue;
      ir::Instr* v = t->operands[0];
      if (!v->type->isScalar() || !want->isScalar()) {
        FunctionContext ctx(*typed, *this);
        ctx.fail(t, "return", "'" + displayName(fn) + "' returns " + typeToNumbaString(v->type) +
                                  ", the signature says " + typeToNumbaString(want));
      }
      auto cast = typed->make(ir::Op::Cast, want, {v}, t->loc);
      ir::Instr* c = ir::insertBefore(b.get(), b->instrs.size() - 1, std::move(cast));
      t->setOperand(0, c);
    }
    typed->return_type = want;
  }
  return typed;
}

std::unique_ptr<ir::Function> Specializer::infer(const ir::Function& fn, const std::string& name,
                                                 const std::vector<const Type*>& args,
                                                 const Type** ret,
                                                 const std::vector<std::optional<ir::Const>>& constants) {
  ActiveGuard guard(active_, fn.name);
  std::unique_ptr<ir::Function> typed = ir::cloneFunction(fn, name);
  // Constant arguments: the parameter's uses read the value (the parameter
  // stays, so the call passes it as before).
  for (size_t i = 0; i < constants.size() && !typed->blocks.empty() && i < typed->entry()->params.size(); ++i)
    if (constants[i]) ir::bindParamToConstant(*typed, i, *constants[i]);
  FunctionContext ctx(*typed, *this);
  if (typed->blocks.empty()) ctx.fail(nullptr, "function", "function '" + fn.name + "' has no body");
  auto& params = typed->entry()->params;
  if (params.size() != args.size())
    ctx.fail(nullptr, "signature",
             "'" + displayName(fn) + "' takes " + std::to_string(params.size()) +
                 " argument" + (params.size() == 1 ? "" : "s") + " but " +
                 std::to_string(args.size()) + " type" + (args.size() == 1 ? " was" : "s were") +
                 " given");
  for (size_t i = 0; i < args.size(); ++i) {
    const Type* t = args[i];
    if (!t || t->is(TypeKind::Unknown) || t->is(TypeKind::Undef) || t->is(TypeKind::Void))
      ctx.fail(nullptr, "signature", "argument " + std::to_string(i) + " has no concrete type");
    params[i]->type = t;
  }
  pruneNoneBranches(*typed);   // prune.h: `if arg is None` decided by the argument types
  ir::removeUnreachableBlocks(*typed);
  *ret = Typer(ctx).run();
  Lowerer(ctx, *ret).run();
  finishCubCalls(ctx);   // items per thread and bins from the arrays, now that edges are typed
  return typed;
}

ir::Function* Specializer::supportFunction(std::string_view name) const {
  for (const auto& fn : support_)
    if (fn->name == name) return fn.get();
  return nullptr;
}

ir::Function* Specializer::addSupportFunction(std::unique_ptr<ir::Function> fn) {
  if (ir::Function* existing = supportFunction(fn->name)) return existing;
  support_.push_back(std::move(fn));
  return support_.back().get();
}

std::vector<std::unique_ptr<ir::Function>> Specializer::takeSupportFunctions() {
  return std::move(support_);
}

std::vector<std::unique_ptr<ir::Function>> Specializer::takeCallees(const ir::Function& root) {
  std::vector<std::unique_ptr<ir::Function>> out;
  std::function<void(const ir::Function&)> visit = [&](const ir::Function& fn) {
    for (auto& b : fn.blocks)
      for (auto& in : b->instrs) {
        if (in->op != ir::Op::CallFunc) continue;
        auto it = by_name_.find(in->name);
        if (it == by_name_.end() || !it->second->fn) continue;   // taken already
        out.push_back(std::move(it->second->fn));
        visit(*out.back());
      }
  };
  visit(root);
  return out;
}

}  // namespace cj::typeinfer
