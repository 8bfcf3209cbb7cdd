// IR entry points for tests and tools: parse / print / verify / run passes on
// IR text. Golden tests (tests/test_golden.py) drive the passes through these.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <vector>

#include "ir/ir.h"
#include "passes/pass.h"
#include "passes/pipeline.h"
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

// A pass that breaks the IR on purpose (drops the terminator of every entry
// block): tests register it to see the verifier name the pass that broke it.
class BreakTerminators : public cj::passes::Pass {
 public:
  std::string_view name() const override { return "test-break-terminators"; }
  bool run(cj::ir::Function& fn) override {
    if (fn.blocks.empty() || fn.blocks[0]->instrs.empty()) return false;
    fn.blocks[0]->instrs.pop_back();
    return true;
  }
};

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
      "Parses IR text, runs the named passes or pipelines ('simt', 'default'), verifying "
      "after each, and prints the result (CUDAJIT_PRINT_AFTER applies).");
  m.def(
      "pipeline_passes",
      [](const std::string& name) {
        std::vector<std::string> out;
        for (std::string_view p : cj::passes::pipelinePasses(name)) out.emplace_back(p);
        return out;
      },
      py::arg("name"), "The passes of a named pipeline ('simt'), in order.");
  m.def(
      "_register_test_pass",
      [] {
        return cj::passes::registerPass("test-break-terminators",
                                        []() -> std::unique_ptr<cj::passes::Pass> { return std::make_unique<BreakTerminators>(); });
      },
      "Tests only: registers 'test-break-terminators', a pass that breaks the IR.");
}
