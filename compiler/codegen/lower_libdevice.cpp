// Lowering of `intrinsic libdevice "<name>"` (ir/intrinsics.def): a call of
// __nv_<name>, declared from its row of ir/libdevice.def (libNVVM links
// libdevice; the LLVM back end links it as bitcode). Outputs through
// pointers go to slots in local memory, read back after the call into the
// result tuple.
#include "codegen/emitter.h"
#include "codegen/llvm_types.h"
#include "ir/libdevice.h"

namespace cj::codegen {

void lowerLibdeviceCall(FunctionEmitter& fe, const ir::Instr& in) {
  const ir::LibdeviceFunction* f = ir::findLibdeviceFunction(in.cval.s);
  if (!f) fe.fail(in, "libdevice", "internal error: libdevice has no function '" + in.cval.s + "'");
  const std::string symbol = "@__nv_" + std::string(f->name);
  const std::string ret = f->returns_void ? "void" : llvmScalarType(f->result);
  std::string decl, args;
  std::vector<std::string> slots;
  size_t input = 0, output = 0;
  for (bool is_output : f->param_is_output) {
    std::string type, value;
    if (is_output) {
      type = llvmScalarType(f->outputs[output++]);
      value = fe.entryAlloca(type, 8);
      slots.push_back(value);
      type += "*";
    } else {
      type = llvmScalarType(f->inputs[input]);
      value = fe.val(in.operands[input++]);
    }
    decl += (decl.empty() ? "" : ", ") + type;
    args += (args.empty() ? "" : ", ") + type + " " + value;
  }
  fe.mod().declare("declare " + ret + " " + symbol + "(" + decl + ")");
  std::string call = "call " + ret + " " + symbol + "(" + args + ")";
  if (f->outputs.empty()) {
    if (f->returns_void) fe.emitLine(call);
    else fe.emitResult(in, call);
    return;
  }
  // The tuple: the result (unless void), then each output.
  std::vector<std::pair<std::string, std::string>> fields;   // (type, value)
  if (!f->returns_void) fields.push_back({ret, fe.emit(call)});
  else fe.emitLine(call);
  for (size_t k = 0; k < slots.size(); ++k) {
    std::string t = llvmScalarType(f->outputs[k]);
    fields.push_back({t, fe.emit("load " + t + ", " + t + "* " + slots[k])});
  }
  fe.bind(in, fe.makeStruct(llvmType(in.type), fields));
}

}  // namespace cj::codegen
