// Array views: { T* data, [nd x i64] shape, [nd x i64] strides (bytes) }.
//
// Element addresses are specialised by layout: C and F arrays index from the
// shape (row- / column-major element offsets; their strides are never read),
// A arrays from the byte strides. Negative indices wrap (numba semantics)
// unless the index is known to be non-negative; under `debug` every index is
// checked against its dimension and an out-of-range access traps.
#include <algorithm>

#include "codegen/emitter.h"

namespace cj::codegen {
namespace {

using ir::Op;

int elementAlign(Scalar s) {
  return scalarKind(s) == ScalarKind::Complex ? scalarByteSize(complexPart(s)) : scalarByteSize(s);
}

int nonNegativeBits(const ir::Instr* v, int depth = 0);

// The values a block parameter can take: the arguments of every edge into
// its block, followed through other parameters (loops pass the iterator
// around). Null unless they all come down to one non-parameter value.
const ir::Instr* singleSource(const ir::Instr* param) {
  std::vector<const ir::Instr*> work = {param};
  std::vector<const ir::Instr*> seen;
  const ir::Instr* source = nullptr;
  while (!work.empty()) {
    const ir::Instr* p = work.back();
    work.pop_back();
    if (std::find(seen.begin(), seen.end(), p) != seen.end()) continue;
    seen.push_back(p);
    if (seen.size() > 32) return nullptr;
    if (p->op != Op::Param) {
      if (source && source != p) return nullptr;
      source = p;
      continue;
    }
    const ir::Block* b = p->parent;
    const ir::Function* fn = b ? b->parent : nullptr;
    if (!fn || b == fn->entry()) return nullptr;   // a function argument
    for (const auto& blk : fn->blocks) {
      const ir::Instr* term = blk->terminator();
      if (!term) continue;
      for (const auto& e : term->succs) {
        if (e.target == b && static_cast<size_t>(p->index) < e.args.size()) work.push_back(e.args[p->index]);
      }
    }
  }
  return source;
}

// A value taken from a range iterator is within [start, stop) when the step
// is a positive constant, so it is non-negative when start is.
int iteratorValueBits(const ir::Instr* iter, int depth) {
  const ir::Instr* it = iter->op == Op::Param ? singleSource(iter) : iter;
  if (!it || it->op != Op::GetIter) return -1;
  const ir::Instr* range = it->operands[0];
  if (range->op != Op::RangeMake) return -1;
  const ir::Instr* step = range->operands[2];
  bool positive_step = step->op == Op::Const && step->cval.kind == ir::Const::Kind::Int && step->cval.i > 0;
  if (!positive_step || nonNegativeBits(range->operands[0], depth + 1) < 0) return -1;
  return scalarBits(iter->type->scalar) - (scalarSigned(iter->type->scalar) ? 1 : 0);
}

// 0 <= v < 2^bits for the returned bits, or -1 when unknown. Enough to see
// that indices built from special registers (cuda.grid, threadIdx), small
// constants and counting loops (range with a non-negative start and a
// positive step) are never negative, so they need no wraparound.
int nonNegativeBits(const ir::Instr* v, int depth) {
  if (depth > 8 || !v->type->isScalar()) return -1;
  switch (v->op) {
    case Op::IterNext:
      return iteratorValueBits(v->operands[0], depth);
    case Op::Const:
      if (v->cval.kind != ir::Const::Kind::Int && v->cval.kind != ir::Const::Kind::Bool) return -1;
      if (v->cval.i < 0) return -1;
      for (int b = 0; b < 63; ++b) {
        if (v->cval.i < (int64_t{1} << b)) return b;
      }
      return 63;
    case Op::Intrinsic:
      return v->name.rfind("sreg.", 0) == 0 ? 31 : -1;
    case Op::Cast: {
      const Type* from = v->operands[0]->type;
      if (!from->isScalar() || !v->type->isInt()) return -1;
      if (from->isBool()) return 1;
      if (!from->isInt() || from->bits() > v->type->bits()) return -1;
      if (!from->isSigned()) return from->bits() < v->type->bits() ? from->bits() : -1;
      return nonNegativeBits(v->operands[0], depth + 1);
    }
    case Op::Add:
    case Op::Mul: {
      int a = nonNegativeBits(v->operands[0], depth + 1);
      int b = nonNegativeBits(v->operands[1], depth + 1);
      if (a < 0 || b < 0) return -1;
      int r = v->op == Op::Add ? std::max(a, b) + 1 : a + b;
      int limit = v->type->bits() - (v->type->isSigned() ? 1 : 0);
      return r <= limit ? r : -1;
    }
    default:
      return -1;
  }
}

std::string viewPart(FunctionEmitter& fe, const Type* array, const std::string& view, const std::string& path) {
  return fe.emit("extractvalue " + llvmViewType(array) + " " + view + ", " + path);
}

std::string shapeOf(FunctionEmitter& fe, const Type* a, const std::string& view, int d) {
  return viewPart(fe, a, view, "1, " + std::to_string(d));
}

std::string strideOf(FunctionEmitter& fe, const Type* a, const std::string& view, int d) {
  return viewPart(fe, a, view, "2, " + std::to_string(d));
}

const Type* requireArray(FunctionEmitter& fe, const ir::Instr& in, const ir::Instr* arr) {
  if (!arr->type->is(TypeKind::Array)) {
    fe.fail(in, std::string(ir::opName(in.op)), "expected an array, found " + typeToString(arr->type));
  }
  return arr->type;
}

}  // namespace

std::string makeView(FunctionEmitter& fe, const Type* array, const std::string& data,
                     const std::vector<std::string>& shape, const std::vector<std::string>& strides) {
  std::string vt = llvmViewType(array);
  std::string cur = fe.emit("insertvalue " + vt + " undef, " + llvmMemType(array->scalar) + "* " + data + ", 0");
  for (size_t d = 0; d < shape.size(); ++d) {
    cur = fe.emit("insertvalue " + vt + " " + cur + ", i64 " + shape[d] + ", 1, " + std::to_string(d));
  }
  for (size_t d = 0; d < strides.size(); ++d) {
    cur = fe.emit("insertvalue " + vt + " " + cur + ", i64 " + strides[d] + ", 2, " + std::to_string(d));
  }
  return cur;
}

std::vector<int64_t> contiguousStrides(const Type* array, const std::vector<int64_t>& shape) {
  int nd = static_cast<int>(shape.size());
  std::vector<int64_t> strides(nd);
  int64_t step = scalarByteSize(array->scalar);
  if (array->layout == Layout::F) {
    for (int d = 0; d < nd; ++d) {
      strides[d] = step;
      step *= shape[d];
    }
  } else {
    for (int d = nd - 1; d >= 0; --d) {
      strides[d] = step;
      step *= shape[d];
    }
  }
  return strides;
}

std::string elementPointer(FunctionEmitter& fe, const ir::Instr* arr,
                           const std::vector<const ir::Instr*>& idx) {
  const ir::Instr& at = fe.current() ? *fe.current() : *arr;   // for messages
  const Type* a = arr->type;
  int nd = a->ndim;
  if (static_cast<int>(idx.size()) != nd) {
    fe.fail(at, "array index", "a " + std::to_string(nd) + "-d array indexed with " +
                                   std::to_string(idx.size()) + " indices (only full indexing is supported)");
  }
  std::string view = fe.val(arr);
  std::string mt = llvmMemType(a->scalar);
  std::vector<std::string> shape(nd), ix(nd);
  for (int d = 0; d < nd; ++d) {
    const ir::Instr* i = idx[d];
    if (!i->type->isInt() && !i->type->isBool()) {
      fe.fail(at, "array index", "index of type " + typeToString(i->type) + " (expected an integer)");
    }
    std::string v = convertScalar(fe, fe.val(i), i->type->scalar, Scalar::Int64);
    shape[d] = shapeOf(fe, a, view, d);
    if (nonNegativeBits(i) < 0) {
      std::string neg = fe.emit("icmp slt i64 " + v + ", 0");
      std::string wrapped = fe.emit("add i64 " + v + ", " + shape[d]);
      v = fe.emit("select i1 " + neg + ", i64 " + wrapped + ", i64 " + v);
    }
    if (fe.options().debug) boundsCheck(fe, fe.emit("icmp ult i64 " + v + ", " + shape[d]), v, d, shape[d]);
    ix[d] = v;
  }
  std::string data = viewPart(fe, a, view, "0");
  if (nd == 0) return data;
  if (a->layout == Layout::A) {
    std::string bytes;
    for (int d = 0; d < nd; ++d) {
      std::string term = fe.emit("mul i64 " + ix[d] + ", " + strideOf(fe, a, view, d));
      bytes = bytes.empty() ? term : fe.emit("add i64 " + bytes + ", " + term);
    }
    std::string raw = fe.emit("bitcast " + mt + "* " + data + " to i8*");
    std::string p = fe.emit("getelementptr inbounds i8, i8* " + raw + ", i64 " + bytes);
    return fe.emit("bitcast i8* " + p + " to " + mt + "*");
  }
  // Contiguous: Horner's rule over the dimensions, outermost first.
  std::string off;
  for (int k = 0; k < nd; ++k) {
    int d = a->layout == Layout::C ? k : nd - 1 - k;
    off = off.empty() ? ix[d] : fe.emit("add i64 " + fe.emit("mul i64 " + off + ", " + shape[d]) + ", " + ix[d]);
  }
  return fe.emit("getelementptr inbounds " + mt + ", " + mt + "* " + data + ", i64 " + off);
}

std::string loadElement(FunctionEmitter& fe, Scalar dtype, const std::string& ptr) {
  std::string mt = llvmMemType(dtype);
  std::string v = fe.emit("load " + mt + ", " + mt + "* " + ptr + ", align " + std::to_string(elementAlign(dtype)));
  if (dtype == Scalar::Bool) return fe.emit("icmp ne i8 " + v + ", 0");
  return v;
}

void storeElement(FunctionEmitter& fe, Scalar dtype, const std::string& ptr, const std::string& v) {
  std::string mt = llvmMemType(dtype);
  std::string stored = dtype == Scalar::Bool ? fe.emit("zext i1 " + v + " to i8") : v;
  fe.emitLine("store " + mt + " " + stored + ", " + mt + "* " + ptr + ", align " +
              std::to_string(elementAlign(dtype)));
}

void lowerArrayOp(FunctionEmitter& fe, const ir::Instr& in) {
  const ir::Instr* arr = in.operands.at(0);
  const Type* a = requireArray(fe, in, arr);
  switch (in.op) {
    case Op::ArrayDim:
    case Op::ArrayStride: {
      if (in.index < 0 || in.index >= a->ndim) {
        fe.fail(in, std::string(ir::opName(in.op)), "dimension " + std::to_string(in.index) + " of a " +
                                                        std::to_string(a->ndim) + "-d array");
      }
      int part = in.op == Op::ArrayDim ? 1 : 2;
      fe.emitResult(in, "extractvalue " + llvmViewType(a) + " " + fe.val(arr) + ", " + std::to_string(part) +
                            ", " + std::to_string(in.index));
      return;
    }
    case Op::ArraySize: {
      std::string view = fe.val(arr);
      std::string size = "1";
      for (int d = 0; d < a->ndim; ++d) {
        std::string n = shapeOf(fe, a, view, d);
        size = d == 0 ? n : fe.emit("mul i64 " + size + ", " + n);
      }
      fe.bind(in, size);
      return;
    }
    case Op::ArrayLoad: {
      std::vector<const ir::Instr*> idx(in.operands.begin() + 1, in.operands.end());
      fe.bind(in, loadElement(fe, a->scalar, elementPointer(fe, arr, idx)));
      return;
    }
    case Op::ArrayStore: {
      if (a->readonly) fe.fail(in, "setitem", "the array is read-only");
      std::vector<const ir::Instr*> idx(in.operands.begin() + 1, in.operands.end() - 1);
      const ir::Instr* value = in.operands.back();
      if (value->type != scalarTy(a->scalar)) {
        fe.fail(in, "setitem", "storing a " + typeToString(value->type) + " into an array of " +
                                   typeToString(scalarTy(a->scalar)) + " (type inference must insert a cast)");
      }
      storeElement(fe, a->scalar, elementPointer(fe, arr, idx), fe.val(value));
      return;
    }
    default:
      fe.fail(in, std::string(ir::opName(in.op)), "not an array operation");
  }
}

}  // namespace cj::codegen
