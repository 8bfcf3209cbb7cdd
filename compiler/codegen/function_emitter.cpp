// The function skeleton: parameters (the kernel ABI for the kernel), blocks
// in reverse post-order, block parameters as phi nodes, terminators,
// constants, and the table that sends every other op to its lowering.
//
// Layout of an emitted function:
//   entry:            allocas (iterators, local arrays), argument unpacking,
//                     `br label %bb<entry>`
//   bb<id>:           phis for the block's parameters, then its body; a body
//                     may open extra LLVM blocks (bounds checks, cbr splits)
#include <algorithm>
#include <set>

#include "codegen/debug_info.h"
#include "codegen/emitter.h"
#include "ir/cfg.h"
#include "support/error.h"

namespace cj::codegen {
namespace {

// Which lowering handles an op. Param, Const, Undef and the terminators are
// the function emitter's own; Python-level ops cannot appear in typed IR.
Lowering loweringFor(ir::Op op) {
  using ir::Op;
  switch (op) {
    case Op::Add: case Op::Sub: case Op::Mul: case Op::TrueDiv: case Op::FloorDiv:
    case Op::Mod: case Op::Pow: case Op::LShift: case Op::RShift: case Op::BitAnd:
    case Op::BitOr: case Op::BitXor:
      return lowerBinary;
    case Op::Lt: case Op::Le: case Op::Eq: case Op::Ne: case Op::Gt: case Op::Ge:
    case Op::Is: case Op::IsNot:
      return lowerCompare;
    case Op::Neg: case Op::Pos: case Op::Invert: case Op::Not:
      return lowerUnary;
    case Op::Cast: case Op::Truth:
      return lowerCast;
    case Op::Select:
      return lowerSelect;
    case Op::TupleMake: case Op::TupleGet:
      return lowerTupleOp;
    case Op::ArrayDim: case Op::ArrayStride: case Op::ArraySize: case Op::ArrayLoad:
    case Op::ArrayStore:
      return lowerArrayOp;
    case Op::ArrayView:
      return lowerArrayView;
    case Op::RecordGet: case Op::RecordSet: case Op::RecordCopy:
      return lowerRecordOp;
    case Op::RangeMake: case Op::GetIter: case Op::IterValid: case Op::IterNext:
      return lowerRangeOp;
    case Op::CallFunc:
      return lowerCallFunc;
    case Op::Intrinsic:
      return lowerIntrinsic;
    default:
      return nullptr;
  }
}

}  // namespace

FunctionEmitter::FunctionEmitter(ModuleEmitter& mod, const ir::Function& fn, bool is_kernel)
    : mod_(mod), fn_(fn), is_kernel_(is_kernel) {
  llvm_name_ = mod.functionName(fn);
  if (mod.debug()) {
    std::string linkage = is_kernel ? llvm_name_.substr(1) : fn.name;
    subprogram_ = mod.debug()->subprogram(fn, linkage, !is_kernel);
  }
}

// ---- values -------------------------------------------------------------------

std::string FunctionEmitter::val(const ir::Instr* v) {
  if (v->op == ir::Op::Const) return constant(v->cval, v->type, v);
  if (v->op == ir::Op::Undef) return hasValue(v->type) ? "undef" : "";
  auto it = values_.find(v);
  if (it != values_.end()) return it->second;
  if (!hasValue(v->type)) return "";
  fail(current_ ? *current_ : *v, "codegen",
       "internal error: value v" + std::to_string(v->id) + " is used before it is defined");
}

std::string FunctionEmitter::tval(const ir::Instr* v) { return llvmType(v->type) + " " + val(v); }

void FunctionEmitter::bind(const ir::Instr& in, const std::string& value) { values_[&in] = value; }

std::string FunctionEmitter::emit(const std::string& rhs) {
  std::string name = "%t" + std::to_string(temps_++);
  emitLine(name + " = " + rhs);
  return name;
}

void FunctionEmitter::emitResult(const ir::Instr& in, const std::string& rhs) {
  std::string name = nameOf(in);
  emitLine(name + " = " + rhs);
  bind(in, name);
}

void FunctionEmitter::emitLine(const std::string& text) { *out_ += "  " + text + dbg() + "\n"; }

std::string FunctionEmitter::makeStruct(const std::string& type,
                                        const std::vector<std::pair<std::string, std::string>>& fields) {
  std::string cur = "undef";
  for (size_t k = 0; k < fields.size(); ++k) {
    cur = emit("insertvalue " + type + " " + cur + ", " + fields[k].first + " " + fields[k].second +
               ", " + std::to_string(k));
  }
  return cur;
}

std::string FunctionEmitter::constant(const ir::Const& c, const Type* t, const ir::Instr* at) {
  using K = ir::Const::Kind;
  auto bad = [&]() -> std::string {
    fail(*at, "constant", "cannot use the constant " + ir::constToString(c) + " as a value of type " +
                              typeToString(t));
  };
  switch (t->kind) {
    case TypeKind::Scalar: {
      Scalar s = t->scalar;
      bool numeric = c.kind == K::Bool || c.kind == K::Int || c.kind == K::Float || c.kind == K::Complex;
      if (!numeric) return bad();
      bool is_int = c.kind == K::Bool || c.kind == K::Int;
      switch (scalarKind(s)) {
        case ScalarKind::Bool:
          return (is_int ? c.i != 0 : (c.f != 0 || c.f_imag != 0)) ? "true" : "false";
        case ScalarKind::Int:
          return llvmIntConst(is_int ? c.i : static_cast<int64_t>(c.f), s);
        case ScalarKind::Float: {
          double v = is_int ? (scalarSigned(s) || c.i >= 0 ? static_cast<double>(c.i)
                                                           : static_cast<double>(static_cast<uint64_t>(c.i)))
                            : c.f;
          return llvmFloatConst(v, s);
        }
        case ScalarKind::Complex: {
          Scalar p = complexPart(s);
          double re = is_int ? static_cast<double>(c.i) : c.f;
          double im = is_int ? 0.0 : c.f_imag;
          std::string pt = llvmScalarType(p);
          return "{ " + pt + " " + llvmFloatConst(re, p) + ", " + pt + " " + llvmFloatConst(im, p) + " }";
        }
      }
      return bad();
    }
    case TypeKind::Tuple: {
      if (c.kind != K::Tuple || c.elems.size() != t->elems.size()) return bad();
      std::string out;
      for (size_t k = 0; k < t->elems.size(); ++k) {
        if (!hasValue(t->elems[k])) continue;
        out += (out.empty() ? "{ " : ", ") + llvmType(t->elems[k]) + " " + constant(c.elems[k], t->elems[k], at);
      }
      return out.empty() ? "zeroinitializer" : out + " }";
    }
    case TypeKind::Array:
      if (c.kind != K::Array || t != ir::constType(c)) return bad();
      return constArrayView(*this, c, t, *at);
    case TypeKind::None:
    case TypeKind::Symbol:
    case TypeKind::String:
    case TypeKind::Function:
      return "";
    default:
      return bad();
  }
}

// ---- control flow helpers -----------------------------------------------------------

std::string FunctionEmitter::freshLabel(const std::string& hint) {
  return block_label_ + "." + hint + std::to_string(labels_++);
}

void FunctionEmitter::startBlock(const std::string& label) {
  *out_ += label + ":\n";
  label_ = label;
}

void FunctionEmitter::trapUnless(const std::string& ok, const std::function<void()>& report) {
  mod_.declare("declare void @llvm.trap() noreturn nounwind");
  std::string cont = freshLabel("ok");
  std::string trap = freshLabel("trap");
  emitLine("br i1 " + ok + ", label %" + cont + ", label %" + trap);
  startBlock(trap);
  if (report) report();
  emitLine("call void @llvm.trap()");
  emitLine("unreachable");
  startBlock(cont);
}

std::string FunctionEmitter::entryAlloca(const std::string& type, int align) {
  std::string name = "%t" + std::to_string(temps_++);
  entry_allocas_ += "  " + name + " = alloca " + type + ", align " + std::to_string(align) + "\n";
  return name;
}

std::string FunctionEmitter::namedEntryAlloca(const std::string& name, const std::string& type, int align) {
  auto it = named_allocas_.find(name + "\n" + type);
  if (it != named_allocas_.end()) return it->second;
  return named_allocas_[name + "\n" + type] = entryAlloca(type, align);
}

void FunctionEmitter::fail(const ir::Instr& in, const std::string& construct,
                           const std::string& message) const {
  throw CompileError(fn_.filename, in.loc.line, in.loc.col, construct, message);
}

std::string FunctionEmitter::dbg() const {
  if (subprogram_ < 0) return "";
  ir::Loc loc = current_ ? current_->loc : ir::Loc{};
  return ", !dbg !" + std::to_string(mod_.debug()->location(subprogram_, loc));
}

std::string FunctionEmitter::blockLabel(const ir::Block* b) const {
  if (labels_by_id_) return "bb" + std::to_string(b->id);
  for (size_t i = 0; i < fn_.blocks.size(); ++i) {
    if (fn_.blocks[i].get() == b) return "bb" + std::to_string(i);
  }
  return "bb?";
}

std::string FunctionEmitter::nameOf(const ir::Instr& in) {
  if (in.id >= 0) return "%v" + std::to_string(in.id);
  return "%t" + std::to_string(temps_++);
}

// ---- the function ---------------------------------------------------------------------

std::string FunctionEmitter::run() {
  if (fn_.blocks.empty()) {
    throw CompileError(fn_.filename, fn_.first_line, 0, "codegen",
                       "function '" + fn_.name + "' has no blocks");
  }
  std::set<int> ids;
  for (const auto& b : fn_.blocks) labels_by_id_ = labels_by_id_ && b->id >= 0 && ids.insert(b->id).second;
  computeOrder();
  emitEntry();
  for (const ir::Block* b : order_) emitBlock(*b);
  return assemble();
}

void FunctionEmitter::computeOrder() {
  // Reverse post-order puts every definition before its uses (outside
  // phis), which bind()/val() rely on.
  std::vector<ir::Block*> rpo = ir::reversePostOrder(fn_);
  order_.assign(rpo.begin(), rpo.end());
  for (const ir::Block* b : order_) {
    const ir::Instr* term = b->terminator();
    if (!term) continue;
    for (const auto& e : term->succs) npreds_[e.target]++;
  }
}

std::string FunctionEmitter::kernelArgument(const Type* t, const std::vector<abi::Slot>& slots,
                                            size_t* next) {
  // Consumes the ABI slots (abi.cpp) of one value of type t, in their order.
  auto param = [&](const std::string& type) {
    const abi::Slot& s = slots.at((*next)++);
    std::string name = "%a" + std::to_string(s.arg) + "." + std::to_string(params_.size());
    params_.push_back({type, name});
    return name;
  };
  switch (t->kind) {
    case TypeKind::Scalar:
      if (t->scalar == Scalar::Bool) return emit("icmp ne i8 " + param("i8") + ", 0");
      return param(llvmScalarType(t->scalar));
    case TypeKind::Array: {
      std::string data = param(llvmElemType(t) + "*");
      std::vector<std::string> shape, strides;
      for (int d = 0; d < t->ndim; ++d) shape.push_back(param("i64"));
      for (int d = 0; d < t->ndim; ++d) strides.push_back(param("i64"));
      return makeView(*this, t, data, shape, strides);
    }
    case TypeKind::Record:   // a record scalar argument: the address of its staged bytes
      return param("i8*");
    case TypeKind::Tuple: {
      std::vector<std::pair<std::string, std::string>> fields;
      for (const Type* e : t->elems) {
        std::string v = kernelArgument(e, slots, next);
        if (hasValue(e)) fields.push_back({llvmType(e), v});
      }
      return makeStruct(llvmType(t), fields);
    }
    default:
      return "";
  }
}

void FunctionEmitter::emitEntry() {
  out_ = &entry_body_;
  label_ = block_label_ = "entry";
  current_ = nullptr;
  const ir::Block* b0 = fn_.entry();
  std::vector<const Type*> arg_types;
  for (const auto& p : b0->params) arg_types.push_back(p->type);
  std::vector<abi::Slot> slots = abi::kernelSlots(arg_types);
  size_t next = 0;

  std::vector<std::string> args;
  for (size_t i = 0; i < b0->params.size(); ++i) {
    const Type* t = b0->params[i]->type;
    if (is_kernel_) {
      args.push_back(kernelArgument(t, slots, &next));
    } else if (hasValue(t)) {
      std::string name = "%arg" + std::to_string(i);
      params_.push_back({llvmType(t), name});
      args.push_back(name);
    } else {
      args.push_back("");
    }
  }
  if (is_kernel_ && !fn_.tensor_maps.empty()) {
    // After the arguments (abi.h): each tensor map by value in the parameter
    // space (grid_constant: the TMA reads it where it lies), then the flag.
    for (size_t k = 0; k < fn_.tensor_maps.size(); ++k) {
      std::string name = "%tmap" + std::to_string(k);
      const char* byval = options().dialect == Dialect::Llvm ? "byval([128 x i8])" : "byval";
      params_.push_back({"[128 x i8]*", std::string(byval) + " align 64 " + name});
      grid_constant_.push_back(static_cast<int>(params_.size()));
      tensor_map_params_.push_back(name);
    }
    tensor_maps_valid_ = "%tmaps_ok";
    params_.push_back({"i32", tensor_maps_valid_});
  }
  if (npreds_[b0] == 0) {
    for (size_t i = 0; i < b0->params.size(); ++i) bind(*b0->params[i], args[i]);
  } else {
    incoming_[b0].push_back({"entry", args});
  }
  emitLine("br label %" + blockLabel(b0));
}

void FunctionEmitter::emitBlock(const ir::Block& b) {
  out_ = &bodies_[&b];
  label_ = block_label_ = blockLabel(&b);
  current_ = nullptr;
  bool params_are_args = &b == fn_.entry() && npreds_[&b] == 0;
  if (!params_are_args) {
    for (const auto& p : b.params) {
      if (hasValue(p->type)) bind(*p, nameOf(*p));
    }
  }
  const ir::Instr* term = b.terminator();
  if (!term || !ir::isTerminator(term->op)) {
    throw CompileError(fn_.filename, 0, 0, "codegen",
                       "internal error: block " + blockLabel(&b) + " of '" + fn_.name +
                           "' has no terminator");
  }
  for (const auto& in : b.instrs) {
    current_ = in.get();
    if (ir::isTerminator(in->op)) {
      emitTerminator(*in);
    } else {
      emitInstr(*in);
    }
  }
  current_ = nullptr;
}

void FunctionEmitter::emitInstr(const ir::Instr& in) {
  if (in.op == ir::Op::Const || in.op == ir::Op::Undef || in.op == ir::Op::Param) return;
  if (ir::opFlags(in.op) & ir::PY) {
    fail(in, std::string(ir::opName(in.op)),
         "Python-level operation left in typed IR (type inference should have rewritten it)");
  }
  Lowering lower = loweringFor(in.op);
  if (!lower) fail(in, std::string(ir::opName(in.op)), "codegen does not support this operation");
  lower(*this, in);
  if (in.hasResult() && hasValue(in.type) && !values_.count(&in)) {
    fail(in, std::string(ir::opName(in.op)), "internal error: lowering produced no value");
  }
}

void FunctionEmitter::addEdge(const ir::Edge& e, const std::string& from) {
  size_t n = e.target->params.size();
  if (e.args.size() != n) {
    fail(*current_, "branch", "edge to " + blockLabel(e.target) + " passes " +
                                  std::to_string(e.args.size()) + " arguments for " +
                                  std::to_string(n) + " block parameters");
  }
  Incoming inc{from, {}};
  for (size_t k = 0; k < n; ++k) inc.args.push_back(val(e.args[k]));
  incoming_[e.target].push_back(std::move(inc));
}

void FunctionEmitter::emitTerminator(const ir::Instr& in) {
  switch (in.op) {
    case ir::Op::Br:
      addEdge(in.succs.at(0), label_);
      emitLine("br label %" + blockLabel(in.succs[0].target));
      return;
    case ir::Op::CondBr: {
      std::string cond = val(in.operands.at(0));
      const ir::Edge& t = in.succs.at(0);
      const ir::Edge& f = in.succs.at(1);
      if (t.target != f.target) {
        addEdge(t, label_);
        addEdge(f, label_);
        emitLine("br i1 " + cond + ", label %" + blockLabel(t.target) + ", label %" + blockLabel(f.target));
        return;
      }
      // Both edges reach one block: a phi can take only one value per
      // predecessor, so the false edge goes through a block of its own.
      std::string split = freshLabel("split");
      addEdge(t, label_);
      emitLine("br i1 " + cond + ", label %" + blockLabel(t.target) + ", label %" + split);
      startBlock(split);
      addEdge(f, label_);
      emitLine("br label %" + blockLabel(f.target));
      return;
    }
    case ir::Op::Ret: {
      const Type* rt = fn_.return_type;
      bool returns_value = !is_kernel_ && rt && hasValue(rt);
      if (!returns_value) {
        emitLine("ret void");
        return;
      }
      if (in.operands.empty() || !hasValue(in.operands[0]->type)) {
        fail(in, "return", "function returns " + typeToString(rt) + " but this return has no value");
      }
      emitLine("ret " + tval(in.operands[0]));
      return;
    }
    case ir::Op::Raise:
      mod_.declare("declare void @llvm.trap() noreturn nounwind");
      emitLine("call void @llvm.trap()");
      emitLine("unreachable");
      return;
    default:
      fail(in, std::string(ir::opName(in.op)), "unknown terminator");
  }
}

std::string FunctionEmitter::paramTypeList() const {
  std::string out;
  for (const auto& [type, name] : params_) out += (out.empty() ? "" : ", ") + type;
  return out;
}

std::string FunctionEmitter::assemble() {
  std::string params;
  for (const auto& [type, name] : params_) params += (params.empty() ? "" : ", ") + type + " " + name;
  std::string out;
  if (is_kernel_) {
    out += "define void " + llvm_name_ + "(" + params + ")";
  } else {
    const Type* rt = fn_.return_type;
    std::string ret = rt && hasValue(rt) ? llvmType(rt) : "void";
    // Device functions are small and called from hot loops: inline them, as
    // CUDA C++ does with __device__ functions by default.
    out += "define internal " + ret + " " + llvm_name_ + "(" + params + ") alwaysinline";
  }
  if (subprogram_ >= 0) out += " !dbg !" + std::to_string(subprogram_);
  out += " {\nentry:\n" + entry_allocas_ + entry_body_;
  for (const ir::Block* b : order_) {
    out += blockLabel(b) + ":\n";
    bool params_are_args = b == fn_.entry() && npreds_[b] == 0;
    if (!params_are_args) {
      for (size_t k = 0; k < b->params.size(); ++k) {
        const ir::Instr& p = *b->params[k];
        if (!hasValue(p.type)) continue;
        std::string phi = "  " + values_[&p] + " = phi " + llvmType(p.type) + " ";
        const auto& inc = incoming_[b];
        for (size_t j = 0; j < inc.size(); ++j) {
          phi += (j ? ", [ " : "[ ") + inc[j].args[k] + ", %" + inc[j].from + " ]";
        }
        out += phi + "\n";
      }
    }
    out += bodies_[b];
  }
  return out + "}\n";
}

}  // namespace cj::codegen
