// The pass manager: a named pipeline per kind of kernel, the verifier after
// every pass in tests and debug builds, and the IR printed or captured after
// named passes (LLVM's -print-after).
//
// Pipelines are rows of the table in pipeline.cpp: "simt" is the one every
// kernel and device function runs today. A second programming model (tiles)
// adds its passes as files of their own, registers them in
// pass_registry.cpp (one row each) and adds one row here naming them in
// order; the compile driver picks the pipeline by the kind of kernel.
//
// Environment (read on every run, so tests may set it):
//   CUDAJIT_VERIFY_IR=1     verify the input and the IR after every pass (0:
//                           never). Unset: on in debug builds (no NDEBUG),
//                           off in release ones, whose compile path then pays
//                           nothing for it. tests/conftest.py sets it to 1.
//   CUDAJIT_PRINT_AFTER=fold,range   (or `all`) prints the module to stderr
//                           after each named pass, under a line
//                           "; *** IR after pass 'fold' ***".
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "ir/ir.h"

namespace cj::passes {

struct PipelineOptions {
  bool typed = true;                      // verify as typed (or untyped) IR
  bool verify = false;                    // the verifier before the first pass and after each
  std::vector<std::string> print_after;   // pass names or "all": the IR to stderr after them
  std::vector<std::string> capture_after; // pass names or "all": returned as snapshots

  // verify and print_after from the environment (above). Throws
  // CompileError if CUDAJIT_PRINT_AFTER names an unknown pass.
  static PipelineOptions fromEnvironment(bool typed = true);
};

// The IR text of the module after one pass ran.
struct IrSnapshot {
  std::string pass;
  std::string text;
};

// The passes of a named pipeline, in order. Throws CompileError for an
// unknown name (listing the known ones).
const std::vector<std::string_view>& pipelinePasses(std::string_view pipeline);
// Whether `name` is a pipeline ("default" is the "simt" pipeline).
bool isPipeline(std::string_view name);
std::string knownPipelineNames();

// Pass names with pipeline names expanded to their passes; throws
// CompileError naming an unknown pass (with the known passes and pipelines).
std::vector<std::string_view> expandPassNames(const std::vector<std::string_view>& names);
// Checks names given to print_after / capture_after / inspect_ir(after=):
// every one a registered pass, or "all". `what` says where they came from.
void checkPassNames(const std::vector<std::string>& names, std::string_view what);
// "fold,range" -> {"fold", "range"} (blanks trimmed, empty items dropped).
std::vector<std::string> splitPassList(std::string_view list);

// Runs the passes (names as expandPassNames takes them) over the module;
// returns the snapshots options.capture_after asked for, in pass order.
// Throws CompileError on a verifier failure, naming the pass that broke it.
std::vector<IrSnapshot> runPipeline(ir::Module& m, const std::vector<std::string_view>& names,
                                    const PipelineOptions& options);

}  // namespace cj::passes
