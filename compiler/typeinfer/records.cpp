#include "typeinfer/records.h"

#include "typeinfer/conversion.h"
#include "typeinfer/rules.h"

namespace cj::typeinfer {

std::optional<std::string> constantFieldName(const Type* rec, const ir::Instr* idx) {
  auto c = constantOf(idx);
  if (c && c->kind == ir::Const::Kind::Str) return c->s;
  // r[k] with a constant integer: field k (numba's static getitem), from the end when negative
  if (auto k = constantInt(idx); k && !idx->type->isBool()) {
    const int64_t n = static_cast<int64_t>(rec->fields.size());
    const int64_t i = *k < 0 ? *k + n : *k;
    if (i >= 0 && i < n) return rec->fields[static_cast<size_t>(i)];
    return "<" + std::to_string(*k) + ">";   // no field has this name: the caller's error names the index
  }
  return std::nullopt;
}

const Type* recordDtypeOf(const ir::Instr* v) {
  const Type* t = v->type;
  if (!t->is(TypeKind::Symbol) || t->name.rfind(kRecordDtypeSymbol, 0) != 0) return nullptr;
  const Type* r = parseType(std::string_view(t->name).substr(kRecordDtypeSymbol.size()));
  return isRecord(r) ? r : nullptr;
}

int recordFieldOrFail(const FunctionContext& ctx, ir::Instr* in, const Type* rec, const std::string& field,
                      std::string_view construct) {
  const int k = recordFieldIndex(rec, field);
  if (k < 0 && field.size() > 2 && field.front() == '<')   // a constant position past the fields
    ctx.fail(in, std::string(construct),
             "record index " + field.substr(1, field.size() - 2) + " out of range for a record of " +
                 std::to_string(rec->fields.size()) + " fields",
             "its fields are: " + recordFieldNames(rec));
  if (k < 0)
    ctx.fail(in, std::string(construct),
             "record " + typeToNumbaString(recordInSpace(rec, MemSpace::Global)) + " has no field '" + field +
                 "'",
             "its fields are: " + recordFieldNames(rec));
  const Type* ft = rec->elems[static_cast<size_t>(k)];
  if (isOpaqueField(ft))
    ctx.fail(in, std::string(construct),
             "field '" + field + "' holds numpy " + ft->name.substr(ft->name.find(':') + 1) +
                 " strings, which kernels cannot read or write (numba's CharSeq is not supported)",
             "the record carries them: whole-record copies (a[i] = b[j]) move them");
  return k;
}

const Type* recordGetItemType(const FunctionContext& ctx, ir::Instr* in) {
  const Type* rec = in->operands[0]->type;
  auto name = constantFieldName(rec, in->operands[1]);
  if (!name)
    ctx.fail(in, "getitem",
             "a record is indexed by a constant field name or position (r['x'], r[0]), got " +
                 typeToString(in->operands[1]->type));
  return recordFieldValueType(rec, recordFieldOrFail(ctx, in, rec, *name, "getitem"));
}

ir::Instr* lowerRecordGet(ir::Instr* rec, const std::string& field, const Type* type, Emitter& e) {
  ir::Instr* v = e.emit(ir::Op::RecordGet, type, {rec});
  v->name = field;
  return v;
}

void checkRecordStore(const FunctionContext& ctx, ir::Instr* in, const Type* rec, const std::string& field,
                      const Type* value, std::string_view construct) {
  const int k = recordFieldOrFail(ctx, in, rec, field, construct);
  const Type* ft = rec->elems[static_cast<size_t>(k)];
  const std::string what = "field '" + field + "' of type " + typeToNumbaString(ft);
  if (isNestedArray(ft))
    ctx.fail(in, std::string(construct), "cannot assign to the nested array " + what + " as a whole",
             "assign its elements: r." + field + "[j] = v");
  if (isRecord(ft)) {
    if (!sameRecordLayout(value, ft))
      ctx.fail(in, std::string(construct), "cannot store " + typeToNumbaString(value) + " into " + what,
               "store a record of the same dtype, or assign the fields one by one");
    return;
  }
  if (!value->isScalar() || scalarConversion(value->scalar, ft->scalar) == Conversion::None)
    ctx.fail(in, std::string(construct), "cannot store " + typeToNumbaString(value) + " into " + what);
}

void lowerRecordStore(ir::Instr* rec, const std::string& field, ir::Instr* value, Emitter& e) {
  const Type* ft = recordFieldValueType(rec->type, recordFieldIndex(rec->type, field));
  if (ft->isScalar()) value = e.convert(value, ft);
  ir::Instr* st = e.emit(ir::Op::RecordSet, voidTy(), {rec, value});
  st->name = field;
}

void checkSetAttr(const FunctionContext& ctx, ir::Instr* in) {
  const Type* obj = in->operands[0]->type;
  if (!isRecord(obj))
    ctx.fail(in, "setattr ." + in->name,
             "attribute assignment is supported on records only (r." + in->name + " = v), not on " +
                 typeToString(obj));
  checkRecordStore(ctx, in, obj, in->name, in->operands[1]->type, "setattr ." + in->name);
}

void lowerSetAttr(const FunctionContext&, ir::Instr* in, Emitter& e) {
  lowerRecordStore(in->operands[0], in->name, in->operands[1], e);
}

void checkRecordItemStore(const FunctionContext& ctx, ir::Instr* in, const Type* arr, const Type* value) {
  if (!sameRecordLayout(value, arr->record))
    ctx.fail(in, "setitem",
             "cannot store " + typeToNumbaString(value) + " into an array of " + typeToNumbaString(arr->record),
             "store a record of the same dtype (a[i] = b[j]), or assign the fields one by one");
}

namespace rules {
namespace {
const Type* recordFieldAttrType(const Site& s) {
  const Type* rec = s.receiver->type;
  return recordFieldValueType(rec, recordFieldIndex(rec, s.name));
}
ir::Instr* recordFieldAttrLower(const Site& s, Emitter& e) {
  return lowerRecordGet(s.receiver, std::string(s.name), recordFieldAttrType(s), e);
}
}  // namespace
const Rule recordFieldAttr{recordFieldAttrType, recordFieldAttrLower};
}  // namespace rules

}  // namespace cj::typeinfer
