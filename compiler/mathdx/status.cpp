#include "mathdx/status.h"

#include <sstream>
#include <vector>

#include "mathdx/library.h"
#include "support/error.h"

namespace cj::mathdx {
namespace {

std::string lastError(const Api& a) {
  size_t size = 0;
  if (a.commondxGetLastErrorStrSize(&size) != 0 || size <= 1) return {};
  std::string text(size, '\0');
  int code = 0;
  if (a.commondxGetLastErrorStr(&code, size, &text[0]) != 0) return {};
  text.resize(text.find('\0') == std::string::npos ? size : text.find('\0'));
  return text;
}

// NVRTC repeats each static_assert once per instantiation: the distinct
// "error:" lines say it in a few lines, the whole log follows them.
std::string summary(const std::string& log) {
  std::vector<std::string> seen;
  std::istringstream in(log);
  std::string line;
  while (std::getline(in, line)) {
    size_t at = line.find("error:");
    if (at == std::string::npos) continue;
    std::string msg = line.substr(at);
    bool dup = false;
    for (const auto& s : seen) dup = dup || s == msg;
    if (!dup) seen.push_back(msg);
  }
  std::string out;
  for (const auto& s : seen) out += (out.empty() ? "" : "\n") + s;
  return out;
}

}  // namespace

void check(const Api& a, int status, const std::string& call, const std::string& spec) {
  if (status == 0) return;
  const char* name = a.commondxStatusToStr(status);
  std::string head = "libmathdx: " + call + " failed (" + (name ? name : "status " + std::to_string(status)) +
                     ") for " + spec;
  // libmathdx keeps a message for compilation errors only; for any other
  // status its last message belongs to an earlier call.
  constexpr int kCompilationError = 3;
  std::string log = status == kCompilationError ? lastError(a) : std::string();
  std::string message = log.empty() ? head : head + ":\n" + summary(log) + "\n--- libmathdx log ---\n" + log;
  const char* construct = spec.rfind("FFT(", 0) == 0   ? "mathdx.fft"
                          : spec.rfind("RNG(", 0) == 0 ? "mathdx.random"
                                                       : "mathdx.matmul";
  throw CompileError("", 0, 0, construct, message);
}

}  // namespace cj::mathdx
