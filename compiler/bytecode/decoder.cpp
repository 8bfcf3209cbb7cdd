#include "bytecode/decoder.h"

#include <unordered_map>

#include "bytecode/code_reader.h"
#include "bytecode/constructs.h"
#include "bytecode/function_decoder.h"
#include "support/error.h"

namespace cj::bytecode {
namespace {

// Decodes a kernel and, transitively, the device functions it references
// into one module; each Python function once. The key is the function
// object, not its code object: closures made by one factory share their
// code but freeze different cell values.
class ModuleDecoder {
 public:
  explicit ModuleDecoder(ir::Module* m) : module_(m) {
    ctx_.device_function = [this](PyObject* py_fn, const std::vector<std::string>& sigs) {
      return decode(py_fn, sigs);
    };
  }

  std::string decode(PyObject* py_fn, const std::vector<std::string>& signatures = {}) {
    auto it = memo_.find(py_fn);
    if (it != memo_.end()) return it->second.name;
    CodeInfo ci = readFunction(py_fn);
    rejectUnsupportedConstructs(ci);
    std::string name = uniqueName(ci.name);
    // Memoised before the body is decoded, so recursion resolves to this name.
    memo_[py_fn] = Entry{PyRef::borrow(py_fn), name};
    ir::Function* fn = module_->addFunction(name);
    for (const std::string& text : signatures) {
      try {
        fn->declared.push_back(parseSignature(text));
      } catch (const CompileError& e) {
        throw CompileError(ci.filename, ci.first_line, 0, "signature",
                           "the signature '" + text + "' of device function '" + ci.name + "': " + e.message);
      }
    }
    decodeInto(ci, fn, ctx_);
    return name;
  }

 private:
  struct Entry {
    PyRef function;   // keeps the key alive
    std::string name;
  };

  std::string uniqueName(const std::string& base) {
    std::string name = base.empty() ? "fn" : base;
    for (int i = 2; module_->find(name); ++i) name = base + "_" + std::to_string(i);
    return name;
  }

  ir::Module* module_;
  DecodeContext ctx_;
  std::unordered_map<PyObject*, Entry> memo_;
};

// A cudajit dispatcher stands for its Python function.
PyRef unwrapDispatcher(PyObject* obj) {
  if (!obj || PyFunction_Check(obj)) return PyRef::borrow(obj);
  for (const char* attr : {"_cudajit_device_py_func_", "py_func"})
    if (PyRef f = getAttr(obj, attr))
      if (PyFunction_Check(f.get())) return f;
  return PyRef::borrow(obj);
}

}  // namespace

std::unique_ptr<ir::Module> decodeFunction(PyObject* py_function) {
  auto module = std::make_unique<ir::Module>();
  ModuleDecoder decoder(module.get());
  try {
    decoder.decode(unwrapDispatcher(py_function).get());
  } catch (const CompileError&) {
    throw;
  } catch (const std::exception& e) {
    // A decoder bug must surface as an error, never as a crash.
    throw CompileError("", 0, 0, "decoder", std::string("internal decoder error: ") + e.what());
  }
  return module;
}

const char* pythonVersionTag() { return interpreterVersionTag(); }

}  // namespace cj::bytecode
