// libmathdx's status codes -> cudajit's exceptions.
#pragma once
#include <string>

namespace cj::mathdx {

struct Api;

// Nothing for COMMONDX_SUCCESS. Otherwise throws CompileError whose message
// is libmathdx's own: its last error of this thread (the NVRTC log of the
// cuBLASDx instantiation, for a descriptor cuBLASDx rejects), led by its
// distinct "error:" lines; without one (libmathdx keeps a message only for
// compilation errors) the status name and the call that failed.
void check(const Api& api, int status, const std::string& call, const std::string& spec);

}  // namespace cj::mathdx
