// cudajit.libdevice.<name>(...): any function of libdevice called by name, as
// numba.cuda.libdevice offers them (ir/libdevice.def, from libdevice.10.bc).
// The arguments convert to the function's parameter types; outputs through
// pointers come back after the result as a tuple (sincosf(x) -> (s, c),
// frexpf(x) -> (m, e)). One `intrinsic libdevice "<name>"`.
#include "ir/libdevice.h"
#include "typeinfer/rules.h"

namespace cj::typeinfer {
namespace {

const ir::LibdeviceFunction& functionOf(const Site& s) {
  const ir::LibdeviceFunction* f = ir::findLibdeviceFunction(s.arg);
  if (!f) s.fail("libdevice has no function '" + std::string(s.arg) + "'");
  if (!s.kw_args.empty()) s.fail("libdevice." + std::string(s.arg) + "() takes positional arguments only");
  if (s.args.size() != f->inputs.size())
    s.fail("libdevice." + std::string(s.arg) + "() takes " + std::to_string(f->inputs.size()) + " argument(s), got " +
           std::to_string(s.args.size()));
  for (size_t i = 0; i < s.args.size(); ++i) {
    const Type* t = s.argType(i);
    if (!t->isScalar() || scalarKind(t->scalar) == ScalarKind::Complex)
      s.fail("argument " + std::to_string(i + 1) + " of libdevice." + std::string(s.arg) + "() must be a number (" +
             std::string(scalarNumbaName(f->inputs[i])) + "), got " + typeToString(t));
  }
  return *f;
}

const Type* resultOf(const ir::LibdeviceFunction& f) {
  if (f.outputs.empty()) return f.returns_void ? noneTy() : scalarTy(f.result);
  std::vector<const Type*> elems;
  if (!f.returns_void) elems.push_back(scalarTy(f.result));
  for (Scalar o : f.outputs) elems.push_back(scalarTy(o));
  return tupleTy(elems);
}

const Type* libdeviceType(const Site& s) { return resultOf(functionOf(s)); }

ir::Instr* libdeviceLower(const Site& s, Emitter& e) {
  const ir::LibdeviceFunction& f = functionOf(s);
  std::vector<ir::Instr*> operands;
  for (size_t i = 0; i < s.args.size(); ++i) operands.push_back(e.convert(s.args[i], scalarTy(f.inputs[i])));
  const Type* t = resultOf(f);
  ir::Instr* call = e.intrinsic(ir::Intrinsic::LibdeviceCall, t == noneTy() ? voidTy() : t, std::move(operands));
  call->cval = ir::Const::str(std::string(f.name));
  return t == noneTy() ? nullptr : call;
}

}  // namespace

namespace rules {
const Rule libdeviceCall{libdeviceType, libdeviceLower};
}

}  // namespace cj::typeinfer
