// IR entry points for tests and tools: parse / print / verify / run passes on
// IR text. Golden tests (tests/test_golden.py) drive the passes through these.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "ir/cfg.h"
#include "ir/ir.h"
#include "ir/libdevice.h"
#include "typeinfer/infer.h"
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

// One function's CFG analyses (ir/cfg.h) in block ids, for tests/test_cfg.py.
py::dict cfgAnalysis(const cj::ir::Function& fn) {
  const cj::ir::DominatorTree dom(fn);
  const cj::ir::LoopInfo loops(dom);
  const cj::ir::Cfg& cfg = dom.cfg();
  auto id = [&](int n) { return cfg.block(n)->id; };
  auto ids = [&](const std::vector<int>& nodes) {
    py::list out;
    for (int n : nodes) out.append(id(n));
    return out;
  };
  py::list blocks, rpo;
  py::dict succs, idom, depth, ipdom;
  const std::vector<int> post = cj::ir::immediatePostDominators(cfg.graph());
  for (int n = 0; n < cfg.size(); ++n) {
    ipdom[py::int_(id(n))] = post[n] < 0 ? py::object(py::none()) : py::object(py::int_(id(post[n])));
    blocks.append(id(n));
    py::list s;
    for (int t : cfg.graph().succs(n)) s.append(id(t));
    succs[py::int_(id(n))] = s;
    if (!dom.tree().reachable(n)) continue;
    int d = dom.tree().idom(n);
    idom[py::int_(id(n))] = d < 0 ? py::object(py::none()) : py::object(py::int_(id(d)));
    depth[py::int_(id(n))] = dom.tree().depth(n);
  }
  for (const cj::ir::Block* b : cj::ir::reversePostOrder(fn)) rpo.append(b->id);
  py::list loop_list, irreducible_edges;
  for (const auto& l : loops.loops()) {
    py::dict d;
    d["header"] = id(l.header);
    d["latches"] = ids(l.latches);
    d["blocks"] = ids(l.blocks);
    d["depth"] = l.depth;
    d["parent"] = l.parent >= 0 ? py::object(py::int_(id(loops.loops()[l.parent].header))) : py::object(py::none());
    loop_list.append(d);
  }
  for (const auto& [from, to] : loops.forest().irreducibleEdges())
    irreducible_edges.append(py::make_tuple(id(from), id(to)));
  py::list reachable;
  for (const cj::ir::Block* b : cj::ir::reachableBlocks(fn)) reachable.append(b->id);
  py::dict out;
  out["name"] = fn.name;
  out["blocks"] = blocks;
  out["succs"] = succs;
  out["rpo"] = rpo;
  out["reachable"] = reachable;
  out["idom"] = idom;
  out["ipdom"] = ipdom;
  out["dom_depth"] = depth;
  out["loops"] = loop_list;
  out["irreducible"] = loops.irreducible();
  out["irreducible_edges"] = irreducible_edges;
  return out;
}

// A pass that breaks the IR on purpose (drops the terminator of every entry
// block): tests register it to see the verifier name the pass that broke it.
class BreakTerminators : public cj::passes::Pass {
 public:
  std::string_view name() const override { return "test-break-terminators"; }
  bool run(cj::ir::Function& fn) override {
    if (fn.blocks.empty() || fn.blocks[0]->instrs.empty()) return false;
    fn.blocks[0]->instrs.back()->dropAllReferences();   // use lists stay exact: only the terminator is missing
    fn.blocks[0]->instrs.pop_back();
    return true;
  }
};
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
  m.def(
      "libdevice_functions",
      [] {
        py::list out;
        auto names = [](const std::vector<cj::Scalar>& v) {
          py::list l;
          for (cj::Scalar s : v) l.append(std::string(cj::scalarNumbaName(s)));
          return l;
        };
        for (const cj::ir::LibdeviceFunction& f : cj::ir::libdeviceFunctions())
          out.append(py::make_tuple(std::string(f.name),
                                    f.returns_void ? std::string("void") : std::string(cj::scalarNumbaName(f.result)),
                                    names(f.inputs), names(f.outputs)));
        return out;
      },
      "cudajit.libdevice's functions: [(name, result, input types, output types)] (ir/libdevice.def).");
  m.def("half_functions", &cj::typeinfer::halfFunctionNames,
        "The functions of cudajit.fp16 and cudajit.bf16 (typeinfer/half_functions.def).");
  m.def("vector_types", &cj::typeinfer::vectorTypeNames,
        "numba.cuda's vector types: [(name, its <base>x<N> name)] (typeinfer/vector_types.def).");
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
      "Parses IR text, runs the named passes or pipelines ('simt', 'default'), verifying "
      "after each, and prints the result (CUDAJIT_PRINT_AFTER applies).");
  m.def(
      "cfg_analysis",
      [](const std::string& text) {
        cj::ir::Module mod = parseOrThrow(text);
        py::list out;
        for (const auto& fn : mod.functions) out.append(cfgAnalysis(*fn));
        return out;
      },
      py::arg("text"),
      "The CFG analyses of ir/cfg.h on each function of IR text, in block ids: blocks, succs, "
      "rpo, reachable, idom (None for the entry), dom_depth, ipdom (None: an exit or no single one), "
      "loops (header, latches, blocks, "
      "depth, parent header), irreducible and irreducible_edges. For tests.");
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
