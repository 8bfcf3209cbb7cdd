// cudajit.mathdx.matmul.<key>[.execute](alpha, a, b, beta, c): one cuBLASDx
// block GEMM, C = alpha * A @ B + beta * C, as nvmath.device's
// `MM.execute(...)` (and its older spelling `MM(...)`) in numba kernels. A
// Matmul object freezes to that symbol (python/cudajit/mathdx.py); its key
// names the descriptor this process instantiated (mathdx/mathdx.h), whose
// value types and block shape the call is checked against. The call becomes
// `intrinsic mathdx "<key>"` (libcalls/library_call.h) with alpha and beta
// converted to C's value type; codegen passes everything by pointer.
#include <string>

#include "mathdx/mathdx.h"
#include "typeinfer/infer.h"
#include "typeinfer/library_calls.h"
#include "typeinfer/rules.h"
#include "typeinfer/specializer.h"

namespace cj::typeinfer {
namespace {

constexpr std::string_view kPrefix = "cudajit.mathdx.matmul.";

struct Call {
  std::string key;
  std::shared_ptr<const mathdx::MatmulResult> mm;
  Scalar value[3];   // A, B, C
};

// Errors name the call as the user wrote it ("Matmul.execute", "Matmul" for
// MM(...)), not the per-descriptor symbol.
[[noreturn]] void fail(const Site& s, const std::string& message, const std::string& hint = {}) {
  std::string_view rest = s.name.substr(kPrefix.size());
  const size_t dot = rest.find('.');
  const std::string construct = dot == std::string_view::npos ? "Matmul" : "Matmul." + std::string(rest.substr(dot + 1));
  s.ctx.fail(s.instr, construct, message, hint);
}

Call analyze(const Site& s) {
  Call c;
  std::string_view rest = s.name.substr(kPrefix.size());
  const size_t dot = rest.find('.');
  c.key = std::string(rest.substr(0, dot));
  if (dot != std::string_view::npos && rest.substr(dot + 1) != "execute")
    fail(s, "Matmul." + std::string(rest.substr(dot + 1)) + " is not callable inside kernels",
         "call MM.execute(alpha, a, b, beta, c)");
  c.mm = mathdx::servedResult(c.key);
  if (!c.mm) fail(s, "this Matmul was not built in this process (descriptor " + c.key + ")");
  for (int i = 0; i < 3; ++i)
    if (!parseScalar(c.mm->value_type[i], &c.value[i]))
      fail(s, "Matmul's " + std::string(1, "abc"[i]) + " value type " + c.mm->value_type[i] +
                  " has no array type in cudajit kernels");
  if (s.args.size() != 5 || !s.kw_args.empty())
    fail(s, "Matmul.execute takes 5 positional arguments (alpha, a, b, beta, c), got " +
                std::to_string(s.argCount()),
         s.args.size() == 8 ? "the runtime leading-dimension form (alpha, a, lda, b, ldb, beta, c, ldc) "
                              "is not supported yet: give leading_dimension to the Matmul"
                            : std::string());
  for (int i = 0; i < 3; ++i) {
    const size_t at = i == 2 ? 4 : static_cast<size_t>(i + 1);   // a, b, c
    const Type* t = s.argType(at);
    if (!t->is(TypeKind::Array) || t->scalar != c.value[i])
      fail(s, "Matmul.execute's " + std::string(1, "abc"[i]) + " must be an array of " +
                  std::string(scalarNumbaName(c.value[i])) + ", got " + typeToString(t));
  }
  for (size_t at : {size_t{0}, size_t{3}}) {
    const Type* t = s.argType(at);
    if (!t->is(TypeKind::Scalar))
      fail(s, std::string(at == 0 ? "alpha" : "beta") + " must be a number, got " + typeToString(t));
  }
  return c;
}

const Type* mathdxType(const Site& s) {
  analyze(s);
  return noneTy();
}

ir::Instr* mathdxLower(const Site& s, Emitter& e) {
  Call c = analyze(s);
  // The routine is built for one block shape: a launch with another is an error.
  const InferOptions& options = s.ctx.specializer().options();
  if (options.block_dims[0] > 0)
    for (int d = 0; d < 3; ++d)
      if (options.block_dims[d] != c.mm->block_dim[d])
        fail(s, "Matmul was built for block_dim (" + std::to_string(c.mm->block_dim[0]) + ", " +
                   std::to_string(c.mm->block_dim[1]) + ", " + std::to_string(c.mm->block_dim[2]) +
                   "); this kernel is launched with (" + std::to_string(options.block_dims[0]) + ", " +
                   std::to_string(options.block_dims[1]) + ", " + std::to_string(options.block_dims[2]) + ")",
               "launch with MM.block_dim threads per block");
  const Type* ct = scalarTy(c.value[2]);
  std::vector<ir::Instr*> operands = {e.convert(s.args[0], ct), s.args[1], s.args[2],
                                      e.convert(s.args[3], ct), s.args[4]};
  makeLibraryCall(e, libcalls::Library::Mathdx, c.key, voidTy(), std::move(operands), "Matmul.execute");
  return nullptr;   // no value (as CUB's void calls)
}

}  // namespace

namespace rules {
const Rule mathdxCall{mathdxType, mathdxLower};
}

bool isMathdxSymbol(std::string_view name) { return name.rfind(kPrefix, 0) == 0; }

}  // namespace cj::typeinfer
