// numpy structured dtypes -> record types (types.h), read through the C API.
// Used where Python objects meet types: a dtype global frozen into a kernel
// (cuda.local.array(n, rec_dtype)) and the launch path (arrays of records,
// record scalars as arguments).
#pragma once
#include <Python.h>

#include <string>

#include "types/types.h"

namespace cj::bytecode {

// True when `dtype` is a numpy dtype with fields (dtype.names is not None).
bool isStructuredDtype(PyObject* dtype);
// The scalar of a numpy dtype of bool, int, uint, float or complex numbers
// (any byte order: callers check isnative); false for any other dtype.
bool numericDtypeScalar(PyObject* dtype, Scalar* out);
// The record type of a structured dtype (in global space), or nullptr with
// `*error` saying which field cannot be a record field and why. Fields are
// numeric scalars (native-endian), strings (U, S: opaque bytes kernels cannot
// touch), nested structured dtypes and fixed-shape subarrays of those; names
// must be Python identifiers (r.name in kernels).
const Type* recordFromDtype(PyObject* dtype, std::string* error);
// The dtype behind `obj` when it names a record: a structured numpy dtype, or
// numba's Record type (numba.from_dtype(dtype)); nullptr (no error set) otherwise.
PyObject* recordDtypeObject(PyObject* obj);   // a new reference

}  // namespace cj::bytecode
