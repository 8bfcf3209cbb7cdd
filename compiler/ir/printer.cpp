// The IR text form. Stable: golden tests and inspect_ir() read it.
//
//   func axpy(v0:f64 a, v1:array(f32, 1d, C) x) -> none kernel  @axpy.py:3
//   bb0:
//     v3:i64 = intrinsic sreg.tid.x()  @4:9
//     v4:i64 = array_size v1  @5:12
//     v5:b1 = lt v3, v4  @5:8
//     cbr v5, bb1, bb2(v3)  @5:5
//   bb2(v9:i64 i) (preds bb0, bb1):
//     ret  @7:5
//
// Attributes are written in the op's own place:
//   const 42 | getattr v1 .size | tuple_get v3 [1] | array_dim v1 [0]
//   intrinsic math.sqrt(v4) | intrinsic shared_array[128, 4]() | call_func helper(v4, v5)
//   intrinsic cub "block_reduce float32 op=sum block=256x1x1 ipt=1"(v4)
//   call v1(v2, v3, dtype=v4) | raise "message"
// Proven facts follow the op name: add nsw nuw v1, v2 | floordiv nonneg v1, v2
// | cast nonneg v1 | load nonneg[0, 1] v0, v1, v2.
// A value stored to a Python variable ends with [name].
#include <algorithm>
#include <string>

#include "ir/ir.h"

