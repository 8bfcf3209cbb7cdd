#include "ir/ir.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <unordered_map>

namespace cj::ir {
namespace {

struct OpRow {
  std::string_view name;
  int arity;
  uint32_t flags;
};

constexpr OpRow kOps[] = {
#define X(E, text, arity, flags) {text, arity, flags},
#include "ir/ops.def"
#undef X
};

}  // namespace

std::string_view opName(Op op) { return kOps[static_cast<int>(op)].name; }
int opArity(Op op) { return kOps[static_cast<int>(op)].arity; }
uint32_t opFlags(Op op) { return kOps[static_cast<int>(op)].flags; }

bool parseOp(std::string_view text, Op* out) {
  // The parser's lookup, hashed (names are string literals: the views stay valid).
  static const std::unordered_map<std::string_view, Op> kByName = [] {
    std::unordered_map<std::string_view, Op> m;
    for (int i = 0; i < kNumOps; ++i) m.emplace(kOps[i].name, static_cast<Op>(i));
    return m;
  }();
  auto it = kByName.find(text);
  if (it == kByName.end()) return false;
  *out = it->second;
  return true;
}

// ---- constants ---------------------------------------------------------------

bool Const::operator==(const Const& o) const {
  if (kind != o.kind) return false;
  switch (kind) {
    case Kind::None: return true;
    case Kind::Bool:
    case Kind::Int: return i == o.i;
    // Bitwise equality: NaN constants with the same bits are the same constant.
    case Kind::Float: return std::memcmp(&f, &o.f, sizeof f) == 0;
    case Kind::Complex:
      return std::memcmp(&f, &o.f, sizeof f) == 0 && std::memcmp(&f_imag, &o.f_imag, sizeof f) == 0;
    case Kind::Str:
    case Kind::Symbol: return s == o.s;
    case Kind::Tuple: return elems == o.elems;
    case Kind::Array:
      return i == o.i && record == o.record && elems == o.elems && s == o.s && address == o.address &&
             strides == o.strides && writable == o.writable;
  }
  return false;
}

namespace {

std::string formatDouble(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  std::string s = buf;
  // Keep a float recognisable as a float in the text form.
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s;
}

std::string escape(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned char>(c));
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

}  // namespace

Const tilePaddingConst(TilePadding mode, Scalar dtype) {
  if (dtype == Scalar::Bool) return Const::boolean(false);
  if (scalarKind(dtype) != ScalarKind::Float) return Const::integer(0);
  switch (mode) {
    case TilePadding::NegZero: return Const::real(-0.0);
    case TilePadding::Nan: return Const::real(std::numeric_limits<double>::quiet_NaN());
    case TilePadding::PosInf: return Const::real(std::numeric_limits<double>::infinity());
    case TilePadding::NegInf: return Const::real(-std::numeric_limits<double>::infinity());
    default: return Const::real(0.0);
  }
}

std::string constToString(const Const& c) {
  switch (c.kind) {
    case Const::Kind::None: return "none";
    case Const::Kind::Bool: return c.i ? "true" : "false";
    case Const::Kind::Int: return std::to_string(c.i);
    case Const::Kind::Float: return formatDouble(c.f);
    case Const::Kind::Complex: return "(" + formatDouble(c.f) + "+" + formatDouble(c.f_imag) + "j)";
    case Const::Kind::Str: return escape(c.s);
    case Const::Kind::Symbol: return "sym(" + c.s + ")";
    case Const::Kind::Tuple: {
      std::string s = "(";
      for (size_t i = 0; i < c.elems.size(); ++i) {
        if (i) s += ", ";
        s += constToString(c.elems[i]);
      }
      if (c.elems.size() == 1) s += ",";
      return s + ")";
    }
    case Const::Kind::Array: {
      if (c.isDeviceArray()) {
        auto list = [](const std::vector<int64_t>& v) {
          std::string s = "(";
          for (size_t k = 0; k < v.size(); ++k) s += (k ? ", " : "") + std::to_string(v[k]);
          return s + (v.size() == 1 ? ",)" : ")");
        };
        std::vector<int64_t> shape;
        for (const Const& d : c.elems) shape.push_back(d.i);
        char address[24];
        std::snprintf(address, sizeof address, "0x%llx", static_cast<unsigned long long>(c.address));
        const std::string dtype = c.record ? typeToString(c.record) : std::string(scalarShortName(c.arrayDtype()));
        return "device_array(" + dtype + ", " + list(shape) + ", " + list(c.strides) + ", " + address + ", " +
               (c.writable ? "rw" : "ro") + ")";
      }
      static const char* kHex = "0123456789abcdef";
      std::string hex;
      hex.reserve(c.s.size() * 2);
      for (unsigned char b : c.s) {
        hex += kHex[b >> 4];
        hex += kHex[b & 15];
      }
      std::string shape = "(";
      for (size_t k = 0; k < c.elems.size(); ++k) shape += (k ? ", " : "") + std::to_string(c.elems[k].i);
      shape += c.elems.size() == 1 ? ",)" : ")";
      const std::string dtype = c.record ? typeToString(c.record) : std::string(scalarShortName(c.arrayDtype()));
      return "array(" + dtype + ", " + shape + ", \"" + hex + "\")";
    }
  }
  return "?";
}

const Type* constType(const Const& c) {
  switch (c.kind) {
    case Const::Kind::None: return noneTy();
    case Const::Kind::Bool: return boolTy();
    case Const::Kind::Int: return i64Ty();
    case Const::Kind::Float: return f64Ty();
    case Const::Kind::Complex: return scalarTy(Scalar::Complex128);
    case Const::Kind::Str: return stringTy();
    case Const::Kind::Symbol:
      if (c.s.rfind("fn:", 0) == 0) return functionTy(c.s.substr(3));
      return symbolTy(c.s);
    case Const::Kind::Tuple: {
      std::vector<const Type*> elems;
      for (const auto& e : c.elems) elems.push_back(constType(e));
      return tupleTy(elems);
    }
    case Const::Kind::Array:
      if (c.isDeviceArray()) {
        // C layout where the strides are C-contiguous ones, else any.
        int64_t expect = c.record ? c.record->size : scalarByteSize(c.arrayDtype());
        bool contiguous = true;
        for (size_t k = c.elems.size(); k-- > 0;) {
          if (c.elems[k].i > 1 && c.strides[k] != expect) contiguous = false;
          expect *= c.elems[k].i;
        }
        const Layout layout = contiguous ? Layout::C : Layout::A;
        const int nd = static_cast<int>(c.elems.size());
        if (c.record) return recordArrayTy(c.record, nd, layout, MemSpace::Global, !c.writable);
        return arrayTy(c.arrayDtype(), nd, layout, MemSpace::Global, !c.writable);
      }
      if (c.record)
        return recordArrayTy(c.record, static_cast<int>(c.elems.size()), Layout::C, MemSpace::Const, /*readonly=*/true);
      return arrayTy(c.arrayDtype(), static_cast<int>(c.elems.size()), Layout::C, MemSpace::Const,
                     /*readonly=*/true);
  }
  return unknownTy();
}

// ---- operands and uses -------------------------------------------------------------
// A value's uses are an unordered vector: linking appends, unlinking finds the
// entry (scanning that value's uses only) and swaps the last one into its
// place. No per-instruction map or set.

void Instr::link(Instr* v, int32_t succ, uint32_t index) {
  if (v) v->uses_.push_back(Use{this, succ, index});
}

void Instr::unlink(Instr* v, int32_t succ, uint32_t index) {
  if (!v) return;
  auto& u = v->uses_;
  for (size_t k = u.size(); k-- > 0;) {
    if (u[k].user == this && u[k].succ == succ && u[k].index == index) {
      u[k] = u.back();
      u.pop_back();
      return;
    }
  }
}

// Slots from..end of `list` moved down by `old_shift` (removal): rewrite the
// index their values' use entries record.
void Instr::renumberSlots(const ValueList& list, int32_t succ, size_t from, size_t old_shift) {
  for (size_t i = from; i < list.size(); ++i) {
    Instr* v = list[i];
    if (!v) continue;
    for (Use& u : v->uses_)
      if (u.user == this && u.succ == succ && u.index == i + old_shift) {
        u.index = static_cast<uint32_t>(i);
        break;
      }
  }
}

void Instr::setOperand(size_t i, Instr* v) {
  Instr*& slot = operands.v_[i];
  if (slot == v) return;
  unlink(slot, Use::kOperandUse, static_cast<uint32_t>(i));
  slot = v;
  link(v, Use::kOperandUse, static_cast<uint32_t>(i));
}

void Instr::addOperand(Instr* v) {
  operands.v_.push_back(v);
  link(v, Use::kOperandUse, static_cast<uint32_t>(operands.v_.size() - 1));
}

void Instr::removeOperand(size_t i) {
  unlink(operands.v_[i], Use::kOperandUse, static_cast<uint32_t>(i));
  operands.v_.erase(operands.v_.begin() + static_cast<long>(i));
  renumberSlots(operands, Use::kOperandUse, i, 1);
}

void Instr::setOperands(std::vector<Instr*> vs) {
  for (size_t i = 0; i < operands.v_.size(); ++i) unlink(operands.v_[i], Use::kOperandUse, static_cast<uint32_t>(i));
  operands.v_ = std::move(vs);
  for (size_t i = 0; i < operands.v_.size(); ++i) link(operands.v_[i], Use::kOperandUse, static_cast<uint32_t>(i));
}

void Instr::addSucc(Block* target, std::vector<Instr*> args) {
  succs.v_.push_back(Edge{target, {}});
  setEdgeArgs(succs.v_.size() - 1, std::move(args));
}

void Instr::setEdgeArg(size_t s, size_t i, Instr* v) {
  Instr*& slot = succs.v_[s].args.v_[i];
  if (slot == v) return;
  unlink(slot, static_cast<int32_t>(s), static_cast<uint32_t>(i));
  slot = v;
  link(v, static_cast<int32_t>(s), static_cast<uint32_t>(i));
}

void Instr::addEdgeArg(size_t s, Instr* v) {
  auto& args = succs.v_[s].args.v_;
  args.push_back(v);
  link(v, static_cast<int32_t>(s), static_cast<uint32_t>(args.size() - 1));
}

void Instr::removeEdgeArg(size_t s, size_t i) {
  auto& args = succs.v_[s].args.v_;
  unlink(args[i], static_cast<int32_t>(s), static_cast<uint32_t>(i));
  args.erase(args.begin() + static_cast<long>(i));
  renumberSlots(succs.v_[s].args, static_cast<int32_t>(s), i, 1);
}

void Instr::setEdgeArgs(size_t s, std::vector<Instr*> vs) {
  auto& args = succs.v_[s].args.v_;
  for (size_t i = 0; i < args.size(); ++i) unlink(args[i], static_cast<int32_t>(s), static_cast<uint32_t>(i));
  args = std::move(vs);
  for (size_t i = 0; i < args.size(); ++i) link(args[i], static_cast<int32_t>(s), static_cast<uint32_t>(i));
}

void Instr::removeSucc(size_t s) {
  setEdgeArgs(s, {});
  succs.v_.erase(succs.v_.begin() + static_cast<long>(s));
  // The later edges' arguments now sit one successor lower.
  for (size_t k = s; k < succs.v_.size(); ++k)
    for (Instr* v : succs.v_[k].args)
      if (v)
        for (Use& u : v->uses_)
          if (u.user == this && u.succ == static_cast<int32_t>(k + 1)) u.succ = static_cast<int32_t>(k);
}

void Instr::dropAllReferences() {
  setOperands({});
  while (!succs.v_.empty()) removeSucc(succs.v_.size() - 1);
}

void Instr::copyAttributesFrom(const Instr& o) {
  op = o.op;
  type = o.type;
  loc = o.loc;
  id = o.id;
  index = o.index;
  cval = o.cval;
  intrinsic = o.intrinsic;
  name = o.name;
  names = o.names;
  ints = o.ints;
  var = o.var;
  facts = o.facts;
}

void replaceAllUses(Instr* from, Instr* to) {
  if (from == to) return;
  // Each setter removes the entry it rewrites from `from`'s list.
  while (!from->uses().empty()) {
    Use u = from->uses().back();
    if (u.succ == Use::kOperandUse) u.user->setOperand(u.index, to);
    else u.user->setEdgeArg(static_cast<size_t>(u.succ), u.index, to);
  }
}

void replaceAllUses(Function*, Instr* from, Instr* to) { replaceAllUses(from, to); }

Instr* bindParamToConstant(Function& fn, size_t index, const Const& value) {
  Block* b = fn.entry();
  Instr* param = b->params.at(index).get();
  auto c = fn.make(Op::Const, unknownTy(), {}, {});
  c->cval = value;
  c->var = param->var;
  c->parent = b;
  Instr* raw = insertBefore(b, 0, std::move(c));
  replaceAllUses(param, raw);
  return raw;
}

void dropBlockReferences(Block* block) {
  for (auto& in : block->instrs) in->dropAllReferences();
}

// ---- structure ------------------------------------------------------------------

Instr* Block::addParam(const Type* type, std::string var) {
  auto p = parent->make(Op::Param, type, {}, Loc{});
  p->index = static_cast<int64_t>(params.size());
  p->var = std::move(var);
  p->parent = this;
  params.push_back(std::move(p));
  return params.back().get();
}

Block* Function::addBlock() {
  auto b = std::make_unique<Block>();
  b->id = static_cast<int>(blocks.size());
  b->parent = this;
  blocks.push_back(std::move(b));
  return blocks.back().get();
}

std::unique_ptr<Instr> Function::make(Op op, const Type* type, std::vector<Instr*> operands, Loc loc) {
  auto in = std::make_unique<Instr>();
  in->op = op;
  in->type = type;
  in->setOperands(std::move(operands));
  in->loc = loc;
  in->id = next_id++;
  return in;
}

void Function::computePreds() {
  for (auto& b : blocks) b->preds.clear();
  for (auto& b : blocks) {
    Instr* t = b->terminator();
    if (!t) continue;
    for (auto& e : t->succs) {
      auto& preds = e.target->preds;
      if (preds.empty() || preds.back() != b.get()) preds.push_back(b.get());
    }
  }
}

void Function::renumber() {
  int bid = 0, vid = 0;
  for (auto& b : blocks) {
    b->id = bid++;
    for (auto& p : b->params) p->id = vid++;
    for (auto& in : b->instrs) in->id = vid++;
  }
  next_id = vid;
}

Function* Module::find(std::string_view name) const {
  for (auto& f : functions)
    if (f->name == name) return f.get();
  return nullptr;
}

Function* Module::addFunction(std::string name) {
  auto f = std::make_unique<Function>();
  f->name = std::move(name);
  f->return_type = unknownTy();
  functions.push_back(std::move(f));
  return functions.back().get();
}

// ---- building ---------------------------------------------------------------------

Instr* Builder::emit(Op op, const Type* type, std::vector<Instr*> operands) {
  auto in = fn_->make(op, type, std::move(operands), loc_);
  in->parent = block_;
  block_->instrs.push_back(std::move(in));
  return block_->instrs.back().get();
}

Instr* Builder::constant(Const c, const Type* type) {
  Instr* in = emit(Op::Const, type ? type : unknownTy(), {});
  in->cval = std::move(c);
  return in;
}

Instr* Builder::br(Block* target, std::vector<Instr*> args) {
  Instr* in = emit(Op::Br, voidTy(), {});
  in->addSucc(target, std::move(args));
  return in;
}

Instr* Builder::condBr(Instr* cond, Block* t, std::vector<Instr*> targs, Block* f,
                       std::vector<Instr*> fargs) {
  Instr* in = emit(Op::CondBr, voidTy(), {cond});
  in->addSucc(t, std::move(targs));
  in->addSucc(f, std::move(fargs));
  return in;
}

Instr* Builder::ret(Instr* value) {
  std::vector<Instr*> ops;
  if (value) ops.push_back(value);
  return emit(Op::Ret, voidTy(), std::move(ops));
}

int elementIndexCount(const Instr& in) {
  bool access = in.op == Op::ArrayLoad || in.op == Op::ArrayStore ||
                (in.op == Op::Intrinsic && in.intrinsic != Intrinsic::Count && isElementAccess(in.intrinsic));
  if (!access || in.operands.empty() || !in.operands[0] || !in.operands[0]->type ||
      !in.operands[0]->type->is(TypeKind::Array))
    return 0;
  size_t values = in.op == Op::ArrayLoad ? 0 : 1;   // store / atomics: at least one value after the indices
  size_t n = static_cast<size_t>(in.operands[0]->type->ndim);
  return in.operands.size() >= 1 + n + values ? static_cast<int>(n) : 0;
}

Instr* insertBefore(Block* block, size_t pos, std::unique_ptr<Instr> in) {
  in->parent = block;
  Instr* raw = in.get();
  block->instrs.insert(block->instrs.begin() + static_cast<long>(pos), std::move(in));
  return raw;
}

std::unique_ptr<Function> cloneFunction(const Function& fn, std::string new_name) {
  auto out = std::make_unique<Function>();
  out->name = std::move(new_name);
  out->py_name = fn.py_name;
  out->filename = fn.filename;
  out->first_line = fn.first_line;
  out->arg_names = fn.arg_names;
  out->return_type = fn.return_type;
  out->is_kernel = fn.is_kernel;
  out->num_warps = fn.num_warps;
  out->target_sm = fn.target_sm;
  out->occupancy = fn.occupancy;
  out->max_threads = fn.max_threads;
  out->max_cluster_rank = fn.max_cluster_rank;
  for (int d = 0; d < 3; ++d) out->simt_block[d] = fn.simt_block[d];
  out->declared = fn.declared;
  out->tensor_maps = fn.tensor_maps;
  out->next_id = fn.next_id;

  std::unordered_map<const Instr*, Instr*> vmap;
  std::unordered_map<const Block*, Block*> bmap;
  auto copyInstr = [&](const Instr& in, Block* parent) {
    auto c = std::make_unique<Instr>();
    c->copyAttributesFrom(in);   // operands and edges linked below, once every value exists
    c->parent = parent;
    vmap[&in] = c.get();
    return c;
  };
  for (auto& b : fn.blocks) {
    Block* nb = out->addBlock();
    nb->id = b->id;
    bmap[b.get()] = nb;
    for (auto& p : b->params) nb->params.push_back(copyInstr(*p, nb));
    for (auto& in : b->instrs) nb->instrs.push_back(copyInstr(*in, nb));
  }
  auto mapValue = [&](Instr* v) {
    auto it = vmap.find(v);
    return it == vmap.end() ? v : it->second;
  };
  for (size_t bi = 0; bi < fn.blocks.size(); ++bi) {
    const Block& src = *fn.blocks[bi];
    Block& dst = *out->blocks[bi];
    for (size_t k = 0; k < src.instrs.size(); ++k) {
      const Instr& from = *src.instrs[k];
      Instr& to = *dst.instrs[k];
      std::vector<Instr*> ops;
      ops.reserve(from.operands.size());
      for (Instr* op : from.operands) ops.push_back(mapValue(op));
      to.setOperands(std::move(ops));
      for (const Edge& e : from.succs) {
        std::vector<Instr*> args;
        args.reserve(e.args.size());
        for (Instr* a : e.args) args.push_back(mapValue(a));
        to.addSucc(bmap.at(e.target), std::move(args));
      }
    }
  }
  return out;
}

}  // namespace cj::ir
