// The provider of foreign device functions (foreign.h): a declaration's key
// resolves to its extern symbol and numba's ABI,
//     int name(T* return_value, args...)
// (a void function still gets the pointer, to nothing). The modules that
// define the symbols are the link files, which the driver adds once per
// kernel (foreign::linkInputs); nothing is compiled here.
#include "libcalls/foreign.h"
#include "libcalls/provider.h"
#include "support/error.h"

namespace cj::libcalls {
namespace {

class ForeignProvider : public Provider {
 public:
  Library library() const override { return Library::Foreign; }

  std::vector<ResolvedCall> resolve(const std::vector<std::string>& keys) const override {
    std::vector<ResolvedCall> out;
    for (const std::string& key : keys) {
      std::shared_ptr<const foreign::Declaration> d = foreign::lookup(key);
      if (!d) throw ToolchainError("foreign device function " + key + " was not declared in this process");
      ResolvedCall c;
      c.symbol = d->name;
      c.signature.ret = CType::value(Scalar::Int32);
      c.signature.params.push_back(d->returns_void ? CType::voidPointer() : CType::pointer(d->ret));
      for (const foreign::Param& p : d->params)
        c.signature.params.push_back(!p.pointer ? CType::value(p.scalar)
                                     : p.scalar == Scalar::Int8 ? CType::voidPointer() : CType::pointer(p.scalar));
      out.push_back(std::move(c));
    }
    return out;
  }
};

}  // namespace

const Provider& foreignProvider() {
  static const ForeignProvider provider;
  return provider;
}

}  // namespace cj::libcalls
