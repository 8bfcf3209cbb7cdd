// What the typing rules (symbols, attributes, calls) see: the function being
// typed, the operation at hand, and an emitter for the typed instructions
// that replace it. Shared by the fixpoint typer (typer.cpp), the rewrite
// (lower.cpp) and the rule tables (rules_*.cpp).
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/ir.h"

namespace cj::typeinfer {

class Specializer;

// The function being typed. Rules report errors through it so that every
// message carries the file and the line of the instruction at fault.
class FunctionContext {
 public:
  FunctionContext(ir::Function& fn, Specializer& specializer) : fn_(fn), specializer_(specializer) {}
  ir::Function& fn() const { return fn_; }
  Specializer& specializer() const { return specializer_; }

  [[noreturn]] void fail(const ir::Instr* at, std::string construct, std::string message,
                         std::string hint = {}) const;

 private:
  ir::Function& fn_;
  Specializer& specializer_;
};

// A compile-time constant behind a value: a `const`, a `tuple` of constants,
// integer arithmetic or a cast of integer constants, an element or a slice of
// a constant tuple (MM.b_dim[::-1]).
std::optional<ir::Const> constantOf(const ir::Instr* v);
// The positions seq[start:stop:step] takes from a sequence of n, as Python
// slices it (nullopt: the bound is None). step must not be 0.
std::vector<int64_t> slicePositions(int64_t n, std::optional<int64_t> start, std::optional<int64_t> stop,
                                    int64_t step);
// The bounds of a slice object (`call builtins.slice(start, stop[, step])`
// while typing, a tuple of the slice symbol and its bounds once lowered):
// each a constant int, None (nullopt), or false when one is not a constant.
bool constantSliceBounds(const ir::Instr* slice, std::optional<int64_t> bounds[3]);
// An integer constant (int or bool), if `v` is one.
std::optional<int64_t> constantInt(const ir::Instr* v);

// Appends typed instructions to a block's new instruction list, at the
// location of the instruction being rewritten.
class Emitter {
 public:
  Emitter(ir::Function& fn, ir::Block* block, std::vector<std::unique_ptr<ir::Instr>>& out,
          ir::Loc loc)
      : fn_(fn), block_(block), out_(out), loc_(loc) {}

  ir::Instr* emit(ir::Op op, const Type* type, std::vector<ir::Instr*> operands);
  ir::Instr* append(std::unique_ptr<ir::Instr> in);
  ir::Instr* constant(ir::Const c, const Type* type);
  ir::Instr* constInt(int64_t v) { return constant(ir::Const::integer(v), i64Ty()); }
  ir::Instr* intrinsic(ir::Intrinsic id, const Type* type, std::vector<ir::Instr*> operands,
                       std::vector<int64_t> ints = {});
  // Converts `v` to `to`: a scalar `cast`, element-wise for tuples, an
  // `undef` of type `to` for a never-assigned value; `v` itself when the
  // types are equal.
  ir::Instr* convert(ir::Instr* v, const Type* to);
  // The elements of a tuple value: the operands of a `tuple` instruction, or
  // one `tuple_get` each.
  std::vector<ir::Instr*> elements(ir::Instr* tuple);
  // Element i of a tuple value: the operand of a `tuple`, or a `tuple_get`.
  ir::Instr* element(ir::Instr* tuple, int64_t i);
  // arr.shape[d] and arr.strides[d] (bytes), as i64.
  ir::Instr* arrayDim(ir::Instr* arr, int d) { return perDim(ir::Op::ArrayDim, arr, d); }
  ir::Instr* arrayStride(ir::Instr* arr, int d) { return perDim(ir::Op::ArrayStride, arr, d); }
  ir::Instr* perDim(ir::Op op, ir::Instr* arr, int d);
  // bool(v) as Python tests it: `v` if already b1, else `truth v`.
  ir::Instr* truth(ir::Instr* v);
  ir::Loc loc() const { return loc_; }

 private:
  ir::Function& fn_;
  ir::Block* block_;
  std::vector<std::unique_ptr<ir::Instr>>& out_;
  ir::Loc loc_;
};

// A Python-level use of a table entry: a symbol used as a value, an attribute
// of a typed value, or a call with positional and keyword arguments.
struct Site {
  Site(const FunctionContext& c, ir::Instr* in, std::string_view n, std::string_view a,
       ir::Intrinsic id = ir::Intrinsic::Count)
      : ctx(c), instr(in), name(n), arg(a), intrinsic(id) {}

  const FunctionContext& ctx;
  ir::Instr* instr;                    // the const / getattr / call being typed or rewritten
  std::string_view name;               // the symbol's qualified name, or the attribute name
  std::string_view arg;                // the table row's argument column, when a string
  ir::Intrinsic intrinsic;             // the table row's argument column, when I(Enum) (else Count)
  ir::Instr* receiver = nullptr;       // getattr: the object
  std::vector<ir::Instr*> args;        // call: positional arguments
  std::vector<std::string> kw_names;   // call: keyword names ...
  std::vector<ir::Instr*> kw_args;     // ... and their values

  const Type* argType(size_t i) const { return args[i]->type; }
  size_t argCount() const { return args.size() + kw_args.size(); }
  // Positional and keyword arguments matched to parameter names, as Python
  // binds them; `required` leading names must be present. Fails on unknown
  // keywords, duplicates, too many or too few arguments.
  std::vector<ir::Instr*> bind(const std::vector<std::string_view>& params, size_t required) const;
  // Fails unless there are exactly n positional arguments and no keywords.
  void expectArgs(size_t n) const;
  void expectArgs(size_t min, size_t max) const;
  [[noreturn]] void fail(std::string message, std::string hint = {}) const;
  // The construct named in errors: "math.sqrt", "getattr .foo".
  std::string construct() const;
};

}  // namespace cj::typeinfer
