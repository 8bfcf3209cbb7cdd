// The CUB provider: descriptors are CUB specs in their text form
// (cub/spec.h); each becomes one instantiation (cub/cub.h: this process's
// memory, the disk cache, else NVRTC), compiled in parallel.
#include "cub/cub.h"
#include "libcalls/parallel.h"
#include "libcalls/provider.h"
#include "support/error.h"

namespace cj::libcalls {
namespace {

cub::Spec parseDescriptor(const std::string& text) {
  cub::Spec parsed, spec;
  std::string error;
  if (!cub::parseSpec(text, &parsed, &error) || !cub::tryNormalize(parsed, &spec, &error))
    throw ToolchainError("bad CUB descriptor '" + text + "': " + error);
  return spec;
}

class CubProvider : public Provider {
 public:
  Library library() const override { return Library::Cub; }

  std::vector<ResolvedCall> resolve(const std::vector<std::string>& descriptors) const override {
    std::vector<cub::Spec> specs;
    for (const std::string& d : descriptors) specs.push_back(parseDescriptor(d));
    std::vector<ResolvedCall> out(specs.size());
    forEachInParallel(specs.size(), [&](size_t i) {
      cub::Instance inst = cub::instantiate(specs[i]);
      ResolvedCall& r = out[i];
      r.symbol = inst.entry.name;
      r.signature = inst.entry.signature();
      r.temp_bytes = inst.temp_bytes;
      r.temp_align = inst.temp_align;
      r.ltoir = inst.ltoir;
    });
    return out;
  }
};

}  // namespace

const Provider& cubProvider() {
  static const CubProvider provider;
  return provider;
}

}  // namespace cj::libcalls
