// Calls of foreign device functions (libcalls/foreign.h): a
// `cudajit.declare_device(...)` object freezes to
// "cudajit.foreign.<key>"; calling it in a kernel checks the arguments
// against the declared signature and becomes `intrinsic foreign "<key>"`
// (numbers converted to the declared scalars as numba converts them, an
// array for a CPointer(T) parameter passed as its data address, a record for
// a voidptr parameter as its address).
#include <string>

#include "libcalls/foreign.h"
#include "typeinfer/library_calls.h"
#include "typeinfer/rules.h"

namespace cj::typeinfer {
namespace {

namespace foreign = libcalls::foreign;

std::shared_ptr<const foreign::Declaration> declarationOf(const Site& s) {
  std::string key(s.name.substr(std::string_view(foreign::kSymbolPrefix).size()));
  std::shared_ptr<const foreign::Declaration> d = foreign::lookup(key);
  if (!d) s.ctx.fail(s.instr, "declare_device", "this foreign device function was not declared in this process");
  return d;
}

[[noreturn]] void fail(const Site& s, const foreign::Declaration& d, const std::string& message) {
  s.ctx.fail(s.instr, d.name, message, "declared as declare_device('" + d.name + "', '" + d.signature + "')");
}

// The arguments, checked; with `e`, converted for the call.
std::vector<ir::Instr*> arguments(const Site& s, const foreign::Declaration& d, Emitter* e) {
  if (!s.kw_args.empty()) fail(s, d, d.name + "() takes positional arguments only");
  if (s.args.size() != d.params.size())
    fail(s, d, d.name + "() takes " + std::to_string(d.params.size()) + " argument(s), got " + std::to_string(s.args.size()));
  std::vector<ir::Instr*> out;
  for (size_t i = 0; i < d.params.size(); ++i) {
    const foreign::Param& p = d.params[i];
    const Type* t = s.argType(i);
    const std::string which = "argument " + std::to_string(i + 1) + " of " + d.name + "()";
    if (p.pointer) {
      bool any = p.scalar == Scalar::Int8;   // voidptr
      if (any && isRecord(t)) {   // a record (a[i] of an array of records): its address
        if (e) out.push_back(e->intrinsic(ir::Intrinsic::ArrayAddress, i64Ty(), {s.args[i]}));
        continue;
      }
      if (!t->is(TypeKind::Array) || t->record || (!any && t->scalar != p.scalar))
        fail(s, d, which + " is a pointer to " + (any ? std::string("anything") : std::string(scalarNumbaName(p.scalar))) +
                       ": pass an array" + (any ? " or a record (a[i] of an array of records)"
                                                : " of " + std::string(scalarNumbaName(p.scalar))) +
                       ", got " + typeToString(t));
      if (e) out.push_back(e->intrinsic(ir::Intrinsic::ArrayAddress, i64Ty(), {s.args[i]}));
    } else {
      if (!t->isScalar() || scalarKind(t->scalar) == ScalarKind::Complex)
        fail(s, d, which + " must be a number (" + std::string(scalarNumbaName(p.scalar)) + "), got " + typeToString(t));
      if (e) out.push_back(e->convert(s.args[i], scalarTy(p.scalar)));
    }
  }
  return out;
}

const Type* foreignType(const Site& s) {
  auto d = declarationOf(s);
  arguments(s, *d, nullptr);
  return d->returns_void ? noneTy() : scalarTy(d->ret);
}

ir::Instr* foreignLower(const Site& s, Emitter& e) {
  auto d = declarationOf(s);
  std::vector<ir::Instr*> operands = arguments(s, *d, &e);
  ir::Instr* call = makeLibraryCall(e, libcalls::Library::Foreign, d->key, d->returns_void ? voidTy() : scalarTy(d->ret),
                                    std::move(operands), d->name);
  return d->returns_void ? nullptr : call;
}

}  // namespace

namespace rules {
const Rule foreignCall{foreignType, foreignLower};
}

bool isForeignSymbol(std::string_view name) { return name.rfind(foreign::kSymbolPrefix, 0) == 0; }

}  // namespace cj::typeinfer
