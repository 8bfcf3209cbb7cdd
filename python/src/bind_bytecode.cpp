// Stage 1 entry points: decode a Python function to untyped IR text.
#include <pybind11/pybind11.h>

#include "bytecode/decoder.h"
#include "ir/ir.h"

namespace py = pybind11;

void bindBytecode(py::module_& m) {
  m.def(
      "decode_ir",
      [](py::object fn) {
        std::unique_ptr<cj::ir::Module> module = cj::bytecode::decodeFunction(fn.ptr());
        return cj::ir::printModule(*module);
      },
      py::arg("fn"),
      "Decodes a Python function (and the device functions it calls) to untyped IR text.");
  m.def("python_version_tag", &cj::bytecode::pythonVersionTag,
        "The CPython version whose bytecode the decoder reads: '3.11', '3.12' or '3.13'.");
}
