// The library-call stage without codegen, for tests and tools:
//   library_calls(typed_ir_text)         -> [(library, descriptor)]
//   resolve_library_calls(typed_ir_text) -> [{library, descriptor, symbol, signature,
//                                             nvvm_declaration, temp_bytes, temp_align, ltoir}]
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>

#include "codegen/backend.h"
#include "ir/ir.h"
#include "libcalls/foreign.h"
#include "libcalls/resolve.h"
#include "support/error.h"

namespace py = pybind11;

namespace {

cj::ir::Module parseTypedIr(const std::string& text) {
  cj::ir::Module m;
  std::string error;
  if (!cj::ir::parseModule(text, &m, &error)) throw cj::CompileError("<ir>", 0, 0, "IR text", error);
  if (!cj::ir::verifyModule(m, true, &error)) throw cj::CompileError("<ir>", 0, 0, "IR verifier", error);
  return m;
}

// "f32", "f32*", "void*", "void": the C ABI in the IR's scalar names.
std::string ctypeText(const cj::CType& t) {
  switch (t.kind) {
    case cj::CType::Kind::Void: return "void";
    case cj::CType::Kind::Value: return std::string(cj::scalarShortName(t.scalar));
    case cj::CType::Kind::Pointer: return std::string(cj::scalarShortName(t.scalar)) + "*";
    case cj::CType::Kind::VoidPointer: return "void*";
  }
  return "?";
}

}  // namespace

void bindLibcalls(py::module_& m) {
  m.def(
      "declare_foreign",
      [](const std::string& name, const std::string& signature, const std::vector<std::string>& link) {
        auto d = cj::libcalls::foreign::declare(name, signature, link);
        return py::make_tuple(std::string(cj::libcalls::foreign::kSymbolPrefix) + d->key, d->link);
      },
      py::arg("name"), py::arg("signature"), py::arg("link") = std::vector<std::string>{},
      "Records a foreign device function (cudajit.declare_device): (the symbol its object freezes to, "
      "the link files' absolute paths). ValueError for a bad signature or link file.");
  m.def(
      "library_calls",
      [](const std::string& text) {
        py::list out;
        for (const auto& c : cj::libcalls::collect(parseTypedIr(text)))
          out.append(py::make_tuple(std::string(cj::libcalls::libraryName(c.library)), c.descriptor));
        return out;
      },
      py::arg("typed_ir"),
      "The library calls of typed IR text: [(library, descriptor)], each once, in order.");
  m.def(
      "resolve_library_calls",
      [](const std::string& text) {
        cj::libcalls::ResolvedCalls resolved = cj::libcalls::resolve(cj::libcalls::collect(parseTypedIr(text)));
        py::list out;
        for (const auto& [call, r] : resolved.entries()) {
          py::dict d;
          d["library"] = std::string(cj::libcalls::libraryName(call.library));
          d["descriptor"] = call.descriptor;
          d["symbol"] = r.symbol;
          py::list params;
          for (const auto& p : r.signature.params) params.append(ctypeText(p));
          d["signature"] = py::make_tuple(ctypeText(r.signature.ret), params);
          d["nvvm_declaration"] = cj::codegen::nvvmBackend().externDeclaration(r.symbol, r.signature);
          d["temp_bytes"] = r.temp_bytes;
          d["temp_align"] = r.temp_align;
          d["ltoir"] = r.ltoir ? py::bytes(r.ltoir->data(), r.ltoir->size()) : py::bytes();
          out.append(d);
        }
        return out;
      },
      py::arg("typed_ir"),
      "Resolves the library calls of typed IR text through their providers (CUB: NVRTC or "
      "its caches), without codegen: [{library, descriptor, symbol, signature (ret, [params]), "
      "nvvm_declaration, temp_bytes, temp_align, ltoir}].");
}
