// The CUB side of cudajit: cooperative block / warp algorithms, compiled
// from the CUDA toolkit's CCCL headers with NVRTC to LTO-IR, cached on disk,
// and linked with a kernel's LTO-IR by nvJitLink (compiler/link).
//
// A kernel that calls `cuda.block.sum(x)` (etc.) is specialised on its
// launch block shape. Type inference turns each call into a Spec (spec.h),
// the library-call stage (libcalls/, the CUB provider) calls
// instantiate(spec), and codegen then:
//   * declares the entry point in the kernel's NVVM IR from
//     instance.entry.signature() (codegen::nvvmDeclaration) and calls it;
//   * reserve `temp_bytes` bytes of shared memory aligned to `temp_align`
//     for the call site:
//        @cj_cub_tmp.N = internal addrspace(3) global [temp_bytes x i8] undef, align temp_align
//     and pass it as the last argument, addrspacecast to a generic i8*;
//   * hand instance.ltoir to nvJitLink (-lto) next to the kernel's LTO-IR.
//
// The C ABI of each shape (T = the item type, V = value / counter type,
// all pointers generic; temp_storage is always last):
//   Reduce     ipt == 1: T f(T x, void* temp_storage)
//              ipt  > 1: T f(const T* items, void* temp_storage)
//              *_reduce: result valid in thread 0 of the block (lane 0 of the
//              logical warp), as in CUB; *_allreduce: valid in every thread.
//   Scan       ipt == 1: T f(T x, void* temp_storage)            (returns the scanned value)
//              ipt  > 1: void f(T* items, void* temp_storage)    (in place)
//   ScanInit   ipt == 1: T f(T x, T initial, void* temp_storage)
//              ipt  > 1: void f(T* items, T initial, void* temp_storage)
//   Load       void f(const T* block_ptr, T* items, long long valid_items, T oob_default, void* temp_storage)
//   Store      void f(T* block_ptr, const T* items, long long valid_items, void* temp_storage)
//              block_ptr = the tile's first element; valid_items = elements left from
//              block_ptr (clamped to [0, tile]; the same in every thread of the block);
//              a full tile takes the unguarded path; items beyond get oob_default.
//   Sort       void f(T* keys, void* temp_storage)               (in place, always a pointer)
//   SortPairs  void f(T* keys, V* values, void* temp_storage)
//   Histogram  void f(const T* samples, V* histogram, void* temp_storage)
//              histogram: `bins` counters the whole block shares (usually a shared
//              array); zeroed, the block synchronised, then counted. Samples in [0, bins).
// Block algorithms are collective: every thread of the block calls them
// (warp ones: every thread of the warp). Spec::sync (default) ends each
// block algorithm that uses its storage with __syncthreads(): the same
// storage may then serve the next call (a loop) at once, and a histogram is
// complete when the call returns. With sync = false the CUB contract holds:
// reusing the storage needs a barrier first.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cub/source_gen.h"
#include "cub/spec.h"

namespace cj::cub {

struct Instance {
  Spec spec;                  // normalized
  EntryPoint entry;           // name, C declaration, C-ABI signature
  std::string source;         // the generated TU
  std::shared_ptr<const std::vector<char>> ltoir;
  uint64_t temp_bytes = 0;    // sizeof(TempStorage) (per block; warp algorithms: all warps)
  uint64_t temp_align = 0;    // alignof(TempStorage)
  enum class From { Memory, Disk, Compiled } from = From::Compiled;
};

// The LTO-IR of the spec: from this process's memory, else the disk cache,
// else NVRTC (then stored). Thread-safe. Throws ToolchainError: invalid
// spec, NVRTC missing or failing (with its log and the source).
Instance instantiate(const Spec& spec);

struct CacheStats {
  uint64_t memory_hits = 0;
  uint64_t disk_hits = 0;
  uint64_t compiles = 0;         // NVRTC runs (= misses)
  uint64_t corrupt_entries = 0;  // disk entries rejected (then recompiled and rewritten)
  uint64_t write_failures = 0;   // entries that could not be written (cache dir unwritable)
  double compile_seconds = 0;    // total NVRTC wall time
  uint64_t memory_entries = 0;   // instances held in memory now (at most memoryCacheLimit())
  uint64_t evictions = 0;        // instances dropped from memory for the bound (their disk entries stay)
};
CacheStats cacheStats();
// Forgets the in-memory instances (the next call reads the disk cache).
void clearMemoryCache();

// The disk-cache key of a spec (hex SHA-256), and the file it lives in.
std::string cacheKey(const Spec& spec);
std::string cachePath(const Spec& spec);
std::string cacheDirectory();

// NVRTC options used (without -I / PCH flags, which do not change the output).
std::vector<std::string> compileOptions(int arch);
// What every key of NVRTC's output depends on besides its source and
// options (NVRTC's identity, the CCCL version headers' text; cheap after the
// first call), and the CCCL include directory (device_radix_sort.cpp).
std::string toolchainIdentity();
std::string ccclIncludeDir();
// "NVRTC 13.0, CCCL 3000001 (/usr/local/cuda/include/cccl)"
std::string toolchainDescription();

}  // namespace cj::cub
