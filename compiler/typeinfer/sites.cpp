#include "typeinfer/sites.h"

#include <algorithm>
#include <optional>
#include <set>

#include "typeinfer/conversion.h"
#include "typeinfer/mathdx_tensors.h"
#include "typeinfer/records.h"
#include "typeinfer/specializer.h"
#include "typeinfer/templates.h"
#include "typeinfer/unify.h"

namespace cj::typeinfer {

namespace {

const SymbolEntry* valueSymbol(const ir::Const& c) {
  if (c.kind != ir::Const::Kind::Symbol) return nullptr;
  const SymbolEntry* entry = findSymbol(c.s);
  return entry && *entry->value ? entry : nullptr;
}

}  // namespace

const Type* constantType(const FunctionContext& ctx, ir::Instr* in, const ir::Const& c) {
  if (const SymbolEntry* entry = valueSymbol(c))
    return entry->value->type(Site{ctx, in, entry->name, entry->arg, entry->intrinsic});
  if (c.kind != ir::Const::Kind::Tuple) return ir::constType(c);
  std::vector<const Type*> elems;
  for (const auto& e : c.elems) elems.push_back(constantType(ctx, in, e));
  return tupleTy(elems);
}

ir::Instr* lowerConstant(const FunctionContext& ctx, ir::Instr* in, const ir::Const& c, Emitter& e) {
  if (const SymbolEntry* entry = valueSymbol(c)) {
    Site site{ctx, in, entry->name, entry->arg, entry->intrinsic};
    return entry->value->lower(site, e);
  }
  if (c.kind != ir::Const::Kind::Tuple) return e.constant(c, ir::constType(c));
  std::vector<ir::Instr*> elems;
  for (const auto& x : c.elems) elems.push_back(lowerConstant(ctx, in, x, e));
  std::vector<const Type*> types;
  for (ir::Instr* x : elems) types.push_back(x->type);
  return e.emit(ir::Op::TupleMake, tupleTy(types), elems);
}

Bound bindGetAttr(const FunctionContext& ctx, ir::Instr* in) {
  ir::Instr* obj = in->operands[0];
  const Type* t = obj->type;
  if (t->is(TypeKind::Symbol) && t->name.rfind(mathdx_tensors::kLayoutPrefix, 0) == 0) {
    Site site{ctx, in, in->name, ""};
    site.receiver = obj;
    return Bound{&rules::mathdxLayoutAttr, site};
  }
  if (t->is(TypeKind::Symbol)) {
    std::string qualified = t->name + "." + in->name;
    Scalar torch_dtype;
    if (t->name == "torch" && torchDtypeScalar(in->name, &torch_dtype)) qualified = dtypeSymbolName(torch_dtype);
    // arr.dtype.type (numpy's scalar type of a dtype): the dtype's own symbol.
    Scalar dtype_scalar;
    if (in->name == "type" && t->name.rfind("numpy.", 0) == 0 && parseScalar(t->name.substr(6), &dtype_scalar) &&
        dtypeSymbolName(dtype_scalar) == t->name)
      qualified = t->name;
    const SymbolEntry* entry = findSymbol(qualified);
    if (!entry)
      ctx.fail(in, "getattr ." + in->name, "unsupported attribute " + qualified,
               "cudajit supports the names listed in docs (cuda.threadIdx.x, math.sqrt, ...)");
    Site site{ctx, in, entry->name, entry->arg, entry->intrinsic};
    site.receiver = obj;
    return Bound{*entry->value ? entry->value : &rules::symbolRef, site};
  }
  if (isRecord(t)) {   // r.x of a record
    recordFieldOrFail(ctx, in, t, in->name, "getattr ." + in->name);
    Site site{ctx, in, in->name, ""};
    site.receiver = obj;
    return Bound{&rules::recordFieldAttr, site};
  }
  if (isRecordArray(t) && in->name != "shape" && in->name != "strides" && in->name != "size" &&
      in->name != "ndim" && in->name != "itemsize" && in->name != "nbytes" && in->name != "T" && in->name != "dtype")
    ctx.fail(in, "getattr ." + in->name, "arrays of records have no attribute '" + in->name + "' in kernels",
             "arrays of records support a[i], .shape, .strides, .size, .ndim, .itemsize, .nbytes, .T, .dtype and len()");
  if (isVectorArray(t) && in->name != "shape" && in->name != "strides" && in->name != "size" &&
      in->name != "ndim" && in->name != "itemsize" && in->name != "nbytes" && in->name != "T" && in->name != "view")
    ctx.fail(in, "getattr ." + in->name, "arrays of vectors have no attribute '" + in->name + "' in kernels",
             "arrays of vectors support a[i], .shape, .strides, .size, .ndim, .itemsize, .nbytes, .T, .view() and len()");
  if (const AttributeEntry* attr = findAttribute(t->kind, in->name)) {
    Site site{ctx, in, attr->name, ""};
    site.receiver = obj;
    return Bound{attr->rule, site};
  }
  if (mathdx_tensors::isTensor(t) || mathdx_tensors::isPipeline(t)) {   // acc.get_results, pipeline.get_tile
    Site site{ctx, in, in->name, ""};
    site.receiver = obj;
    return Bound{&rules::mathdxTensorAttr, site};
  }
  if (namedTupleField(t, in->name) >= 0) {   // p.x of a namedtuple argument
    Site site{ctx, in, in->name, ""};
    site.receiver = obj;
    return Bound{&rules::tupleFieldAttr, site};
  }
  std::string what = t->is(TypeKind::Array) ? "array" : typeToString(t);
  ctx.fail(in, "getattr ." + in->name,
           what + " has no attribute '" + in->name + "'",
           t->is(TypeKind::Array) ? "the value is " + typeToString(t) : std::string());
}

Bound bindCall(const FunctionContext& ctx, ir::Instr* in) {
  ir::Instr* callee = in->operands[0];
  const Type* t = callee->type;
  const Rule* rule = nullptr;
  std::string_view name, arg;
  ir::Intrinsic intrinsic = ir::Intrinsic::Count;
  if (t->is(TypeKind::Symbol) && isMathdxSymbol(t->name)) {
    rule = &rules::mathdxCall;
    name = t->name;
  } else if (t->is(TypeKind::Symbol) && isForeignSymbol(t->name)) {
    rule = &rules::foreignCall;
    name = t->name;
  } else if (t->is(TypeKind::Symbol) && t->name.rfind("namedtuple ", 0) == 0) {
    rule = &rules::namedTupleMake;
    name = t->name;
  } else if (t->is(TypeKind::Symbol)) {
    const SymbolEntry* entry = findSymbol(t->name);
    if (!entry || !*entry->call)
      ctx.fail(in, t->name, "unsupported function " + t->name);
    rule = entry->call;
    name = entry->name;
    arg = entry->arg;
    intrinsic = entry->intrinsic;
  } else if (t->is(TypeKind::Tuple) && !t->elems.empty() && t->elems[0]->is(TypeKind::Symbol) &&
             mathdx_tensors::isMethod(t->elems[0]->name)) {
    rule = &rules::mathdxCall;   // an accumulator's method (rules_mathdx_tensors.cpp)
    name = t->elems[0]->name;
  } else if (t->is(TypeKind::Tuple) && !t->elems.empty() && t->elems[0]->is(TypeKind::Symbol) &&
             t->elems[0]->name.rfind("method:", 0) == 0) {
    // A bound method (z.conjugate): the rule reads its receiver from the tuple.
    const SymbolEntry* entry = findSymbol(t->elems[0]->name);
    if (!entry || !*entry->call) ctx.fail(in, t->elems[0]->name, "unsupported method " + t->elems[0]->name);
    rule = entry->call;
    name = entry->name;
    arg = entry->arg;
    intrinsic = entry->intrinsic;
  } else if (t->is(TypeKind::Function)) {
    rule = &rules::deviceCall;
    name = t->name;
  } else {
    ctx.fail(in, "call", "a value of type " + typeToString(t) + " is not callable");
  }
  // Arrays of records go to device functions, len() and const.array_like()
  // only: every other rule reads an array's scalar dtype, which an array of
  // records has not.
  if (rule != &rules::deviceCall && name != "builtins.len" && name != "cudajit.const.array_like")
    for (size_t k = 1; k < in->operands.size(); ++k)
      if (isRecordArray(in->operands[k]->type))
        ctx.fail(in, std::string(name),
                 std::string(name) + "() does not take arrays of records (argument " + std::to_string(k) + " is " +
                     typeToNumbaString(in->operands[k]->type) + ")",
                 "index the array and pass fields: f(a[i].x)");
  // Arrays of vectors likewise, and to MathDx's routines, which take them
  // (rules_mathdx.cpp checks their item types).
  if (rule != &rules::deviceCall && name != "builtins.len" && !isMathdxSymbol(name))
    for (size_t k = 1; k < in->operands.size(); ++k)
      if (isVectorArray(in->operands[k]->type))
        ctx.fail(in, std::string(name),
                 std::string(name) + "() does not take arrays of vectors (argument " + std::to_string(k) + " is " +
                     typeToNumbaString(in->operands[k]->type) + ")",
                 "index the array and pass components: f(a[i].x)");
  Site site{ctx, in, name, arg, intrinsic};
  if (t->is(TypeKind::Tuple)) site.receiver = callee;
  size_t nargs = in->operands.size() - 1;
  size_t nkw = std::min(in->names.size(), nargs);
  for (size_t i = 1; i <= nargs - nkw; ++i) site.args.push_back(in->operands[i]);
  for (size_t k = 0; k < nkw; ++k) {
    site.kw_names.push_back(in->names[k]);
    site.kw_args.push_back(in->operands[1 + nargs - nkw + k]);
  }
  return Bound{rule, site};
}

namespace rules {
namespace {

const Type* symbolRefType(const Site& s) { return symbolTy(s.name); }
ir::Instr* symbolRefLower(const Site& s, Emitter& e) {
  return e.constant(ir::Const::symbol(std::string(s.name)), symbolTy(s.name));
}

// Device functions: arguments bound to the callee's parameter names, then the
// callee specialised on their types (Specializer memoises per signature).
// A parameter the call leaves out takes its default: the decoder put it in
// the callee's entry block as a `const` named "default:<parameter>".
const ir::Instr* defaultOf(const ir::Function& callee, std::string_view param) {
  std::string want = "default:" + std::string(param);
  for (auto& in : callee.entry()->instrs)
    if (in->op == ir::Op::Const && in->var == want) return in.get();
  return nullptr;
}

struct DeviceArgs {
  std::vector<ir::Instr*> bound;            // nullptr: take the default
  std::vector<const ir::Instr*> defaults;   // per parameter, or nullptr
};

DeviceArgs deviceArgs(const Site& s, const ir::Function& callee) {
  std::vector<std::string_view> params(callee.arg_names.begin(), callee.arg_names.end());
  if (params.size() != callee.entry()->params.size()) {
    params.clear();
    for (auto& p : callee.entry()->params) params.push_back(p->var);
  }
  DeviceArgs out;
  out.bound = s.bind(params, 0);
  for (size_t i = 0; i < params.size(); ++i) {
    out.defaults.push_back(out.bound[i] ? nullptr : defaultOf(callee, params[i]));
    if (!out.bound[i] && !out.defaults[i])
      s.fail(std::string(s.name) + "() missing required argument '" + std::string(params[i]) + "'");
  }
  return out;
}

std::vector<const Type*> deviceArgTypes(const Site& s, const DeviceArgs& a) {
  std::vector<const Type*> types;
  for (size_t i = 0; i < a.bound.size(); ++i)
    types.push_back(a.bound[i] ? a.bound[i]->type
                               : constantType(s.ctx, s.instr, a.defaults[i]->cval));
  return types;
}

// numba's rating of `types` converted to a signature's parameters
// (templates.h); a non-scalar argument that coerces counts as safe. nullopt
// when one does not convert at all.
std::optional<Rating> conversionCost(const std::vector<const Type*>& types, const std::vector<const Type*>& params) {
  if (types.size() != params.size()) return std::nullopt;
  Rating rating{0, 0, 0};
  for (size_t i = 0; i < types.size(); ++i) {
    Conversion c = types[i] == params[i]                          ? Conversion::Exact
                   : types[i]->isScalar() && params[i]->isScalar() ? scalarConversion(types[i]->scalar, params[i]->scalar)
                   : canCoerce(types[i], params[i])               ? Conversion::Safe
                                                                  : Conversion::None;
    if (!addConversion(c, /*unsafe_casting=*/true, &rating)) return std::nullopt;
  }
  return rating;
}

// A device function declared with signatures: the one a call takes (the
// cheapest conversion of its arguments, the first of equals, as numba's
// overload choice); null when it has none.
const ParsedSignature* declaredSignature(const Site& s, const ir::Function& callee,
                                         const std::vector<const Type*>& types) {
  if (callee.declared.empty()) return nullptr;
  const ParsedSignature* best = nullptr;
  Rating best_cost{};
  for (const ParsedSignature& sig : callee.declared)
    if (auto cost = conversionCost(types, sig.args); cost && (!best || *cost < best_cost)) {
      best = &sig;
      best_cost = *cost;
    }
  if (best) return best;
  std::string list;
  for (const ParsedSignature& sig : callee.declared) list += (list.empty() ? "" : ", ") + signatureToString(sig);
  s.fail(std::string(s.name) + "() is declared with the signatures " + list + "; none takes the arguments " +
         numbaArgsString(types));
}

// The arguments known at compile time (ints, bools, tuples of them): the
// callee is specialised on their values (Specializer::specialize).
bool isShapeConstant(const ir::Const& c) {
  if (c.kind == ir::Const::Kind::Int || c.kind == ir::Const::Kind::Bool) return true;
  if (c.kind != ir::Const::Kind::Tuple) return false;
  return std::all_of(c.elems.begin(), c.elems.end(), isShapeConstant);
}
// Whether `fn` (untyped) names cudajit.tile, itself or through the device
// functions it calls: a tile helper, which cuTile inlines with its caller's
// constants. SIMT device functions keep numba's typing by type alone.
bool isTileHelper(const Site& s, const ir::Function& fn, std::set<std::string>& seen) {
  if (!seen.insert(fn.name).second) return false;
  for (auto& b : fn.blocks)
    for (auto& in : b->instrs) {
      if (in->op != ir::Op::Const || in->cval.kind != ir::Const::Kind::Symbol) continue;
      const std::string& sym = in->cval.s;
      if (sym == "cudajit.tile" || sym.rfind("cudajit.tile.", 0) == 0) return true;
      if (sym.rfind("fn:", 0) == 0 &&
          isTileHelper(s, s.ctx.specializer().untypedFunction(s.ctx, in.get(), sym.substr(3)), seen))
        return true;
    }
  return false;
}

std::vector<std::optional<ir::Const>> deviceArgConstants(const Site& s, const ir::Function& callee, const DeviceArgs& a) {
  std::vector<std::optional<ir::Const>> out(a.bound.size());
  std::set<std::string> seen;
  if (!isTileHelper(s, callee, seen)) return out;
  for (size_t i = 0; i < a.bound.size(); ++i)
    if (a.bound[i] && a.bound[i]->op == ir::Op::Const && isShapeConstant(a.bound[i]->cval)) out[i] = a.bound[i]->cval;
  return out;
}

const Type* deviceCallType(const Site& s) {
  const ir::Function& callee = s.ctx.specializer().untypedFunction(s.ctx, s.instr, s.name);
  DeviceArgs a = deviceArgs(s, callee);
  std::vector<const Type*> types = deviceArgTypes(s, a);
  if (const ParsedSignature* sig = declaredSignature(s, callee, types)) {
    if (sig->return_type) return sig->return_type;
    types = sig->args;
  }
  return s.ctx.specializer().specialize(s.ctx, s.instr, callee, types, deviceArgConstants(s, callee, a)).ret;
}

ir::Instr* deviceCallLower(const Site& s, Emitter& e) {
  const ir::Function& callee = s.ctx.specializer().untypedFunction(s.ctx, s.instr, s.name);
  DeviceArgs a = deviceArgs(s, callee);
  std::vector<const Type*> types = deviceArgTypes(s, a);
  std::vector<ir::Instr*> args = a.bound;
  for (size_t i = 0; i < args.size(); ++i)
    if (!args[i]) args[i] = lowerConstant(s.ctx, s.instr, a.defaults[i]->cval, e);
  const ParsedSignature* sig = declaredSignature(s, callee, types);
  if (sig) {   // numba converts the arguments to the declared types, and the result
    types = sig->args;
    for (size_t i = 0; i < args.size(); ++i) args[i] = e.convert(args[i], types[i]);
  }
  const Specialization& spec = s.ctx.specializer().specialize(s.ctx, s.instr, callee, types, deviceArgConstants(s, callee, a));
  ir::Instr* call = e.emit(ir::Op::CallFunc, spec.ret, args);
  call->name = spec.name;
  if (sig && sig->return_type && sig->return_type != spec.ret && !sig->return_type->is(TypeKind::None))
    return e.convert(call, sig->return_type);
  return call;
}

}  // namespace

const Rule symbolRef{symbolRefType, symbolRefLower};
const Rule deviceCall{deviceCallType, deviceCallLower};

}  // namespace rules
}  // namespace cj::typeinfer
