// IR entry points for tests and tools: parse / print / verify / run passes on
// IR text. Golden tests (tests/test_golden.py) drive the passes through these.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
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

}  // namespace

void bindIr(py::module_& m) {
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
