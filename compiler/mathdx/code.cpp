#include "mathdx/code.h"

#include "mathdx/status.h"
#include "support/error.h"

namespace cj::mathdx {
namespace {

// commondxOption, commondxCodeType (libcommondx.h). (CODE_CONTAINER is not
// set: libmathdx 0.4 answers COMMONDX_OPTION_CODE_CONTAINER = LTOIR with an
// internal error; TARGET_CODE = LTO gives LTO-IR.)
constexpr int kCodeOptionTargetSm = 1, kCodeOptionTargetCode = 5;
constexpr long long kCodeTypeLto = 0;
constexpr long long kArchSpecific = 1;   // commondxArchModifier

}  // namespace

void setOperators(const Api& a, long long handle, const std::vector<Operator>& ops, const OperatorSetters& set,
                  const std::string& spec) {
  for (const Operator& op : ops) {
    const bool one = op.values.size() == 1 || !set.many;
    std::string v;
    for (size_t i = 0; i < op.values.size(); ++i) v += (i ? ", " : "") + std::to_string(op.values[i]);
    const std::string call = std::string(set.library) + (one ? "SetOperatorInt64(" : "SetOperatorInt64s(") + op.name +
                             ", " + (one ? v : "[" + v + "]") + ")";
    const int status = one ? set.one(handle, op.id, op.values.at(0))
                           : set.many(handle, op.id, op.values.size(), op.values.data());
    check(a, status, call, spec);
  }
}

std::string traitString(const Api& a, long long handle, int trait, TraitStrSize size, TraitStr get,
                        const std::string& call, const std::string& spec) {
  size_t n = 0;
  check(a, size(handle, trait, &n), call, spec);
  std::string text(n, '\0');
  check(a, get(handle, trait, n, &text[0]), call, spec);
  return text.substr(0, text.find('\0'));
}

std::vector<std::vector<char>> finalizeLtoir(const Api& a, int sm, const std::function<int(long long)>& finalize,
                                             const std::string& finalize_call, const std::string& spec,
                                             bool arch_specific) {
  Handle code{a.commondxDestroyCode};
  check(a, a.commondxCreateCode(&code.h), "commondxCreateCode", spec);
  if (arch_specific) {
    long long target[2] = {static_cast<long long>(sm) * 10, kArchSpecific};
    check(a, a.commondxSetCodeOptionInt64s(code.h, kCodeOptionTargetSm, 2, target),
          "commondxSetCodeOptionInt64s(TARGET_SM, ARCH_SPECIFIC)", spec);
  } else {
    check(a, a.commondxSetCodeOptionInt64(code.h, kCodeOptionTargetSm, static_cast<long long>(sm) * 10),
          "commondxSetCodeOptionInt64(TARGET_SM)", spec);
  }
  check(a, a.commondxSetCodeOptionInt64(code.h, kCodeOptionTargetCode, kCodeTypeLto),
        "commondxSetCodeOptionInt64(TARGET_CODE)", spec);
  check(a, finalize(code.h), finalize_call, spec);
  // Some routines come as several LTO-IR modules; all of them are linked.
  size_t count = 0;
  check(a, a.commondxGetCodeNumLTOIRs(code.h, &count), "commondxGetCodeNumLTOIRs", spec);
  std::vector<size_t> sizes(count);
  check(a, a.commondxGetCodeLTOIRSizes(code.h, count, sizes.data()), "commondxGetCodeLTOIRSizes", spec);
  std::vector<std::vector<char>> modules(count);
  std::vector<void*> out(count);
  for (size_t i = 0; i < count; ++i) {
    modules[i].resize(sizes[i]);
    out[i] = modules[i].data();
  }
  check(a, a.commondxGetCodeLTOIRs(code.h, count, out.data()), "commondxGetCodeLTOIRs", spec);
  if (count == 0) throw ToolchainError("libmathdx produced no LTO-IR for " + spec);
  return modules;
}

}  // namespace cj::mathdx
