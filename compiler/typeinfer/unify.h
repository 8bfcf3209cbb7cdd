// numba's unification of two types (TypingContext.unify_pairs): the type a
// block parameter gets from the values flowing into it, and the return type
// of a function from its `ret`s.
#pragma once
#include "types/types.h"

namespace cj::typeinfer {

// nullptr if the two types do not unify. Rules:
//   equal -> itself; undef or unknown with T -> T;
//   scalars -> unifyScalars (numpy promotion; bool -> the other);
//   arrays of one dtype, ndim and memory space -> layout kept if equal, else A;
//     readonly if either is;
//   tuples of one length -> element-wise;
//   ranges / range iterators -> equal index types only;
//   anything else (array vs number, none vs number, ...) -> nullptr.
const Type* unifyTypes(const Type* a, const Type* b);

// Can a value of type `from` be converted implicitly to `to` by inserting casts
// (scalar casts, element-wise for tuples, array layout widening)?
bool canCoerce(const Type* from, const Type* to);

}  // namespace cj::typeinfer
