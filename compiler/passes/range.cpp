// Integer range analysis and the facts it proves (range.h).
//
// Intervals are kept as 128-bit integers, so every 64-bit operation's exact
// result is representable and "does it fit the type" is one comparison. The
// solver sweeps the blocks in reverse post-order until nothing changes:
// values start empty (nothing reaches them yet) and only grow; a block
// parameter that keeps growing is widened to the next threshold (a constant
// of the function, a special-register or array-dimension bound, the type's
// limit), so loops converge in a few sweeps. Two descending sweeps then
// tighten what widening overshot. All transfer functions are monotone and
// sound, so any value the solver ends with contains every value the program
// can produce there.
#include "passes/range.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>
#include <vector>

#include "ir/cfg.h"

namespace cj::passes {
namespace {

using ir::Block;
using ir::Instr;
using ir::Op;

__extension__ typedef __int128 Wide;

constexpr int kWidenAfter = 3;     // changes of a block parameter before it is widened
constexpr int kMaxSweeps = 200;    // no fixpoint by then: prove nothing
constexpr int kNarrowSweeps = 2;

struct Interval {
  Wide lo = 1, hi = 0;   // the default is empty: no value reaches here (yet)
  bool empty() const { return lo > hi; }
  bool operator==(const Interval& o) const { return (empty() && o.empty()) || (lo == o.lo && hi == o.hi); }
  bool operator!=(const Interval& o) const { return !(*this == o); }
};

Interval span(Wide lo, Wide hi) { return Interval{lo, hi}; }
Interval join(const Interval& a, const Interval& b) {
  if (a.empty()) return b;
  if (b.empty()) return a;
  return {std::min(a.lo, b.lo), std::max(a.hi, b.hi)};
}
Interval meet(const Interval& a, const Interval& b) { return {std::max(a.lo, b.lo), std::min(a.hi, b.hi)}; }

bool isIntLike(const Type* t) { return t->isScalar() && (t->isInt() || t->isBool()); }
Wide pow2(int n) { return Wide{1} << n; }
Wide typeMin(const Type* t) { return t->isBool() || !t->isSigned() ? 0 : -pow2(t->bits() - 1); }
Wide typeMax(const Type* t) {
  if (t->isBool()) return 1;
  return t->isSigned() ? pow2(t->bits() - 1) - 1 : pow2(t->bits()) - 1;
}
Interval full(const Type* t) { return {typeMin(t), typeMax(t)}; }
bool fits(const Interval& a, const Type* t) { return a.lo >= typeMin(t) && a.hi <= typeMax(t); }
// The range of a wrapping operation whose exact result is `exact`.
Interval fitOrFull(const std::optional<Interval>& exact, const Type* t) {
  return exact && fits(*exact, t) ? *exact : full(t);
}

// Floor division of 128-bit values (the operands stay far from overflow).
Wide floorDiv(Wide a, Wide b) {
  Wide q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

// The exact result range of a + b, a - b, a * b (nullopt if it could leave
// 128 bits, which only multiplication of huge operands can).
std::optional<Interval> exactArith(Op op, const Interval& a, const Interval& b) {
  switch (op) {
    case Op::Add: return span(a.lo + b.lo, a.hi + b.hi);
    case Op::Sub: return span(a.lo - b.hi, a.hi - b.lo);
    case Op::Mul: {
      Wide corners[4];
      const Wide xs[2] = {a.lo, a.hi}, ys[2] = {b.lo, b.hi};
      for (int i = 0; i < 4; ++i) {
        if (__builtin_mul_overflow(xs[i / 2], ys[i % 2], &corners[i])) return std::nullopt;
      }
      return span(*std::min_element(corners, corners + 4), *std::max_element(corners, corners + 4));
    }
    default: return std::nullopt;
  }
}

// The same bits read as a signed / unsigned number of t's width, where the
// interval says that reading changes no value.
std::optional<Interval> signedView(const Interval& a, const Type* t) {
  if (t->isSigned() || a.hi < pow2(t->bits() - 1)) return a;
  return std::nullopt;
}
std::optional<Interval> unsignedView(const Interval& a, const Type* t) {
  if (!t->isSigned() || a.lo >= 0) return a;
  return std::nullopt;
}

// What the hardware guarantees for the special registers (CUDA's launch
// limits: blocks of at most 1024 x 1024 x 64 threads, grids of at most
// (2^31 - 1) x 65535 x 65535 blocks).
struct SregBound {
  ir::Intrinsic id;
  int64_t lo, hi;
};
constexpr SregBound kSregs[] = {
    {ir::Intrinsic::TidX, 0, 1023},           {ir::Intrinsic::TidY, 0, 1023},       {ir::Intrinsic::TidZ, 0, 63},
    {ir::Intrinsic::NtidX, 1, 1024},          {ir::Intrinsic::NtidY, 1, 1024},      {ir::Intrinsic::NtidZ, 1, 64},
    {ir::Intrinsic::CtaidX, 0, 2147483646},   {ir::Intrinsic::CtaidY, 0, 65534},    {ir::Intrinsic::CtaidZ, 0, 65534},
    {ir::Intrinsic::NctaidX, 1, 2147483647},  {ir::Intrinsic::NctaidY, 1, 65535},   {ir::Intrinsic::NctaidZ, 1, 65535},
    {ir::Intrinsic::LaneId, 0, 31},            {ir::Intrinsic::WarpSize, 32, 32},
};

const SregBound* sregBound(ir::Intrinsic id) {
  for (const SregBound& s : kSregs)
    if (id == s.id) return &s;
  return nullptr;
}

// An array never has more elements than (2^63 - 1) / itemsize: numpy, CuPy
// and the CUDA array interface refuse arrays of 2^63 bytes or more.
Wide dimBound(const Type* array) { return (pow2(63) - 1) / scalarByteSize(array->scalar); }

// The shape of a shared or local array with a constant shape; empty otherwise
// (dynamic shared memory has shape () or 0 and its length is known at launch).
std::vector<int64_t> constantShape(const Instr* arr) {
  if (!arr->isIntrinsic(ir::Intrinsic::SharedArray) && !arr->isIntrinsic(ir::Intrinsic::LocalArray)) return {};
  if (static_cast<int>(arr->ints.size()) != arr->type->ndim) return {};
  for (int64_t n : arr->ints)
    if (n <= 0) return {};
  return arr->ints;
}

// The range object a range iterator walks: through block parameters that
// only ever receive one getiter (a loop passes its iterator around).
const Instr* iteratorRange(const Instr* it) {
  std::vector<const Instr*> work{it}, seen;
  const Instr* source = nullptr;
  while (!work.empty()) {
    const Instr* p = work.back();
    work.pop_back();
    if (std::find(seen.begin(), seen.end(), p) != seen.end()) continue;
    seen.push_back(p);
    if (seen.size() > 32) return nullptr;
    if (p->op != Op::Param) {
      if (source && source != p) return nullptr;
      source = p;
      continue;
    }
    const Block* b = p->parent;
    if (!b || !b->parent || b == b->parent->entry()) return nullptr;   // a function argument
    for (const Block* pred : b->preds)
      for (const ir::Edge& e : pred->terminator()->succs)
        if (e.target == b) work.push_back(e.args.at(p->index));
  }
  if (!source || source->op != Op::GetIter || source->operands[0]->op != Op::RangeMake) return nullptr;
  return source->operands[0];
}

std::optional<int64_t> intConstant(const Instr* v) {
  if (v->op == Op::Const && v->cval.kind == ir::Const::Kind::Int) return v->cval.i;
  return std::nullopt;
}

class Analysis {
 public:
  explicit Analysis(ir::Function& fn) : fn_(fn), dom_(fn) {
    fn_.computePreds();
    rpo_ = dom_.rpo();
    collectThresholds();
  }

  bool solve() {
    for (int sweep = 0; sweep < kMaxSweeps; ++sweep) {
      if (!this->sweep(/*ascending=*/true)) {
        for (int i = 0; i < kNarrowSweeps; ++i) this->sweep(/*ascending=*/false);
        return true;
      }
    }
    return false;
  }

  // Sets Instr::facts from the solution.
  bool setFacts() {
    bool changed = false;
    for (Block* b : rpo_) {
      for (auto& in : b->instrs) {
        uint32_t f = factsOf(*in, b);
        changed = changed || f != in->facts;
        in->facts = f;
      }
    }
    return changed;
  }

 private:
  using Env = std::map<const Instr*, Interval>;

  // ---- values ----------------------------------------------------------------

  Interval valueOf(const Instr* v) const {
    if (!isIntLike(v->type)) return {};
    auto it = value_.find(v);
    return it == value_.end() ? Interval{} : it->second;
  }

  // v's range where block b runs: narrowed by the branches that lead to b.
  Interval at(const Instr* v, const Block* b) const {
    Interval r = valueOf(v);
    auto e = env_.find(b);
    if (e != env_.end()) {
      auto f = e->second.find(v);
      if (f != e->second.end()) r = meet(r, f->second);
    }
    return r;
  }

  // One sweep over the blocks; true if any value changed.
  bool sweep(bool ascending) {
    bool changed = false;
    for (Block* b : rpo_) {
      env_[b] = blockEnv(b);
      for (auto& p : b->params) {
        if (!isIntLike(p->type)) continue;
        Interval now = b == fn_.entry() ? full(p->type) : incoming(b, p->index);   // arguments: unknown
        changed |= update(p.get(), now, ascending, /*param=*/true);
      }
      for (auto& in : b->instrs) {
        if (!in->hasResult() || !isIntLike(in->type)) continue;
        changed |= update(in.get(), transfer(*in, b), ascending, /*param=*/false);
      }
    }
    return changed;
  }

  bool update(const Instr* v, Interval now, bool ascending, bool param) {
    Interval old = valueOf(v);
    if (ascending) {
      now = join(old, now);
      if (param && now != old && ++changes_[v] > kWidenAfter) now = widen(old, now, v->type);
    }
    if (now == old) return false;
    value_[v] = now;
    return true;
  }

  // The join of what every edge into b passes to parameter `index`.
  Interval incoming(const Block* b, int64_t index) {
    Interval r;
    for (const Block* pred : b->preds) {
      if (!env_.count(pred)) continue;   // not reached yet (or unreachable)
      const auto& succs = pred->terminator()->succs;
      for (size_t k = 0; k < succs.size(); ++k) {
        if (succs[k].target != b) continue;
        const Instr* arg = succs[k].args.at(index);
        Env facts = edgeFacts(pred, k);
        auto f = facts.find(arg);
        r = join(r, f != facts.end() ? f->second : at(arg, pred));
      }
    }
    return r;
  }

  // The narrowings that hold in b: its immediate dominator's, plus the
  // branch condition when b has one predecessor (one edge into it).
  Env blockEnv(const Block* b) {
    if (b == fn_.entry()) return {};
    Env env = env_[dom_.idom(b)];
    if (b->preds.size() != 1) return env;
    const Block* pred = b->preds[0];
    const auto& succs = pred->terminator()->succs;
    if (succs.size() != 2 || succs[0].target == succs[1].target) return env;
    for (const auto& [v, r] : edgeFacts(pred, succs[0].target == b ? 0 : 1)) {
      auto it = env.find(v);
      env[v] = it == env.end() ? r : meet(it->second, r);
    }
    return env;
  }

  // What taking successor `k` of pred's terminator says about values.
  Env edgeFacts(const Block* pred, size_t k) {
    Env facts;
    const Instr* term = pred->terminator();
    if (term->op != Op::CondBr) return facts;
    const Instr* cond = term->operands[0];
    bool taken = k == 0;
    while (cond->op == Op::Not) {
      cond = cond->operands[0];
      taken = !taken;
    }
    if (cond->op == Op::Truth && isIntLike(cond->operands[0]->type)) {
      const Instr* x = cond->operands[0];
      Interval r = at(x, pred);
      if (!taken) {
        narrow(&facts, x, span(0, 0), pred);
      } else if (!r.empty() && (r.lo == 0 || r.hi == 0)) {
        narrow(&facts, x, r.lo == 0 ? span(1, r.hi) : span(r.lo, -1), pred);
      }
      return facts;
    }
    if (cond->op == Op::IterValid) {
      if (taken) iteratorFacts(cond, pred, &facts);
      return facts;
    }
    Op rel = cond->op;
    if (rel != Op::Lt && rel != Op::Le && rel != Op::Gt && rel != Op::Ge && rel != Op::Eq && rel != Op::Ne)
      return facts;
    const Instr* a = cond->operands[0];
    const Instr* b = cond->operands[1];
    if (!isIntLike(a->type) || !isIntLike(b->type)) return facts;
    if (!taken) {   // the false edge: the negated relation
      static const std::map<Op, Op> kNegate = {{Op::Lt, Op::Ge}, {Op::Le, Op::Gt}, {Op::Gt, Op::Le},
                                               {Op::Ge, Op::Lt}, {Op::Eq, Op::Ne}, {Op::Ne, Op::Eq}};
      rel = kNegate.at(rel);
    }
    if (rel == Op::Gt || rel == Op::Ge) {   // a > b is b < a
      std::swap(a, b);
      rel = rel == Op::Gt ? Op::Lt : Op::Le;
    }
    Interval ra = at(a, pred), rb = at(b, pred);
    if (ra.empty() || rb.empty()) return facts;
    Wide strict = rel == Op::Lt ? 1 : 0;
    switch (rel) {
      case Op::Lt:
      case Op::Le:
        narrow(&facts, a, span(typeMin(a->type), rb.hi - strict), pred);
        narrow(&facts, b, span(ra.lo + strict, typeMax(b->type)), pred);
        break;
      case Op::Eq:
        narrow(&facts, a, rb, pred);
        narrow(&facts, b, ra, pred);
        break;
      case Op::Ne:   // only a bound that is the other side's single value moves
        if (rb.lo == rb.hi && (ra.lo == rb.lo || ra.hi == rb.lo))
          narrow(&facts, a, ra.lo == rb.lo ? span(ra.lo + 1, ra.hi) : span(ra.lo, ra.hi - 1), pred);
        if (ra.lo == ra.hi && (rb.lo == ra.lo || rb.hi == ra.lo))
          narrow(&facts, b, rb.lo == ra.lo ? span(rb.lo + 1, rb.hi) : span(rb.lo, rb.hi - 1), pred);
        break;
      default: break;
    }
    return facts;
  }

  // Records v in `r`, and the same for the values v is a lossless cast of
  // (`cast v3` of tid.x is narrowed together with v3).
  void narrow(Env* facts, const Instr* v, const Interval& r, const Block* where) {
    for (int depth = 0; depth < 4; ++depth) {
      auto it = facts->find(v);
      Interval now = meet(it != facts->end() ? it->second : at(v, where), r);
      (*facts)[v] = now;
      if (v->op != Op::Cast || !isIntLike(v->operands[0]->type)) return;
      const Instr* from = v->operands[0];
      if (!fits(at(from, where), v->type)) return;   // the cast may change the value
      v = from;
    }
  }

  // On the edge where `iter_valid it` holds, the value the next `iter_next
  // it` of the block returns is inside the range: [start, stop) for a
  // positive step, (stop, start] for a negative one.
  void iteratorFacts(const Instr* valid, const Block* b, Env* facts) {
    const Instr* it = valid->operands[0];
    const Instr* next = nullptr;
    bool after = false;
    for (const auto& in : b->instrs) {
      if (in.get() == valid) after = true;
      else if (after && in->op == Op::IterNext && in->operands[0] == it) {
        if (next) return;   // advanced twice: not the value iter_valid saw
        next = in.get();
      }
    }
    const Instr* range = iteratorRange(it);
    if (!next || !range || !isIntLike(next->type)) return;
    auto r = rangeParts(range);
    if (!r) return;
    Interval inside = r->up ? span(r->start.lo, r->stop.hi - 1) : span(r->stop.lo + 1, r->start.hi);
    narrow(facts, next, inside, b);
  }

  // ---- transfer functions ------------------------------------------------------

  Interval transfer(const Instr& in, const Block* b) {
    const Type* t = in.type;
    if (t->isBool()) return span(0, 1);
    auto operand = [&](size_t k) { return at(in.operands.at(k), b); };
    switch (in.op) {
      case Op::Const: {
        if (in.cval.kind != ir::Const::Kind::Int && in.cval.kind != ir::Const::Kind::Bool) return full(t);
        Wide v = in.cval.i;
        if (!t->isSigned() && v < 0) v += pow2(64);   // unsigned 64-bit constants are stored bit-cast
        return fits(span(v, v), t) ? span(v, v) : full(t);
      }
      case Op::Intrinsic: {
        const SregBound* s = sregBound(in.intrinsic);
        if (!s) return full(t);
        Interval r = span(s->lo, s->hi);
        return fits(r, t) ? r : full(t);
      }
      case Op::Cast: {
        if (!isIntLike(in.operands[0]->type)) return full(t);
        Interval a = operand(0);
        if (a.empty()) return a;
        return fits(a, t) ? a : full(t);
      }
      case Op::Add:
      case Op::Sub:
      case Op::Mul: {
        Interval a = operand(0), c = operand(1);
        if (a.empty() || c.empty()) return {};
        return fitOrFull(exactArith(in.op, a, c), t);
      }
      case Op::Neg: {
        Interval a = operand(0);
        if (a.empty()) return a;
        return fitOrFull(span(-a.hi, -a.lo), t);
      }
      case Op::Invert: {   // ~x: -x - 1 (signed), max - x (unsigned)
        Interval a = operand(0);
        if (a.empty()) return a;
        return t->isSigned() ? span(-a.hi - 1, -a.lo - 1) : span(typeMax(t) - a.hi, typeMax(t) - a.lo);
      }
      case Op::FloorDiv: return floorDivRange(operand(0), operand(1), t);
      case Op::Mod: return modRange(operand(0), operand(1), t);
      case Op::RShift: {
        Interval a = operand(0), s = operand(1);
        if (a.empty() || s.empty()) return {};
        if (s.lo < 0 || s.hi >= t->bits()) return full(t);
        int lo = static_cast<int>(s.lo), hi = static_cast<int>(s.hi);
        if (a.lo >= 0) return span(a.lo >> hi, a.hi >> lo);
        if (a.hi < 0) return span(a.lo >> lo, a.hi >> hi);
        return span(a.lo >> lo, a.hi >> lo);
      }
      case Op::LShift: {
        Interval a = operand(0), s = operand(1);
        if (a.empty() || s.empty()) return {};
        if (s.lo != s.hi || s.lo < 0 || s.lo >= t->bits()) return full(t);
        Wide m = pow2(static_cast<int>(s.lo));
        return fitOrFull(exactArith(Op::Mul, a, span(m, m)), t);
      }
      case Op::BitAnd: {
        Interval a = operand(0), c = operand(1);
        if (a.empty() || c.empty()) return {};
        if (a.lo >= 0 && c.lo >= 0) return span(0, std::min(a.hi, c.hi));
        if (a.lo >= 0) return span(0, a.hi);
        if (c.lo >= 0) return span(0, c.hi);
        return full(t);
      }
      case Op::BitOr:
      case Op::BitXor: {
        Interval a = operand(0), c = operand(1);
        if (a.empty() || c.empty()) return {};
        if (a.lo < 0 || c.lo < 0) return full(t);
        Wide m = std::max(a.hi, c.hi), top = 1;
        while (top <= m) top <<= 1;
        return span(in.op == Op::BitOr ? std::max(a.lo, c.lo) : 0, top - 1);
      }
      case Op::Select: return join(operand(1), operand(2));
      case Op::ArrayDim: {
        const Instr* arr = in.operands[0];
        std::vector<int64_t> shape = constantShape(arr);
        if (!shape.empty() && in.index >= 0 && in.index < static_cast<int64_t>(shape.size()))
          return span(shape[in.index], shape[in.index]);
        return fits(span(0, dimBound(arr->type)), t) ? span(0, dimBound(arr->type)) : full(t);
      }
      case Op::ArraySize: {
        const Instr* arr = in.operands[0];
        std::vector<int64_t> shape = constantShape(arr);
        if (!shape.empty()) {
          Wide n = 1;
          for (int64_t d : shape) n *= d;
          if (n <= dimBound(arr->type)) return span(n, n);
        }
        return fits(span(0, dimBound(arr->type)), t) ? span(0, dimBound(arr->type)) : full(t);
      }
      case Op::TupleGet: {
        const Instr* tup = in.operands[0];
        if (tup->op == Op::TupleMake && in.index >= 0 && in.index < static_cast<int64_t>(tup->operands.size()))
          return at(tup->operands[in.index], b);
        return full(t);
      }
      case Op::IterNext: return iteratorValues(in, t);
      default: return full(t);
    }
  }

  // Python floor division (numba: x // 0 == 0).
  static Interval floorDivRange(const Interval& a, const Interval& c, const Type* t) {
    if (a.empty() || c.empty()) return {};
    if (c.lo > 0 || c.hi < 0) {   // the divisor's sign is known: the quotient is monotone
      Wide q[4] = {floorDiv(a.lo, c.lo), floorDiv(a.lo, c.hi), floorDiv(a.hi, c.lo), floorDiv(a.hi, c.hi)};
      return fitOrFull(span(*std::min_element(q, q + 4), *std::max_element(q, q + 4)), t);
    }
    if (a.lo >= 0 && c.lo >= 0) return span(0, a.hi);   // x // 0 == 0
    return full(t);
  }

  // Python modulo: the sign of the divisor (numba: x % 0 == 0).
  static Interval modRange(const Interval& a, const Interval& c, const Type* t) {
    if (a.empty() || c.empty()) return {};
    if (c.lo >= 0) {
      Interval r = span(0, std::max<Wide>(c.hi - 1, 0));
      return a.lo >= 0 ? span(0, std::min(r.hi, a.hi)) : r;
    }
    if (c.hi <= 0) return span(std::min<Wide>(c.lo + 1, 0), 0);
    return full(t);
  }

  // Every value `iter_next` of a range iterator returns, the one past the end
  // included: start .. stop - 1 + step for a positive step. Unknown if the
  // iterator's own `cur + step` could wrap.
  Interval iteratorValues(const Instr& in, const Type* t) const {
    const Instr* range = iteratorRange(in.operands[0]);
    auto r = range ? rangeParts(range) : std::nullopt;
    if (!r) return full(t);
    if (r->start.empty() || r->stop.empty() || r->step.empty()) return {};
    Interval v = r->up ? span(r->start.lo, std::max(r->start.hi, r->stop.hi - 1 + r->step.hi))
                       : span(std::min(r->start.lo, r->stop.lo + 1 + r->step.lo), r->start.hi);
    return fits(v, t) ? v : full(t);
  }

  // A range whose step has a known sign: start, stop and step where the
  // range is made. Empty intervals (unreached) pass through.
  struct RangeParts {
    Interval start, stop, step;
    bool up;   // step > 0 (else step < 0)
  };
  std::optional<RangeParts> rangeParts(const Instr* range) const {
    const Block* b = range->parent;
    RangeParts r{at(range->operands[0], b), at(range->operands[1], b), at(range->operands[2], b), true};
    if (r.step.empty()) return r;
    if (r.step.lo > 0) return r;
    // Unsigned ranges only count up (codegen tests cur < stop).
    if (r.step.hi < 0 && scalarSigned(range->type->scalar)) {
      r.up = false;
      return r;
    }
    return std::nullopt;
  }

  // ---- widening --------------------------------------------------------------

  void collectThresholds() {
    std::set<Wide> s;
    auto add = [&](Wide v) {
      for (Wide d = -1; d <= 1; ++d) s.insert(v + d);
    };
    for (const SregBound& r : kSregs) {
      add(r.lo);
      add(r.hi);
    }
    for (const auto& b : fn_.blocks) {
      for (const auto& in : b->instrs) {
        if (auto c = intConstant(in.get())) add(*c);
        for (const Instr* o : in->operands)
          if (o->type->is(TypeKind::Array)) add(dimBound(o->type));
      }
      for (const auto& p : b->params)
        if (p->type->is(TypeKind::Array)) add(dimBound(p->type));
    }
    thresholds_.assign(s.begin(), s.end());
  }

  // The bounds that moved go to the next threshold out (or the type's limit).
  Interval widen(const Interval& old, const Interval& now, const Type* t) const {
    if (old.empty()) return now;
    Interval r = now;
    if (now.lo < old.lo) {
      r.lo = typeMin(t);
      auto it = std::upper_bound(thresholds_.begin(), thresholds_.end(), now.lo);
      if (it != thresholds_.begin() && *std::prev(it) >= typeMin(t)) r.lo = *std::prev(it);
    }
    if (now.hi > old.hi) {
      r.hi = typeMax(t);
      auto it = std::lower_bound(thresholds_.begin(), thresholds_.end(), now.hi);
      if (it != thresholds_.end() && *it <= typeMax(t)) r.hi = *it;
    }
    return r;
  }

  // ---- facts -------------------------------------------------------------------

  // nsw / nuw for a op c on type t: the exact result of the operands read as
  // signed (unsigned) numbers fits the signed (unsigned) range.
  static uint32_t noWrapFacts(Op op, const Interval& a, const Interval& c, const Type* t) {
    uint32_t f = 0;
    auto sa = signedView(a, t), sc = signedView(c, t);
    if (sa && sc) {
      auto r = exactArith(op, *sa, *sc);
      if (r && r->lo >= -pow2(t->bits() - 1) && r->hi < pow2(t->bits() - 1)) f |= ir::kFactNsw;
    }
    auto ua = unsignedView(a, t), uc = unsignedView(c, t);
    if (ua && uc) {
      auto r = exactArith(op, *ua, *uc);
      if (r && r->lo >= 0 && r->hi < pow2(t->bits())) f |= ir::kFactNuw;
    }
    return f;
  }

  uint32_t factsOf(const Instr& in, const Block* b) const {
    auto operand = [&](size_t k) { return at(in.operands.at(k), b); };
    switch (in.op) {
      case Op::Add:
      case Op::Sub:
      case Op::Mul:
      case Op::LShift: {
        const Type* t = in.type;
        if (!t->isInt()) return 0;
        Interval a = operand(0), c = operand(1);
        if (a.empty() || c.empty()) return 0;
        Op op = in.op;
        if (op == Op::LShift) {   // a << s is a * 2^s for a constant shift inside the width
          if (c.lo != c.hi || c.lo < 0 || c.lo >= t->bits()) return 0;
          c = span(pow2(static_cast<int>(c.lo)), pow2(static_cast<int>(c.lo)));
          op = Op::Mul;
        }
        return noWrapFacts(op, a, c, t);
      }
      case Op::IterNext: {   // the iterator's own cur + step
        const Instr* range = iteratorRange(in.operands[0]);
        auto r = range ? rangeParts(range) : std::nullopt;
        if (!r || !in.type->isInt()) return 0;
        Interval cur = valueOf(&in);
        if (cur.empty() || r->step.empty()) return 0;
        return noWrapFacts(Op::Add, cur, r->step, in.type);
      }
      case Op::IterValid: {   // the step is known positive: the test is cur < stop
        const Instr* range = iteratorRange(in.operands[0]);
        auto r = range ? rangeParts(range) : std::nullopt;
        return r && r->up && !r->step.empty() ? uint32_t{ir::kFactNonNeg} : 0u;
      }
      case Op::FloorDiv:
      case Op::Mod: {
        if (!in.type->isInt()) return 0;
        Interval a = operand(0), c = operand(1);
        return !a.empty() && !c.empty() && a.lo >= 0 && c.lo > 0 ? uint32_t{ir::kFactNonNeg} : 0u;
      }
      case Op::Cast: {   // only a widening of a signed value has a choice (sext or zext)
        const Type* from = in.operands[0]->type;
        if (!in.type->isInt() || !from->isInt() || !from->isSigned() || from->bits() >= in.type->bits()) return 0;
        Interval a = operand(0);
        return !a.empty() && a.lo >= 0 ? uint32_t{ir::kFactNonNeg} : 0u;
      }
      default: {   // element accesses: load, store, atomics
        uint32_t f = 0;
        for (int k = 0, n = ir::elementIndexCount(in); k < n; ++k) {
          Interval r = operand(k + 1);
          if (!r.empty() && r.lo >= 0) f |= ir::indexNonNegFact(k);
        }
        return f;
      }
    }
  }

  ir::Function& fn_;
  ir::DominatorTree dom_;   // the passes here change facts only, never the CFG
  std::vector<Block*> rpo_;
  std::unordered_map<const Instr*, Interval> value_;
  std::map<const Block*, Env> env_;
  std::unordered_map<const Instr*, int> changes_;
  std::vector<Wide> thresholds_;
};

}  // namespace

bool ValueRange::run(ir::Function& fn) {
  if (fn.blocks.empty()) return false;
  bool had = false;
  for (auto& b : fn.blocks)
    for (auto& in : b->instrs) {
      had = had || in->facts;
      in->facts = 0;
    }
  Analysis analysis(fn);
  if (!analysis.solve()) return had;
  return analysis.setFacts() || had;
}

}  // namespace cj::passes
