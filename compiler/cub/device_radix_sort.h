// CUB's device-wide radix sort kernels (cub::DeviceRadixSort's onesweep
// path), compiled by NVRTC to a cubin for one GPU architecture, cached in
// memory and on disk. This stage only makes code: the runtime
// (runtime/device_radix_sort.h) loads the cubin and does the host side of
// the dispatch, which NVRTC cannot compile (CUB launches with <<<>>>).
//
// One program holds, for one key type, value size, order and offset width,
// the four kernels CUB's DispatchRadixSort launches for 4- and 8-byte keys
// (kernels/radix_sort.cuh):
//   DeviceRadixSortHistogramKernel     the digit counts of every pass, in one read
//   DeviceRadixSortExclusiveSumKernel  one block per pass: the counts to offsets
//   DeviceRadixSortOnesweepKernel      one pass: rank, look back, scatter
//   DeviceRadixSortSingleTileKernel    the whole sort of a small input in one block
// each templated on the policy hub's MaxPolicy, so that the kernels pick the
// tuning of the architecture they are compiled for, as in a CUDA C++ build.
// The host side needs the same numbers (block sizes, items per thread,
// radix bits); they are read back from the lowered name of a template
// instantiated with them (`policy` below).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace cj::cub {

struct RadixSortSpec {
  std::string key;          // int32 uint32 int64 uint64 float32 float64
  int value_bytes = 0;      // 0: keys only; 1, 2, 4, 8, 16: values moved as bits of that size
  bool descending = false;
  bool offset64 = false;    // OffsetT: unsigned long long (more than 2^32 - 1 items) or unsigned int
  int arch = 90;            // sm_90
};

// The ActivePolicy of CUB's policy_hub<Key, Value, Offset> for the arch.
struct RadixSortPolicy {
  int radix_bits = 0;              // ONESWEEP_RADIX_BITS (the histogram's too)
  int onesweep_threads = 0, onesweep_items = 0;
  int histogram_threads = 0;
  int exclusive_sum_threads = 0;
  int single_tile_threads = 0, single_tile_items = 0;
  bool onesweep = false;           // ActivePolicy::ONESWEEP (true for keys of 4 and 8 bytes)
};

struct RadixSortProgram {
  RadixSortSpec spec;
  RadixSortPolicy policy;
  // Mangled kernel names in the cubin.
  std::string histogram, exclusive_sum, onesweep, single_tile;
  std::shared_ptr<const std::vector<char>> cubin;
  std::string key;                 // the disk-cache key (hex SHA-256)
  enum class From { Memory, Disk, Compiled } from = From::Compiled;
  double compile_seconds = 0;      // NVRTC wall time when compiled here
};

// Throws ToolchainError for a spec outside the table above.
void checkRadixSortSpec(const RadixSortSpec& spec);
// The CUDA C++ translation unit NVRTC compiles, and its name expressions.
std::string radixSortSource(const RadixSortSpec& spec);
// "radix_sort float32 v4 descending o32 sm_90"
std::string describe(const RadixSortSpec& spec);

// From this process's memory, else the disk cache (<cache root>/cub,
// *.cjrsort), else NVRTC (then stored). Thread-safe. Throws ToolchainError
// (bad spec, NVRTC missing or failing with its log).
RadixSortProgram radixSortProgram(const RadixSortSpec& spec);
// Forgets this process's programs (the next call reads the disk cache).
void clearRadixSortMemoryCache();
// The file a spec's program is cached in.
std::string radixSortCachePath(const RadixSortSpec& spec);

}  // namespace cj::cub
