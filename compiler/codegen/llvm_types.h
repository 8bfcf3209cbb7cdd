// How cudajit types are spelled as LLVM 7 (typed-pointer) types in NVVM IR.
//
// Representation (the contract codegen keeps with the runtime and itself):
//   scalar        its nvvm column in scalars.def (b1 -> i1 in registers);
//                 in memory (array elements, kernel parameters) bool is i8 0/1
//   complex       {float, float} / {double, double} (real, imag)
//   array view    { T*, [nd x i64] shape, [nd x i64] strides-in-bytes }, T the
//                 element's memory type, pointer in the generic address space
//   record        i8*, the generic address of its bytes (numba's Record is a
//                 reference too); fields are read at byte offsets
//   array of records: the view's pointer is [itemsize x i8]*
//   tuple         a literal struct of its elements that have a value
//                 (elements of type none/sym/str/fn are dropped)
//   range(T)      { T start, T stop, T step }
//   rangeiter(T)  { T cur, T stop, T step }* (an alloca in the entry block)
//   none, sym, str, fn, void: no value at all
#pragma once
#include <string>
#include <vector>

#include "types/types.h"

namespace cj::codegen {

// True if values of this type exist at run time.
bool hasValue(const Type* t);

// The register type of a value; "" for types without a value.
std::string llvmType(const Type* t);
std::string llvmScalarType(Scalar s);
// The in-memory type of an array element (bool -> i8).
std::string llvmMemType(Scalar s);
// The in-memory type of one item of an array: llvmMemType of its dtype, or
// [size x i8] for an array of records (a GEP by item index steps by itemsize).
std::string llvmElemType(const Type* array);
// The struct of an array view of this array type.
std::string llvmViewType(const Type* array);

// For a tuple type: the struct field of element `k`, or -1 if it has no value.
int tupleField(const Type* tuple, int k);

// LLVM identifier spelling: `name` as is when it is a plain identifier,
// else quoted ("\"a b\"").
std::string llvmIdent(const std::string& name);

// Constant spellings.
std::string llvmFloatConst(double v, Scalar s);   // hex form LLVM parses exactly
std::string llvmIntConst(int64_t v, Scalar s);    // sign-adjusted to the width

}  // namespace cj::codegen
