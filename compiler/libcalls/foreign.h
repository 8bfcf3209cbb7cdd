// Foreign device functions: CUDA C++, PTX, LTO-IR or binary code the user
// links into kernels, declared in Python with numba's
// `cuda.declare_device(name, signature, link=[...])` and called from kernels
// by the returned object (docs/language.md, "Foreign device functions").
//
// numba's ABI, which such functions follow:
//     extern "C" __device__ int name(T* return_value, args...);
// the int is a status (0), the result goes through the pointer (local
// memory of the caller). A parameter declared CPointer(T) takes an array of
// T (its data pointer) in cudajit kernels.
//
// A declaration is recorded in this process under a key (a hash of the
// name, the signature and the link files' paths and contents) that the
// Python object freezes to ("cudajit.foreign.<key>"); type inference,
// the provider and the driver look it up. Link files are read (and .cu
// files compiled by NVRTC to LTO-IR) by linkInputs when a kernel is linked.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "types/types.h"

namespace cj::libcalls::foreign {

struct Param {
  Scalar scalar;
  bool pointer = false;   // CPointer(scalar): an array's data pointer
};

struct Declaration {
  std::string key;
  std::string name;                 // the extern symbol
  std::string signature;            // as declared
  bool returns_void = false;
  Scalar ret = Scalar::Int32;
  std::vector<Param> params;
  std::vector<std::string> link;    // absolute paths
};

// Parses `signature` ("float32(float32, CPointer(int32))", numba's spelling)
// and records the declaration. Throws std::invalid_argument (a bad
// signature, a link file that cannot be read or has an unknown extension).
std::shared_ptr<const Declaration> declare(const std::string& name, const std::string& signature,
                                           const std::vector<std::string>& link);
// nullptr where `key` was not declared in this process.
std::shared_ptr<const Declaration> lookup(const std::string& key);

constexpr const char* kSymbolPrefix = "cudajit.foreign.";

// One input of the linker, by the file's kind.
enum class InputKind { LtoIr, Ptx, Cubin, Fatbin, Object, Library };
struct Input {
  InputKind kind;
  std::shared_ptr<const std::vector<char>> data;
  std::string name;   // the file's name (messages)
};
// The files as linker inputs for sm_<arch>: .cu compiled by NVRTC to LTO-IR
// for compute_<arch> (-rdc, the toolkit's headers on the include path;
// cached in memory by content), .ptx, .ltoir, .cubin, .fatbin, .o, .a read
// as they are. Each file once, in order. Throws std::invalid_argument (a
// file that cannot be read, an unknown extension) and ToolchainError
// (NVRTC's log, naming the file).
std::vector<Input> linkInputs(const std::vector<std::string>& paths, int arch);

// The files' absolute paths and content hashes: what a kernel's cache key
// holds for them. Throws std::invalid_argument for a file that cannot be read.
std::string linkIdentity(const std::vector<std::string>& paths);

}  // namespace cj::libcalls::foreign
