// kernelSymbol: the name the kernel has in NVVM IR, PTX and the cubin.
//
// Readable part: "cj_" + the Python name + the signature, every character
// that is not [A-Za-z0-9_] replaced by '_'. Replacing characters can make two
// signatures look alike, so a hash of the exact signature text follows.
#include <cinttypes>
#include <cstdio>

#include "codegen/nvvm_emitter.h"

namespace cj::codegen {
namespace {

std::string sanitize(const std::string& s) {
  std::string out;
  for (char c : s) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    if (ok) {
      out += c;
    } else if (!out.empty() && out.back() != '_') {
      out += '_';
    }
  }
  while (!out.empty() && out.back() == '_') out.pop_back();
  return out;
}

uint64_t fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

}  // namespace

std::string ptxSafeName(const std::string& name) {
  bool ok = !name.empty() && !(name[0] >= '0' && name[0] <= '9');
  for (char c : name)
    ok = ok && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '$');
  if (ok) return name;
  char hash[17];
  std::snprintf(hash, sizeof hash, "%016" PRIx64, fnv1a(name));
  return "cj_" + sanitize(name) + "__" + hash;
}

std::string kernelSymbol(const ir::Function& kernel) {
  std::string sig;
  if (!kernel.blocks.empty()) {
    for (const auto& p : kernel.entry()->params) sig += typeToString(p->type) + ";";
  }
  std::string name = kernel.py_name.empty() ? kernel.name : kernel.py_name;
  std::string exact = kernel.name + "|" + name + "|" + sig;
  char hash[17];
  std::snprintf(hash, sizeof hash, "%016" PRIx64, fnv1a(exact));
  std::string readable = sanitize(name);
  std::string readable_sig = sanitize(sig);
  if (readable_sig.size() > 120) readable_sig.resize(120);   // keep PTX names short
  return "cj_" + readable + (readable_sig.empty() ? "" : "__" + readable_sig) + "__" + hash;
}

}  // namespace cj::codegen
