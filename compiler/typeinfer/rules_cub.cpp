// cudajit.block.* / cudajit.warp.* (cub_calls.h): typing and lowering of the
// calls to `intrinsic cub`, and finishCubCalls.
#include <cctype>
#include <functional>
#include <set>

#include "cub/spec.h"
#include "typeinfer/cub_calls.h"
#include "typeinfer/infer.h"
#include "typeinfer/library_calls.h"
#include "typeinfer/rules.h"
#include "typeinfer/specializer.h"

namespace cj::typeinfer {
namespace {

using cub::Algorithm;

// How a Python function's arguments map onto the intrinsic.
enum class Form {
  Reduce,     // (x | items[, op]) -> T
  Scan,       // (x | items[, op[, initial]]) -> T | items
  Load,       // (array, start, items_per_thread[, arrangement]) -> local array
  Store,      // (array, start, items | x[, arrangement]) -> none
  Sort,       // (keys[, values, descending, arrangement]) -> keys | (keys, values)
  Histogram,  // (samples, histogram[, bins, algorithm]) -> none
};

struct CubFunction {
  std::string_view name;          // the qualified symbol (symbols.def)
  Form form;
  Algorithm algorithm;
  Algorithm with_initial;         // scans: the algorithm when `initial` is given
  cub::Op op;                     // fixed op; None: the `op` argument (if the algorithm takes one)
  std::vector<std::string_view> params;
  size_t required;
};

const std::vector<std::string_view> kX = {"x"};
const std::vector<std::string_view> kXOp = {"x", "op"};
const std::vector<std::string_view> kScan = {"x", "op", "initial"};

// Every Python-level CUB function, once.
const CubFunction kFunctions[] = {
    {"cudajit.block.sum", Form::Reduce, Algorithm::BlockReduce, Algorithm::BlockReduce, cub::Op::Sum, kX, 1},
    {"cudajit.block.min", Form::Reduce, Algorithm::BlockReduce, Algorithm::BlockReduce, cub::Op::Min, kX, 1},
    {"cudajit.block.max", Form::Reduce, Algorithm::BlockReduce, Algorithm::BlockReduce, cub::Op::Max, kX, 1},
    {"cudajit.block.reduce", Form::Reduce, Algorithm::BlockReduce, Algorithm::BlockReduce, cub::Op::None, kXOp, 2},
    {"cudajit.block.inclusive_sum", Form::Scan, Algorithm::BlockInclusiveSum, Algorithm::BlockInclusiveSum, cub::Op::None, kX, 1},
    {"cudajit.block.exclusive_sum", Form::Scan, Algorithm::BlockExclusiveSum, Algorithm::BlockExclusiveSum, cub::Op::None, kX, 1},
    {"cudajit.block.inclusive_scan", Form::Scan, Algorithm::BlockInclusiveScan, Algorithm::BlockInclusiveScanInit, cub::Op::None, kScan, 2},
    {"cudajit.block.exclusive_scan", Form::Scan, Algorithm::BlockExclusiveScan, Algorithm::BlockExclusiveScan, cub::Op::None, kScan, 3},
    {"cudajit.block.load", Form::Load, Algorithm::BlockLoad, Algorithm::BlockLoad, cub::Op::None,
     {"array", "start", "items_per_thread", "arrangement"}, 3},
    {"cudajit.block.store", Form::Store, Algorithm::BlockStore, Algorithm::BlockStore, cub::Op::None,
     {"array", "start", "items", "arrangement"}, 3},
    {"cudajit.block.radix_sort", Form::Sort, Algorithm::BlockRadixSort, Algorithm::BlockRadixSort, cub::Op::None,
     {"keys", "values", "descending", "arrangement"}, 1},
    {"cudajit.block.histogram", Form::Histogram, Algorithm::BlockHistogram, Algorithm::BlockHistogram, cub::Op::None,
     {"samples", "histogram", "bins", "algorithm"}, 2},
    {"cudajit.warp.sum", Form::Reduce, Algorithm::WarpReduce, Algorithm::WarpReduce, cub::Op::Sum, kX, 1},
    {"cudajit.warp.min", Form::Reduce, Algorithm::WarpReduce, Algorithm::WarpReduce, cub::Op::Min, kX, 1},
    {"cudajit.warp.max", Form::Reduce, Algorithm::WarpReduce, Algorithm::WarpReduce, cub::Op::Max, kX, 1},
    {"cudajit.warp.reduce", Form::Reduce, Algorithm::WarpReduce, Algorithm::WarpReduce, cub::Op::None, kXOp, 2},
    {"cudajit.warp.inclusive_sum", Form::Scan, Algorithm::WarpInclusiveSum, Algorithm::WarpInclusiveSum, cub::Op::None, kX, 1},
    {"cudajit.warp.exclusive_sum", Form::Scan, Algorithm::WarpExclusiveSum, Algorithm::WarpExclusiveSum, cub::Op::None, kX, 1},
    {"cudajit.warp.inclusive_scan", Form::Scan, Algorithm::WarpInclusiveScan, Algorithm::WarpInclusiveScanInit, cub::Op::None, kScan, 2},
    {"cudajit.warp.exclusive_scan", Form::Scan, Algorithm::WarpExclusiveScan, Algorithm::WarpExclusiveScan, cub::Op::None, kScan, 3},
};

// Ops given by name: builtins, operator functions, numpy ufuncs, strings.
struct NamedOp {
  std::string_view name;
  cub::Op op;          // CUB's own functor
  ir::Op binary;       // else: a generated wrapper computing this IR op
  std::string_view c_name;
};
const NamedOp kNamedOps[] = {
    {"builtins.max", cub::Op::Max, ir::Op::Add, ""},
    {"builtins.min", cub::Op::Min, ir::Op::Add, ""},
    {"numpy.maximum", cub::Op::Max, ir::Op::Add, ""},
    {"numpy.minimum", cub::Op::Min, ir::Op::Add, ""},
    {"operator.add", cub::Op::Sum, ir::Op::Add, ""},
    {"numpy.add", cub::Op::Sum, ir::Op::Add, ""},
    {"operator.mul", cub::Op::User, ir::Op::Mul, "mul"},
    {"numpy.multiply", cub::Op::User, ir::Op::Mul, "mul"},
    {"operator.and_", cub::Op::User, ir::Op::BitAnd, "and"},
    {"operator.or_", cub::Op::User, ir::Op::BitOr, "or"},
    {"operator.xor", cub::Op::User, ir::Op::BitXor, "xor"},
};
// String spellings: op="sum" & co.
const NamedOp kStringOps[] = {
    {"sum", cub::Op::Sum, ir::Op::Add, ""},   {"add", cub::Op::Sum, ir::Op::Add, ""},
    {"min", cub::Op::Min, ir::Op::Add, ""},   {"max", cub::Op::Max, ir::Op::Add, ""},
    {"mul", cub::Op::User, ir::Op::Mul, "mul"},
};

const CubFunction& functionOf(const Site& s) {
  for (const auto& f : kFunctions)
    if (f.name == s.name) return f;
  s.fail("internal error: no CUB function row for " + std::string(s.name));
}

std::string pyName(const Site& s) {
  std::string n(s.name);
  return "cuda." + n.substr(n.find('.') + 1);   // cudajit.block.sum -> cuda.block.sum
}

cub::Dtype dtypeOf(Scalar t) {
  cub::Dtype d = cub::Dtype::Count;
  cub::parseDtype(scalarNumbaName(t), &d);
  return d;
}

// The item types are cub/spec.h's table.
bool itemScalar(Scalar t) { return dtypeOf(t) != cub::Dtype::Count; }

// "int32, int64, ...": the table's names, in its order.
std::string supportedItems() {
  std::string out;
  for (int d = 0; d < static_cast<int>(cub::Dtype::Count); ++d)
    out += (d ? ", " : "") + std::string(cub::info(static_cast<cub::Dtype>(d)).name);
  return out;
}

void checkItemScalar(const Site& s, Scalar t, const std::string& what) {
  if (!itemScalar(t))
    s.fail(pyName(s) + "(): " + what + " of type " + std::string(scalarNumbaName(t)) +
               " is not supported (" + supportedItems() + ")",
           "convert it first, e.g. numpy.float32(x) or numpy.int32(x)");
}

bool isLocal1d(const Type* t) {
  return t->is(TypeKind::Array) && t->space == MemSpace::Local && t->ndim == 1;
}

// Items: a scalar (one item per thread) or a 1-d local array (its length).
// Returns the item type.
Scalar itemsOf(const Site& s, const ir::Instr* v, const std::string& what) {
  const Type* t = v->type;
  if (t->isScalar()) {
    checkItemScalar(s, t->scalar, what);
    return t->scalar;
  }
  if (isLocal1d(t)) {
    checkItemScalar(s, t->scalar, what + " items");
    return t->scalar;
  }
  s.fail(pyName(s) + "(): " + what + " must be a number or a 1-d cuda.local.array (several items "
         "per thread), got " + typeToString(t));
}

std::optional<std::string> constString(const ir::Instr* v) {
  auto c = constantOf(v);
  if (c && c->kind == ir::Const::Kind::Str) return c->s;
  return std::nullopt;
}

// An option given as a constant string, checked against `allowed`.
std::string stringOption(const Site& s, const ir::Instr* v, std::string_view param,
                         const std::vector<std::string>& allowed) {
  if (!v) return allowed.front();
  auto text = constString(v);
  std::string list;
  for (const auto& a : allowed) list += (list.empty() ? "'" : ", '") + a + "'";
  if (!text)
    s.fail(pyName(s) + "(): " + std::string(param) + " must be a constant string: " + list);
  for (const auto& a : allowed)
    if (*text == a) return a;
  s.fail(pyName(s) + "(): unknown " + std::string(param) + " '" + *text + "' (" + list + ")");
}

bool boolOption(const Site& s, const ir::Instr* v, std::string_view param) {
  if (!v) return false;
  auto c = constantOf(v);
  if (c && (c->kind == ir::Const::Kind::Bool || c->kind == ir::Const::Kind::Int)) return c->i != 0;
  s.fail(pyName(s) + "(): " + std::string(param) + " must be the constant True or False");
}

// A 1-d contiguous array that block load/store read or write.
void checkTileArray(const Site& s, const Type* t, bool writes) {
  if (!t->is(TypeKind::Array) || t->ndim != 1)
    s.fail(pyName(s) + "(): array must be a 1-d array, got " + typeToString(t),
           "index a row first (x[row]) or pass a 1-d view");
  if (t->layout == Layout::A)
    s.fail(pyName(s) + "(): array must be contiguous, got " + typeToString(t),
           "block loads and stores read a contiguous tile: pass a C-contiguous array");
  checkItemScalar(s, t->scalar, "array");
  if (writes && t->readonly) s.fail(pyName(s) + "(): the array is read-only");
}

// What a call means: the CUB spec (without block shape and items per
// thread), the item type, the op and the result type.
struct Analysis {
  const CubFunction* fn = nullptr;
  std::vector<ir::Instr*> bound;   // by parameter
  cub::Spec spec;
  Scalar item = Scalar::Float32;
  const Type* result = nullptr;
  // User ops: a device function (untyped IR name) or a named binary op.
  std::string device_fn;
  const NamedOp* named = nullptr;
};

// The op argument: sets spec.op (and what a user op needs).
void resolveOp(const Site& s, const ir::Instr* v, Analysis& a) {
  const Type* t = v->type;
  const Type* item = scalarTy(a.item);
  auto useNamed = [&](const NamedOp& n) {
    a.spec.op = n.op;
    if (n.op != cub::Op::User) return;
    a.named = &n;
    if (!binaryResultType(n.binary, item, item))
      s.fail(pyName(s) + "(): op " + std::string(n.name) + " does not apply to " +
             std::string(scalarNumbaName(a.item)));
  };
  if (t->is(TypeKind::Symbol)) {
    for (const auto& n : kNamedOps)
      if (n.name == t->name) return useNamed(n);
  } else if (auto text = constString(v)) {
    for (const auto& n : kStringOps)
      if (n.name == *text) return useNamed(n);
  } else if (t->is(TypeKind::Function)) {
    // The user's device function, specialised on (T, T); it must give a number.
    const ir::Function& callee = s.ctx.specializer().untypedFunction(s.ctx, s.instr, t->name);
    if (callee.entry()->params.size() != 2)
      s.fail(pyName(s) + "(): op '" + t->name + "' must take two arguments");
    const Specialization& spec = s.ctx.specializer().specialize(s.ctx, s.instr, callee, {item, item});
    if (!spec.ret->isScalar() || spec.ret->isComplex())
      s.fail(pyName(s) + "(): op '" + t->name + "' returns " + typeToString(spec.ret) + " for (" +
                 std::string(scalarNumbaName(a.item)) + ", " + std::string(scalarNumbaName(a.item)) +
                 ") arguments; it must return a number");
    a.spec.op = cub::Op::User;
    a.device_fn = t->name;
    return;
  }
  s.fail(pyName(s) + "(): unsupported op " + typeToString(t),
         "op may be min, max, operator.add, operator.mul, operator.and_, operator.or_, "
         "operator.xor, or a @cuda.jit(device=True) function of two arguments");
}

Analysis analyze(const Site& s) {
  Analysis a;
  a.fn = &functionOf(s);
  const CubFunction& f = *a.fn;
  a.bound = s.bind(f.params, f.required);
  // An optional argument given as None counts as not given.
  for (ir::Instr*& v : a.bound)
    if (v && v->type->is(TypeKind::None)) v = nullptr;
  for (size_t i = 0; i < f.required; ++i)
    if (!a.bound[i]) s.fail(pyName(s) + "(): " + std::string(f.params[i]) + " must not be None");
  auto arg = [&](std::string_view param) -> ir::Instr* {
    for (size_t i = 0; i < f.params.size(); ++i)
      if (f.params[i] == param) return a.bound[i];
    return nullptr;
  };
  a.spec.algorithm = f.algorithm;
  switch (f.form) {
    case Form::Reduce:
    case Form::Scan: {
      ir::Instr* x = arg("x");
      a.item = itemsOf(s, x, "x");
      ir::Instr* initial = arg("initial");
      if (initial) {
        if (!initial->type->isScalar() || initial->type->isComplex())
          s.fail(pyName(s) + "(): initial must be a number, got " + typeToString(initial->type));
        a.spec.algorithm = f.with_initial;
      }
      if (cub::info(a.spec.algorithm).op_rule == cub::OpRule::OpAny) {
        if (f.op != cub::Op::None)
          a.spec.op = f.op;
        else
          resolveOp(s, arg("op"), a);
      }
      bool array = x->type->is(TypeKind::Array);
      a.result = f.form == Form::Reduce || !array ? scalarTy(a.item) : x->type;
      break;
    }
    case Form::Load: {
      const Type* t = arg("array")->type;
      checkTileArray(s, t, false);
      a.item = t->scalar;
      if (!arg("start")->type->isInt())
        s.fail(pyName(s) + "(): start must be an integer, got " + typeToString(arg("start")->type));
      auto ipt = constantInt(arg("items_per_thread"));
      if (!ipt || *ipt < 1 || *ipt > 256)
        s.fail(pyName(s) + "(): items_per_thread must be a constant integer in [1, 256]");
      a.spec.items_per_thread = static_cast<int>(*ipt);
      a.spec.arrangement = cub::Arrangement::Blocked;
      cub::parseArrangement(stringOption(s, arg("arrangement"), "arrangement",
                                         {"blocked", "striped", "vectorize", "transpose", "warp_transpose"}),
                            &a.spec.arrangement);
      a.result = arrayTy(a.item, 1, Layout::C, MemSpace::Local);
      break;
    }
    case Form::Store: {
      const Type* t = arg("array")->type;
      checkTileArray(s, t, true);
      a.item = t->scalar;
      if (!arg("start")->type->isInt())
        s.fail(pyName(s) + "(): start must be an integer, got " + typeToString(arg("start")->type));
      const Type* items = arg("items")->type;
      if (isLocal1d(items)) {
        if (items->scalar != a.item)
          s.fail(pyName(s) + "(): items of type " + std::string(scalarNumbaName(items->scalar)) +
                 " into an array of " + std::string(scalarNumbaName(a.item)),
                 "use a local array of the destination's dtype");
      } else if (!items->isScalar() || items->isComplex()) {
        s.fail(pyName(s) + "(): items must be a number or a 1-d cuda.local.array, got " +
               typeToString(items));
      }
      cub::parseArrangement(stringOption(s, arg("arrangement"), "arrangement",
                                         {"blocked", "striped", "vectorize", "transpose", "warp_transpose"}),
                            &a.spec.arrangement);
      a.result = noneTy();
      break;
    }
    case Form::Sort: {
      ir::Instr* keys = arg("keys");
      ir::Instr* values = arg("values");
      a.item = itemsOf(s, keys, "keys");
      bool descending = boolOption(s, arg("descending"), "descending");
      if (values) {
        Scalar v = itemsOf(s, values, "values");
        if (keys->type->is(TypeKind::Array) != values->type->is(TypeKind::Array))
          s.fail(pyName(s) + "(): keys and values must both be numbers or both be local arrays");
        a.spec.value_dtype = dtypeOf(v);
        a.spec.algorithm = descending ? Algorithm::BlockRadixSortPairsDesc : Algorithm::BlockRadixSortPairs;
        a.result = tupleTy({keys->type, values->type});
      } else {
        a.spec.algorithm = descending ? Algorithm::BlockRadixSortDesc : Algorithm::BlockRadixSort;
        a.result = keys->type;
      }
      cub::parseArrangement(stringOption(s, arg("arrangement"), "arrangement", {"blocked", "striped"}),
                            &a.spec.arrangement);
      break;
    }
    case Form::Histogram: {
      ir::Instr* samples = arg("samples");
      a.item = itemsOf(s, samples, "samples");
      if (!scalarTy(a.item)->isInt())
        s.fail(pyName(s) + "(): samples must be integers (bin indices), got " +
               std::string(scalarNumbaName(a.item)));
      const Type* h = arg("histogram")->type;
      if (!h->is(TypeKind::Array) || h->ndim != 1 ||
          (h->scalar != Scalar::Int32 && h->scalar != Scalar::UInt32 && h->scalar != Scalar::UInt64))
        s.fail(pyName(s) + "(): histogram must be a 1-d array of int32, uint32 or uint64 counters, got " +
               typeToString(h));
      if (h->readonly) s.fail(pyName(s) + "(): the histogram array is read-only");
      a.spec.value_dtype = dtypeOf(h->scalar);
      if (ir::Instr* bins = arg("bins")) {
        auto n = constantInt(bins);
        if (!n || *n < 1 || *n > 65536)
          s.fail(pyName(s) + "(): bins must be a constant integer in [1, 65536]");
        a.spec.bins = static_cast<int>(*n);
      }
      cub::parseArrangement(stringOption(s, arg("algorithm"), "algorithm", {"atomic", "sort"}),
                            &a.spec.arrangement);
      a.result = noneTy();
      break;
    }
  }
  a.spec.dtype = dtypeOf(a.item);
  return a;
}

const Type* cubType(const Site& s) { return analyze(s).result; }

// ---- lowering -----------------------------------------------------------------------

std::string sanitized(const std::string& name) {
  std::string out;
  bool changed = false;
  for (char c : name) {
    bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '_';
    out += ok ? c : '_';
    changed = changed || !ok;
  }
  if (changed) out += "_" + std::to_string(std::hash<std::string>()(name) % 1000003);
  return out;
}

// The typed `<c name>__impl(T, T) -> T` computing the user op; returns the C name.
std::string operatorWrapper(const Site& s, const Analysis& a) {
  Specializer& sp = s.ctx.specializer();
  const Type* item = scalarTy(a.item);
  const Specialization* device = nullptr;
  std::string base;
  if (!a.device_fn.empty()) {
    const ir::Function& callee = sp.untypedFunction(s.ctx, s.instr, a.device_fn);
    device = &sp.specialize(s.ctx, s.instr, callee, {item, item});
    base = device->name;
  } else {
    base = std::string(a.named->c_name) + "_" + std::string(scalarShortName(a.item));
  }
  std::string c_name = "cj_op_" + sanitized(base);
  std::string impl = cubOperatorImplName(c_name);
  if (sp.supportFunction(impl)) return c_name;

  auto fn = std::make_unique<ir::Function>();
  fn->name = impl;
  fn->py_name = device ? a.device_fn : std::string(a.named->name);
  fn->filename = s.ctx.fn().filename;
  fn->first_line = s.instr->loc.line;
  fn->arg_names = {"a", "b"};
  fn->return_type = item;
  ir::Block* b = fn->addBlock();
  ir::Instr* pa = b->addParam(item, "a");
  ir::Instr* pb = b->addParam(item, "b");
  ir::Builder build(fn.get(), b);
  build.setLoc(s.instr->loc);
  ir::Instr* r;
  if (device) {
    r = build.emit(ir::Op::CallFunc, device->ret, {pa, pb});
    r->name = device->name;
  } else {
    const Type* rt = binaryResultType(a.named->binary, item, item);
    ir::Instr* x = rt == item ? pa : build.emit(ir::Op::Cast, rt, {pa});
    ir::Instr* y = rt == item ? pb : build.emit(ir::Op::Cast, rt, {pb});
    r = build.emit(a.named->binary, rt, {x, y});
  }
  if (r->type != item) r = build.emit(ir::Op::Cast, item, {r});
  build.ret(r);
  fn->computePreds();
  fn->renumber();
  sp.addSupportFunction(std::move(fn));
  return c_name;
}

// The length of a 1-d array made by `intrinsic <maker>` with a constant
// shape, looking through block parameters every path gives the same array.
std::optional<int64_t> madeArrayLength(const ir::Instr* v, ir::Intrinsic maker,
                                       std::set<const ir::Instr*>& seen) {
  if (!seen.insert(v).second) return std::nullopt;
  if (v->isIntrinsic(maker)) {
    int64_t n = 1;
    for (int64_t d : v->ints) n *= d;
    return n;
  }
  if (v->op != ir::Op::Param || !v->parent || v->parent == v->parent->parent->entry()) return std::nullopt;
  std::optional<int64_t> found;
  for (const ir::Block* pred : v->parent->preds) {
    const ir::Instr* t = pred->terminator();
    if (!t) continue;
    for (const auto& edge : t->succs) {
      if (edge.target != v->parent) continue;
      const ir::Instr* arg = edge.args.at(static_cast<size_t>(v->index));
      if (arg == v || seen.count(arg)) continue;
      auto n = madeArrayLength(arg, maker, seen);
      if (!n || (found && *found != *n)) return std::nullopt;
      found = n;
    }
  }
  return found;
}

std::optional<int64_t> madeArrayLength(const ir::Instr* v, ir::Intrinsic maker) {
  std::set<const ir::Instr*> seen;
  return madeArrayLength(v, maker, seen);
}

ir::Instr* cubLower(const Site& s, Emitter& e) {
  Analysis a = analyze(s);
  const CubFunction& f = *a.fn;
  const InferOptions& options = s.ctx.specializer().options();
  for (int d = 0; d < 3; ++d) {
    if (options.block_dims[d] < 1)
      s.fail(pyName(s) + "() needs the kernel's block shape, which is not known here",
             "kernels that use block algorithms are specialised on their launch block shape: "
             "launch the kernel, or compile ahead of time with block=(256,) (compile_ptx, "
             "compile_cubin, @cuda.jit(signature, block=...), kernel.compile(signature, block=...))");
    a.spec.block[d] = options.block_dims[d];
  }
  a.spec.arch = options.arch;
  if (a.spec.op == cub::Op::User) a.spec.user_op = operatorWrapper(s, a);

  // Operands in the entry point's order (intrinsics.def); the items per
  // thread of a local array are settled by finishCubCalls.
  auto arg = [&](std::string_view param) -> ir::Instr* {
    for (size_t i = 0; i < f.params.size(); ++i)
      if (f.params[i] == param) return a.bound[i];
    return nullptr;
  };
  const Type* item = scalarTy(a.item);
  std::vector<ir::Instr*> operands;
  ir::Instr* value = nullptr;   // what the call evaluates to (nullptr: the intrinsic)
  const Type* type = voidTy();
  switch (f.form) {
    case Form::Reduce:
      operands = {arg("x")};
      type = item;
      break;
    case Form::Scan: {
      ir::Instr* x = arg("x");
      operands = {x};
      if (ir::Instr* initial = arg("initial")) operands.push_back(e.convert(initial, item));
      if (x->type->is(TypeKind::Array))
        value = x;
      else
        type = item;
      break;
    }
    case Form::Load: {
      ir::Instr* items = e.intrinsic(ir::Intrinsic::LocalArray, a.result, {}, {a.spec.items_per_thread});
      operands = {arg("array"), e.convert(arg("start"), i64Ty()), items};
      value = items;
      break;
    }
    case Form::Store: {
      ir::Instr* items = arg("items");
      if (items->type->isScalar()) items = e.convert(items, item);
      operands = {arg("array"), e.convert(arg("start"), i64Ty()), items};
      break;
    }
    case Form::Sort: {
      ir::Instr* keys = arg("keys");
      ir::Instr* values = arg("values");
      operands = {keys};
      if (values) operands.push_back(values);
      if (keys->type->isScalar()) {
        type = a.result;
      } else {
        value = values ? e.emit(ir::Op::TupleMake, a.result, {keys, values}) : keys;
      }
      break;
    }
    case Form::Histogram:
      operands = {arg("samples"), arg("histogram")};
      break;
  }
  // Checked now with the items per thread this site shows (finishCubCalls
  // checks again with the real ones), so errors point at the call.
  const ir::Instr* items = f.form == Form::Load || f.form == Form::Store ? operands[2] : operands[0];
  if (items->type->is(TypeKind::Array)) a.spec.items_per_thread = madeArrayLength(items, ir::Intrinsic::LocalArray).value_or(1);
  if (f.form == Form::Histogram && a.spec.bins == 0)
    a.spec.bins = static_cast<int>(madeArrayLength(operands[1], ir::Intrinsic::SharedArray).value_or(1));
  cub::Spec normalized;
  std::string error;
  if (!cub::tryNormalize(a.spec, &normalized, &error)) s.fail(pyName(s) + "(): " + error);

  // The final (not yet known) fields are settled by finishCubCalls.
  cub::Spec pending = a.spec;
  if (items->type->is(TypeKind::Array)) pending.items_per_thread = 0;
  if (f.form == Form::Histogram && !arg("bins")) pending.bins = 0;
  ir::Instr* call =
      makeLibraryCall(e, libcalls::Library::Cub, cub::toString(pending), type, operands, pyName(s));
  return value ? value : (type == voidTy() ? nullptr : call);
}

}  // namespace

std::string cubOperatorImplName(const std::string& c_name) { return c_name + "__impl"; }

namespace rules {
const Rule cubCall{cubType, cubLower};
}  // namespace rules

void finishCubCalls(const FunctionContext& ctx) {
  for (auto& b : ctx.fn().blocks) {
    for (auto& in : b->instrs) {
      if (!libcalls::isLibraryCall(*in, libcalls::Library::Cub)) continue;
      std::string construct = in->names.empty() ? "cub" : in->names[0];
      cub::Spec spec;
      std::string error;
      if (!cub::parseSpec(in->cval.s, &spec, &error))
        ctx.fail(in.get(), construct, "internal error: " + error);
      cub::Shape shape = cub::info(spec.algorithm).shape;
      size_t items_at = shape == cub::Shape::Load || shape == cub::Shape::Store ? 2 : 0;
      const ir::Instr* items = in->operands.at(items_at);
      if (spec.items_per_thread == 0) {
        auto n = madeArrayLength(items, ir::Intrinsic::LocalArray);
        if (!n)
          ctx.fail(in.get(), construct,
                   construct + "(): cannot tell how many items each thread holds",
                   "pass a 1-d cuda.local.array with a constant size, created in this function "
                   "(the same array on every path)");
        spec.items_per_thread = static_cast<int>(*n);
      }
      if (shape == cub::Shape::SortPairs && in->operands[1]->type->is(TypeKind::Array)) {
        auto n = madeArrayLength(in->operands[1], ir::Intrinsic::LocalArray);
        if (!n || *n != spec.items_per_thread)
          ctx.fail(in.get(), construct,
                   construct + "(): values must be a local array as long as keys (" +
                       std::to_string(spec.items_per_thread) + " items)");
      }
      if (shape == cub::Shape::Histogram) {
        auto n = madeArrayLength(in->operands[1], ir::Intrinsic::SharedArray);
        if (spec.bins == 0 && !n)
          ctx.fail(in.get(), construct, construct + "(): cannot tell the number of bins",
                   "pass bins=N, or a cuda.shared.array of constant size as the histogram");
        if (spec.bins == 0) spec.bins = static_cast<int>(*n);
        if (n && spec.bins > *n)
          ctx.fail(in.get(), construct,
                   construct + "(): bins=" + std::to_string(spec.bins) + " but the histogram array has " +
                       std::to_string(*n) + " counters");
      }
      cub::Spec normalized;
      if (!cub::tryNormalize(spec, &normalized, &error))
        ctx.fail(in.get(), construct, construct + "(): " + error);
      libcalls::setDescriptor(*in, cub::toString(normalized));
    }
  }
}

}  // namespace cj::typeinfer
