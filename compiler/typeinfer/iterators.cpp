#include "typeinfer/iterators.h"

#include <limits>

#include "typeinfer/unify.h"

namespace cj::typeinfer {
namespace {

constexpr const char* kTupleIter = "iter:tuple";
constexpr const char* kEnumerateIter = "iter:enumerate";
constexpr const char* kZipIter = "iter:zip";

// The marker of a tuple-encoded iterator or iterable ("" for none).
std::string marker(const Type* t) {
  if (!t->is(TypeKind::Tuple) || t->elems.empty() || !t->elems[0]->is(TypeKind::Symbol)) return "";
  const std::string& n = t->elems[0]->name;
  return n.rfind("iter:", 0) == 0 ? n : "";
}

// The one type every element of a tuple iterates as.
const Type* tupleItemType(const FunctionContext& ctx, const ir::Instr* at, const Type* t) {
  if (t->elems.empty())
    ctx.fail(at, "for", "iterating over an empty tuple is not supported");
  const Type* u = t->elems[0];
  for (const Type* e : t->elems) {
    const Type* next = unifyTypes(u, e);
    if (!next)
      ctx.fail(at, "for", "iterating over " + typeToString(t) +
                              " is not supported: its elements have different types",
               "use a tuple whose elements share one type");
    u = next;
  }
  return u;
}

ir::Instr* symbolConst(Emitter& e, const char* name) {
  return e.constant(ir::Const::symbol(name), symbolTy(name));
}

// A fresh counter iterator over range(start, stop) (i64).
ir::Instr* counter(Emitter& e, ir::Instr* start, int64_t stop_value = std::numeric_limits<int64_t>::max()) {
  ir::Instr* stop = e.constInt(stop_value);
  ir::Instr* r = e.emit(ir::Op::RangeMake, rangeTy(Scalar::Int64), {start, stop, e.constInt(1)});
  return e.emit(ir::Op::GetIter, rangeIterTy(Scalar::Int64), {r});
}

ir::Instr* makeIterator(const FunctionContext& ctx, const ir::Instr* at, ir::Instr* v, Emitter& e) {
  const Type* t = v->type;
  const Type* it = iteratorType(ctx, at, t);
  if (t->is(TypeKind::Range)) return e.emit(ir::Op::GetIter, it, {v});
  std::string m = marker(t);
  if (m == kEnumerateObject) {
    ir::Instr* inner = makeIterator(ctx, at, e.element(v, 2), e);
    return e.emit(ir::Op::TupleMake, it, {symbolConst(e, kEnumerateIter), counter(e, e.element(v, 1)), inner});
  }
  if (m == kZipObject) {
    std::vector<ir::Instr*> ops = {symbolConst(e, kZipIter)};
    for (size_t k = 1; k < t->elems.size(); ++k) ops.push_back(makeIterator(ctx, at, e.element(v, k), e));
    return e.emit(ir::Op::TupleMake, it, ops);
  }
  return e.emit(ir::Op::TupleMake, it, {symbolConst(e, kTupleIter),
                                        counter(e, e.constInt(0), static_cast<int64_t>(t->elems.size())), v});
}

ir::Instr* valid(ir::Instr* it, Emitter& e) {
  if (it->type->is(TypeKind::RangeIter)) return e.emit(ir::Op::IterValid, boolTy(), {it});
  std::string m = marker(it->type);
  // A tuple's index runs over range(len(tuple)).
  if (m == kTupleIter) return valid(e.element(it, 1), e);
  if (m == kEnumerateIter) return valid(e.element(it, 2), e);
  // zip: every argument has a next item.
  ir::Instr* all = nullptr;
  for (size_t k = 1; k < it->type->elems.size(); ++k) {
    ir::Instr* v = valid(e.element(it, k), e);
    all = all ? e.emit(ir::Op::Select, boolTy(), {all, v, e.constant(ir::Const::boolean(false), boolTy())}) : v;
  }
  return all;
}

}  // namespace

const Type* iteratorType(const FunctionContext& ctx, const ir::Instr* at, const Type* t) {
  if (t->is(TypeKind::Range)) return rangeIterTy(t->scalar);
  std::string m = marker(t);
  if (m == kEnumerateObject)
    return tupleTy({symbolTy(kEnumerateIter), rangeIterTy(Scalar::Int64), iteratorType(ctx, at, t->elems[2])});
  if (m == kZipObject) {
    std::vector<const Type*> elems = {symbolTy(kZipIter)};
    for (size_t k = 1; k < t->elems.size(); ++k) elems.push_back(iteratorType(ctx, at, t->elems[k]));
    return tupleTy(elems);
  }
  if (t->is(TypeKind::Tuple) && m.empty()) {
    tupleItemType(ctx, at, t);
    return tupleTy({symbolTy(kTupleIter), rangeIterTy(Scalar::Int64), t});
  }
  ctx.fail(at, "for", "iterating over " + typeToString(t) + " is not supported",
           "loop over range(...), a tuple, enumerate(...) or zip(...)");
}

const Type* iteratorItemType(const FunctionContext& ctx, const ir::Instr* at, const Type* it) {
  if (it->is(TypeKind::RangeIter)) return scalarTy(it->scalar);
  std::string m = marker(it);
  if (m == kTupleIter) return tupleItemType(ctx, at, it->elems[2]);
  if (m == kEnumerateIter) return tupleTy({i64Ty(), iteratorItemType(ctx, at, it->elems[2])});
  if (m == kZipIter) {
    std::vector<const Type*> items;
    for (size_t k = 1; k < it->elems.size(); ++k) items.push_back(iteratorItemType(ctx, at, it->elems[k]));
    return tupleTy(items);
  }
  ctx.fail(at, "for", "not an iterator: " + typeToString(it));
}

const Type* iterationOpType(const FunctionContext& ctx, ir::Instr* in) {
  const Type* t = in->operands[0]->type;
  switch (in->op) {
    case ir::Op::GetIter: return iteratorType(ctx, in, t);
    case ir::Op::IterValid: iteratorItemType(ctx, in, t); return boolTy();
    default: return iteratorItemType(ctx, in, t);
  }
}

namespace {

ir::Instr* next(const FunctionContext& ctx, const ir::Instr* at, ir::Instr* it, Emitter& e) {
  const Type* t = it->type;
  if (t->is(TypeKind::RangeIter)) return e.emit(ir::Op::IterNext, scalarTy(t->scalar), {it});
  std::string m = marker(t);
  if (m == kTupleIter) {
    // The element at a run-time index: a select chain over the elements.
    const Type* item = iteratorItemType(ctx, at, t);
    ir::Instr* index = next(ctx, at, e.element(it, 1), e);
    std::vector<ir::Instr*> elems = e.elements(e.element(it, 2));
    ir::Instr* acc = e.convert(elems[0], item);
    for (size_t k = 1; k < elems.size(); ++k) {
      ir::Instr* is_k = e.emit(ir::Op::Eq, boolTy(), {index, e.constInt(static_cast<int64_t>(k))});
      acc = e.emit(ir::Op::Select, item, {is_k, e.convert(elems[k], item), acc});
    }
    return acc;
  }
  std::vector<ir::Instr*> items;
  if (m == kEnumerateIter) {
    items.push_back(next(ctx, at, e.element(it, 1), e));
    items.push_back(next(ctx, at, e.element(it, 2), e));
  } else {
    for (size_t k = 1; k < t->elems.size(); ++k) items.push_back(next(ctx, at, e.element(it, k), e));
  }
  std::vector<const Type*> types;
  for (ir::Instr* x : items) types.push_back(x->type);
  return e.emit(ir::Op::TupleMake, tupleTy(types), items);
}

}  // namespace

ir::Instr* lowerIterationOp(const FunctionContext& ctx, ir::Instr* in, Emitter& e) {
  ir::Instr* v = in->operands[0];
  bool range = in->op == ir::Op::GetIter ? v->type->is(TypeKind::Range) : v->type->is(TypeKind::RangeIter);
  if (range) return in;
  switch (in->op) {
    case ir::Op::GetIter: return makeIterator(ctx, in, v, e);
    case ir::Op::IterValid: return valid(v, e);
    default: return next(ctx, in, v, e);
  }
}

}  // namespace cj::typeinfer
