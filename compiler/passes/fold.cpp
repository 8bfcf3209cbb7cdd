#include "passes/fold.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <set>

namespace cj::passes {
namespace {

using ir::Const;
using ir::Instr;
using ir::Op;

// ---- integers: a value of type t is held in an int64 as its sign- (signed)
// or zero- (unsigned) extension, so widening casts are the identity. ----

int64_t wrap(uint64_t bits, const Type* t) {
  int w = t->bits();
  if (w >= 64) return static_cast<int64_t>(bits);
  uint64_t mask = (uint64_t{1} << w) - 1;
  bits &= mask;
  if (t->isSigned() && ((bits >> (w - 1)) & 1)) bits |= ~mask;
  return static_cast<int64_t>(bits);
}

int64_t minOf(const Type* t) { return t->bits() >= 64 ? INT64_MIN : -(int64_t{1} << (t->bits() - 1)); }

// Python // and % on signed ints (floor toward -inf; the remainder has the
// divisor's sign), plain udiv/urem on unsigned. Division by zero and
// MIN // -1 are left to run time.
std::optional<int64_t> intDivMod(Op op, const Type* t, int64_t a, int64_t b) {
  if (b == 0) return std::nullopt;
  if (!t->isSigned()) {
    uint64_t ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
    return wrap(op == Op::FloorDiv ? ua / ub : ua % ub, t);
  }
  if (b == -1) {
    if (op == Op::Mod) return 0;
    if (a == minOf(t)) return std::nullopt;   // overflows: undefined in LLVM
    return wrap(0 - static_cast<uint64_t>(a), t);
  }
  int64_t q = a / b, r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) {
    --q;
    r += b;
  }
  return wrap(static_cast<uint64_t>(op == Op::FloorDiv ? q : r), t);
}

// numba's int_power: repeated squaring in the type's width; a negative
// exponent gives 0 unless the base is 1 or -1 (0 raises: left unfolded).
std::optional<int64_t> intPow(const Type* t, int64_t a, int64_t b) {
  if (t->isSigned() && b < 0) {
    if (a == 0) return std::nullopt;
    if (a == 1) return 1;
    if (a == -1) return (b & 1) ? -1 : 1;
    return 0;
  }
  uint64_t exp = static_cast<uint64_t>(b);
  if (exp > 0x10000) return std::nullopt;   // numba switches to math.pow there
  uint64_t r = 1, base = static_cast<uint64_t>(a);
  while (exp) {
    if (exp & 1) r *= base;
    exp >>= 1;
    base *= base;
  }
  return wrap(r, t);
}

std::optional<int64_t> intBinary(Op op, const Type* t, int64_t a, int64_t b) {
  uint64_t ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
  bool shift_ok = !(t->isSigned() && b < 0) && ub < static_cast<uint64_t>(t->bits());
  switch (op) {
    case Op::Add: return wrap(ua + ub, t);
    case Op::Sub: return wrap(ua - ub, t);
    case Op::Mul: return wrap(ua * ub, t);
    case Op::FloorDiv:
    case Op::Mod: return intDivMod(op, t, a, b);
    case Op::Pow: return intPow(t, a, b);
    case Op::LShift:
      if (!shift_ok) return std::nullopt;   // poison in LLVM
      return wrap(ua << ub, t);
    case Op::RShift:
      if (!shift_ok) return std::nullopt;
      return t->isSigned() ? wrap(static_cast<uint64_t>(a >> b), t) : wrap(ua >> ub, t);
    case Op::BitAnd: return wrap(ua & ub, t);
    case Op::BitOr: return wrap(ua | ub, t);
    case Op::BitXor: return wrap(ua ^ ub, t);
    default: return std::nullopt;
  }
}

std::optional<bool> intCompare(Op op, const Type* t, int64_t a, int64_t b) {
  bool s = t->isSigned();
  uint64_t ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
  switch (op) {
    case Op::Lt: return s ? a < b : ua < ub;
    case Op::Le: return s ? a <= b : ua <= ub;
    case Op::Gt: return s ? a > b : ua > ub;
    case Op::Ge: return s ? a >= b : ua >= ub;
    case Op::Eq: return a == b;
    case Op::Ne: return a != b;
    default: return std::nullopt;
  }
}

// ---- floats: computed in the type's own precision (F = float or double). ----

// CPython's float_divmod, which numba follows for // and % on floats.
template <typename F>
void pyDivMod(F a, F b, F* floordiv, F* mod) {
  F m = std::fmod(a, b);
  F div = (a - m) / b;
  if (m != 0) {
    if ((b < 0) != (m < 0)) {
      m += b;
      div -= 1;
    }
  } else {
    m = std::copysign(F(0), b);
  }
  F fd;
  if (div != 0) {
    fd = std::floor(div);
    if (div - fd > F(0.5)) fd += 1;
  } else {
    fd = std::copysign(F(0), a / b);
  }
  *floordiv = fd;
  *mod = m;
}

template <typename F>
std::optional<double> floatBinary(Op op, F a, F b) {
  switch (op) {
    case Op::Add: return a + b;
    case Op::Sub: return a - b;
    case Op::Mul: return a * b;
    case Op::TrueDiv:
      if (b == 0) return std::nullopt;   // numba raises ZeroDivisionError
      return a / b;
    case Op::FloorDiv:
    case Op::Mod: {
      if (b == 0) return std::nullopt;
      F fd, m;
      pyDivMod(a, b, &fd, &m);
      return op == Op::FloorDiv ? fd : m;
    }
    // Pow of two floats is a libdevice call on the GPU; the host's pow may
    // round differently, so it is not folded.
    default: return std::nullopt;
  }
}

// float ** int: numba multiplies (int_power), so folding is exact.
template <typename F>
std::optional<double> floatPowInt(F a, int64_t b) {
  bool invert = b < 0;
  uint64_t exp = invert ? 0 - static_cast<uint64_t>(b) : static_cast<uint64_t>(b);
  if (exp > 0x10000) return std::nullopt;
  F r = 1;
  while (exp) {
    if (exp & 1) r *= a;
    exp >>= 1;
    a *= a;
  }
  if (invert) {
    if (r == 0) return std::nullopt;   // raises ZeroDivisionError
    r = F(1) / r;
  }
  return r;
}

template <typename F>
std::optional<bool> floatCompare(Op op, F a, F b) {
  switch (op) {   // ordered comparisons; != is true for NaN, as in Python
    case Op::Lt: return a < b;
    case Op::Le: return a <= b;
    case Op::Gt: return a > b;
    case Op::Ge: return a >= b;
    case Op::Eq: return a == b;
    case Op::Ne: return a != b;
    default: return std::nullopt;
  }
}

bool isF32(const Type* t) { return t == f32Ty(); }
bool isF64(const Type* t) { return t == f64Ty(); }
bool foldableFloat(const Type* t) { return isF32(t) || isF64(t); }   // f16: not folded
bool foldableInt(const Type* t) { return t->isInt() || t->isBool(); }

// ---- reading and writing constants ----

const Const* constOf(const Instr* v) { return v->op == Op::Const ? &v->cval : nullptr; }

std::optional<int64_t> intValue(const Instr* v) {
  const Const* c = constOf(v);
  if (!c || !foldableInt(v->type)) return std::nullopt;
  if (c->kind != Const::Kind::Int && c->kind != Const::Kind::Bool) return std::nullopt;
  return wrap(static_cast<uint64_t>(c->i), v->type);
}

std::optional<double> floatValue(const Instr* v) {
  const Const* c = constOf(v);
  if (!c || !foldableFloat(v->type)) return std::nullopt;
  double f;
  if (c->kind == Const::Kind::Float) f = c->f;
  else if (c->kind == Const::Kind::Int) f = static_cast<double>(c->i);
  else return std::nullopt;
  return isF32(v->type) ? static_cast<double>(static_cast<float>(f)) : f;
}

Const intConst(const Type* t, int64_t v) {
  return t->isBool() ? Const::boolean(v != 0) : Const::integer(wrap(static_cast<uint64_t>(v), t));
}

// Does a constant of this kind fit a value of type t (tuple_get of a const tuple)?
bool constFits(const Const& c, const Type* t) {
  switch (c.kind) {
    case Const::Kind::Int: return t->isInt();
    case Const::Kind::Bool: return t->isBool();
    case Const::Kind::Float: return t->isFloat();
    case Const::Kind::Complex: return t->isComplex();
    case Const::Kind::None: return t == noneTy();
    case Const::Kind::Str: return t == stringTy();
    case Const::Kind::Symbol: return t->is(TypeKind::Symbol) || t->is(TypeKind::Function);
    case Const::Kind::Tuple: return t->is(TypeKind::Tuple) && t->elems.size() == c.elems.size();
    case Const::Kind::Array: return false;   // frozen arrays are not folded through tuples
  }
  return false;
}

// ---- the folds ----

std::optional<Const> foldBinary(const Instr& in) {
  const Instr* x = in.operands[0];
  const Instr* y = in.operands[1];
  const Type* t = x->type;
  bool compare = in.type->isBool() && (in.op == Op::Lt || in.op == Op::Le || in.op == Op::Gt ||
                                       in.op == Op::Ge || in.op == Op::Eq || in.op == Op::Ne);
  if (foldableInt(t) && x->type == y->type) {
    auto a = intValue(x), b = intValue(y);
    if (!a || !b) return std::nullopt;
    if (compare) {
      auto r = intCompare(in.op, t, *a, *b);
      return r ? std::optional<Const>(Const::boolean(*r)) : std::nullopt;
    }
    if (t->isBool() && in.op != Op::BitAnd && in.op != Op::BitOr && in.op != Op::BitXor)
      return std::nullopt;   // arithmetic on b1 is not typed IR
    if (in.type != t) return std::nullopt;
    auto r = intBinary(in.op, t, *a, *b);
    return r ? std::optional<Const>(intConst(t, *r)) : std::nullopt;
  }
  if (foldableFloat(t)) {
    auto a = floatValue(x);
    if (!a) return std::nullopt;
    if (in.op == Op::Pow && y->type->isInt() && in.type == t) {
      auto b = intValue(y);
      if (!b) return std::nullopt;
      auto r = isF32(t) ? floatPowInt<float>(static_cast<float>(*a), *b) : floatPowInt<double>(*a, *b);
      return r ? std::optional<Const>(Const::real(*r)) : std::nullopt;
    }
    if (x->type != y->type) return std::nullopt;
    auto b = floatValue(y);
    if (!b) return std::nullopt;
    if (compare) {
      auto r = isF32(t) ? floatCompare<float>(in.op, static_cast<float>(*a), static_cast<float>(*b))
                        : floatCompare<double>(in.op, *a, *b);
      return r ? std::optional<Const>(Const::boolean(*r)) : std::nullopt;
    }
    if (in.type != t) return std::nullopt;
    auto r = isF32(t) ? floatBinary<float>(in.op, static_cast<float>(*a), static_cast<float>(*b))
                      : floatBinary<double>(in.op, *a, *b);
    return r ? std::optional<Const>(Const::real(*r)) : std::nullopt;
  }
  return std::nullopt;
}

std::optional<Const> foldUnary(const Instr& in) {
  const Instr* x = in.operands[0];
  const Type* t = x->type;
  if (in.type != t && in.op != Op::Not) return std::nullopt;
  if (in.op == Op::Not) {
    auto a = intValue(x);
    if (!a || !t->isBool()) return std::nullopt;
    return Const::boolean(*a == 0);
  }
  if (t->isInt()) {
    auto a = intValue(x);
    if (!a) return std::nullopt;
    uint64_t ua = static_cast<uint64_t>(*a);
    switch (in.op) {
      case Op::Neg: return intConst(t, wrap(0 - ua, t));
      case Op::Pos: return intConst(t, *a);
      case Op::Invert: return intConst(t, wrap(~ua, t));
      default: return std::nullopt;
    }
  }
  if (foldableFloat(t)) {
    auto a = floatValue(x);
    if (!a) return std::nullopt;
    if (in.op == Op::Neg) return Const::real(-*a);
    if (in.op == Op::Pos) return Const::real(*a);
  }
  return std::nullopt;
}

// bool(x) as numba computes it: x != 0 (NaN is true).
std::optional<bool> truthOf(const Instr* x) {
  if (foldableInt(x->type)) {
    auto a = intValue(x);
    if (a) return *a != 0;
  } else if (foldableFloat(x->type)) {
    auto a = floatValue(x);
    if (a) return *a != 0 || std::isnan(*a);
  }
  return std::nullopt;
}

// numba's scalar casts: int -> int truncates or extends by the source's
// signedness; int -> float rounds once; float -> int truncates toward zero
// (out of range or NaN is poison: not folded); float -> float rounds.
std::optional<Const> foldCast(const Instr& in) {
  const Instr* x = in.operands[0];
  const Type* from = x->type;
  const Type* to = in.type;
  if (to->isBool()) {
    auto b = truthOf(x);
    return b ? std::optional<Const>(Const::boolean(*b)) : std::nullopt;
  }
  if (foldableInt(from)) {
    auto a = intValue(x);
    if (!a) return std::nullopt;
    if (to->isInt()) return intConst(to, *a);
    bool u = !from->isSigned();
    if (isF32(to))
      return Const::real(u ? static_cast<float>(static_cast<uint64_t>(*a)) : static_cast<float>(*a));
    if (isF64(to))
      return Const::real(u ? static_cast<double>(static_cast<uint64_t>(*a)) : static_cast<double>(*a));
    return std::nullopt;
  }
  if (foldableFloat(from)) {
    auto a = floatValue(x);
    if (!a) return std::nullopt;
    if (isF32(to)) return Const::real(static_cast<float>(*a));
    if (isF64(to)) return Const::real(*a);
    if (!to->isInt() || std::isnan(*a)) return std::nullopt;
    double tr = std::trunc(*a);
    int w = to->bits();
    double lo = to->isSigned() ? -std::ldexp(1.0, w - 1) : 0.0;
    double hi = to->isSigned() ? std::ldexp(1.0, w - 1) : std::ldexp(1.0, w);
    if (!(tr >= lo && tr < hi)) return std::nullopt;
    int64_t v = to->isSigned() ? static_cast<int64_t>(tr) : static_cast<int64_t>(static_cast<uint64_t>(tr));
    return intConst(to, v);
  }
  return std::nullopt;
}

void becomeConst(Instr* in, Const c) {
  in->op = Op::Const;
  in->setOperands({});
  in->cval = std::move(c);
  in->index = 0;
  in->name.clear();
  in->intrinsic = ir::Intrinsic::Count;
}

class Folder {
 public:
  explicit Folder(ir::Function& fn) : fn_(fn) {}

