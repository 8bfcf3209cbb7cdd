// Typing rules: how one table entry (a symbol, an attribute, a call target)
// is typed during the fixpoint and rewritten into typed IR afterwards.
//
// `type` sees operand types that may still widen in later fixpoint rounds;
// it must be a pure function of them (and of constants). `lower` runs once
// on the final types, with operands already rewritten, and returns the value
// that replaces the site's instruction (nullptr: the instruction had no value).
#pragma once
#include <string_view>

#include "typeinfer/context.h"

namespace cj::typeinfer {

struct Rule {
  const Type* (*type)(const Site&) = nullptr;          // nullptr: not usable this way
  ir::Instr* (*lower)(const Site&, Emitter&) = nullptr;
  explicit operator bool() const { return type != nullptr; }
};

// symbols.def: a qualified Python name -> its rule as a value and as a callee.
struct SymbolEntry {
  std::string_view name;
  const Rule* value;      // never null; an empty Rule when not usable as a value
  const Rule* call;       // never null; an empty Rule when not callable
  std::string_view arg;   // what the rule needs: an intrinsic name, a scalar name, ...
};
const SymbolEntry* findSymbol(std::string_view qualified_name);

// attributes.def: an attribute of a typed value (array.shape, ...).
struct AttributeEntry {
  TypeKind kind;
  std::string_view name;
  const Rule* rule;
};
const AttributeEntry* findAttribute(TypeKind kind, std::string_view name);

// The scalar a dtype argument names: sym(numpy.float32), the string
// "float32", or builtins.float / int / bool. nullopt otherwise.
std::optional<Scalar> dtypeOf(const ir::Instr* v);

namespace rules {
// rules_cuda.cpp
extern const Rule sreg;            // value: an i32 special register (arg = intrinsic name)
extern const Rule grid;            // cudajit.grid(n)
extern const Rule gridsize;        // cudajit.gridsize(n)
extern const Rule barrier;         // syncthreads() & co: () -> none (arg = intrinsic name)
extern const Rule sharedArray;     // cudajit.shared.array(shape, dtype)
extern const Rule localArray;      // cudajit.local.array(shape, dtype)
extern const Rule atomicAdd;       // cudajit.atomic.add(arr, idx, val)
// rules_math.cpp (arg = intrinsic name)
extern const Rule mathUnary;
extern const Rule mathUnaryWithF16;
extern const Rule mathPow;
// rules_builtins.cpp
extern const Rule range;
extern const Rule len;
extern const Rule minMax;          // arg = "min" | "max"
extern const Rule absolute;
extern const Rule toInt;           // int(x)
extern const Rule toFloat;         // float(x)
extern const Rule toBool;          // bool(x)
extern const Rule scalarCast;      // numpy.float32(x) & co (arg = scalar name)
// rules_array.cpp (attributes)
extern const Rule toComplex;       // complex(re[, im])   (rules_language.cpp)
extern const Rule enumerate;       // enumerate(it[, start])
extern const Rule zip;             // zip(a, b, ...)
extern const Rule print;           // print(...)
extern const Rule slice;           // slice(start, stop[, step])   (slicing.cpp)
extern const Rule scalarReal;      // x.real
extern const Rule scalarImag;      // x.imag
extern const Rule conjugateAttr;   // x.conjugate (a bound method)
extern const Rule conjugateCall;   // x.conjugate()

extern const Rule arrayShape;
extern const Rule arrayStrides;
extern const Rule arraySize;
extern const Rule arrayNdim;
}  // namespace rules

}  // namespace cj::typeinfer
