// Codegen and toolchain entry points: typed IR text -> NVVM IR, NVVM IR ->
// PTX / LTO-IR (libNVVM), inputs -> cubin (nvJitLink). Tests and tools drive
// the back end through these without a GPU; the driver calls the C++ API.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "codegen/abi.h"
#include "codegen/backend.h"
#include "ir/ir.h"
#include "link/toolchain.h"
#include "runtime/toolkit_identity.h"
#include "support/error.h"

namespace py = pybind11;

namespace {

cj::ir::Module parseTyped(const std::string& text, bool verify) {
  cj::ir::Module m;
  std::string error;
  if (!cj::ir::parseModule(text, &m, &error)) throw cj::CompileError("<ir>", 0, 0, "IR text", error);
  if (verify && !cj::ir::verifyModule(m, /*typed=*/true, &error)) {
    throw cj::CompileError("<ir>", 0, 0, "typed IR", error);
  }
  return m;
}

// The pip wheels are found through sys.path: handed to the library searches
// once, before the first toolchain call (needs the GIL).
void passSysPath() { cj::rt::registerWheelDirectories(); }

cj::link::TargetOptions target(int arch, int opt, bool fastmath, bool debug, bool lineinfo) {
  cj::link::TargetOptions t;
  t.arch = arch;
  t.opt = opt;
  t.fastmath = fastmath;
  t.debug = debug;
  t.lineinfo = lineinfo;
  return t;
}

std::vector<cj::link::LinkInput> linkInputs(const py::list& items) {
  std::vector<cj::link::LinkInput> inputs;
  for (py::handle item : items) {
    auto tup = item.cast<py::tuple>();
    if (tup.size() < 2) throw py::value_error("link inputs are (kind, bytes) or (kind, bytes, name)");
    std::string kind = tup[0].cast<std::string>();
    cj::link::LinkInput in{cj::link::LinkInput::Kind::LtoIr, {}, {}};
    if (kind == "ltoir") {
      in.kind = cj::link::LinkInput::Kind::LtoIr;
    } else if (kind == "ptx") {
      in.kind = cj::link::LinkInput::Kind::Ptx;
    } else if (kind == "cubin") {
      in.kind = cj::link::LinkInput::Kind::Cubin;
    } else {
      throw py::value_error("link input kind must be 'ltoir', 'ptx' or 'cubin', not '" + kind + "'");
    }
    std::string data = py::isinstance<py::str>(tup[1]) ? tup[1].cast<std::string>()
                                                       : std::string(tup[1].cast<py::bytes>());
    in.data.assign(data.begin(), data.end());
    if (tup.size() > 2) in.name = tup[2].cast<std::string>();
    inputs.push_back(std::move(in));
  }
  return inputs;
}

const char* slotKindName(cj::abi::SlotKind k) {
  switch (k) {
    case cj::abi::SlotKind::Scalar: return "scalar";
    case cj::abi::SlotKind::DataPtr: return "data";
    case cj::abi::SlotKind::Shape: return "shape";
    case cj::abi::SlotKind::Stride: return "stride";
    case cj::abi::SlotKind::TensorMap: return "tensor_map";
    case cj::abi::SlotKind::TensorMapsValid: return "tensor_maps_valid";
  }
  return "?";
}

}  // namespace

