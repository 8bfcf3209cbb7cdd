#include "runtime/device_radix_sort.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <vector>

#include "cub/device_radix_sort.h"
#include "runtime/context.h"
#include "runtime/driver.h"
#include "runtime/errors.h"
#include "runtime/module.h"

namespace cj::rt {
namespace {

// Bounds over every tuning of CCCL's policy hub (tuning_radix_sort.cuh),
// for the temporary storage a call needs before its kernels are compiled:
// onesweep tiles are 256 x 8 items or more and at most 1024 x 32; every
// policy's onesweep digits are 8 bits. The dispatch checks its real layout
// against the storage it is given.
constexpr uint64_t kMinTile = 256 * 8;
constexpr uint64_t kMaxTile = 1024 * 32;
constexpr int kBoundRadixBits = 8;
constexpr uint64_t kPortionLimit = (uint64_t(1) << 28) - 1;   // CUB: portions of < 2^28 items
constexpr uint64_t kAlign = 256;                              // CUB's AliasTemporaries

uint64_t alignUp(uint64_t v) { return (v + kAlign - 1) / kAlign * kAlign; }
uint64_t ceilDiv(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

// The five allocations of InvokeOnesweep, in its order.
struct Layout {
  uint64_t bins = 0, lookback = 0, keys = 0, values = 0, counters = 0;
  uint64_t total() const { return kAlign + alignUp(bins) + alignUp(lookback) + alignUp(keys) + alignUp(values) + alignUp(counters); }
};

Layout layout(uint64_t n, int key_bytes, int value_bytes, bool overwrite, int passes, int digits, uint64_t portions,
              uint64_t max_blocks, int offset_bytes) {
  Layout l;
  l.bins = portions * passes * digits * offset_bytes;
  l.lookback = max_blocks * digits * sizeof(int);
  bool spare = !overwrite && passes > 1;
  l.keys = spare ? n * key_bytes : 0;
  l.values = spare ? n * value_bytes : 0;
  l.counters = portions * passes * sizeof(int);
  return l;
}

int keyBytes(const std::string& key) {
  if (key == "int32" || key == "uint32" || key == "float32") return 4;
  if (key == "int64" || key == "uint64" || key == "float64") return 8;
  throw std::invalid_argument("radix_sort: no key type '" + key + "'");
}

// CUB's kernels of one program, loaded in one device's context.
struct Loaded {
  std::unique_ptr<LoadedModule> module;
  cub::RadixSortPolicy policy;
  cu::CUfunction histogram = nullptr, exclusive_sum = nullptr, onesweep = nullptr, single_tile = nullptr;
  int histogram_blocks = 0;   // occupancy x SMs, as InvokeOnesweep asks the runtime
  cu::CUcontext context = nullptr;   // loaded into (a reset device's new context loads again)
};

const Loaded& loaded(const cub::RadixSortSpec& spec, int device, cu::CUcontext context) {
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<Loaded>> table;   // a handful per process: never evicted
  std::string key = cub::describe(spec) + "@" + std::to_string(device);
  std::lock_guard<std::mutex> lock(mutex);
  auto it = table.find(key);
  if (it != table.end() && it->second->context == context) return *it->second;
  cub::RadixSortProgram program = cub::radixSortProgram(spec);
  if (!program.policy.onesweep)
    throw CudaSupportError("radix_sort: CUB's policy for " + cub::describe(spec) +
                           " is not onesweep; cudajit dispatches onesweep only");
  auto l = std::make_unique<Loaded>();
  l->module = std::make_unique<LoadedModule>(*program.cubin, device);
  l->policy = program.policy;
  l->histogram = l->module->function(program.histogram);
  l->exclusive_sum = l->module->function(program.exclusive_sum);
  l->onesweep = l->module->function(program.onesweep);
  l->single_tile = l->module->function(program.single_tile);
  int per_sm = 0;
  CJ_CU_OPT(cuOccupancyMaxActiveBlocksPerMultiprocessor, &per_sm, l->histogram, program.policy.histogram_threads, 0);
  l->histogram_blocks = std::max(1, per_sm) * deviceInfo(device).multiprocessors;
  l->context = context;
  std::unique_ptr<Loaded>& slot = table[key];
  slot = std::move(l);
  return *slot;
}

// Kernel parameters: cuLaunchKernel reads each through a pointer, with the
// size the kernel declares. OffsetT is 4 or 8 bytes; CUB's
// identity_decomposer_t is an empty struct (1 byte).
struct Offset {
  uint32_t u32 = 0;
  uint64_t u64 = 0;
  bool wide = false;
  Offset(uint64_t v, bool w) : u32(uint32_t(v)), u64(v), wide(w) {}
  void* ptr() { return wide ? static_cast<void*>(&u64) : static_cast<void*>(&u32); }
};

void launch(cu::CUfunction fn, unsigned grid, unsigned block, cu::CUstream stream, std::vector<void*> params) {
  CJ_CU(cuLaunchKernel, fn, grid, 1, 1, block, 1, 1, 0, stream, params.data(), nullptr);
}

// CUB's cudaMemsetAsync of its counters, bins and look-back buffer: each a
// whole number of 4-byte words at a 256-byte boundary.
void clear(cu::CUdeviceptr at, uint64_t bytes, cu::CUstream stream) {
  if (bytes) CJ_CU_OPT(cuMemsetD32Async, at, 0, bytes / 4, stream);
}

}  // namespace

bool radixSortOffset64(uint64_t num_items, int key_bytes, int value_bytes, int arch) {
  static const int forced = [] {
    const char* v = std::getenv("CUDAJIT_RADIX_OFFSET_BITS");
    return v ? std::atoi(v) : 0;
  }();
  if (num_items > 0xFFFFFFFFull || forced == 64) return true;
  if (forced == 32) return false;
  return key_bytes == 4 && value_bytes == 0 && arch == 90;
}

uint64_t radixSortTempBytes(uint64_t n, int key_bytes, int value_bytes, int begin_bit, int end_bit, bool overwrite) {
  if (n == 0 || begin_bit >= end_bit) return 0;
  int passes = int(ceilDiv(uint64_t(end_bit - begin_bit), kBoundRadixBits));
  uint64_t portions = ceilDiv(n, kPortionLimit - kMaxTile);
  uint64_t max_blocks = ceilDiv(std::min(n, kPortionLimit), kMinTile);
  return layout(n, key_bytes, value_bytes, overwrite, passes, 1 << kBoundRadixBits, portions, max_blocks, 8).total();
}

bool radixSort(const RadixSortCall& c) {
  const int key_bytes = keyBytes(c.key);
  const int total_bits = key_bytes * 8;
  if (c.begin_bit < 0 || c.begin_bit > c.end_bit || c.end_bit > total_bits)
    throw std::invalid_argument("radix_sort: need 0 <= begin_bit <= end_bit <= " + std::to_string(total_bits) +
                                ", got " + std::to_string(c.begin_bit) + ", " + std::to_string(c.end_bit));
  const uint64_t n = c.num_items;
  const bool with_values = c.value_bytes != 0;
  if (n == 0) return false;
  const cu::CUcontext context = ensureContext(c.device);
  if (c.begin_bit == c.end_bit) {   // InvokeCopy: a stable sort on no bits keeps the order
    if (c.overwrite) return false;
    CJ_CU_OPT(cuMemcpyDtoDAsync, c.keys_alt, c.keys, n * key_bytes, c.stream);
    if (with_values) CJ_CU_OPT(cuMemcpyDtoDAsync, c.values_alt, c.values, n * c.value_bytes, c.stream);
    return true;
  }

  cub::RadixSortSpec spec;
  spec.key = c.key;
  spec.value_bytes = c.value_bytes;
  spec.descending = c.descending;
  spec.arch = deviceInfo(c.device).arch();
  spec.offset64 = radixSortOffset64(n, key_bytes, c.value_bytes, spec.arch);
  const Loaded& k = loaded(spec, c.device, context);
  const cub::RadixSortPolicy& p = k.policy;
  char decomposer = 0;
  int begin = c.begin_bit, end = c.end_bit;

  if (n <= uint64_t(p.single_tile_threads) * p.single_tile_items) {   // InvokeSingleTile
    cu::CUdeviceptr keys_in = c.keys, keys_out = c.keys_alt, values_in = c.values, values_out = c.values_alt;
    Offset count(n, spec.offset64);
    launch(k.single_tile, 1, p.single_tile_threads, c.stream,
           {&keys_in, &keys_out, &values_in, &values_out, count.ptr(), &begin, &end, &decomposer});
    return true;
  }

  // InvokeOnesweep
  const int digits = 1 << p.radix_bits;
  const uint64_t tile = uint64_t(p.onesweep_threads) * p.onesweep_items;
  const uint64_t portion_size = kPortionLimit / tile * tile;
  const int passes = int(ceilDiv(uint64_t(end - begin), p.radix_bits));
  const uint64_t portions = ceilDiv(n, portion_size);
  const uint64_t max_blocks = ceilDiv(std::min(n, portion_size), tile);
  const int offset_bytes = spec.offset64 ? 8 : 4;
  Layout l = layout(n, key_bytes, c.value_bytes, c.overwrite, passes, digits, portions, max_blocks, offset_bytes);
  if (l.total() > c.temp_bytes)
    throw std::invalid_argument("radix_sort: the temporary storage holds " + std::to_string(c.temp_bytes) +
                                " bytes; this sort needs " + std::to_string(l.total()));
  cu::CUdeviceptr at = (c.temp + kAlign - 1) / kAlign * kAlign;
  const cu::CUdeviceptr bins = at;
  at += alignUp(l.bins);
  const cu::CUdeviceptr lookback = at;
  at += alignUp(l.lookback);
  const cu::CUdeviceptr keys_spare = at;
  at += alignUp(l.keys);
  const cu::CUdeviceptr values_spare = at;
  at += alignUp(l.values);
  const cu::CUdeviceptr counters = at;

  clear(counters, l.counters, c.stream);
  clear(bins, uint64_t(passes) * digits * offset_bytes, c.stream);

  cu::CUdeviceptr keys_cur = c.keys;
  cu::CUdeviceptr bins_arg = bins;
  Offset count(n, spec.offset64);
  launch(k.histogram, unsigned(k.histogram_blocks), p.histogram_threads, c.stream,
         {&bins_arg, &keys_cur, count.ptr(), &begin, &end, &decomposer});
  launch(k.exclusive_sum, unsigned(passes), p.exclusive_sum_threads, c.stream, {&bins_arg});

  // CUB's DoubleBuffer moves: d_keys = {current, alternate} and a selector.
  cu::CUdeviceptr kb[2] = {c.keys, c.keys_alt}, vb[2] = {c.values, c.values_alt};
  int sel = 0;
  const cu::CUdeviceptr keys_out0 = kb[1], values_out0 = vb[1];
  if (!c.overwrite && passes % 2 == 0) {   // the first pass writes the spare: the last writes the output
    kb[1] = keys_spare;
    vb[1] = values_spare;
  }
  for (int bit = begin, pass = 0; bit < end; bit += p.radix_bits, ++pass) {
    int num_bits = std::min(end - bit, p.radix_bits);
    for (uint64_t portion = 0; portion < portions; ++portion) {
      uint64_t portion_items = std::min(n - portion * portion_size, portion_size);
      uint64_t blocks = ceilDiv(portion_items, tile);
      clear(lookback, blocks * digits * sizeof(int), c.stream);
      cu::CUdeviceptr lookback_arg = lookback;
      cu::CUdeviceptr ctrs = counters + (portion * passes + pass) * sizeof(int);
      cu::CUdeviceptr bins_out =
          portion + 1 < portions ? bins + ((portion + 1) * passes + pass) * digits * offset_bytes : 0;
      cu::CUdeviceptr bins_in = bins + (portion * passes + pass) * digits * offset_bytes;
      cu::CUdeviceptr keys_out = kb[sel ^ 1], keys_in = kb[sel] + portion * portion_size * key_bytes;
      cu::CUdeviceptr values_out = vb[sel ^ 1];
      cu::CUdeviceptr values_in = with_values ? vb[sel] + portion * portion_size * c.value_bytes : 0;
      int items = int(portion_items);
      int current_bit = bit;
      launch(k.onesweep, unsigned(blocks), p.onesweep_threads, c.stream,
             {&lookback_arg, &ctrs, &bins_out, &bins_in, &keys_out, &keys_in, &values_out, &values_in, &items,
              &current_bit, &num_bits, &decomposer});
    }
    if (!c.overwrite && pass == 0) {   // from now on: the output and the spare
      cu::CUdeviceptr k0 = keys_out0, v0 = values_out0;
      if (passes % 2 == 0) {
        kb[0] = k0, kb[1] = keys_spare, vb[0] = v0, vb[1] = values_spare;
      } else {
        kb[0] = keys_spare, kb[1] = k0, vb[0] = values_spare, vb[1] = v0;
      }
      sel = 0;
    }
    sel ^= 1;
  }
  if (!c.overwrite) return true;   // in the output (kb[sel] is it)
  return sel == 1;
}

}  // namespace cj::rt
