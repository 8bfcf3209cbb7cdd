// array_view: a view of an array's memory from a byte offset, a shape and
// strides (in bytes) that type inference computed (basic slicing, a[i, :]),
// possibly as another element type (a.view(dtype)).
#include "codegen/emitter.h"

namespace cj::codegen {

void lowerArrayView(FunctionEmitter& fe, const ir::Instr& in) {
  const ir::Instr* arr = in.operands.at(0);
  const Type* src = arr->type;
  const Type* dst = in.type;
  if (!src->is(TypeKind::Array) || !dst->is(TypeKind::Array))
    fe.fail(in, "array_view", "array_view of " + typeToString(src) + " as " + typeToString(dst));
  std::string mt = llvmElemType(src);
  std::string data = fe.emit("extractvalue " + llvmViewType(src) + " " + fe.val(arr) + ", 0");
  std::string raw = fe.emit("bitcast " + mt + "* " + data + " to i8*");
  std::string moved = fe.emit("getelementptr inbounds i8, i8* " + raw + ", i64 " + fe.val(in.operands.at(1)));
  std::string typed = fe.emit("bitcast i8* " + moved + " to " + llvmElemType(dst) + "*");
  std::vector<std::string> shape, strides;
  for (int d = 0; d < dst->ndim; ++d) {
    shape.push_back(fe.val(in.operands.at(2 + d)));
    strides.push_back(fe.val(in.operands.at(2 + dst->ndim + d)));
  }
  fe.bind(in, makeView(fe, dst, typed, shape, strides));
}

}  // namespace cj::codegen
