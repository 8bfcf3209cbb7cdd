// The MathDx provider: descriptors are the keys of cuBLASDx descriptors this
// process instantiated (mathdx/mathdx.h: specKey), which the Python Matmul
// object did when it was built; each resolves to libmathdx's entry point
// (the shared-memory API with static leading dimensions) and its LTO-IR.
#include "libcalls/provider.h"
#include "mathdx/mathdx.h"
#include "support/error.h"

namespace cj::libcalls {
namespace {

class MathdxProvider : public Provider {
 public:
  Library library() const override { return Library::Mathdx; }

  std::vector<ResolvedCall> resolve(const std::vector<std::string>& keys) const override {
    std::vector<ResolvedCall> out;
    for (const std::string& key : keys) {
      std::shared_ptr<const mathdx::MatmulResult> r = mathdx::servedResult(key);
      if (!r) throw ToolchainError("MathDx descriptor " + key + " was not instantiated in this process");
      if (r->ltoir.size() != 1)
        throw ToolchainError("MathDx descriptor " + r->spec + " came as " + std::to_string(r->ltoir.size()) +
                             " LTO-IR modules; cudajit links one");
      ResolvedCall c;
      c.symbol = r->symbol;
      // void f(alpha*, a*, b*, beta*, c*): generic pointers (cublasdx_numba's ABI).
      c.signature.ret = CType{};
      for (int i = 0; i < 5; ++i) c.signature.params.push_back(CType::voidPointer());
      c.ltoir = std::make_shared<const std::vector<char>>(r->ltoir[0]);
      out.push_back(std::move(c));
    }
    return out;
  }
};

}  // namespace

const Provider& mathdxProvider() {
  static const MathdxProvider provider;
  return provider;
}

}  // namespace cj::libcalls
