// Spec -> the C++ translation unit NVRTC compiles, and the C ABI of the one
// extern "C" __device__ entry point it defines.
//
// Every TU starts with the same prelude (all CUB block/warp headers), so
// NVRTC's automatic precompiled header serves every instantiation of a
// process after the first. Everything but the entry point lives in an
// anonymous namespace: two instantiations linked into one kernel share no
// symbol except CUB's own (identical) template instances.
//
// The temp-storage size and alignment are read back from the compile, not
// computed here: the TU declares `cj_layout<sizeof(TempStorage),
// alignof(TempStorage)>` and NVRTC's lowered (mangled) name of that name
// expression spells both numbers (see layoutFromLoweredName).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "cub/spec.h"
#include "types/c_abi.h"

namespace cj::cub {

struct Param {
  std::string cxx;   // "const float*"
  CType type;        // its C ABI (a generic pointer to float32)
  std::string name;  // "items"
};

struct EntryPoint {
  std::string name;
  std::string ret_cxx;   // "void" / "float"
  CType ret;
  std::vector<Param> params;

  // extern "C" __device__ float cj_...(float x, void* temp_storage)
  std::string cDeclaration() const;
  // The C ABI, for the caller's declaration (codegen::nvvmDeclaration).
  CSignature signature() const;
};

struct Generated {
  Spec spec;                      // normalized
  EntryPoint entry;
  std::string source;             // the whole TU
  std::string layout_expression;  // NVRTC name expression for the temp-storage layout
};

// Normalizes the spec (throws ToolchainError if invalid) and writes the TU.
Generated generate(const Spec& spec);

// The headers every TU includes, verbatim (part of the cache key through the source).
const std::string& prelude();

// "_Z9cj_layoutILy44ELy4EE" -> bytes 44, align 4. False if the name has another shape.
bool layoutFromLoweredName(const std::string& lowered, uint64_t* bytes, uint64_t* align);

}  // namespace cj::cub
