#include "libcalls/foreign.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <stdexcept>
#include <tuple>

#include "cub/nvrtc.h"
#include "cub/toolkit.h"
#include "support/error.h"
#include "support/sha256.h"

namespace cj::libcalls::foreign {
namespace {

std::string trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t\n"), e = s.find_last_not_of(" \t\n");
  return b == std::string_view::npos ? std::string() : std::string(s.substr(b, e - b + 1));
}

// The parameter list's items at top level (CPointer(...) keeps its commas, if any).
std::vector<std::string> splitTopLevel(std::string_view s) {
  std::vector<std::string> items;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || (s[i] == ',' && depth == 0)) {
      std::string item = trim(s.substr(start, i - start));
      if (!item.empty() || i != s.size() || !items.empty()) items.push_back(item);
      start = i + 1;
    } else if (s[i] == '(') {
      ++depth;
    } else if (s[i] == ')') {
      --depth;
    }
  }
  if (items.size() == 1 && items[0].empty()) items.clear();
  return items;
}

[[noreturn]] void badSignature(const std::string& signature, const std::string& why) {
  throw std::invalid_argument("declare_device: cannot use the signature '" + signature + "': " + why);
}

Param parseParam(const std::string& text, const std::string& signature) {
  Param p;
  if (text == "voidptr") return {Scalar::Int8, true};
  std::string inner = text;
  if (text.rfind("CPointer(", 0) == 0 && text.back() == ')') {
    inner = trim(std::string_view(text).substr(9, text.size() - 10));
    p.pointer = true;
  }
  if (!parseScalar(inner, &p.scalar) || scalarKind(p.scalar) == ScalarKind::Complex)
    badSignature(signature, "'" + text + "' is not a scalar type (float32, int64, ...), CPointer(<scalar>) or voidptr");
  return p;
}

std::vector<char> readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::invalid_argument("cannot read link file '" + path + "': " + std::strerror(errno));
  return std::vector<char>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::string contentHash(const std::vector<char>& data) { return sha256Hex(std::string_view(data.data(), data.size())); }

InputKind kindOf(const std::string& path) {
  static const std::map<std::string, InputKind> kinds = {
      {".cu", InputKind::LtoIr}, {".ptx", InputKind::Ptx}, {".ltoir", InputKind::LtoIr},
      {".cubin", InputKind::Cubin}, {".fatbin", InputKind::Fatbin}, {".o", InputKind::Object},
      {".a", InputKind::Library}};
  auto it = kinds.find(std::filesystem::path(path).extension().string());
  if (it == kinds.end())
    throw std::invalid_argument("link file '" + path +
                                "' has an unknown kind: give .cu, .ptx, .ltoir, .cubin, .fatbin, .o or .a");
  return it->second;
}

std::string absolutePath(const std::string& path) { return std::filesystem::absolute(path).lexically_normal().string(); }

struct Registry {
  std::mutex mu;
  std::map<std::string, std::shared_ptr<const Declaration>> declarations;
  // (path, content hash, arch) -> the compiled or read input
  std::map<std::tuple<std::string, std::string, int>, Input> inputs;
};
Registry& registry() {
  static Registry* r = new Registry;   // never destroyed: used from threads until exit
  return *r;
}

// A .cu file compiled for compute_<arch>: relocatable LTO-IR (-dlto), the
// toolkit's headers and the file's own directory on the include path.
std::vector<char> compileCu(const std::string& path, const std::vector<char>& source, int arch) {
  std::vector<std::string> options = {"-arch=compute_" + std::to_string(arch), "-dlto", "-std=c++17"};
  options.push_back("-I" + std::filesystem::path(path).parent_path().string());
  try {
    std::filesystem::path cccl = cub::findCcclIncludeDir();
    options.push_back("-I" + cccl.string());
    if (cccl.filename() == "cccl") options.push_back("-I" + cccl.parent_path().string());
  } catch (const ToolchainError&) {
    // no toolkit headers: NVRTC's built-in ones still serve plain device code
  }
  try {
    return cub::Nvrtc::get().compileToLtoIr(std::string(source.begin(), source.end()), path, options, {}).ltoir;
  } catch (const ToolchainError& e) {
    throw ToolchainError("compiling the link file '" + path + "' with NVRTC failed:\n" + e.what());
  }
}

}  // namespace

std::shared_ptr<const Declaration> declare(const std::string& name, const std::string& signature,
                                           const std::vector<std::string>& link) {
  auto d = std::make_shared<Declaration>();
  d->name = trim(name);
  if (d->name.empty()) throw std::invalid_argument("declare_device: the function's name is empty");
  d->signature = trim(signature);
  size_t open = d->signature.find('(');
  if (open == std::string::npos || d->signature.back() != ')')
    badSignature(signature, "expected 'return_type(arg_type, ...)', e.g. 'float32(float32, float32)'");
  std::string ret = trim(std::string_view(d->signature).substr(0, open));
  if (ret == "void" || ret == "none") {
    d->returns_void = true;
  } else if (!parseScalar(ret, &d->ret) || scalarKind(d->ret) == ScalarKind::Complex) {
    badSignature(signature, "the return type '" + ret + "' is not a scalar type or void");
  }
  for (const std::string& p : splitTopLevel(std::string_view(d->signature).substr(open + 1, d->signature.size() - open - 2)))
    d->params.push_back(parseParam(p, signature));
  for (const std::string& path : link) {
    kindOf(path);
    d->link.push_back(absolutePath(path));
  }
  d->key = sha256Hex(d->name + "\n" + d->signature + "\n" + linkIdentity(d->link)).substr(0, 32);
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto [it, added] = r.declarations.emplace(d->key, d);
  return it->second;
}

std::shared_ptr<const Declaration> lookup(const std::string& key) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.declarations.find(key);
  return it == r.declarations.end() ? nullptr : it->second;
}

std::string linkIdentity(const std::vector<std::string>& paths) {
  std::string out;
  for (const std::string& p : paths) out += absolutePath(p) + "=" + contentHash(readFile(p)) + ";";
  return out;
}

std::vector<Input> linkInputs(const std::vector<std::string>& paths, int arch) {
  std::vector<Input> out;
  std::vector<std::string> seen;
  for (const std::string& given : paths) {
    std::string path = absolutePath(given);
    if (std::find(seen.begin(), seen.end(), path) != seen.end()) continue;
    seen.push_back(path);
    InputKind kind = kindOf(path);
    std::vector<char> data = readFile(path);
    auto key = std::make_tuple(path, contentHash(data), arch);
    Registry& r = registry();
    {
      std::lock_guard<std::mutex> lock(r.mu);
      if (auto it = r.inputs.find(key); it != r.inputs.end()) {
        out.push_back(it->second);
        continue;
      }
    }
    bool cu = std::filesystem::path(path).extension() == ".cu";
    Input input{kind, std::make_shared<const std::vector<char>>(cu ? compileCu(path, data, arch) : std::move(data)),
                std::filesystem::path(path).filename().string()};
    std::lock_guard<std::mutex> lock(r.mu);
    out.push_back(r.inputs.emplace(key, input).first->second);
  }
  return out;
}

}  // namespace cj::libcalls::foreign
