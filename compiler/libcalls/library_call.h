// Library calls: the device functions a kernel calls from a library that is
// compiled apart and joined at link time (CUB's block algorithms, MathDx's
// cuBLASDx GEMMs).
//
// The stages, one way:
//   type inference  types the call and records what it needs, as one
//                   `intrinsic <library> "<descriptor>"` instruction
//                   (makeLibraryCall in typeinfer); the descriptor is the
//                   library's own text (CUB: a cub::Spec, cub/spec.h;
//                   MathDx: the descriptor's key, mathdx/mathdx.h);
//   passes          may rewrite descriptors (cub-barriers drops barriers);
//   libcalls        collect() the module's calls, resolve() them through
//                   the library's provider (libcalls/provider.h): entry
//                   symbol, C-ABI signature, temp storage, LTO-IR module
//                   (NVRTC, disk cache, in parallel: that is where files
//                   and compilers live);
//   codegen         receives the ResolvedCalls table and only declares and
//                   calls symbols (lower_cub.cpp for CUB's argument shapes);
//   link            nvJitLink joins the LTO-IR modules with the kernel's.
//
// This header is what type inference and codegen see: plain data, no
// compiler, no files.
//
// Adding a second library (MathDx) copies none of this plumbing:
//   1. one row of CJ_LIBRARIES below (Mathdx, "mathdx") and an intrinsic of
//      the same name in ir/intrinsics.def;
//   2. its descriptor: a text form of its own (a spec type beside it, as
//      cub/spec.h is CUB's), written by a typing rule in typeinfer through
//      makeLibraryCall (typeinfer/library_calls.h);
//   3. a Provider subclass in libcalls/ (provider.h) that turns descriptors
//      into ResolvedCalls: forEachInParallel (parallel.h) gives it the
//      process-wide job slots and threads CUB uses, support/disk_cache.h
//      the checksummed on-disk cache, cub/nvrtc.h the NVRTC wrapper (move
//      it to a shared folder then); one row in registry.cpp;
//   4. a lowering of its argument shapes in codegen, which finds the symbol,
//      signature and temp storage in the ResolvedCalls table.
// collect(), resolve(), the link inputs (driver/compile.cpp) and the table
// codegen reads are shared as they are.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "ir/ir.h"
#include "types/c_abi.h"

namespace cj::libcalls {

// X(Enum, intrinsic): the intrinsic (ir/intrinsics.def) that carries the
// library's descriptors in the IR; its name is the library's name in messages.
#define CJ_LIBRARIES(X) \
  X(Cub, CubCall)          \
  X(Mathdx, MathdxCall)    \
  X(Foreign, ForeignCall)

enum class Library : uint8_t {
#define X(E, ID) E,
  CJ_LIBRARIES(X)
#undef X
};

inline ir::Intrinsic libraryIntrinsic(Library lib) {
  static constexpr ir::Intrinsic kIntrinsics[] = {
#define X(E, ID) ir::Intrinsic::ID,
      CJ_LIBRARIES(X)
#undef X
  };
  return kIntrinsics[static_cast<size_t>(lib)];
}
inline std::string_view libraryName(Library lib) { return ir::intrinsicName(libraryIntrinsic(lib)); }

// What one call needs from its library.
struct LibraryCall {
  Library library;
  std::string descriptor;   // the provider's text (CUB: the normalized spec)

  bool operator<(const LibraryCall& o) const {
    return std::tie(library, descriptor) < std::tie(o.library, o.descriptor);
  }
  bool operator==(const LibraryCall& o) const {
    return library == o.library && descriptor == o.descriptor;
  }
};

// Where the IR keeps a library call: the instruction and its descriptor.
// The only places that know the encoding (with makeLibraryCall in typeinfer).
inline bool isLibraryCall(const ir::Instr& in, Library lib) {
  return in.isIntrinsic(libraryIntrinsic(lib));
}
inline std::optional<LibraryCall> libraryCallOf(const ir::Instr& in) {
  if (in.op != ir::Op::Intrinsic) return std::nullopt;
#define X(E, ID) \
  if (in.intrinsic == ir::Intrinsic::ID) return LibraryCall{Library::E, in.cval.s};
  CJ_LIBRARIES(X)
#undef X
  return std::nullopt;
}
inline void setDescriptor(ir::Instr& in, std::string descriptor) {
  in.cval = ir::Const::str(std::move(descriptor));
}

// What a provider made of one descriptor.
struct ResolvedCall {
  std::string symbol;              // the extern "C" entry point
  CSignature signature;            // its C ABI (temp storage last where it takes one)
  uint64_t temp_bytes = 0;         // shared memory the caller reserves (0: none)
  uint64_t temp_align = 0;
  std::shared_ptr<const std::vector<char>> ltoir;   // the module defining `symbol`
  bool arch_specific = false;      // its code needs the arch-specific target (sm_90a: TMA tensormap.replace)
};

// The table codegen reads: descriptor -> resolved call, in the order the
// calls were resolved (the order of the link inputs).
class ResolvedCalls {
 public:
  void add(LibraryCall call, ResolvedCall resolved) {
    if (index_.count(call)) return;
    index_.emplace(call, entries_.size());
    entries_.emplace_back(std::move(call), std::move(resolved));
  }
  const ResolvedCall* find(Library lib, const std::string& descriptor) const {
    auto it = index_.find(LibraryCall{lib, descriptor});
    return it == index_.end() ? nullptr : &entries_[it->second].second;
  }
  bool empty() const { return entries_.empty(); }
  const std::vector<std::pair<LibraryCall, ResolvedCall>>& entries() const { return entries_; }

 private:
  std::vector<std::pair<LibraryCall, ResolvedCall>> entries_;
  std::map<LibraryCall, size_t> index_;
};

}  // namespace cj::libcalls