void bindCodegen(py::module_& m) {
  m.def(
      "emit_nvvm_from_ir",
      [](const std::string& ir_text, bool fastmath, bool debug, bool lineinfo, bool verify,
         const std::string& backend) {
        cj::ir::Module mod = parseTyped(ir_text, verify);
        cj::codegen::CodegenOptions o;
        o.fastmath = fastmath;
        o.debug = debug;
        o.lineinfo = lineinfo;
        const cj::codegen::Backend& b = backend == "llvm" ? cj::codegen::llvmBackend() : cj::codegen::nvvmBackend();
        return b.emit(mod, o, /*library_calls=*/{}).bytes;
      },
      py::arg("ir_text"), py::arg("fastmath") = false, py::arg("debug") = false,
      py::arg("lineinfo") = false, py::arg("verify") = true, py::arg("backend") = "nvvm",
      "Parses typed IR text (verifying it unless verify=False) and emits NVVM IR text. "
      "Raises CompileError for IR the back end cannot lower.");
  m.def(
      "kernel_symbol_from_ir",
      [](const std::string& ir_text) {
        cj::ir::Module mod = parseTyped(ir_text, false);
        return cj::codegen::nvvmBackend().kernelSymbol(*mod.functions.at(0));
      },
      py::arg("ir_text"), "The kernel symbol (PTX name) of the first function of the IR text.");
  m.def(
      "kernel_slots",
      [](const std::vector<std::string>& type_texts) {
        std::vector<const cj::Type*> types;
        for (const auto& t : type_texts) {
          const cj::Type* ty = cj::parseType(t);
          if (!ty) throw py::value_error("cannot parse type '" + t + "'");
          types.push_back(ty);
        }
        std::vector<std::tuple<std::string, int, int, int, std::string>> out;
        for (const auto& s : cj::abi::kernelSlots(types)) {
          out.emplace_back(slotKindName(s.kind), s.arg, s.sub, s.size,
                           std::string(cj::scalarShortName(s.scalar)));
        }
        return out;
      },
      py::arg("types"),
      "The kernel parameter slots for argument types given in IR text form: "
      "[(kind, arg, sub, size, scalar)], kind in scalar/data/shape/stride.");

  m.def(
      "nvvm_to_ptx",
      [](const std::string& nvvm, int arch, int opt, bool fastmath, bool debug, bool lineinfo) {
        passSysPath();
        py::gil_scoped_release release;
        return cj::link::nvvmToPtx(nvvm, target(arch, opt, fastmath, debug, lineinfo));
      },
      py::arg("nvvm_ir"), py::arg("arch") = 90, py::arg("opt") = 3, py::arg("fastmath") = false,
      py::arg("debug") = false, py::arg("lineinfo") = false,
      "Compiles NVVM IR text (with libdevice) to PTX with libNVVM. Raises ToolchainError "
      "carrying libNVVM's log.");
  m.def(
      "llvm_to_ptx",
      [](const std::string& ir, int arch, int opt, bool fastmath, bool arch_specific) {
        passSysPath();
        cj::link::TargetOptions t = target(arch, opt, fastmath, false, false);
        t.backend = cj::link::BackendKind::Llvm;
        t.arch_specific = arch_specific;
        py::gil_scoped_release release;
        return cj::link::llvmToPtx(ir, t);
      },
      py::arg("ir"), py::arg("arch") = 90, py::arg("opt") = 3, py::arg("fastmath") = false,
      py::arg("arch_specific") = false,
      "Compiles LLVM assembly to PTX with the LLVM back end's plugin (LLVM's parser, libdevice "
      "as bitcode, O0-O3, NVPTX). Raises ToolchainError with LLVM's message.");
  m.def(
      "llvm_optimize",
      [](const std::string& ir, int arch, int opt, bool fastmath) {
        cj::link::TargetOptions t = target(arch, opt, fastmath, false, false);
        t.backend = cj::link::BackendKind::Llvm;
        py::gil_scoped_release release;
        return cj::link::llvmOptimize(ir, t);
      },
      py::arg("ir"), py::arg("arch") = 90, py::arg("opt") = 3, py::arg("fastmath") = false,
      "The module after the LLVM back end's O0-O3 pipeline for the NVPTX target, as LLVM "
      "assembly (libdevice not linked): tests/host_exec.py runs it on the CPU.");
  m.def("llvm_backend_version", &cj::link::llvmBackendVersion,
        "The LLVM the back end's plugin was built with ('LLVM 19.1.7'); raises ToolchainError "
        "when there is no plugin.");
  m.def(
      "nvvm_to_ltoir",
      [](const std::string& nvvm, int arch, int opt, bool fastmath, bool debug, bool lineinfo) {
        passSysPath();
        std::vector<char> out;
        {
          py::gil_scoped_release release;
          out = cj::link::nvvmToLtoIr(nvvm, target(arch, opt, fastmath, debug, lineinfo));
        }
        return py::bytes(out.data(), out.size());
      },
      py::arg("nvvm_ir"), py::arg("arch") = 90, py::arg("opt") = 3, py::arg("fastmath") = false,
      py::arg("debug") = false, py::arg("lineinfo") = false,
      "Compiles NVVM IR text (with libdevice) to LTO-IR with libNVVM (-gen-lto).");
  m.def(
      "link_cubin",
      [](const py::list& items, int arch, int opt, bool fastmath, bool debug, bool lineinfo) {
        passSysPath();
        std::vector<cj::link::LinkInput> inputs = linkInputs(items);
        std::vector<char> out;
        {
          py::gil_scoped_release release;
          out = cj::link::linkCubin(inputs, target(arch, opt, fastmath, debug, lineinfo));
        }
        return py::bytes(out.data(), out.size());
      },
      py::arg("inputs"), py::arg("arch") = 90, py::arg("opt") = 3, py::arg("fastmath") = false,
      py::arg("debug") = false, py::arg("lineinfo") = false,
      "Links [(kind, bytes[, name])] (kind: 'ltoir', 'ptx', 'cubin') into a cubin with "
      "nvJitLink (-lto when any input is LTO-IR). Raises ToolchainError with nvJitLink's log.");
  m.def(
      "link_ptx",
      [](const py::list& items, int arch, int opt, bool fastmath, bool debug, bool lineinfo) {
        passSysPath();
        std::vector<cj::link::LinkInput> inputs = linkInputs(items);
        py::gil_scoped_release release;
        return cj::link::linkPtx(inputs, target(arch, opt, fastmath, debug, lineinfo));
      },
      py::arg("inputs"), py::arg("arch") = 90, py::arg("opt") = 3, py::arg("fastmath") = false,
      py::arg("debug") = false, py::arg("lineinfo") = false,
      "Links LTO-IR inputs and returns the PTX after link-time optimisation.");
  m.def(
      "toolchain_version",
      [] {
        passSysPath();
        return cj::link::toolchainVersion();
      },
      "'libNVVM X.Y (IR a.b); nvJitLink M.N' (cache keys, messages).");
  m.def(
      "toolchain_paths",
      [] {
        passSysPath();
        py::dict d;
        d["libnvvm"] = cj::link::libnvvmPath();
        d["libdevice"] = cj::link::libdevicePath();
        d["nvjitlink"] = cj::link::nvjitlinkPath();
        return d;
      },
      "Where libNVVM, libdevice and nvJitLink were found.");
}
