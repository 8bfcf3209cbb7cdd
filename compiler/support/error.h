// The one error type of the compiler. Every stage throws it; the Python
// binding turns it into cudajit.CompileError (a Python exception) and nothing
// else crosses the C API boundary.
#pragma once
#include <stdexcept>
#include <string>

namespace cj {

struct CompileError : std::runtime_error {
  std::string file;       // Python source file of the kernel or device function
  int line = 0;           // 0: unknown
  int col = 0;            // 0: unknown
  std::string construct;  // what was not supported / failed: "LOAD_ATTR on int", "atomic.add"
  std::string message;    // what was expected and what was found
  std::string hint;       // optional: how to fix it

  CompileError(std::string file, int line, int col, std::string construct,
               std::string message, std::string hint = {});
  // "file.py:12:5: message [construct]\n  hint: ..."; also what().
  static std::string format(const std::string& file, int line, int col,
                            const std::string& construct, const std::string& message,
                            const std::string& hint);
};

// Errors of the toolchain or the driver (libNVVM log, nvJitLink log, missing
// library): not the user's source, so no location. Binding: cudajit.CudaError
// / cudajit.CudaSupportError.
struct ToolchainError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace cj
