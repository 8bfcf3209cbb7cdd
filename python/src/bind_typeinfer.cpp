// cudajit._core entry points of stage 2 (type inference), for tests and
// inspect tools:
//   golden_ir(fn, types)   -> untyped IR text (no types) or typed IR before passes
//   infer_ir(fn, ["float32", "float32[:]"], kernel=None) -> typed IR text
//   infer_ir_text(untyped_ir_text, types, kernel=None)    -> typed IR text
//   binary_result_type("add", "int32", "uint64")          -> "i64" or None
//   unify_types("int64", "uint64")                        -> "f64" or None
//   scalar_conversion("int32", "float64")                 -> "safe"
//   parse_numba_type("float32[:, ::1]")                   -> "array(f32, 2d, C)"
//   parse_signature("void(float32, int64)")               -> ("none", ["f32", "i64"])
//   mangle_function_name("helper", ["float32", "float32[:]"]) -> "helper__f32_a1f32A"
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>

#include "bytecode/decoder.h"
#include "ir/ir.h"
#include "support/error.h"
#include "typeinfer/conversion.h"
#include "typeinfer/infer.h"
#include "typeinfer/mangle.h"
#include "types/signature.h"
#include "typeinfer/unify.h"

namespace py = pybind11;
namespace ti = cj::typeinfer;

namespace {

std::vector<const cj::Type*> parseTypes(const std::vector<std::string>& texts) {
  std::vector<const cj::Type*> out;
  for (const auto& t : texts) out.push_back(cj::parseNumbaType(t));
  return out;
}

const cj::Type* scalarType(const std::string& text) {
  const cj::Type* t = cj::parseNumbaType(text);
  if (!t->isScalar()) throw py::value_error("not a scalar type: " + text);
  return t;
}

std::string inferModule(cj::ir::Module& m, const std::vector<std::string>& types,
                        std::optional<bool> kernel) {
  if (m.functions.empty()) throw py::value_error("the module has no function");
  if (kernel) m.functions[0]->is_kernel = *kernel;
  auto typed = ti::inferTypes(m, parseTypes(types));
  return cj::ir::printModule(*typed);
}

}  // namespace

void bindTypeinfer(py::module_& m) {
  m.def(
      "golden_ir",
      [](py::object fn, const std::vector<std::string>& types) {
        auto untyped = cj::bytecode::decodeFunction(fn.ptr());
        if (types.empty()) return cj::ir::printModule(*untyped);
        return inferModule(*untyped, types, std::nullopt);
      },
      py::arg("fn"), py::arg("types"),
      "What the golden tests read: the decoded (untyped) IR when no types are given, "
      "else the typed IR before any pass.");

  m.def(
      "verify_decoded",
      [](py::object fn) {
        auto untyped = cj::bytecode::decodeFunction(fn.ptr());
        std::string error;
        return cj::ir::verifyModule(*untyped, /*typed=*/false, &error) ? std::string() : error;
      },
      py::arg("fn"),
      "Decodes a Python function and verifies the untyped IR in memory (use lists "
      "included, which a print / parse round trip would rebuild): '' or the problem.");

  m.def(
      "infer_ir",
      [](py::object fn, const std::vector<std::string>& types, std::optional<bool> kernel) {
        auto untyped = cj::bytecode::decodeFunction(fn.ptr());
        return inferModule(*untyped, types, kernel);
      },
      py::arg("fn"), py::arg("types"), py::arg("kernel") = py::none(),
      "Decode a Python function, infer its types for the given numba-style argument "
      "types, and return the typed IR text.");

  m.def(
      "infer_ir_text",
      [](const std::string& text, const std::vector<std::string>& types, std::optional<bool> kernel) {
        cj::ir::Module untyped;
        std::string error;
        if (!cj::ir::parseModule(text, &untyped, &error)) throw py::value_error("IR parse error: " + error);
        return inferModule(untyped, types, kernel);
      },
      py::arg("text"), py::arg("types"), py::arg("kernel") = py::none(),
      "Infer types on untyped IR text (functions[0] is the entry); returns typed IR text.");

  m.def(
      "binary_result_type",
      [](const std::string& op, const std::string& a, const std::string& b) -> std::optional<std::string> {
        cj::ir::Op o;
        if (!cj::ir::parseOp(op, &o)) throw py::value_error("unknown op: " + op);
        const cj::Type* t = ti::binaryResultType(o, scalarType(a), scalarType(b));
        if (!t) return std::nullopt;
        return cj::typeToString(t);
      },
      "numba's result type of a binary operator (IR op name) on two scalar types, or None.");

  m.def(
      "unify_types",
      [](const std::string& a, const std::string& b) -> std::optional<std::string> {
        const cj::Type* t = ti::unifyTypes(cj::parseNumbaType(a), cj::parseNumbaType(b));
        if (!t) return std::nullopt;
        return cj::typeToString(t);
      },
      "numba's unification of two types (block parameters), or None.");

  m.def(
      "scalar_conversion",
      [](const std::string& from, const std::string& to) {
        return std::string(ti::conversionName(
            ti::scalarConversion(scalarType(from)->scalar, scalarType(to)->scalar)));
      },
      "numba's conversion kind between two scalars: exact, promote, safe, unsafe or none.");

  m.def(
      "parse_numba_type",
      [](const std::string& text) { return cj::typeToString(cj::parseNumbaType(text)); },
      "A numba type spelling as IR type text.");

  m.def(
      "parse_signature",
      [](const std::string& text) {
        cj::ParsedSignature sig = cj::parseSignature(text);
        std::vector<std::string> args;
        for (const cj::Type* a : sig.args) args.push_back(cj::typeToString(a));
        std::optional<std::string> ret;
        if (sig.return_type) ret = cj::typeToString(sig.return_type);
        return py::make_tuple(ret, args);
      },
      "A numba signature string as (return type or None, [argument types]) in IR type text.");

  m.def(
      "mangle_function_name",
      [](const std::string& base, const std::vector<std::string>& types) {
        return ti::mangleFunctionName(base, parseTypes(types));
      },
      "The IR name of a device function specialised on the given argument types.");
}