  bool run() {
    bool changed_any = false;
    for (bool changed = true; changed;) {
      changed = false;
      for (auto& b : fn_.blocks)
        for (auto& in : b->instrs) changed |= visit(in.get());
      if (!dead_.empty()) {
        for (auto& b : fn_.blocks)
          ir::eraseInstrsIf(b.get(), [&](const std::unique_ptr<Instr>& in) { return dead_.count(in.get()) != 0; });
        dead_.clear();
      }
      changed_any |= changed;
    }
    if (changed_any) fn_.computePreds();
    return changed_any;
  }

 private:
  // Uses of `in` become `to`; `in` (pure, now unused) is deleted.
  bool forward(Instr* in, Instr* to) {
    ir::replaceAllUses(in, to);
    dead_.insert(in);
    return true;
  }

  bool visit(Instr* in) {
    if (dead_.count(in)) return false;
    if (in->type == unknownTy()) return false;   // untyped IR: only a cbr on a literal bool folds
    std::optional<Const> c;
    switch (in->op) {
      case Op::Add: case Op::Sub: case Op::Mul: case Op::TrueDiv: case Op::FloorDiv: case Op::Mod:
      case Op::Pow: case Op::LShift: case Op::RShift: case Op::BitAnd: case Op::BitOr: case Op::BitXor:
      case Op::Lt: case Op::Le: case Op::Eq: case Op::Ne: case Op::Gt: case Op::Ge:
        c = foldBinary(*in);
        break;
      case Op::Neg: case Op::Pos: case Op::Invert: case Op::Not:
        c = foldUnary(*in);
        break;
      case Op::Cast:
        if (in->operands[0]->type == in->type) return forward(in, in->operands[0]);
        c = foldCast(*in);
        break;
      case Op::Truth:
        if (in->operands[0]->type == boolTy() && in->type == boolTy()) return forward(in, in->operands[0]);
        if (auto b = truthOf(in->operands[0])) c = Const::boolean(*b);
        break;
      case Op::Select: {
        const Const* k = constOf(in->operands[0]);
        if (k && k->kind == Const::Kind::Bool) return forward(in, in->operands[k->i ? 1 : 2]);
        if (in->operands[1] == in->operands[2]) return forward(in, in->operands[1]);
        break;
      }
      case Op::TupleGet: {
        Instr* tup = in->operands[0];
        size_t k = static_cast<size_t>(in->index);
        if (tup->op == Op::TupleMake && k < tup->operands.size()) return forward(in, tup->operands[k]);
        const Const* tc = constOf(tup);
        if (tc && tc->kind == Const::Kind::Tuple && k < tc->elems.size() && constFits(tc->elems[k], in->type))
          c = tc->elems[k];
        break;
      }
      case Op::CondBr: {
        const Const* k = constOf(in->operands[0]);
        if (!k || k->kind != Const::Kind::Bool) return false;
        in->removeSucc(k->i ? 1 : 0);   // the edge not taken
        in->op = Op::Br;
        in->setOperands({});
        return true;
      }
      default: break;
    }
    if (!c) return false;
    becomeConst(in, std::move(*c));
    return true;
  }

  ir::Function& fn_;
  std::set<const Instr*> dead_;
};

}  // namespace

bool Fold::run(ir::Function& fn) { return Folder(fn).run(); }

}  // namespace cj::passes
