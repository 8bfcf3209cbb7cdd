#include "ir/ir.h"

#include <cmath>
#include <cstdio>
#include <cstring>
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
  for (int i = 0; i < kNumOps; ++i) {
    if (kOps[i].name == text) {
      *out = static_cast<Op>(i);
      return true;
    }
  }
  return false;
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
    case Kind::Array: return i == o.i && elems == o.elems && s == o.s;
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
      return "array(" + std::string(scalarShortName(c.arrayDtype())) + ", " + shape + ", \"" + hex + "\")";
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
      return arrayTy(c.arrayDtype(), static_cast<int>(c.elems.size()), Layout::C, MemSpace::Const,
                     /*readonly=*/true);
  }
  return unknownTy();
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
  in->operands = std::move(operands);
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
  in->succs.push_back(Edge{target, std::move(args)});
  return in;
}

Instr* Builder::condBr(Instr* cond, Block* t, std::vector<Instr*> targs, Block* f,
                       std::vector<Instr*> fargs) {
  Instr* in = emit(Op::CondBr, voidTy(), {cond});
  in->succs.push_back(Edge{t, std::move(targs)});
  in->succs.push_back(Edge{f, std::move(fargs)});
  return in;
}

Instr* Builder::ret(Instr* value) {
  std::vector<Instr*> ops;
  if (value) ops.push_back(value);
  return emit(Op::Ret, voidTy(), std::move(ops));
}

int elementIndexCount(const Instr& in) {
  bool access = in.op == Op::ArrayLoad || in.op == Op::ArrayStore ||
                (in.op == Op::Intrinsic && in.name.rfind("atomic_", 0) == 0);
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

void replaceAllUses(Function* fn, Instr* from, Instr* to) {
  for (auto& b : fn->blocks) {
    for (auto& in : b->instrs) {
      for (auto*& op : in->operands)
        if (op == from) op = to;
      for (auto& e : in->succs)
        for (auto*& a : e.args)
          if (a == from) a = to;
    }
  }
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
  out->next_id = fn.next_id;

  std::unordered_map<const Instr*, Instr*> vmap;
  std::unordered_map<const Block*, Block*> bmap;
  auto copyInstr = [&](const Instr& in, Block* parent) {
    auto c = std::make_unique<Instr>(in);   // copies attributes; pointers fixed below
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
  for (auto& b : out->blocks) {
    for (auto& in : b->instrs) {
      for (auto*& op : in->operands) op = mapValue(op);
      for (auto& e : in->succs) {
        e.target = bmap.at(e.target);
        for (auto*& a : e.args) a = mapValue(a);
      }
    }
    for (auto*& p : b->preds) p = bmap.at(p);
  }
  return out;
}

}  // namespace cj::ir
