// IR entry points for tests and tools: parse / print / verify / run passes on
// IR text. Golden tests (tests/test_golden.py) drive the passes through these.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "ir/ir.h"
#include "passes/pass.h"
#include "support/error.h"

namespace py = pybind11;

namespace {

cj::ir::Module parseOrThrow(const std::string& text) {
  cj::ir::Module m;
  std::string error;
  if (!cj::ir::parseModule(text, &m, &error))
    throw cj::CompileError("<ir>", 0, 0, "IR text", error);
  return m;
}

// Value `id` of the module's first function (parameters included).
cj::ir::Instr* valueById(cj::ir::Module& mod, int id) {
  for (auto& b : mod.functions.at(0)->blocks) {
    for (auto& p : b->params)
      if (p->id == id) return p.get();
    for (auto& in : b->instrs)
      if (in->id == id) return in.get();
  }
  throw py::value_error("no value v" + std::to_string(id) + " in the first function");
}

}  // namespace

void bindIr(py::module_& m) {
  // ---- use lists (tests): what Instr::uses records, RAUW, a corrupted list ----
  m.def(
      "ir_uses",
      [](const std::string& text, int id) {
        cj::ir::Module mod = parseOrThrow(text);
        std::vector<std::tuple<int, int, int>> out;
        for (const cj::ir::Use& u : valueById(mod, id)->uses())
          out.emplace_back(u.user->id, u.succ, static_cast<int>(u.index));
        std::sort(out.begin(), out.end());
        return out;
      },
      py::arg("text"), py::arg("value"),
      "The use list of value vN of the first function, as sorted (user id, successor or -1 "
      "for an operand, slot index) triples.");
  m.def(
      "ir_replace_all_uses",
      [](const std::string& text, int from, int to) {
        cj::ir::Module mod = parseOrThrow(text);
        cj::ir::Instr* f = valueById(mod, from);
        cj::ir::replaceAllUses(f, valueById(mod, to));
        std::string error;
        if (!cj::ir::verifyModule(mod, false, &error)) throw py::value_error("invalid after RAUW: " + error);
        return py::make_tuple(cj::ir::printModule(mod), f->uses().size());
      },
      py::arg("text"), py::arg("from_value"), py::arg("to_value"),
      "Replaces every use of v<from> with v<to> in the first function, verifies (untyped "
      "rules, use lists included) and returns (printed IR, uses left on v<from>).");
  m.def(
      "ir_verify_with_a_use_dropped",
      [](const std::string& text, int id, bool typed) {
        cj::ir::Module mod = parseOrThrow(text);
        cj::ir::UseListTesting::dropOneUse(valueById(mod, id));
        std::string error;
        return cj::ir::verifyModule(mod, typed, &error) ? std::string() : error;
      },
      py::arg("text"), py::arg("value"), py::arg("typed") = true,
      "Test hook: forgets one recorded use of vN (as a pass that bypassed Instr's setters "
      "would), then returns the verifier's message ('' if it did not notice).");

  m.def(
      "parse_print_ir",
      [](const std::string& text) { return cj::ir::printModule(parseOrThrow(text)); },
      py::arg("text"),
      "Parses IR text and prints it back (the round trip golden tests rely on). "
      "Raises CompileError with 'line N: ...' on a syntax error.");
  m.def(
      "verify_ir",
      [](const std::string& text, bool typed) {
        cj::ir::Module mod = parseOrThrow(text);
        std::string error;
        return cj::ir::verifyModule(mod, typed, &error) ? std::string() : error;
      },
      py::arg("text"), py::arg("typed") = true,
      "Verifies IR text: returns '' if it is well formed, else the first problem as "
      "'func:bbN:vM: message'.");
  m.def(
      "run_passes",
      [](const std::string& text, const std::vector<std::string>& names, bool typed) {
        cj::ir::Module mod = parseOrThrow(text);
        std::vector<std::string_view> views(names.begin(), names.end());
        cj::passes::runPasses(mod, views, typed);
        return cj::ir::printModule(mod);
      },
      py::arg("text"), py::arg("passes"), py::arg("typed") = true,
      "Parses IR text, runs the named passes (verifying after each) and prints the result. "
      "An empty pass list runs the default pipeline only if passes == ['default'].");
}
