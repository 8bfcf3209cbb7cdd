#include "runtime/signature.h"

#include "typeinfer/signature.h"

namespace cj::rt {

ParsedSignature parseSignature(std::string_view text) {
  typeinfer::ParsedSignature s = typeinfer::parseSignature(text);
  return {s.ret, std::move(s.args)};
}

const Type* parseNumbaType(std::string_view text) { return typeinfer::parseNumbaType(text); }

std::string numbaArgsString(const std::vector<const Type*>& args) {
  std::string out = "(";
  for (size_t k = 0; k < args.size(); ++k) {
    if (k) out += ", ";
    out += typeToNumbaString(args[k]);
  }
  return out + ")";
}

}  // namespace cj::rt
