// cub::DeviceRadixSort's host dispatch, done here: CUB's kernels come
// compiled from compiler/cub (device_radix_sort.h); this loads them once
// per device and launches them in the order and grid shapes of CUB's
// DispatchRadixSort (dispatch_radix_sort.cuh: Invoke, InvokeSingleTile,
// InvokeOnesweep, InvokeCopy) for keys of 4 and 8 bytes:
//
//   num_items == 0                        nothing
//   begin_bit == end_bit                  nothing (double buffer), else a copy
//   num_items <= single tile              DeviceRadixSortSingleTileKernel, 1 block
//   otherwise (onesweep)                  clear the counters and the first bins;
//                                         the histogram kernel (occupancy x SMs
//                                         blocks), the exclusive sum (one block
//                                         per pass), then per pass and portion of
//                                         at most ~2^28 items: clear the look-back
//                                         buffer, one onesweep launch.
//
// Every CUDA call's result is checked (CudaApiError names the call).
#pragma once
#include <cstdint>
#include <string>

#include "runtime/cuda_api.h"

namespace cj::rt {

struct RadixSortCall {
  std::string key;              // int32 uint32 int64 uint64 float32 float64
  int value_bytes = 0;          // 0: keys only
  bool descending = false;
  // The two key (and value) buffers: the input (`current`) and the other
  // one. overwrite (a DoubleBuffer): both may be written and the result
  // lands in either; otherwise `current` is only read and the result lands
  // in `alternate` (the output), through a spare in the temporary storage.
  cu::CUdeviceptr keys = 0, keys_alt = 0, values = 0, values_alt = 0;
  bool overwrite = false;
  uint64_t num_items = 0;
  int begin_bit = 0, end_bit = 0;
  cu::CUdeviceptr temp = 0;
  uint64_t temp_bytes = 0;
  cu::CUstream stream = nullptr;
  int device = 0;
};

// The temporary storage a call needs: a bound over every architecture's
// tuning (so it is known without a GPU and without compiling), at least
// what the dispatch lays out. 0 when nothing runs or no storage is used
// (no items, no bits).
uint64_t radixSortTempBytes(uint64_t num_items, int key_bytes, int value_bytes, int begin_bit, int end_bit,
                            bool overwrite);

// Enqueues the sort on call.stream (compiling CUB's kernels for the
// device's architecture on first use: the caches of compiler/cub). Returns
// whether the result is in the `alternate` buffers (CUB flips its
// DoubleBuffer selector), else in `current`. Throws CudaApiError,
// ToolchainError, or std::invalid_argument for bad arguments (bit range,
// too small temporary storage).
bool radixSort(const RadixSortCall& call);

// Whether the offsets are 64-bit: when more than 2^32 - 1 items (CUB's
// choose_offset_t of a 64-bit count), and where CUB's 64-bit-offset tuning
// measured faster: 4-byte keys without values on sm_90 (2^26 uint32 keys on
// an H100: 1.43 ms, against 1.63 ms with the 32-bit tuning; key-value pairs
// the other way, 2.32 against 2.24 ms). CUDAJIT_RADIX_OFFSET_BITS=64 or 32
// forces the choice (32 only where the items fit), to compare tunings.
bool radixSortOffset64(uint64_t num_items, int key_bytes, int value_bytes, int arch);

}  // namespace cj::rt
