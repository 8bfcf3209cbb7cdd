#include "typeinfer/context.h"

#include <algorithm>

#include "support/error.h"
#include "typeinfer/mathdx_tensors.h"
#include "typeinfer/rules.h"

namespace cj::typeinfer {

void FunctionContext::fail(const ir::Instr* at, std::string construct, std::string message,
                           std::string hint) const {
  int line = at ? at->loc.line : 0, col = at ? at->loc.col : 0;
  if (line == 0) line = fn_.first_line;
  throw CompileError(fn_.filename, line, col, std::move(construct), std::move(message),
                     std::move(hint));
}

std::optional<ir::Const> constantOf(const ir::Instr* v) {
  switch (v->op) {
    case ir::Op::Const:
      return v->cval;
    case ir::Op::TupleMake: {
      std::vector<ir::Const> elems;
      for (const ir::Instr* e : v->operands) {
        auto c = constantOf(e);
        if (!c) return std::nullopt;
        elems.push_back(std::move(*c));
      }
      return ir::Const::tuple(std::move(elems));
    }
    case ir::Op::Lt: case ir::Op::Le: case ir::Op::Eq: case ir::Op::Ne: case ir::Op::Gt: case ir::Op::Ge: {
      // Comparisons of constant integers and bools (ct.static_assert(T % 16 == 0)).
      if ((v->op == ir::Op::Eq || v->op == ir::Op::Ne) && v->operands[0]->type && v->operands[1]->type) {
        // dtypes, once typed (x.dtype == ct.float32)
        auto da = dtypeOf(v->operands[0]), db = dtypeOf(v->operands[1]);
        if (da && db) return ir::Const::boolean((*da == *db) == (v->op == ir::Op::Eq));
      }
      auto a = constantOf(v->operands[0]);
      auto b = constantOf(v->operands[1]);
      auto integral = [](const std::optional<ir::Const>& c) {
        return c && (c->kind == ir::Const::Kind::Int || c->kind == ir::Const::Kind::Bool);
      };
      if (!integral(a) || !integral(b)) return std::nullopt;
      int64_t x = a->i, y = b->i;
      switch (v->op) {
        case ir::Op::Lt: return ir::Const::boolean(x < y);
        case ir::Op::Le: return ir::Const::boolean(x <= y);
        case ir::Op::Eq: return ir::Const::boolean(x == y);
        case ir::Op::Ne: return ir::Const::boolean(x != y);
        case ir::Op::Gt: return ir::Const::boolean(x > y);
        default: return ir::Const::boolean(x >= y);
      }
    }
    case ir::Op::Not: {
      auto a = constantOf(v->operands[0]);
      if (!a || (a->kind != ir::Const::Kind::Int && a->kind != ir::Const::Kind::Bool)) return std::nullopt;
      return ir::Const::boolean(a->i == 0);
    }
    case ir::Op::Add: case ir::Op::Sub: case ir::Op::Mul: case ir::Op::FloorDiv: case ir::Op::Mod: {
      // Integer arithmetic on constants (TILE * 2, N // 4): shapes are often
      // built so from Constant parameters. Python semantics; no overflow.
      auto a = constantOf(v->operands[0]);
      auto b = constantOf(v->operands[1]);
      if (!a || !b || a->kind != ir::Const::Kind::Int || b->kind != ir::Const::Kind::Int) return std::nullopt;
      int64_t r = 0;
      bool ok = true;
      switch (v->op) {
        case ir::Op::Add: ok = !__builtin_add_overflow(a->i, b->i, &r); break;
        case ir::Op::Sub: ok = !__builtin_sub_overflow(a->i, b->i, &r); break;
        case ir::Op::Mul: ok = !__builtin_mul_overflow(a->i, b->i, &r); break;
        case ir::Op::Mod:   // the sign of the divisor (Python)
          ok = b->i != 0 && !(a->i == INT64_MIN && b->i == -1);
          if (ok) r = a->i % b->i + ((a->i % b->i != 0) && ((a->i < 0) != (b->i < 0)) ? b->i : 0);
          break;
        default:
          ok = b->i != 0 && !(a->i == INT64_MIN && b->i == -1);
          if (ok) r = a->i / b->i - ((a->i % b->i != 0) && ((a->i < 0) != (b->i < 0)));
      }
      if (!ok) return std::nullopt;
      return ir::Const::integer(r);
    }
    case ir::Op::GetItem: {
      auto t = constantOf(v->operands[0]);
      if (!t || t->kind != ir::Const::Kind::Tuple) return std::nullopt;
      const int64_t n = static_cast<int64_t>(t->elems.size());
      if (auto k = constantInt(v->operands[1])) {
        const int64_t i = *k < 0 ? *k + n : *k;
        if (i < 0 || i >= n) return std::nullopt;
        return t->elems[i];
      }
      std::optional<int64_t> b[3];
      if (!constantSliceBounds(v->operands[1], b) || (b[2] && *b[2] == 0)) return std::nullopt;
      std::vector<ir::Const> elems;
      for (int64_t i : slicePositions(n, b[0], b[1], b[2].value_or(1))) elems.push_back(t->elems[i]);
      return ir::Const::tuple(std::move(elems));
    }
    case ir::Op::GetAttr: {
      // A DevicePipeline argument's traits (cuda.shared.array(..., alignment=p.buffer_alignment)).
      int64_t value = 0;
      if (v->operands[0]->type && mathdx_tensors::pipelineConstant(v->operands[0]->type, v->name, &value))
        return ir::Const::integer(value);
      return std::nullopt;
    }
    case ir::Op::Cast:
      // An integer constant converted to another integer type keeps its value
      // as far as shapes and indices are concerned.
      if (v->type->isInt()) {
        auto c = constantOf(v->operands[0]);
        if (c && (c->kind == ir::Const::Kind::Int || c->kind == ir::Const::Kind::Bool))
          return ir::Const::integer(c->i);
      }
      return std::nullopt;
    default:
      return std::nullopt;
  }
}

std::vector<int64_t> slicePositions(int64_t n, std::optional<int64_t> start, std::optional<int64_t> stop,
                                    int64_t step) {
  auto clamp = [&](std::optional<int64_t> v, int64_t dflt) {
    if (!v) return dflt;
    const int64_t x = *v < 0 ? *v + n : *v;
    return step > 0 ? std::min(std::max<int64_t>(x, 0), n) : std::min(std::max<int64_t>(x, -1), n - 1);
  };
  const int64_t first = clamp(start, step > 0 ? 0 : n - 1);
  const int64_t end = clamp(stop, step > 0 ? n : -1);
  std::vector<int64_t> out;
  for (int64_t i = first; step > 0 ? i < end : i > end; i += step) out.push_back(i);
  return out;
}

bool constantSliceBounds(const ir::Instr* slice, std::optional<int64_t> bounds[3]) {
  const bool call = slice->op == ir::Op::Call || slice->op == ir::Op::TupleMake;
  if (!call || slice->operands.empty()) return false;
  auto head = constantOf(slice->operands[0]);
  if (!head || head->kind != ir::Const::Kind::Symbol ||
      (head->s != "builtins.slice" && head->s.rfind("slice:", 0) != 0))
    return false;
  for (size_t k = 0; k < 3; ++k) {
    bounds[k] = std::nullopt;
    if (k + 1 >= slice->operands.size()) continue;
    auto c = constantOf(slice->operands[k + 1]);
    if (!c) return false;
    if (c->kind == ir::Const::Kind::None) continue;
    if (c->kind != ir::Const::Kind::Int && c->kind != ir::Const::Kind::Bool) return false;
    bounds[k] = c->i;
  }
  return true;
}

std::optional<int64_t> constantInt(const ir::Instr* v) {
  auto c = constantOf(v);
  if (c && (c->kind == ir::Const::Kind::Int || c->kind == ir::Const::Kind::Bool)) return c->i;
  return std::nullopt;
}

// ---- Emitter -----------------------------------------------------------------

ir::Instr* Emitter::append(std::unique_ptr<ir::Instr> in) {
  in->parent = block_;
  out_.push_back(std::move(in));
  return out_.back().get();
}

ir::Instr* Emitter::emit(ir::Op op, const Type* type, std::vector<ir::Instr*> operands) {
  return append(fn_.make(op, type, std::move(operands), loc_));
}

ir::Instr* Emitter::constant(ir::Const c, const Type* type) {
  ir::Instr* in = emit(ir::Op::Const, type, {});
  in->cval = std::move(c);
  return in;
}

ir::Instr* Emitter::intrinsic(ir::Intrinsic id, const Type* type, std::vector<ir::Instr*> operands,
                              std::vector<int64_t> ints) {
  ir::Instr* in = emit(ir::Op::Intrinsic, type, std::move(operands));
  in->intrinsic = id;
  in->ints = std::move(ints);
  return in;
}

ir::Instr* Emitter::convert(ir::Instr* v, const Type* to) {
  if (v->type == to) return v;
  // A value never assigned on this path: an undefined value of the wanted type.
  if (v->op == ir::Op::Undef || v->type->is(TypeKind::Undef)) return emit(ir::Op::Undef, to, {});
  const Type* from = v->type;
  if (from->isScalar() && to->isScalar()) return emit(ir::Op::Cast, to, {v});
  // Optional: None -> (absent, undefined value); a number -> (present, it);
  // an optional used as a number gives its value after numba's run-time
  // check for None (a TypeError there; a message and a trap on the GPU).
  if (isOptional(to) && !isOptional(from)) {
    ir::Instr* marker = constant(ir::Const::symbol(to->elems[0]->name), to->elems[0]);
    bool none = from->is(TypeKind::None);
    ir::Instr* present = constant(ir::Const::boolean(!none), boolTy());
    ir::Instr* value = none ? emit(ir::Op::Undef, optionalValue(to), {}) : convert(v, optionalValue(to));
    return emit(ir::Op::TupleMake, to, {marker, present, value});
  }
  if (isOptional(from) && to->isScalar()) {
    ir::Instr* value = element(v, 2);
    intrinsic(ir::Intrinsic::NoneCheck, voidTy(), {element(v, 1), value});
    return convert(value, to);
  }
  // nvmath's vector types of two floats and complex numbers convert both
  // ways, the real part in x and the imaginary part in y: what lets a
  // complex64 array's item be stored into a float16x2 array (complex32) and back.
  if (from->isComplex() && isComplexPairVector(to)) {
    const Type* part = scalarTy(complexPart(from->scalar));
    ir::Instr* re = intrinsic(ir::Intrinsic::ComplexReal, part, {v});
    ir::Instr* im = intrinsic(ir::Intrinsic::ComplexImag, part, {v});
    return emit(ir::Op::TupleMake, to, {convert(re, to->elems[0]), convert(im, to->elems[1])});
  }
  if (isComplexPairVector(from) && to->isComplex()) {
    const Type* part = scalarTy(complexPart(to->scalar));
    return intrinsic(ir::Intrinsic::ComplexMake, to, {convert(element(v, 0), part), convert(element(v, 1), part)});
  }
  if (from->is(TypeKind::Tuple) && to->is(TypeKind::Tuple) && from->elems.size() == to->elems.size()) {
    std::vector<ir::Instr*> elems;
    for (size_t i = 0; i < to->elems.size(); ++i)
      elems.push_back(convert(element(v, static_cast<int64_t>(i)), to->elems[i]));
    return emit(ir::Op::TupleMake, to, std::move(elems));
  }
  if (from->is(TypeKind::Array) && to->is(TypeKind::Array) && from->scalar == to->scalar && from->record == to->record && from->vector == to->vector &&
      from->ndim == to->ndim && from->space == to->space &&
      (to->layout == Layout::A || to->layout == from->layout)) {
    // numba's layout merge (C or F joining A at a block parameter): the same
    // view, re-typed through an array_view with offset 0 and its own shape and strides.
    std::vector<ir::Instr*> ops = {v, constInt(0)};
    for (ir::Op o : {ir::Op::ArrayDim, ir::Op::ArrayStride})
      for (int d = 0; d < from->ndim; ++d) ops.push_back(perDim(o, v, d));
    return emit(ir::Op::ArrayView, to, ops);
  }
  throw CompileError("", loc_.line, loc_.col, "cast",
                     "internal error: cannot convert " + typeToString(from) + " to " +
                         typeToString(to));
}

ir::Instr* Emitter::element(ir::Instr* tuple, int64_t i) {
  if (tuple->op == ir::Op::TupleMake) return tuple->operands.at(static_cast<size_t>(i));
  ir::Instr* e = emit(ir::Op::TupleGet, tuple->type->elems.at(static_cast<size_t>(i)), {tuple});
  e->index = i;
  return e;
}

ir::Instr* Emitter::perDim(ir::Op op, ir::Instr* arr, int d) {
  ir::Instr* v = emit(op, i64Ty(), {arr});
  v->index = d;
  return v;
}

std::vector<ir::Instr*> Emitter::elements(ir::Instr* tuple) {
  std::vector<ir::Instr*> out;
  for (size_t i = 0; i < tuple->type->elems.size(); ++i)
    out.push_back(element(tuple, static_cast<int64_t>(i)));
  return out;
}

ir::Instr* Emitter::truth(ir::Instr* v) {
  const Type* t = v->type;
  if (t == boolTy()) return v;
  if (t->isScalar()) return emit(ir::Op::Truth, boolTy(), {v});
  if (t->isTile() && t->shape.empty()) return truth(intrinsic(ir::Intrinsic::TileItem, scalarTy(t->scalar), {v}));
  if (t->is(TypeKind::None)) return constant(ir::Const::boolean(false), boolTy());
  if (isOptional(t))   // None is false, else the value's truth
    return emit(ir::Op::BitAnd, boolTy(), {element(v, 1), truth(element(v, 2))});
  if (t->is(TypeKind::Tuple)) return constant(ir::Const::boolean(!t->elems.empty()), boolTy());
  throw CompileError("", loc_.line, loc_.col, "truth",
                     "internal error: no truth value for " + typeToString(t));
}

// ---- Site ------------------------------------------------------------------------

std::string Site::construct() const {
  if (instr->op == ir::Op::GetAttr) return "getattr ." + std::string(name);
  return std::string(name);
}

void Site::fail(std::string message, std::string hint) const {
  ctx.fail(instr, construct(), std::move(message), std::move(hint));
}

std::vector<ir::Instr*> Site::bind(const std::vector<std::string_view>& params, size_t required) const {
  std::vector<ir::Instr*> bound(params.size(), nullptr);
  if (args.size() > params.size())
    fail(std::string(name) + "() takes at most " + std::to_string(params.size()) +
         " arguments (" + std::to_string(args.size()) + " given)");
  for (size_t i = 0; i < args.size(); ++i) bound[i] = args[i];
  for (size_t k = 0; k < kw_names.size(); ++k) {
    size_t i = 0;
    while (i < params.size() && params[i] != kw_names[k]) ++i;
    if (i == params.size())
      fail(std::string(name) + "() got an unexpected keyword argument '" + kw_names[k] + "'");
    if (bound[i])
      fail(std::string(name) + "() got multiple values for argument '" + kw_names[k] + "'");
    bound[i] = kw_args[k];
  }
  for (size_t i = 0; i < required; ++i)
    if (!bound[i])
      fail(std::string(name) + "() missing required argument '" + std::string(params[i]) + "'");
  return bound;
}

void Site::expectArgs(size_t n) const { expectArgs(n, n); }

void Site::expectArgs(size_t min, size_t max) const {
  if (!kw_names.empty())
    fail(std::string(name) + "() takes no keyword arguments");
  if (args.size() < min || args.size() > max) {
    std::string want = min == max ? std::to_string(min)
                                  : std::to_string(min) + " to " + std::to_string(max);
    fail(std::string(name) + "() takes " + want + " argument" + (max == 1 ? "" : "s") + " (" +
         std::to_string(args.size()) + " given)");
  }
}

}  // namespace cj::typeinfer
