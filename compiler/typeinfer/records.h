// Records (numpy structured dtypes; docs/language.md "Records"): r.x and
// r['x'] read a field, r.x = v and r['x'] = v write one, a[i] = r copies a
// whole record into an array of records. A record is a reference to its
// bytes (numba's Record), so a[i].x = v writes the array.
#pragma once
#include "typeinfer/context.h"

namespace cj::typeinfer {

// The field a constant string names in record `rec`, or a CompileError at
// `in` naming the field and the fields there are.
int recordFieldOrFail(const FunctionContext& ctx, ir::Instr* in, const Type* rec, const std::string& field,
                      std::string_view construct);
// r['x'] (getitem): the value of the field (recordFieldValueType).
const Type* recordGetItemType(const FunctionContext& ctx, ir::Instr* in);
ir::Instr* lowerRecordGet(ir::Instr* rec, const std::string& field, const Type* type, Emitter& e);

// r.x = v (setattr) and r['x'] = v (setitem on a record): checks the value.
void checkRecordStore(const FunctionContext& ctx, ir::Instr* in, const Type* rec, const std::string& field,
                      const Type* value, std::string_view construct);
void lowerRecordStore(ir::Instr* rec, const std::string& field, ir::Instr* value, Emitter& e);
// setattr of any value: records only (the rest is the old "attribute
// assignment" error).
void checkSetAttr(const FunctionContext& ctx, ir::Instr* in);
void lowerSetAttr(const FunctionContext& ctx, ir::Instr* in, Emitter& e);

// a[i] = r on an array of records: r must be a record of the array's layout.
void checkRecordItemStore(const FunctionContext& ctx, ir::Instr* in, const Type* arr, const Type* value);

// The record type a dtype argument names (a structured numpy dtype or
// numba.from_dtype of one, frozen as the symbol numpy.dtype:<record>), or nullptr.
const Type* recordDtypeOf(const ir::Instr* v);

// The field a record subscript names: a constant string (r['x']) or a
// constant position (r[0], r[-1]; one past the fields gives "<k>", which no
// field is named); nullopt for any other index.
std::optional<std::string> constantFieldName(const Type* rec, const ir::Instr* idx);

}  // namespace cj::typeinfer
