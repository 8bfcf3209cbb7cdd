// Array views: { T* data, [nd x i64] shape, [nd x i64] strides (bytes) }.
//
// Element addresses are specialised by layout: C and F arrays index from the
// shape (row- / column-major element offsets; their strides are never read),
// A arrays from the byte strides. Negative indices wrap (numba semantics)
// unless the range pass proved the index non-negative (Instr::facts); under
// `debug` every index is checked against its dimension and an out-of-range
// access traps.
#include <algorithm>
#include <cstdint>

#include "codegen/emitter.h"

namespace cj::codegen {
namespace {

using ir::Op;

int elementAlign(Scalar s) {
  return scalarKind(s) == ScalarKind::Complex ? scalarByteSize(complexPart(s)) : scalarByteSize(s);
}

// The constant shape of a shared or local array (the intrinsic that made it
// carries it); empty for other arrays and for dynamic shared memory.
std::vector<int64_t> constantShape(const ir::Instr* arr) {
  if (!arr->isIntrinsic(ir::Intrinsic::SharedArray) && !arr->isIntrinsic(ir::Intrinsic::LocalArray)) return {};
  if (static_cast<int>(arr->ints.size()) != arr->type->ndim) return {};
  for (int64_t n : arr->ints)
    if (n <= 0) return {};
  return arr->ints;
}

bool isPowerOfTwo(int64_t n) { return n > 0 && (n & (n - 1)) == 0; }

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
  std::string cur = fe.emit("insertvalue " + vt + " undef, " + llvmElemType(array) + "* " + data + ", 0");
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
  int64_t step = arrayItemSize(array);
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

namespace {

// An index proven >= 0 of the form `v + c` or `v - c` (i64, c a constant):
// its term of the offset is v * stride + c * stride (the same number modulo
// 2^64), so neighbouring accesses share the v * stride product:
// a[i - 1, j] and a[i + 1, j] become a[i, j]'s offset -/+ the row length,
// as a C programmer writes them, instead of two more 64-bit multiplies.
struct SplitIndex {
  const ir::Instr* base = nullptr;
  int64_t delta = 0;
};

SplitIndex splitConstantOffset(const ir::Instr* i) {
  if (i->type != i64Ty() || (i->op != Op::Add && i->op != Op::Sub)) return {};
  auto constant = [](const ir::Instr* v) {
    return v->op == Op::Const && v->cval.kind == ir::Const::Kind::Int;
  };
  const ir::Instr* x = i->operands[0];
  const ir::Instr* y = i->operands[1];
  if (constant(y) && y->cval.i != INT64_MIN) return {x, i->op == Op::Add ? y->cval.i : -y->cval.i};
  if (i->op == Op::Add && constant(x)) return {y, x->cval.i};
  return {};
}

}  // namespace

std::string elementPointer(FunctionEmitter& fe, const ir::Instr* arr,
                           const std::vector<const ir::Instr*>& idx, uint32_t facts) {
  const ir::Instr& at = fe.current() ? *fe.current() : *arr;   // for messages
  const Type* a = arr->type;
  int nd = a->ndim;
  if (static_cast<int>(idx.size()) != nd) {
    fe.fail(at, "array index", "a " + std::to_string(nd) + "-d array indexed with " +
                                   std::to_string(idx.size()) + " indices (only full indexing is supported)");
  }
  std::string view = fe.val(arr);
  std::string mt = llvmElemType(a);
  std::vector<std::string> shape(nd), ix(nd);
  std::vector<int64_t> delta(nd, 0);   // ix[d] + delta[d] is the index (split constant offsets)
  std::vector<int64_t> fixed = constantShape(arr);
  // The dimension whose stride is one element (C: the last, F: the first):
  // its constant offsets already fold into the address.
  int unit = a->layout == Layout::C ? nd - 1 : a->layout == Layout::F ? 0 : -1;
  for (int d = 0; d < nd; ++d) {
    const ir::Instr* i = idx[d];
    if (!i->type->isInt() && !i->type->isBool()) {
      fe.fail(at, "array index", "index of type " + typeToString(i->type) + " (expected an integer)");
    }
    shape[d] = fixed.empty() ? shapeOf(fe, a, view, d) : std::to_string(fixed[d]);
    bool nonneg = facts & ir::indexNonNegFact(d);
    SplitIndex split = nonneg && d != unit && !fe.options().debug ? splitConstantOffset(i) : SplitIndex{};
    if (split.base) {
      ix[d] = fe.val(split.base);
      delta[d] = split.delta;
      continue;
    }
    std::string v = convertScalar(fe, fe.val(i), i->type->scalar, Scalar::Int64);
    if (nonneg) {
      // The range pass proved the index >= 0: no wraparound.
    } else if (!fixed.empty() && isPowerOfTwo(fixed[d]) && !fe.options().debug) {
      // Every valid index of a 2^k-long dimension, -2^k .. 2^k - 1, wraps to
      // its low k bits (an invalid one is undefined behaviour either way).
      v = fe.emit("and i64 " + v + ", " + std::to_string(fixed[d] - 1));
    } else {
      std::string neg = fe.emit("icmp slt i64 " + v + ", 0");
      std::string wrapped = fe.emit("add i64 " + v + ", " + shape[d]);
      v = fe.emit("select i1 " + neg + ", i64 " + wrapped + ", i64 " + v);
    }
    if (fe.options().debug) boundsCheck(fe, fe.emit("icmp ult i64 " + v + ", " + shape[d]), v, d, shape[d]);
    ix[d] = v;
  }
  bool split = std::any_of(delta.begin(), delta.end(), [](int64_t x) { return x != 0; });
  std::string data = viewPart(fe, a, view, "0");
  if (nd == 0) return data;
  if (a->layout == Layout::A) {
    std::string bytes;
    for (int d = 0; d < nd; ++d) {
      std::string stride = strideOf(fe, a, view, d);
      std::string term = fe.emit("mul i64 " + ix[d] + ", " + stride);
      if (delta[d]) term = fe.emit("add i64 " + term + ", " + fe.emit("mul i64 " + stride + ", " +
                                                                      std::to_string(delta[d])));
      bytes = bytes.empty() ? term : fe.emit("add i64 " + bytes + ", " + term);
    }
    std::string raw = fe.emit("bitcast " + mt + "* " + data + " to i8*");
    std::string p = fe.emit("getelementptr inbounds i8, i8* " + raw + ", i64 " + bytes);
    return fe.emit("bitcast i8* " + p + " to " + mt + "*");
  }
  // Contiguous: Horner's rule over the dimensions, outermost first. For an
  // access inside the array every partial offset lies in [0, size), far from
  // overflow, and one outside it is undefined (the GEP is inbounds): nuw nsw.
  // With split indices the partial offsets leave that range: no flags.
  std::string flags = split ? "" : "nuw nsw ";
  std::string off, inner = "1";   // inner: the elements one step of dimension d moves
  std::string adjust;             // sum of delta[d] * (elements per step of d)
  for (int k = nd - 1; k >= 0; --k) {
    int d = a->layout == Layout::C ? k : nd - 1 - k;
    if (delta[d]) {
      std::string term = inner == "1" ? std::to_string(delta[d])
                                      : fe.emit("mul i64 " + inner + ", " + std::to_string(delta[d]));
      adjust = adjust.empty() ? term : fe.emit("add i64 " + adjust + ", " + term);
    }
    if (k > 0) inner = inner == "1" ? shape[d] : fe.emit("mul i64 " + inner + ", " + shape[d]);
  }
  for (int k = 0; k < nd; ++k) {
    int d = a->layout == Layout::C ? k : nd - 1 - k;
    off = off.empty() ? ix[d]
                      : fe.emit("add " + flags + "i64 " + fe.emit("mul " + flags + "i64 " + off + ", " + shape[d]) +
                                ", " + ix[d]);
  }
  if (!adjust.empty()) off = fe.emit("add i64 " + off + ", " + adjust);
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
  if (dtype == Scalar::Float16) {   // as its bits: storeVectorItem says why
    std::string bits = fe.emit("bitcast half " + v + " to i16");
    std::string ip = fe.emit("bitcast half* " + ptr + " to i16*");
    fe.emitLine("store i16 " + bits + ", i16* " + ip + ", align 2");
    return;
  }
  std::string stored = dtype == Scalar::Bool ? fe.emit("zext i1 " + v + " to i8") : v;
  fe.emitLine("store " + mt + " " + stored + ", " + mt + "* " + ptr + ", align " +
              std::to_string(elementAlign(dtype)));
}

namespace {

// A vector item (float16x4 & co) at `ptr` (llvmElemType: <n x T>* for n = 2
// and 4, one vector access at the item's alignment: ld.v4.b16, ld.v2.f32,
// ...; [n x T]* for n = 1 and 3, component by component); the value is the
// tuple's struct.
std::string loadVectorItem(FunctionEmitter& fe, const Type* vec, const std::string& ptr) {
  const int n = static_cast<int>(vec->elems.size());
  const std::string t = llvmMemType(vec->elems[0]->scalar);
  const std::string arr = "[" + std::to_string(n) + " x " + t + "]";
  const std::string st = llvmType(vec);
  std::string out = "undef";
  if (n == 2 || n == 4) {
    const std::string vt = "<" + std::to_string(n) + " x " + t + ">";
    std::string v = fe.emit("load " + vt + ", " + vt + "* " + ptr + ", align " + std::to_string(itemAlign(vec)));
    for (int k = 0; k < n; ++k) {
      std::string c = fe.emit("extractelement " + vt + " " + v + ", i32 " + std::to_string(k));
      out = fe.emit("insertvalue " + st + " " + out + ", " + t + " " + c + ", " + std::to_string(k));
    }
    return out;
  }
  for (int k = 0; k < n; ++k) {
    std::string p = fe.emit("getelementptr inbounds " + arr + ", " + arr + "* " + ptr + ", i64 0, i64 " + std::to_string(k));
    std::string c = fe.emit("load " + t + ", " + t + "* " + p + ", align " + std::to_string(itemAlign(vec->elems[0])));
    out = fe.emit("insertvalue " + st + " " + out + ", " + t + " " + c + ", " + std::to_string(k));
  }
  return out;
}

void storeVectorItem(FunctionEmitter& fe, const Type* vec, const std::string& ptr, const std::string& value) {
  const int n = static_cast<int>(vec->elems.size());
  const std::string t = llvmMemType(vec->elems[0]->scalar);
  const std::string st = llvmType(vec);
  std::vector<std::string> parts;
  for (int k = 0; k < n; ++k) parts.push_back(fe.emit("extractvalue " + st + " " + value + ", " + std::to_string(k)));
  const std::string mt = llvmElemType(arrayOfItems(vec, 1, Layout::C));
  if (vec->elems[0]->scalar == Scalar::Float16) {
    // Halves are stored as the integers of their bits, packed with integer
    // operations: libNVVM (CUDA 13.0) deletes a store of computed halves as
    // a <2 x half> (or as two neighbouring halves built into one) to shared
    // memory that other threads read after a barrier, which packed integers
    // keep (tests/test_vector_arrays.py).
    std::vector<std::string> bits;
    for (const std::string& p : parts) bits.push_back(fe.emit("bitcast half " + p + " to i16"));
    if (n == 2 || n == 4) {
      const std::string it = "i" + std::to_string(16 * n);
      std::string word;
      for (int k = 0; k < n; ++k) {
        std::string z = fe.emit("zext i16 " + bits[k] + " to " + it);
        if (k) z = fe.emit("shl " + it + " " + z + ", " + std::to_string(16 * k));
        word = k ? fe.emit("or " + it + " " + word + ", " + z) : z;
      }
      std::string ip = fe.emit("bitcast " + mt + "* " + ptr + " to " + it + "*");
      fe.emitLine("store " + it + " " + word + ", " + it + "* " + ip + ", align " + std::to_string(itemAlign(vec)));
      return;
    }
    std::string ip = fe.emit("bitcast " + mt + "* " + ptr + " to i16*");
    for (int k = 0; k < n; ++k) {
      std::string p = fe.emit("getelementptr inbounds i16, i16* " + ip + ", i64 " + std::to_string(k));
      fe.emitLine("store i16 " + bits[k] + ", i16* " + p + ", align 2");
    }
    return;
  }
  if (n == 2 || n == 4) {
    const std::string vt = "<" + std::to_string(n) + " x " + t + ">";
    std::string v = "undef";
    for (int k = 0; k < n; ++k)
      v = fe.emit("insertelement " + vt + " " + v + ", " + t + " " + parts[k] + ", i32 " + std::to_string(k));
    fe.emitLine("store " + vt + " " + v + ", " + vt + "* " + ptr + ", align " + std::to_string(itemAlign(vec)));
    return;
  }
  for (int k = 0; k < n; ++k) {
    std::string p = fe.emit("getelementptr inbounds " + mt + ", " + mt + "* " + ptr + ", i64 0, i64 " + std::to_string(k));
    fe.emitLine("store " + t + " " + parts[k] + ", " + t + "* " + p + ", align " + std::to_string(itemAlign(vec->elems[0])));
  }
}

}  // namespace

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
      std::string p = elementPointer(fe, arr, idx, in.facts);
      if (a->record) {   // an item of an array of records: its address is the record
        fe.bind(in, fe.emit("bitcast " + llvmElemType(a) + "* " + p + " to i8*"));
        return;
      }
      fe.bind(in, a->vector ? loadVectorItem(fe, a->vector, p) : loadElement(fe, a->scalar, p));
      return;
    }
    case Op::ArrayStore: {
      if (a->readonly) fe.fail(in, "setitem", "the array is read-only");
      if (a->record) fe.fail(in, "setitem", "store into an array of records (type inference emits record_copy)");
      std::vector<const ir::Instr*> idx(in.operands.begin() + 1, in.operands.end() - 1);
      const ir::Instr* value = in.operands.back();
      if (value->type != arrayElementType(a)) {
        fe.fail(in, "setitem", "storing a " + typeToString(value->type) + " into an array of " +
                                   typeToString(arrayElementType(a)) + " (type inference must insert a cast)");
      }
      if (a->vector) {
        storeVectorItem(fe, a->vector, elementPointer(fe, arr, idx, in.facts), fe.val(value));
        return;
      }
      storeElement(fe, a->scalar, elementPointer(fe, arr, idx, in.facts), fe.val(value));
      return;
    }
    default:
      fe.fail(in, std::string(ir::opName(in.op)), "not an array operation");
  }
}

}  // namespace cj::codegen
