// Records: a record value is the generic i8* address of its bytes; a field
// is read and written at its byte offset. As numba does, a field of a record
// that numpy did not align (a dtype made without align=True) is accessed with
// align 1: nothing promises more, and a packed dtype really is unaligned. An
// aligned record's field is accessed at its natural alignment (numpy placed it
// there and an aligned array's items start at multiples of the alignment).
#include <algorithm>

#include "codegen/emitter.h"

namespace cj::codegen {
namespace {

using ir::Op;

// The address of field `k` of record value `rec` (i8*).
std::string fieldAddress(FunctionEmitter& fe, const ir::Instr* rec, int k) {
  const int64_t offset = rec->type->shape.at(static_cast<size_t>(k));
  if (offset == 0) return fe.val(rec);
  return fe.emit("getelementptr inbounds i8, i8* " + fe.val(rec) + ", i64 " + std::to_string(offset));
}

// What the accesses of a record's bytes as a whole may assume.
int64_t recordAlign(const Type* rec) { return rec->aligned ? rec->align : 1; }

int64_t fieldAlign(const Type* rec, int k) {
  if (!rec->aligned) return 1;
  const int64_t offset = rec->shape.at(static_cast<size_t>(k));
  int64_t a = std::min(memAlign(rec->elems.at(static_cast<size_t>(k))), rec->align);
  while (a > 1 && offset % a != 0) a /= 2;
  return a;
}

void copyBytes(FunctionEmitter& fe, const std::string& dst, const std::string& src, int64_t size, int64_t align) {
  fe.mod().declare("declare void @llvm.memcpy.p0i8.p0i8.i64(i8* nocapture, i8* nocapture readonly, i64, i1)");
  const std::string a = std::to_string(std::max<int64_t>(align, 1));
  fe.emitLine("call void @llvm.memcpy.p0i8.p0i8.i64(i8* align " + a + " " + dst + ", i8* align " + a + " " + src +
              ", i64 " + std::to_string(size) + ", i1 false)");
}

int fieldOf(FunctionEmitter& fe, const ir::Instr& in, const Type* rec) {
  const int k = recordFieldIndex(rec, in.name);
  if (k < 0) fe.fail(in, std::string(ir::opName(in.op)), "record " + typeToString(rec) + " has no field '" + in.name + "'");
  return k;
}

void lowerGet(FunctionEmitter& fe, const ir::Instr& in) {
  const ir::Instr* rec = in.operands.at(0);
  const int k = fieldOf(fe, in, rec->type);
  const Type* field = rec->type->elems[static_cast<size_t>(k)];
  std::string p = fieldAddress(fe, rec, k);
  if (isRecord(field)) {   // a reference into the same bytes
    fe.bind(in, p);
    return;
  }
  if (isNestedArray(field)) {   // a C-contiguous view of the field's bytes
    const Type* view = in.type;
    std::string data = fe.emit("bitcast i8* " + p + " to " + llvmElemType(view) + "*");
    std::vector<std::string> shape, strides;
    for (int64_t d : field->shape) shape.push_back(std::to_string(d));
    for (int64_t s : contiguousStrides(view, field->shape)) strides.push_back(std::to_string(s));
    fe.bind(in, makeView(fe, view, data, shape, strides));
    return;
  }
  const std::string mt = llvmMemType(field->scalar);
  std::string typed = fe.emit("bitcast i8* " + p + " to " + mt + "*");
  std::string v = fe.emit("load " + mt + ", " + mt + "* " + typed + ", align " + std::to_string(fieldAlign(rec->type, k)));
  if (field->scalar == Scalar::Bool) v = fe.emit("icmp ne i8 " + v + ", 0");
  fe.bind(in, v);
}

void lowerSet(FunctionEmitter& fe, const ir::Instr& in) {
  const ir::Instr* rec = in.operands.at(0);
  const ir::Instr* value = in.operands.at(1);
  const int k = fieldOf(fe, in, rec->type);
  const Type* field = rec->type->elems[static_cast<size_t>(k)];
  std::string p = fieldAddress(fe, rec, k);
  if (isRecord(field)) {
    copyBytes(fe, p, fe.val(value), field->size, std::min(fieldAlign(rec->type, k), recordAlign(value->type)));
    return;
  }
  if (!field->isScalar() || value->type != field)
    fe.fail(in, "record_set", "storing " + typeToString(value->type) + " into field '" + in.name + "' of type " +
                                  typeToString(field));
  const std::string mt = llvmMemType(field->scalar);
  std::string typed = fe.emit("bitcast i8* " + p + " to " + mt + "*");
  std::string v = fe.val(value);
  if (field->scalar == Scalar::Bool) v = fe.emit("zext i1 " + v + " to i8");
  fe.emitLine("store " + mt + " " + v + ", " + mt + "* " + typed + ", align " + std::to_string(fieldAlign(rec->type, k)));
}

}  // namespace

void lowerRecordOp(FunctionEmitter& fe, const ir::Instr& in) {
  const Type* rec = in.operands.at(0)->type;
  if (!isRecord(rec)) fe.fail(in, std::string(ir::opName(in.op)), "expected a record, found " + typeToString(rec));
  switch (in.op) {
    case Op::RecordGet: return lowerGet(fe, in);
    case Op::RecordSet: return lowerSet(fe, in);
    case Op::RecordCopy:
      copyBytes(fe, fe.val(in.operands[0]), fe.val(in.operands[1]), rec->size,
                std::min(recordAlign(rec), recordAlign(in.operands[1]->type)));
      return;
    default: fe.fail(in, std::string(ir::opName(in.op)), "not a record operation");
  }
}

}  // namespace cj::codegen
