// numba's concrete typing templates on scalars and its overload resolution.
//
// A template is a list of cases (result <- parameter types). A call with
// actual argument types picks, among the cases every argument converts to,
// the one with the fewest unsafe, then safe, then promoting conversions
// (first listed wins ties), as numba's BaseContext.resolve_overload does. An
// operation has an ordered list of templates; the first that matches wins,
// as numba's Function.get_call_type tries its templates in order.
#pragma once
#include <optional>
#include <tuple>
#include <string_view>
#include <vector>

#include "ir/ir.h"
#include "typeinfer/conversion.h"
#include "types/types.h"

namespace cj::typeinfer {

struct Signature {
  Scalar ret;
  std::vector<Scalar> params;
};

struct Template {
  std::vector<Signature> cases;
  bool unsafe_casting = true;   // false: reject cases that need an unsafe conversion
  bool needs_f16 = false;       // only tried when an argument is float16 (numba-cuda's fp16 typing)
};

using TemplateList = std::vector<Template>;

// numba's Rating of an overload: its arguments' (unsafe, safe, promote)
// conversions, compared in that order. addConversion adds one argument's;
// false when the overload cannot take it (None, or Unsafe without
// `unsafe_casting`).
using Rating = std::tuple<int, int, int>;
bool addConversion(Conversion c, bool unsafe_casting, Rating* rating);

// The best case for `args`, or nullopt when no template matches.
std::optional<Signature> resolveOverload(const TemplateList& templates,
                                         const std::vector<Scalar>& args);

// Operator typing (operators.def). nullptr for ops that are not Python operators.
const TemplateList* operatorTemplates(ir::Op op);
std::string_view operatorSpelling(ir::Op op);   // "+", "//", "not"; "" if none

// Families used by calls (math, builtins); see templates.cpp for their cases.
namespace families {
const TemplateList& mathUnary();          // tan, tanh, ...: (f64<-i64), (f64<-u64), (f32<-f32), (f64<-f64)
const TemplateList& mathUnaryWithF16();   // sqrt, exp, log, sin, cos, floor, ceil, fabs: + (f16<-f16)
const TemplateList& mathPow();            // math.pow: (f32<-f32,f32), (f64<-f64,f64), (f32<-f32,i32), (f64<-f64,i32)
const TemplateList& absolute();           // abs: ints and floats keep their type
const TemplateList& range();              // range(i32..), range(i64..), range(u64..) with 1..3 args
}  // namespace families

}  // namespace cj::typeinfer