namespace cj::ir {
namespace {

std::string ref(const Instr* v) { return v ? "v" + std::to_string(v->id) : "<null>"; }

std::string valueDef(const Instr* v) {
  std::string s = ref(v) + ":" + typeToString(v->type);
  if (!v->var.empty()) s += " " + v->var;
  return s;
}

std::string operandList(const std::vector<Instr*>& ops, size_t from = 0) {
  std::string s;
  for (size_t i = from; i < ops.size(); ++i) {
    if (i > from) s += ", ";
    s += ref(ops[i]);
  }
  return s;
}

std::string edge(const Edge& e) {
  std::string s = "bb" + std::to_string(e.target->id);
  if (!e.args.empty()) s += "(" + operandList(e.args) + ")";
  return s;
}

std::string basename(const std::string& path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Proven facts after the op name: "add nsw nuw", "floordiv nonneg",
// "load nonneg[0, 1]" (the indices known to be >= 0).
std::string factWords(const Instr& in) {
  std::string s;
  if (in.facts & kFactNsw) s += " nsw";
  if (in.facts & kFactNuw) s += " nuw";
  if (in.facts & kFactNonNeg) s += " nonneg";
  std::string idx;
  for (int k = 0; k < kFactMaxIndices; ++k) {
    if (in.facts & indexNonNegFact(k)) idx += (idx.empty() ? "" : ", ") + std::to_string(k);
  }
  if (!idx.empty()) s += " nonneg[" + idx + "]";
  return s;
}

std::string body(const Instr& in) {
  std::string op = std::string(opName(in.op)) + factWords(in);
  switch (in.op) {
    case Op::Const: return op + " " + constToString(in.cval);
    case Op::GetAttr:
    case Op::SetAttr:
    case Op::RecordGet:
    case Op::RecordSet: return op + " " + operandList(in.operands) + " ." + in.name;
    case Op::TupleGet:
    case Op::ArrayDim:
    case Op::ArrayStride:
      return op + " " + operandList(in.operands) + " [" + std::to_string(in.index) + "]";
    case Op::Intrinsic: {
      // in.name: the spelling of an unknown intrinsic the parser kept for the verifier's message.
      std::string s = op + " " + (in.intrinsic == Intrinsic::Count ? in.name : std::string(intrinsicName(in.intrinsic)));
      // A string attribute (the CUB spec of `intrinsic cub`).
      if (in.cval.kind == Const::Kind::Str) s += " " + constToString(in.cval);
      if (!in.ints.empty()) {
        s += "[";
        for (size_t i = 0; i < in.ints.size(); ++i) {
          if (i) s += ", ";
          s += std::to_string(in.ints[i]);
        }
        s += "]";
      }
      return s + "(" + operandList(in.operands) + ")";
    }
    case Op::CallFunc: return op + " " + in.name + "(" + operandList(in.operands) + ")";
    case Op::Call: {
      std::string s = op + " " + (in.operands.empty() ? "<null>" : ref(in.operands[0])) + "(";
      size_t nargs = in.operands.empty() ? 0 : in.operands.size() - 1;
      size_t npos = nargs - std::min(nargs, in.names.size());
      for (size_t i = 0; i < nargs; ++i) {
        if (i) s += ", ";
        if (i >= npos) s += in.names[i - npos] + "=";
        s += ref(in.operands[i + 1]);
      }
      return s + ")";
    }
    case Op::Br: return op + " " + edge(in.succs.at(0));
    case Op::CondBr:
      return op + " " + operandList(in.operands) + ", " + edge(in.succs.at(0)) + ", " +
             edge(in.succs.at(1));
    case Op::Raise: return op + " " + constToString(Const::str(in.name));
    default:
      if (in.operands.empty()) return op;
      return op + " " + operandList(in.operands);
  }
}

}  // namespace

std::string printFunction(const Function& fn) {
  std::string out = "func " + fn.name + "(";
  if (!fn.blocks.empty()) {
    const auto& params = fn.entry()->params;
    for (size_t i = 0; i < params.size(); ++i) {
      if (i) out += ", ";
      out += valueDef(params[i].get());
    }
  }
  out += ") -> " + typeToString(fn.return_type ? fn.return_type : unknownTy());
  if (fn.is_kernel) out += " kernel";
  if (fn.num_warps) out += " num_warps=" + std::to_string(fn.num_warps);
  if (fn.occupancy) out += " occupancy=" + std::to_string(fn.occupancy);
  if (fn.max_threads) out += " maxntid=" + std::to_string(fn.max_threads);
  if (fn.max_cluster_rank) out += " maxclusterrank=" + std::to_string(fn.max_cluster_rank);
  if (fn.target_sm) out += " sm=" + std::to_string(fn.target_sm);
  if (fn.simt_block[0])
    out += " simt_block=" + std::to_string(fn.simt_block[0]) + "x" + std::to_string(fn.simt_block[1]) + "x" +
           std::to_string(fn.simt_block[2]);
  if (!fn.tensor_maps.empty()) out += " tmaps=" + tensorMapsToString(fn.tensor_maps);
  if (!fn.declared.empty()) {
    out += " sigs=[";
    for (size_t k = 0; k < fn.declared.size(); ++k) out += (k ? "; " : "") + signatureToString(fn.declared[k]);
    out += "]";
  }
  if (!fn.py_name.empty() && fn.py_name != fn.name) out += " py=" + fn.py_name;
  if (!fn.filename.empty()) out += "  @" + basename(fn.filename) + ":" + std::to_string(fn.first_line);
  out += "\n";
  for (size_t bi = 0; bi < fn.blocks.size(); ++bi) {
    const Block& b = *fn.blocks[bi];
    out += "bb" + std::to_string(b.id);
    if (bi != 0 && !b.params.empty()) {
      out += "(";
      for (size_t i = 0; i < b.params.size(); ++i) {
        if (i) out += ", ";
        out += valueDef(b.params[i].get());
      }
      out += ")";
    }
    if (!b.preds.empty()) {
      out += " (preds ";
      for (size_t i = 0; i < b.preds.size(); ++i) {
        if (i) out += ", ";
        out += "bb" + std::to_string(b.preds[i]->id);
      }
      out += ")";
    }
    out += ":\n";
    for (const auto& in : b.instrs) {
      out += "  ";
      if (in->hasResult()) out += ref(in.get()) + ":" + typeToString(in->type) + " = ";
      out += body(*in);
      if (in->loc.line > 0) {
        out += "  @" + std::to_string(in->loc.line);
        if (in->loc.col > 0) out += ":" + std::to_string(in->loc.col);
      }
      if (!in->var.empty()) out += " [" + in->var + "]";
      out += "\n";
    }
  }
  return out;
}

std::string printModule(const Module& m) {
  std::string out;
  for (size_t i = 0; i < m.functions.size(); ++i) {
    if (i) out += "\n";
    out += printFunction(*m.functions[i]);
  }
  return out;
}

}  // namespace cj::ir
