// nvJitLink: PTX / LTO-IR / cubin inputs -> one cubin (or PTX after LTO).
#include <string>
#include <vector>

#include "link/api.h"
#include "link/toolchain.h"
#include "support/error.h"

namespace cj::link {
namespace {

// One nvJitLinkHandle, destroyed on every path.
class Linker {
 public:
  Linker(const JitLinkApi& api, const std::vector<std::string>& options) : api_(api) {
    std::vector<const char*> argv;
    for (const auto& o : options) argv.push_back(o.c_str());
    JitLinkResult r = api_.Create(&handle_, static_cast<uint32_t>(argv.size()), argv.data());
    if (r != 0) {
      std::string all;
      for (const auto& o : options) all += " " + o;
      throw ToolchainError(std::string("nvJitLink: nvJitLinkCreate failed (") + jitLinkResultName(r) +
                           ") with options" + all);
    }
  }
  ~Linker() {
    if (handle_) api_.Destroy(&handle_);
  }
  Linker(const Linker&) = delete;
  Linker& operator=(const Linker&) = delete;

  JitLinkHandle get() const { return handle_; }

  void check(JitLinkResult r, const std::string& call) const {
    if (r == 0) return;
    std::string msg = "nvJitLink: " + call + " failed (" + jitLinkResultName(r) + ")";
    std::string err = log(api_.GetErrorLogSize, api_.GetErrorLog);
    std::string info = log(api_.GetInfoLogSize, api_.GetInfoLog);
    if (!err.empty()) msg += ":\n" + err;
    if (!info.empty()) msg += "\ninfo log:\n" + info;
    throw ToolchainError(msg);
  }

 private:
  std::string log(JitLinkResult (*size_fn)(JitLinkHandle, size_t*),
                  JitLinkResult (*log_fn)(JitLinkHandle, char*)) const {
    size_t size = 0;
    if (size_fn(handle_, &size) != 0 || size == 0) return {};
    std::string text(size, '\0');
    if (log_fn(handle_, &text[0]) != 0) return {};
    while (!text.empty() && (text.back() == '\0' || text.back() == '\n')) text.pop_back();
    return text;
  }

  const JitLinkApi& api_;
  JitLinkHandle handle_ = nullptr;
};

bool anyLtoIr(const std::vector<LinkInput>& inputs) {
  for (const auto& in : inputs) {
    if (in.kind == LinkInput::Kind::LtoIr) return true;
  }
  return false;
}

std::vector<std::string> linkOptions(const std::vector<LinkInput>& inputs, const TargetOptions& t, bool ptx) {
  // ptxas refuses an -O level beside --Ofast-compile.
  std::string level = t.opt == 0 ? "-O0" : t.fast_compile.empty() ? "-O3" : "--Ofast-compile=" + t.fast_compile;
  std::vector<std::string> o = {"-arch=sm_" + std::to_string(t.arch) + (t.arch_specific ? "a" : ""), level};
  if (anyLtoIr(inputs)) o.push_back("-lto");
  if (t.optimize_unused_variables) o.push_back("-optimize-unused-variables");
  if (ptx) o.push_back("-ptx");
  if (t.fastmath) {
    for (const char* f : {"-ftz=1", "-prec-div=0", "-prec-sqrt=0", "-fma=1"}) o.push_back(f);
  }
  if (t.debug) o.push_back("-g");
  if (t.lineinfo && !t.debug) o.push_back("-lineinfo");
  if (t.max_registers > 0) o.push_back("-maxrregcount=" + std::to_string(t.max_registers));
  return o;
}

int inputType(LinkInput::Kind k) {
  switch (k) {
    case LinkInput::Kind::LtoIr: return kInputLtoIr;
    case LinkInput::Kind::Ptx: return kInputPtx;
    case LinkInput::Kind::Cubin: return kInputCubin;
    case LinkInput::Kind::Fatbin: return kInputFatbin;
    case LinkInput::Kind::Object: return kInputObject;
    case LinkInput::Kind::Library: return kInputLibrary;
  }
  return kInputLtoIr;
}

// Creates the linker, adds every input and completes the link.
void link(Linker& l, const JitLinkApi& api, const std::vector<LinkInput>& inputs) {
  if (inputs.empty()) throw ToolchainError("nvJitLink: nothing to link");
  for (size_t i = 0; i < inputs.size(); ++i) {
    const LinkInput& in = inputs[i];
    std::string name = in.name.empty() ? "input" + std::to_string(i) : in.name;
    std::vector<char> data = in.data;
    if (in.kind == LinkInput::Kind::Ptx && (data.empty() || data.back() != '\0')) data.push_back('\0');
    l.check(api.AddData(l.get(), inputType(in.kind), data.data(), data.size(), name.c_str()),
            "nvJitLinkAddData(" + name + ")");
  }
  l.check(api.Complete(l.get()), "nvJitLinkComplete");
}

}  // namespace

std::vector<char> linkCubin(const std::vector<LinkInput>& inputs, const TargetOptions& t) {
  const JitLinkApi& api = jitLinkApi();
  Linker l(api, linkOptions(inputs, t, false));
  link(l, api, inputs);
  size_t size = 0;
  l.check(api.GetLinkedCubinSize(l.get(), &size), "nvJitLinkGetLinkedCubinSize");
  std::vector<char> cubin(size);
  if (size) l.check(api.GetLinkedCubin(l.get(), cubin.data()), "nvJitLinkGetLinkedCubin");
  return cubin;
}

std::string linkPtx(const std::vector<LinkInput>& inputs, const TargetOptions& t) {
  if (!anyLtoIr(inputs)) throw ToolchainError("nvJitLink produces PTX only from LTO-IR inputs");
  const JitLinkApi& api = jitLinkApi();
  Linker l(api, linkOptions(inputs, t, true));
  link(l, api, inputs);
  size_t size = 0;
  l.check(api.GetLinkedPtxSize(l.get(), &size), "nvJitLinkGetLinkedPtxSize");
  std::string ptx(size, '\0');
  if (size) l.check(api.GetLinkedPtx(l.get(), &ptx[0]), "nvJitLinkGetLinkedPtx");
  while (!ptx.empty() && ptx.back() == '\0') ptx.pop_back();
  return ptx;
}

}  // namespace cj::link
