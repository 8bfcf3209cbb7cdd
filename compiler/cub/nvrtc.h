// NVRTC, loaded with dlopen on first use (toolkit.h says where from). Only
// the entry points cudajit needs, declared here, so the build needs no
// CUDA headers.
#pragma once
#include <memory>
#include <string>
#include <vector>

namespace cj::cub {

struct NvrtcOutput {
  std::vector<char> ltoir;                 // LTO-IR (compileToLtoIr) or a cubin (compileToCubin)
  std::vector<std::string> lowered_names;  // one per name expression, in order
  std::string log;                         // warnings, PCH notes
};

class Nvrtc {
 public:
  // The process-wide instance; loads the library on first use. Throws
  // ToolchainError (library missing, entry point missing).
  static const Nvrtc& get();

  const std::string& path() const { return path_; }
  // "13.0"
  const std::string& version() const { return version_; }

  // Compiles `source` with `options` (which should hold -dlto) and returns
  // the LTO-IR and the lowered names of `name_expressions`. Every NVRTC
  // return code is checked; a failure throws ToolchainError with NVRTC's log.
  NvrtcOutput compileToLtoIr(const std::string& source, const std::string& program_name,
                             const std::vector<std::string>& options,
                             const std::vector<std::string>& name_expressions) const;
  // The same, for whole kernels: `options` name a real architecture
  // (-arch=sm_90) and the output (in `ltoir`) is a cubin, ready to load.
  NvrtcOutput compileToCubin(const std::string& source, const std::string& program_name,
                             const std::vector<std::string>& options,
                             const std::vector<std::string>& name_expressions) const;

  struct Api;  // the dlsym'ed entry points (nvrtc.cpp)
  ~Nvrtc();

 private:
  Nvrtc();
  NvrtcOutput compileProgram(const std::string& source, const std::string& program_name,
                             const std::vector<std::string>& options,
                             const std::vector<std::string>& name_expressions, bool cubin) const;
  void* handle_ = nullptr;
  std::string path_;
  std::string version_;
  std::unique_ptr<const Api> api_;
};

}  // namespace cj::cub
